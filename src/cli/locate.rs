//! `rgd locate --repo DIR --failing ID [--failing ID ...] [--tests SEL] [--k N] [--json]`: which of
//! a project's functions most likely holds the fault behind some failing tests
//! (`repo/localise.rs` runs the tests, `repo/locate.rs` ranks).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::repo::localise::localise;
use crate::repo::testrun::ProjectTests;

#[derive(Debug, Args)]
pub struct LocateArgs {
    #[command(flatten)]
    pub failure: FailureArgs,
    /// How many candidates to show
    #[arg(long, default_value_t = 10, value_parser = crate::validate::parse_count)]
    pub k: usize,
    /// The interpreter that runs the tests [default: $RGD_PYTHON, else python3]
    #[arg(long)]
    pub python: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// A project and some of its failing tests (`rgd locate`, `rgd fix`).
#[derive(Debug, Args)]
pub struct FailureArgs {
    /// The Python project
    #[arg(long)]
    pub repo: PathBuf,
    /// A failing test (a pytest node id); give it once per test
    #[arg(long = "failing", required = true, value_name = "ID")]
    pub failing: Vec<String>,
    /// The tests whose passing runs count against a suspect, and which a repair must not break (a
    /// pytest selection; default: the failing tests' files)
    #[arg(long, allow_hyphen_values = true)]
    pub tests: Option<String>,
}

pub fn execute(args: LocateArgs) -> anyhow::Result<ExitCode> {
    let root = super::project::project_root(&args.failure.repo)?;
    let runner = ProjectTests::with(args.python.as_deref())?;
    let found = localise(&runner, &root, &args.failure.failing, args.failure.tests.as_deref())?;
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
    print_ranking(ranked, found.failing_spectra, args.k);
    Ok(ExitCode::SUCCESS)
}

/// The first `k` candidates, one line each and a line of why.
pub fn print_ranking(ranked: &[crate::repo::locate::Candidate], failing: usize, k: usize) {
    for (i, c) in ranked.iter().take(k).enumerate() {
        println!("{:>2}. {}:{}  {}  score {:.2}", i + 1, c.file, c.line, c.name, c.score);
        println!("    {}", c.why(failing));
    }
}
