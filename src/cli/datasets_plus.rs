//! `rgd datasets plus NAME`: writes NAME-plus (see `crate::plus`), a dataset in rgd's own format
//! beside a README.txt that says how it was made, and reports tests per task before and after.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use futures::StreamExt;

use super::args::Tasks;
use crate::dataset::{BROKEN_SUFFIX, BrokenTask, rgd_record, sidecar_path, write_broken};
use crate::plus::reduce::{Reduction, reduce};
use crate::plus::{Extended, PlusOptions, extend};
use crate::sandbox::{SandboxKind, make_executor};

/// The seed the shipped plus datasets were made with.
pub const DEFAULT_SEED: u64 = 20_241_002;

#[derive(Debug, clap::Args)]
pub struct Plus {
    #[command(flatten)]
    pub tasks: Tasks,
    /// The mutation's seed
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Generated tests kept per task, at most
    #[arg(long, default_value_t = 30, value_parser = crate::validate::parse_count)]
    pub per_task: usize,
    /// Where to write it [default: datasets/<name>_plus/tasks.jsonl]
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep, of each task's generated tests, the fewest that still kill every mutant of its
    /// reference the whole suite kills (EvalPlus's reduction; the task's own tests all stay)
    #[arg(long)]
    pub reduce: bool,
    /// Mutants of each reference the reduction runs, spread over all it has
    #[arg(long, default_value_t = 20, value_parser = crate::validate::parse_count, requires = "reduce")]
    pub mutants: usize,
}

pub async fn execute(data_dir: Option<&Path>, how: Plus) -> anyhow::Result<ExitCode> {
    let mut ds = how.tasks.load(data_dir)?;
    let tasks = std::mem::take(&mut ds.tasks);
    let (name, path) = (ds.name.clone(), ds.path.clone());
    let out = how.out.clone().unwrap_or_else(|| {
        PathBuf::from("datasets")
            .join(format!("{}_plus", name.replace('-', "_")))
            .join("tasks.jsonl")
    });
    // Always the wasm sandbox: the reference solutions are code from a dataset, never run on the host.
    let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}"))?;
    let options = PlusOptions {
        seed: how.seed,
        per_task: how.per_task,
    };
    let started = Instant::now();
    let parallel = how.tasks.concurrency.unwrap_or_else(crate::sandbox::cores);
    let bar = crate::launch::project::Progress::new();
    let total = tasks.len();
    let mut done = 0;
    // In dataset order whatever finishes first: the file is the same on every run.
    let mut extended: Vec<Extended> = Vec::with_capacity(total);
    let mut reductions: Vec<Reduction> = Vec::with_capacity(total);
    let (reducing, mutants) = (how.reduce, how.mutants);
    let mut stream = futures::stream::iter(tasks.into_iter().map(Arc::new))
        .map(|task| {
            let executor = executor.clone();
            // Each task on the runtime's own workers: futures polled by one stream share a thread.
            tokio::spawn(async move {
                let e = extend(&*executor, &task, options).await;
                match reducing {
                    true => reduce(&*executor, e, mutants).await,
                    false => (e, Reduction::default()),
                }
            })
        })
        .buffered(parallel);
    while let Some(e) = stream.next().await {
        done += 1;
        bar.set(
            if reducing {
                "extending and reducing tasks"
            } else {
                "extending tasks"
            },
            done,
            total,
        );
        let (e, r) = e.context("a task's generation stopped")?;
        extended.push(e);
        reductions.push(r);
    }
    bar.finish();
    let mut jsonl = String::new();
    for e in &extended {
        jsonl.push_str(&rgd_record(&e.task)?);
        jsonl.push('\n');
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    }
    std::fs::write(&out, &jsonl).with_context(|| out.display().to_string())?;
    let ids: Vec<&str> = extended.iter().map(|e| e.task.id.as_str()).collect();
    let why = "the generated tests take their expected values from the same\nreference, so a wrong reference makes them wrong too";
    carry_broken(&ds.broken, &ids, ("rgd datasets plus", why), &path, &out)?;
    let mut summary = Summary::of(&extended);
    summary.reduced = reducing.then(|| ReducedSummary::of(&reductions));
    let readme = readme(&name, &path, &ds.sha256, &how, &summary);
    let readme_path = out.with_file_name("README.txt");
    std::fs::write(&readme_path, readme).with_context(|| readme_path.display().to_string())?;
    println!(
        "{name}-plus: {} tasks in {:.1}s, written to {}",
        extended.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    print!("{}", summary.text());
    Ok(ExitCode::SUCCESS)
}

/// The base's broken tasks are broken in a dataset made from it too (the plus tests take their
/// expected values from the same reference, an impossible variant keeps its hidden tests), so
/// the list of those among `kept` goes beside the new file. `made_by` names the command, `why`
/// says why they stay broken (its header's words).
pub(super) fn carry_broken(
    broken: &[BrokenTask],
    kept: &[&str],
    (made_by, why): (&str, &str),
    source: &Path,
    out: &Path,
) -> anyhow::Result<()> {
    let target = sidecar_path(out, BROKEN_SUFFIX);
    let kept: Vec<BrokenTask> = broken.iter().filter(|b| kept.contains(&b.task.as_str())).cloned().collect();
    if kept.is_empty() {
        return match std::fs::remove_file(&target) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).with_context(|| target.display().to_string()),
            _ => Ok(()),
        };
    }
    let header = format!(
        "Tasks broken in the data, carried over by `{made_by}` from\n\
         {} ({why}). `rgd datasets verify` reports them\n\
         apart; `--exclude-broken` (sweep, experiment, eval) leaves them out.",
        sidecar_path(&source_folder_and_file(source), BROKEN_SUFFIX).display()
    );
    write_broken(&target, &header, &kept).with_context(|| target.display().to_string())
}

/// The source's folder and file: where it sits under a data directory (`mbpp_ldb/probs.jsonl`).
pub(super) fn source_folder_and_file(source: &Path) -> PathBuf {
    let mut tail: Vec<_> = source.iter().rev().take(2).collect();
    tail.reverse();
    tail.into_iter().collect()
}

/// Tests per task before and after, and the tasks left as they were.
struct Summary {
    tasks: usize,
    hidden_before: usize,
    hidden_after: usize,
    tried: usize,
    unchanged: Vec<(String, String)>,
    reduced: Option<ReducedSummary>,
}

/// What the reduction kept, over all tasks.
struct ReducedSummary {
    generated: usize,
    kept: usize,
    mutants: usize,
    killed: usize,
}

impl ReducedSummary {
    fn of(reductions: &[Reduction]) -> ReducedSummary {
        let sum = |f: fn(&Reduction) -> usize| reductions.iter().map(f).sum();
        ReducedSummary {
            generated: sum(|r| r.generated),
            kept: sum(|r| r.kept),
            mutants: sum(|r| r.mutants),
            killed: sum(|r| r.killed),
        }
    }
}

impl Summary {
    fn of(extended: &[Extended]) -> Summary {
        Summary {
            tasks: extended.len(),
            hidden_before: extended
                .iter()
                .map(|e| cases(&e.task.hidden[..e.task.hidden.len() - e.added]))
                .sum(),
            hidden_after: extended.iter().map(|e| cases(&e.task.hidden)).sum(),
            tried: extended.iter().map(|e| e.tried).sum(),
            unchanged: extended
                .iter()
                .filter_map(|e| e.note.clone().map(|n| (e.task.id.clone(), n)))
                .collect(),
            reduced: None,
        }
    }

    fn text(&self) -> String {
        let per = |n: usize| n as f64 / self.tasks.max(1) as f64;
        let mut s = format!(
            "hidden test cases per task (asserts; a check() counts its asserts): {:.1} before, {:.1} after ({} generated inputs tried, {} kept)\n",
            per(self.hidden_before),
            per(self.hidden_after),
            self.tried,
            self.hidden_after - self.hidden_before
        );
        if let Some(r) = &self.reduced {
            let _ = writeln!(
                s,
                "reduced by mutant killing: {} of {} generated tests kept; with the tasks' own tests they kill the same {} of {} reference mutants as the whole suite",
                r.kept, r.generated, r.killed, r.mutants
            );
        }
        if !self.unchanged.is_empty() {
            let _ = writeln!(s, "{} tasks left as they were:", self.unchanged.len());
            for (id, why) in &self.unchanged {
                let _ = writeln!(s, "  {id}: {why}");
            }
        }
        s
    }
}

/// Test cases: an assert each, a `check()` as many as the asserts it holds.
fn cases(tests: &[crate::dataset::TestCase]) -> usize {
    use crate::dataset::TestCase;
    tests
        .iter()
        .map(|t| match t {
            TestCase::Check { src } => src.lines().filter(|l| l.trim_start().starts_with("assert")).count().max(1),
            _ => 1,
        })
        .sum()
}

fn readme(name: &str, source: &Path, sha256: &str, how: &Plus, summary: &Summary) -> String {
    format!(
        "{name}-plus: {name} with extra hidden tests, made offline by rgd the way EvalPlus made HumanEval+\n\
         and MBPP+ (type-aware mutation of the tests' own inputs; expected outputs from the reference\n\
         solution, run only in rgd's wasm sandbox; inputs it raises on, runs more than 100,000 Python lines\n\
         on, answers with something that is not plain data, or answers differently twice, dropped).\n\
         Visible tests are the original ones, unchanged; hidden tests are the original ones followed by\n\
         the generated ones. Format: rgd's own task records (\"rgd\": 1). Beside it, when present:\n\
         tasks.broken.toml (the base's tasks broken in the data, carried over) and tasks.limits.json\n\
         (per-task time limits: rgd datasets limits {name}-plus).\n\n\
         written by rgd datasets plus, from {} (sha256 {sha256}), visible/hidden split seed {}\n\
         command: rgd datasets plus {name} --seed {} --per-task {}{}{}\n\n{}",
        source_folder_and_file(source).display(),
        how.tasks.split_seed,
        how.seed,
        how.per_task,
        how.tasks.limit.map(|n| format!(" --limit {n}")).unwrap_or_default(),
        if how.reduce {
            format!(" --reduce --mutants {}", how.mutants)
        } else {
            String::new()
        },
        summary.text()
    )
}
