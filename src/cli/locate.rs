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
    /// Seconds one test may run; a test over it is stopped where it is (its exception path then
    /// shows the loop) and every later one gets 1 s
    #[arg(long, value_name = "SECONDS", default_value_t = crate::repo::localise::TEST_SECONDS, value_parser = crate::validate::parse_seconds)]
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
    /// Let the Guide's model read the failing tests and the first N suspects' source and pick the
    /// likeliest; they move to the front (qodo's second stage; one LLM call)
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10", value_parser = crate::validate::parse_count)]
    pub rerank_suspects: Option<usize>,
}

/// The failure's suspects: located (each test stopped after `test_seconds`), then (with
/// `--rerank`) reordered by the Guide's model.
pub async fn suspects(
    home: &crate::store::Home,
    from: &super::project::ModelFrom<'_>,
    runner: &ProjectTests,
    root: &std::path::Path,
    args: &FailureArgs,
    test_seconds: f64,
) -> anyhow::Result<crate::repo::localise::Localisation> {
    let per_test = std::time::Duration::from_secs_f64(test_seconds);
    let mut found = localise(runner, root, &args.failing, args.tests.as_deref(), per_test)?;
    if let Some(top) = args.rerank_suspects {
        let (model, params, prompts) = super::project::guide_model(home, from)?;
        let ranked = std::mem::take(&mut found.ranked);
        found.ranked = crate::repo::llm::rerank_suspects(model.as_ref(), &params, &prompts, root, &found.failures, ranked, top).await?;
        let named = found.ranked.iter().filter(|c| c.model_rank.is_some()).count();
        eprintln!("the Guide's model named {named} of the first {top} suspects (--rerank-suspects)");
    }
    Ok(found)
}

pub async fn execute(home: &crate::store::Home, from: super::project::ModelFrom<'_>, args: LocateArgs) -> anyhow::Result<ExitCode> {
    let root = super::project::project_root(&args.failure.repo)?;
    let runner = ProjectTests::with(args.python.as_deref())?;
    let found = suspects(home, &from, &runner, &root, &args.failure, args.test_timeout).await?;
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
