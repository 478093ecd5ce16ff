//! `rgd locate --repo DIR --failing ID [--failing ID ...] [--tests SEL] [--k N] [--json]`: which of
//! a project's functions most likely holds the fault behind some failing tests. The failing tests
//! and the other tests of the selection (default: the failing tests' files) run once in a
//! throw-away copy with the spectrum collector; every test that fails counts as failing, named or
//! not, and every one that passes as passing (`repo/locate.rs` ranks what it saw).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use crate::repo::locate::rank;
use crate::repo::testrun::{ProjectTests, RunSpec, TestLimits, selection};

#[derive(Debug, Args)]
pub struct LocateArgs {
    /// The Python project
    #[arg(long)]
    pub repo: PathBuf,
    /// A failing test (a pytest node id); give it once per test
    #[arg(long = "failing", required = true, value_name = "ID")]
    pub failing: Vec<String>,
    /// The tests whose passing runs count against a suspect (a pytest selection; default: the
    /// failing tests' files)
    #[arg(long, allow_hyphen_values = true)]
    pub tests: Option<String>,
    /// How many candidates to show
    #[arg(long, default_value_t = 10, value_parser = crate::validate::parse_count)]
    pub k: usize,
    /// The interpreter that runs the tests [default: $RGD_PYTHON, else python3]
    #[arg(long)]
    pub python: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

pub fn execute(args: LocateArgs) -> anyhow::Result<ExitCode> {
    let root = args
        .repo
        .canonicalize()
        .with_context(|| format!("--repo {}: no such directory", args.repo.display()))?;
    let python = args.python.clone().unwrap_or_else(|| PathBuf::from(crate::assets::python()));
    let runner = ProjectTests::new(&python)?;
    for id in &args.failing {
        selection("--failing", id, &root)?;
    }
    let failing = runner.collect(&root, &args.failing).context("the failing tests (--failing)")?;
    let missing: Vec<&String> = args
        .failing
        .iter()
        .filter(|id| !failing.iter().any(|f| f == *id || f.starts_with(&format!("{id}["))))
        .collect();
    if !missing.is_empty() {
        bail!("--failing {}: no such test in {}", missing[0], root.display());
    }
    let others = match &args.tests {
        Some(text) => runner.collect(&root, &selection("--tests", text, &root)?).context("--tests")?,
        None => {
            let mut files: Vec<String> = failing.iter().map(|id| id.split("::").next().unwrap_or(id).to_string()).collect();
            files.dedup();
            runner.collect(&root, &files)?
        }
    };
    let mut ids = failing.clone();
    ids.extend(others.into_iter().filter(|id| !failing.contains(id)));
    let spec = RunSpec {
        ids: &ids,
        ..RunSpec::default()
    };
    let (run, spectra) = runner.spectra(&root, &spec, TestLimits::default())?;
    if !run.tampered.is_empty() {
        bail!("the project's tests tampered with rgd's plugin: {}", run.tampered.join("; "));
    }
    let outcome = |id: &str| run.outcomes.iter().find(|o| o.id == id);
    if let Some(p) = failing.iter().find(|id| outcome(id).is_some_and(|o| o.passed())) {
        bail!("{p} passes here: there is no fault to locate for it");
    }
    if let Some(o) = failing
        .iter()
        .filter_map(|id| outcome(id))
        .find(|o| o.status == "not run" || o.status == "error")
    {
        bail!("{} did not run to its failure ({}: {})", o.id, o.status, o.message);
    }
    let spectrum = |id: &str| spectra.iter().find(|s| s.id == id);
    // Every test of the selection that failed is evidence, named or not.
    let failing_spectra: Vec<_> = ids
        .iter()
        .filter(|id| failing.contains(id) || outcome(id).is_some_and(|o| o.status == "failed"))
        .filter_map(|id| spectrum(id))
        .collect();
    let passing_spectra: Vec<_> = ids
        .iter()
        .filter(|id| outcome(id).is_some_and(|o| o.passed()))
        .filter_map(|id| spectrum(id))
        .collect();
    let ranked = rank(&failing_spectra, &passing_spectra);
    if ranked.is_empty() {
        bail!(
            "the failing tests entered none of the project's own functions: the fault is in the tests themselves or in an installed package"
        );
    }
    if args.json {
        println!("{}", serde_json::to_string(&ranked[..ranked.len().min(args.k)])?);
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{} failing and {} passing tests run in a throw-away copy of {} ({})",
        failing_spectra.len(),
        passing_spectra.len(),
        root.display(),
        runner.confinement().describe()
    );
    for (i, c) in ranked.iter().take(args.k).enumerate() {
        println!("{:>2}. {}:{}  {}  score {:.2}", i + 1, c.file, c.line, c.name, c.score);
        println!("    {}", c.why(failing_spectra.len()));
    }
    Ok(ExitCode::SUCCESS)
}
