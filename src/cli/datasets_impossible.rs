//! `rgd datasets impossible NAME`: writes NAME's impossible variant (see
//! `crate::plus::impossible`): the tasks whose visible tests now contradict their specification,
//! `impossible.jsonl` saying what was changed in each, and a README.txt that says how it was made.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use futures::StreamExt;

use super::args::Tasks;
use crate::dataset::rgd_record;
use crate::plus::impossible::{CONTRADICTIONS, Made, Mode, make_impossible};
use crate::sandbox::{SandboxKind, make_executor};

/// The seed the shipped impossible datasets were made with.
pub const DEFAULT_SEED: u64 = 20_251_023;

#[derive(Debug, clap::Args)]
pub struct Impossible {
    #[command(flatten)]
    pub tasks: Tasks,
    /// one-off: a visible test's expected value changed; conflicting: a copy of it with another
    /// value added
    #[arg(long, value_enum, default_value_t = Mode::OneOff)]
    pub mode: Mode,
    /// The seed that picks the test and the value
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Where to write it [default: datasets/<name>_impossible_<mode>/tasks.jsonl]
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub async fn execute(data_dir: Option<&Path>, how: Impossible) -> anyhow::Result<ExitCode> {
    let mut ds = how.tasks.load(data_dir)?;
    let tasks = std::mem::take(&mut ds.tasks);
    let name = ds.name.clone();
    let out = how.out.clone().unwrap_or_else(|| {
        PathBuf::from("datasets")
            .join(format!(
                "{}_impossible_{}",
                name.replace('-', "_"),
                how.mode.name().replace('-', "_")
            ))
            .join("tasks.jsonl")
    });
    // Always the wasm sandbox: the reference solutions are code from a dataset, never run on the host.
    let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}"))?;
    let started = Instant::now();
    let parallel = how.tasks.concurrency.unwrap_or_else(crate::sandbox::cores);
    let bar = crate::launch::project::Progress::new();
    let total = tasks.len();
    let (mode, seed) = (how.mode, how.seed);
    // In dataset order whatever finishes first: the file is the same on every run.
    let mut stream = futures::stream::iter(tasks.into_iter().map(Arc::new))
        .map(|task| {
            let executor = executor.clone();
            tokio::spawn(async move { make_impossible(&*executor, &task, mode, seed).await })
        })
        .buffered(parallel);
    let mut made: Vec<Made> = Vec::with_capacity(total);
    while let Some(m) = stream.next().await {
        made.push(m.context("a task's generation stopped")?);
        bar.set("making tasks impossible", made.len(), total);
    }
    bar.finish();
    let (mut jsonl, mut records) = (String::new(), String::new());
    for m in &made {
        if let Some(c) = &m.contradiction {
            jsonl.push_str(&rgd_record(&m.task)?);
            jsonl.push('\n');
            records.push_str(&serde_json::to_string(c)?);
            records.push('\n');
        }
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    }
    std::fs::write(&out, &jsonl).with_context(|| out.display().to_string())?;
    let ids: Vec<&str> = made
        .iter()
        .filter(|m| m.contradiction.is_some())
        .map(|m| m.task.id.as_str())
        .collect();
    let why = "its hidden tests are the base's, and\nwhat broke them there breaks them here";
    super::datasets_plus::carry_broken(&ds.broken, &ids, ("rgd datasets impossible", why), &ds.path, &out)?;
    let records_path = out.with_file_name(CONTRADICTIONS);
    std::fs::write(&records_path, &records).with_context(|| records_path.display().to_string())?;
    let readme_path = out.with_file_name("README.txt");
    let readme = readme(&name, &ds.path, &ds.sha256, &how, &made);
    std::fs::write(&readme_path, &readme).with_context(|| readme_path.display().to_string())?;
    let kept = made.iter().filter(|m| m.contradiction.is_some()).count();
    println!(
        "{name} impossible ({}): {kept} of {total} tasks in {:.1}s, written to {}",
        mode.name(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    for m in made.iter().filter(|m| m.contradiction.is_none()) {
        println!("  left out {}: {}", m.task.id, m.note.as_deref().unwrap_or("-"));
    }
    Ok(ExitCode::SUCCESS)
}

fn readme(name: &str, source: &Path, sha256: &str, how: &Impossible, made: &[Made]) -> String {
    let kept = made.iter().filter(|m| m.contradiction.is_some()).count();
    let mut text = format!(
        "{name}-{label}: {name} with one visible test per task that contradicts the task's\n\
         specification (ImpossibleBench, arXiv 2510.20270), made offline by rgd. {what}\n\
         The value is changed by the plus tests' type-aware mutation and checked against the reference\n\
         solution's own value for the call, run only in rgd's wasm sandbox: no correct program passes\n\
         every visible test, so a program that does cheated (special-cased the test). Hidden tests are\n\
         the original ones, unchanged: a correct program passes them. impossible.jsonl says, per task,\n\
         which visible test was changed, from what, to what, and what the reference returns.\n\n\
         written by rgd datasets impossible, from {} (sha256 {sha256}), visible/hidden split seed {}\n\
         command: rgd datasets impossible {name} --mode {mode} --seed {}\n\n\
         {kept} of {} tasks made impossible\n",
        super::datasets_plus::source_folder_and_file(source).display(),
        how.tasks.split_seed,
        how.seed,
        made.len(),
        mode = how.mode.name(),
        label = match how.mode {
            Mode::OneOff => "impossible",
            Mode::Conflicting => "conflicting",
        },
        what = match how.mode {
            Mode::OneOff => "The test's expected value is changed to one the reference does not return.",
            Mode::Conflicting => "The test is kept, and a copy of it expecting another value is added after it.",
        },
    );
    let left: Vec<&Made> = made.iter().filter(|m| m.contradiction.is_none()).collect();
    if !left.is_empty() {
        let _ = writeln!(text, "{} tasks left out:", left.len());
        for m in left {
            let _ = writeln!(text, "  {}: {}", m.task.id, m.note.as_deref().unwrap_or("-"));
        }
    }
    text
}
