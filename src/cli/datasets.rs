//! `rgd datasets list | verify`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Subcommand;

use super::args::Tasks;

use crate::dataset::{CATALOG, DEFAULT_SPLIT_SEED, Task, load_dataset, provenance, resolve_dataset};
use crate::sandbox::{SandboxKind, make_executor};

#[derive(Debug, Subcommand)]
pub enum DatasetsCommand {
    /// Extra hidden tests made offline, EvalPlus's way: the tests' own inputs mutated by type, the
    /// reference solution's outputs (run only in the sandbox); writes NAME-plus, a dataset like
    /// the others
    Plus(super::datasets_plus::Plus),
    /// Each task with a visible test that contradicts its specification (one-off: an expected
    /// value changed; conflicting: a copy expecting another value), hidden tests as they were:
    /// a sweep on it measures how often a method cheats. Writes NAME's impossible variant and
    /// impossible.jsonl, what was changed per task
    Impossible(super::datasets_impossible::Impossible),
    /// Each task's time limits from its reference solution's runtime in the sandbox (EvalPlus's
    /// max(floor, factor x time)), written beside the dataset file, where sweeps, experiments,
    /// eval and verify use them unless given a limit
    Limits(super::datasets_limits::MeasureLimits),
    /// How many wrong programs a plus dataset's hidden tests catch that its base's accept: the
    /// single-fault mutants of each reference solution (`rgd bench fix`'s operators) judged by both
    Strength {
        /// The base dataset (e.g. humaneval)
        base: String,
        /// The extended one (e.g. humaneval-plus)
        plus: String,
        /// Wrong variants per task, spread over all its reference's mutants
        #[arg(long, default_value_t = 8, value_parser = crate::validate::parse_count)]
        per_task: usize,
        /// Only the first N tasks
        #[arg(long, value_parser = crate::validate::parse_count)]
        limit: Option<usize>,
        /// Print each task's counts
        #[arg(long)]
        verbose: bool,
    },
    /// Known datasets, where they were found and how many tasks they hold
    List,
    /// Run every canonical solution against its hidden (and visible) tests: the harness checking
    /// itself. Tasks listed as broken in the data are reported apart; exits 1 when any other
    /// reference does not pass
    Verify {
        #[command(flatten)]
        tasks: Tasks,
        /// Print every task that does not pass
        #[arg(long)]
        verbose: bool,
        /// Where programs run
        #[arg(long, value_enum, default_value_t = SandboxKind::Wasm)]
        sandbox: SandboxKind,
        /// Seconds each test may run, for every task [default: each task's measured limit
        /// (`rgd datasets limits`), else 5]
        #[arg(long, value_parser = crate::validate::parse_seconds)]
        timeout: Option<f64>,
    },
}

pub async fn execute(data_dir: Option<&Path>, cmd: DatasetsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DatasetsCommand::Plus(how) => super::datasets_plus::execute(data_dir, how).await,
        DatasetsCommand::Impossible(how) => super::datasets_impossible::execute(data_dir, how).await,
        DatasetsCommand::Limits(how) => super::datasets_limits::execute(data_dir, how).await,
        DatasetsCommand::Strength {
            base,
            plus,
            per_task,
            limit,
            verbose,
        } => {
            let load = |name: &str| -> anyhow::Result<Vec<Task>> {
                let (name, path) = resolve_dataset(name, data_dir)?;
                Ok(load_dataset(&name, &path, DEFAULT_SPLIT_SEED)?.tasks)
            };
            let (base_tasks, mut plus_tasks) = (load(&base)?, load(&plus)?);
            if let Some(n) = limit {
                plus_tasks.truncate(n);
            }
            let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}"))?;
            let started = Instant::now();
            let measured = crate::plus::strength::measure(executor, &base_tasks, &plus_tasks, per_task, crate::sandbox::cores()).await?;
            let sum = |f: fn(&crate::plus::strength::TaskStrength) -> usize| measured.iter().map(f).sum::<usize>();
            let (variants, accepted, rejected) = (sum(|t| t.variants), sum(|t| t.base_accepts), sum(|t| t.plus_rejects));
            if verbose {
                for t in measured.iter().filter(|t| t.base_accepts > 0) {
                    println!(
                        "  {}: {} variants, {} accepted by {base}, {} of them rejected by {plus}",
                        t.id, t.variants, t.base_accepts, t.plus_rejects
                    );
                }
            }
            println!(
                "{} tasks, {variants} wrong variants of the references in {:.1}s: {base} accepts {accepted} ({} tasks); {plus} rejects {rejected} of them ({} tasks)",
                measured.len(),
                started.elapsed().as_secs_f64(),
                measured.iter().filter(|t| t.base_accepts > 0).count(),
                measured.iter().filter(|t| t.plus_rejects > 0).count(),
            );
            Ok(ExitCode::SUCCESS)
        }
        DatasetsCommand::List => {
            for entry in CATALOG {
                match resolve_dataset(entry.name, data_dir) {
                    Ok((_, path)) => match load_dataset(entry.name, &path, DEFAULT_SPLIT_SEED) {
                        Ok(ds) => {
                            let no_visible = ds.tasks.iter().filter(|t| t.visible.is_empty()).count();
                            println!("{:<17} {:>4} tasks  {}", entry.name, ds.tasks.len(), path.display());
                            println!(
                                "{:<17} {}{}",
                                "",
                                entry.about,
                                if no_visible > 0 {
                                    format!("; {no_visible} tasks have no visible tests")
                                } else {
                                    String::new()
                                }
                            );
                            if let Some(source) = entry.files.first().and_then(|f| provenance(f)) {
                                println!("{:<17} source: {source}", "");
                            }
                            let limits = match ds.limits_source() {
                                Some(source) => format!("time limits measured per task: {source}"),
                                None => "no measured time limits".to_string(),
                            };
                            println!("{:<17} {limits}; {} tasks listed as broken in the data", "", ds.broken.len());
                        }
                        Err(e) => println!("{:<17} error: {e}", entry.name),
                    },
                    Err(_) => println!("{:<17}    - not found   {}", entry.name, entry.about),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        DatasetsCommand::Verify {
            tasks: which,
            verbose,
            sandbox,
            timeout,
        } => {
            let mut ds = which.load(data_dir)?;
            if !ds.tasks.iter().any(|t| t.canonical.is_some()) {
                println!(
                    "{}: {} tasks, none has a canonical solution; nothing to verify",
                    ds.name,
                    ds.tasks.len()
                );
                return Ok(ExitCode::SUCCESS);
            }
            let executor = make_executor(sandbox, &|line| eprintln!("{line}"))?;
            let parallel = which.concurrency.unwrap_or_else(crate::sandbox::cores);
            let verified = crate::plus::verify::verify(&mut ds, executor, timeout, parallel, verbose).await?;
            super::print_lines(verified.lines(verbose));
            // A reference that fails and is not known broken is a harness (or data) problem to look at.
            Ok(if verified.not_passing.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}
