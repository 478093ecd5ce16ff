//! `rgd locate --repo DIR --failing ID [--failing ID ...] [--tests SEL] [--k N] [--json]`: which of
//! a project's functions most likely holds the fault behind some failing tests
//! (`repo/locate/localise.rs` runs the tests, `repo/locate/mod.rs` ranks).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::launch::project::{FailureArgs, print_ranking, suspects};
use crate::repo::run::testrun::ProjectTests;

#[derive(Debug, Args)]
pub struct LocateArgs {
    #[command(flatten)]
    pub failure: FailureArgs,
    /// How many candidates to show
    #[arg(long, default_value_t = 10, value_parser = crate::validate::parse_count)]
    pub k: usize,
    /// Seconds one test may run; a test over it is stopped where it is (its exception path then
    /// shows the loop) and every later one gets 1 s. Another test than the named failing ones,
    /// stopped so, is left out of the evidence
    #[arg(long, value_name = "SECONDS", default_value_t = crate::repo::locate::localise::TEST_SECONDS, value_parser = crate::validate::parse_seconds)]
    pub test_timeout: f64,
    /// The interpreter that runs the tests [default: $RGD_PYTHON, else python3]
    #[arg(long)]
    pub python: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// For the Guide model's look at the suspects
    #[command(flatten)]
    pub llm: crate::config::LlmArgs,
}

pub async fn execute(from: crate::config::Configured<'_>, args: LocateArgs) -> anyhow::Result<ExitCode> {
    let root = crate::launch::project::project_root(&args.failure.repo)?;
    let runner = ProjectTests::with(args.python.as_deref())?;
    let found = suspects(&from, &runner, &root, &args.failure, args.test_timeout).await?;
    let ranked = &found.ranked;
    if args.json {
        println!("{}", serde_json::to_string(&ranked[..ranked.len().min(args.k)])?);
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{} failing and {} passing tests run in a throw-away copy of {} ({})",
        found.failing_spectra,
        found.passing_spectra,
        root.display(),
        runner.confinement().describe()
    );
    if let Some(first) = found.stopped.first() {
        eprintln!(
            "{} other tests ran past the per-test time (--test-timeout) and are left out, as no evidence either way (e.g. {first})",
            found.stopped.len()
        );
    }
    print_ranking(ranked, found.failing_spectra, args.k);
    Ok(ExitCode::SUCCESS)
}
