//! `rgd datasets list | verify`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use clap::Subcommand;

use super::args::Tasks;
use futures::StreamExt;

use crate::dataset::{CATALOG, DEFAULT_SPLIT_SEED, Task, load_dataset, provenance, resolve_dataset};
use crate::engine::{Suite, suite_tests};
use crate::sandbox::{Executor, Job, Limits, RunReport, SandboxKind, TestStatus, make_executor};

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
            let name = ds.name.clone();
            let tasks: Vec<Arc<Task>> = std::mem::take(&mut ds.tasks).into_iter().map(Arc::new).collect();
            let with_solution: Vec<Arc<Task>> = tasks.iter().filter(|t| t.canonical.is_some()).cloned().collect();
            if with_solution.is_empty() {
                println!("{name}: {} tasks, none has a canonical solution; nothing to verify", tasks.len());
                return Ok(ExitCode::SUCCESS);
            }
            let executor = make_executor(sandbox, &|line| eprintln!("{line}"))?;
            let limits = Arc::new(match timeout {
                Some(secs) => Limits {
                    per_test: std::time::Duration::from_secs_f64(secs),
                    ..Limits::default()
                },
                None => Limits::default().with_measured(&ds, tasks.iter().map(|t| t.id.as_str())),
            });
            // An impossible variant's recorded test fails its reference by design: the visible
            // suite checks out when that test, and only that one, fails.
            let made_to_fail: Arc<std::collections::HashMap<String, usize>> = Arc::new(if ds.impossible {
                crate::plus::impossible::read_contradictions(&ds.path)?
                    .into_iter()
                    .map(|(id, c)| (id, c.visible_index))
                    .collect()
            } else {
                Default::default()
            });
            let parallel = which.concurrency.unwrap_or_else(crate::sandbox::cores);
            let started = Instant::now();
            let outcomes: Vec<Checked> = futures::stream::iter(with_solution)
                .map(|task| {
                    let executor = executor.clone();
                    let limits = limits.clone();
                    let made_to_fail = made_to_fail.get(&task.id).copied();
                    tokio::spawn(async move {
                        let limits = limits.for_task(&task.id);
                        let hidden = verify_suite(&*executor, &task, Suite::Hidden, &limits, None).await;
                        let visible = verify_suite(&*executor, &task, Suite::Visible, &limits, made_to_fail).await;
                        Checked { task, hidden, visible }
                    })
                })
                .buffer_unordered(parallel)
                .collect::<Vec<_>>()
                .await
                .into_iter()
                // A check that stopped is an error, not a task left out of the counts.
                .collect::<Result<_, _>>()
                .context("a reference's check stopped")?;
            let (broken, counted): (Vec<&Checked>, Vec<&Checked>) = outcomes.iter().partition(|o| ds.broken_reason(&o.task.id).is_some());
            println!(
                "{name}: {} tasks with a canonical solution ({} without) in {:.1}s ({} sandbox, {})",
                outcomes.len(),
                tasks.len() - outcomes.len(),
                started.elapsed().as_secs_f64(),
                executor.name(),
                match (timeout, &limits.per_task_from) {
                    (Some(secs), _) => format!("{secs} s per test"),
                    (None, Some(source)) => format!("each task's measured limit, {source}"),
                    (None, None) => format!("{} s per test: no measured limits", Limits::default().per_test.as_secs_f64()),
                }
            );
            let count = |pick: fn(&Checked) -> Verdict, v: Verdict| counted.iter().filter(|o| pick(o) == v).count();
            let hidden = |o: &Checked| o.hidden.0;
            let visible = |o: &Checked| o.visible.0;
            println!(
                "  hidden tests:  {} passed, {} failed, {} errored",
                count(hidden, Verdict::Passed),
                count(hidden, Verdict::Failed),
                count(hidden, Verdict::Errored)
            );
            println!(
                "  visible tests: {} passed, {} failed, {} errored{}",
                count(visible, Verdict::Passed),
                count(visible, Verdict::Failed),
                count(visible, Verdict::Errored),
                if ds.impossible {
                    " (an impossible dataset: passed = every visible test passes but the one made to contradict the task, which fails, as it was made to)"
                } else {
                    ""
                }
            );
            let passes = |o: &Checked| o.hidden.0 == Verdict::Passed && o.visible.0 == Verdict::Passed;
            if !broken.is_empty() {
                println!(
                    "  excluded, broken in the data ({}; {}):",
                    broken.len(),
                    crate::dataset::sidecar_path(&ds.path, crate::dataset::BROKEN_SUFFIX).display()
                );
                let mut broken = broken.clone();
                broken.sort_by(|a, b| a.task.id.cmp(&b.task.id));
                for o in broken {
                    let stale = if passes(o) {
                        " [its reference now passes: the list is out of date]"
                    } else {
                        ""
                    };
                    println!("    {}: {}{stale}", o.task.id, ds.broken_reason(&o.task.id).unwrap_or_default());
                }
            }
            let mut bad: Vec<String> = counted
                .iter()
                .filter(|o| !passes(o))
                .map(|o| {
                    let mut line = format!("{} (hidden {:?}, visible {:?})", o.task.id, o.hidden.0, o.visible.0);
                    if verbose {
                        let detail = if o.hidden.0 != Verdict::Passed { &o.hidden.1 } else { &o.visible.1 };
                        line.push_str(&format!(": {detail}"));
                    }
                    line
                })
                .collect();
            bad.sort();
            if bad.is_empty() {
                println!("  every reference not listed as broken passes");
                return Ok(ExitCode::SUCCESS);
            }
            if verbose {
                for b in &bad {
                    println!("  not passing: {b}");
                }
            } else {
                println!("  not passing: {}", bad.join(", "));
            }
            // A reference that fails and is not known broken is a harness (or data) problem to look at.
            Ok(ExitCode::FAILURE)
        }
    }
}

/// One task's canonical solution against both suites: verdict and the first problem seen.
struct Checked {
    task: Arc<Task>,
    hidden: (Verdict, String),
    visible: (Verdict, String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Passed,
    Failed,
    Errored,
}

/// `made_to_fail`: the index of a visible test made to contradict the task (an impossible
/// dataset's), whose failure, alone, is the suite checking out.
async fn verify_suite(
    executor: &dyn Executor,
    task: &Task,
    suite: Suite,
    limits: &Limits,
    made_to_fail: Option<usize>,
) -> (Verdict, String) {
    let code = task.canonical.as_deref().unwrap_or_default();
    let tests = suite_tests(task, suite);
    let job = Job {
        code,
        kind: &task.kind,
        entry_point: &task.entry_point,
        tests,
        limits,
    };
    match executor.run(job).await {
        Ok(report) => match made_to_fail {
            Some(index) => as_made(&report, tests, index),
            None => (classify(&report), first_problem(&report, tests)),
        },
        Err(e) => (Verdict::Errored, e.to_string()),
    }
}

/// An impossible task's visible suite: passed when the test made to contradict the task fails
/// and every other one passes.
fn as_made(report: &RunReport, tests: &[crate::dataset::TestCase], index: usize) -> (Verdict, String) {
    let made = report.tests.iter().find(|t| t.index == index);
    let others_pass = report
        .tests
        .iter()
        .filter(|t| t.index != index)
        .all(|t| t.status == TestStatus::Passed);
    match made.map(|t| t.status) {
        Some(TestStatus::Failed) if others_pass => (Verdict::Passed, String::new()),
        Some(TestStatus::Passed) => (
            Verdict::Failed,
            format!(
                "the reference passes the test made to contradict the task (visible test {})",
                index + 1
            ),
        ),
        _ if made.is_none() => (Verdict::Errored, format!("no visible test {} to fail as made", index + 1)),
        _ => {
            let detail = first_problem(report, tests);
            (classify(report), detail)
        }
    }
}

/// The first test that did not pass, as one line.
fn first_problem(report: &RunReport, tests: &[crate::dataset::TestCase]) -> String {
    let Some(t) = report.tests.iter().find(|t| t.status != TestStatus::Passed) else {
        return String::new();
    };
    let label = tests.get(t.index).map(|c| c.label()).unwrap_or_default();
    let mut s = format!("{:?} `{}`", t.status, label.chars().take(120).collect::<String>());
    if let Some(g) = &t.got {
        s.push_str(&format!(" got {g}"));
    }
    if let Some(x) = &t.exc_type {
        s.push_str(&format!(" {x}: {}", t.exc_msg.as_deref().unwrap_or("")));
    }
    s
}

fn classify(report: &RunReport) -> Verdict {
    if report.all_passed() {
        Verdict::Passed
    } else if report.tests.iter().any(|t| t.status == TestStatus::Failed) {
        Verdict::Failed
    } else {
        Verdict::Errored
    }
}
