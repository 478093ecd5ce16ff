//! One run of the agents on one task built from the user's code (`rgd solve`, `rgd solve --repo`,
//! each candidate of `rgd fix`), and writing its result back with a backup.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use sha2::{Digest, Sha256};

use super::print::PrinterMode;
use super::{Front, execute};
use crate::config::Configured;
use crate::dataset::UserTask;
use crate::launch::{RunPlan, load_dataset_named, new_run, select_tasks};
use crate::store::{Home, RunStore};

/// What an attempt takes from the command's flags: the run's plan and where its results go.
#[derive(Debug, Clone)]
pub struct AttemptSettings {
    pub plan: RunPlan,
    pub split_seed: u64,
    pub max_iters: Option<u32>,
    /// JSON lines on stdout instead of the printer's lines.
    pub json: bool,
    /// Export samples, results and summary here when the run ends.
    pub out: Option<PathBuf>,
    /// Watch it in the TUI.
    pub tui: bool,
}

impl AttemptSettings {
    /// `plan`'s run with the command-line defaults for the rest: the default split, no
    /// iteration bound of its own, lines printed, nothing exported.
    pub fn new(plan: RunPlan) -> AttemptSettings {
        AttemptSettings {
            plan,
            split_seed: crate::dataset::DEFAULT_SPLIT_SEED,
            max_iters: None,
            json: false,
            out: None,
            tui: false,
        }
    }
}

/// A last check of the program about to be written, in a fresh place (`Err` says why not).
pub type Verify<'a> = &'a (dyn Fn(&str) -> anyhow::Result<()> + Sync);

/// Told a run's id and its task's id once it is prepared: a view elsewhere (`rgd fix --tui`)
/// follows its journal, and the run itself prints nothing.
pub type Watcher<'a> = &'a (dyn Fn(&str, &str) + Sync);

/// One run of the agents on one task.
pub struct Attempt {
    pub code: ExitCode,
    /// The task's result (none when the run recorded none, e.g. it was stopped).
    pub result: Option<crate::record::TaskResult>,
    pub run_id: String,
    pub mode: PrinterMode,
}

/// Runs the agents on `task`, recorded as a run of its own: the task is written as a one-line
/// dataset in the state directory, named by its content, so a resume, a replay or a fork finds it
/// again and the run's dataset hash says exactly what was asked. Code to repair is the first
/// iteration's program.
pub async fn run_agents(
    home: &Home,
    configured: &Configured<'_>,
    mut common: AttemptSettings,
    quiet: bool,
    task: &UserTask,
    watcher: Option<Watcher<'_>>,
) -> anyhow::Result<Attempt> {
    // Watched from elsewhere: notes and progress lines would write over that view, and the run
    // has no debugger of its own there (its stdin reader would take the view's keys).
    if watcher.is_some() {
        common.tui = false;
    }
    let say: &dyn Fn(&str) = match watcher {
        Some(_) => &|_: &str| {},
        None => &crate::launch::stderr_line,
    };
    let record = task.record.to_string();
    let digest = hex::encode(&Sha256::digest(record.as_bytes())[..6]);
    let dir = home.root.join("solve");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let slug: String = task
        .task_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dataset_path = dir.join(format!("{slug}-{digest}.jsonl"));
    std::fs::write(&dataset_path, format!("{record}\n"))?;
    if !task.is_stub && common.plan.seed_from.is_none() {
        let seeds = dir.join(format!("{slug}-{digest}.seed.jsonl"));
        let line = serde_json::json!({"task_id": task.task_id, "completion": task.module});
        std::fs::write(&seeds, format!("{line}\n"))?;
        common.plan.seed_from = Some(seeds.display().to_string());
    }
    let dataset = load_dataset_named(&dataset_path.display().to_string(), None, common.split_seed, say)?;
    let tasks = select_tasks(&dataset, std::slice::from_ref(&task.task_id), None, false)?.tasks;
    let settings = configured.settings(Some(1), common.max_iters);
    let prepared = new_run(home, &settings, &common.plan, dataset, tasks, say).await?;
    let run_id = prepared.store.run_id.clone();
    let mode = match (watcher.is_some(), common.json, quiet) {
        (true, _, _) => PrinterMode::Silent,
        (false, true, _) => PrinterMode::Json,
        (false, false, true) => PrinterMode::Quiet,
        (false, false, false) => PrinterMode::Detailed,
    };
    if let Some(watch) = watcher {
        watch(&run_id, &task.task_id);
    }
    let front = Front {
        out: common.out.as_deref(),
        tui: common.tui,
    };
    let code = execute(prepared, mode, &front).await?;
    let store = RunStore::open(home, &run_id)?;
    let result = store.results()?.into_iter().find(|r| r.task_id == task.task_id);
    Ok(Attempt {
        code,
        result,
        run_id,
        mode,
    })
}

/// Puts `text` in `file`, keeping the old file as FILE.orig (said on stderr).
pub fn write_keeping_backup(file: &Path, text: &str) -> anyhow::Result<()> {
    let backup = PathBuf::from(format!("{}.orig", file.display()));
    std::fs::copy(file, &backup).with_context(|| format!("keeping {}", backup.display()))?;
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))?;
    eprintln!("wrote {} (the old file is {})", file.display(), backup.display());
    Ok(())
}

/// How a solve runs and ends: the run's settings, how much it prints, whether it writes.
pub struct How {
    pub common: AttemptSettings,
    pub quiet: bool,
    pub write: bool,
}

/// Runs the agents on `task` (one function of `file`), then shows the diff and, with --write,
/// puts the program in `file` once the result is proven (`TaskResult::proven`: it passed and no
/// program of the task tampered with its tests) and `verify` (when given) passed it again,
/// keeping the old file as FILE.orig.
pub async fn solve_task(
    home: &Home,
    configured: &Configured<'_>,
    how: How,
    task: UserTask,
    file: &Path,
    verify: Option<Verify<'_>>,
) -> anyhow::Result<ExitCode> {
    let Attempt { code, result, mode, .. } = run_agents(home, configured, how.common, how.quiet, &task, None).await?;
    let Some(result) = result else {
        return Ok(code);
    };
    // Passed with the program in the tests' process: never solved, and a status of its own
    // whether it is written (--allow-in-process) or not.
    let code = match result.unverified() {
        Some(_) => super::exit::code(super::exit::UNVERIFIED),
        None => code,
    };
    if !task.has_hidden {
        eprintln!("no hidden tests were used (--hidden): \"solved\" means the visible tests pass");
    }
    if result.completion.is_empty() || result.completion == task.module {
        eprintln!("{:?}: no change to {}", result.status, file.display());
        return Ok(code);
    }
    let diff = crate::code::unified_diff(&task.module, &result.completion);
    if mode != PrinterMode::Json {
        println!("{}", crate::terminal::clean(&diff));
    }
    if !how.write {
        return Ok(code);
    }
    let checked = result
        .proven()
        .map_err(anyhow::Error::msg)
        .and_then(|()| verify.map_or(Ok(()), |v| v(&result.completion)));
    match checked {
        Ok(()) => {
            write_keeping_backup(file, &result.completion)?;
            Ok(code)
        }
        Err(why) => {
            eprintln!("not written: {why:#}");
            Ok(if result.passed { ExitCode::FAILURE } else { code })
        }
    }
}
