//! Slurm: a sweep as a job array of shards and a merge job that waits for it. rgd writes two
//! sbatch scripts and calls `sbatch`; Slurm schedules, requeues and cancels. What a sweep is
//! (its id, shards, jobs) is kept in `$RGD_HOME/slurm/<id>.json`; how far it got is read from
//! `squeue` (queued and running elements) and from the shards' own run records (everything else),
//! so the status is right even after Slurm has forgotten the jobs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::record::{RunState, RunStatus};
use crate::store::Home;

/// What the scripts run, and where.
#[derive(Debug, Clone)]
pub struct ScriptSpec {
    /// The sweep's id: the merged run's id; shard K is the run `<id>-s<K>`.
    pub id: String,
    pub shards: u32,
    pub partition: Option<String>,
    pub time: Option<String>,
    pub cpus_per_task: Option<u32>,
    /// More `#SBATCH` lines, as given (`--mem=8G`, `--account=lab`).
    pub sbatch_args: Vec<String>,
    /// Scripts, logs and the memory snapshot.
    pub state_dir: PathBuf,
    /// The rgd binary the jobs run (it must be visible from the compute nodes).
    pub rgd: PathBuf,
    pub rgd_home: PathBuf,
    /// The directory relative paths in the flags mean (the submitter's working directory).
    pub workdir: PathBuf,
    /// Flags before the subcommand (`--config`, `--data-dir`, endpoint flags).
    pub global_args: Vec<String>,
    /// What each shard runs, and what the merge job merges.
    pub work: Work,
}

/// What a job array's shards run.
#[derive(Debug, Clone)]
pub enum Work {
    /// `rgd sweep` with these flags, each shard a run of its own (`<id>-sK`) starting from the
    /// pool `snapshot`; the merge job merges the runs.
    Sweep { args: Vec<String>, snapshot: Option<PathBuf> },
    /// `rgd bench real` with these flags, each shard its part of the chosen instances; the merge
    /// job merges the shards' `results` files into `merged`.
    BenchReal {
        args: Vec<String>,
        results: Vec<PathBuf>,
        merged: PathBuf,
    },
}

impl Work {
    /// The `rgd slurm` command that submits it.
    fn command(&self) -> &'static str {
        match self {
            Work::Sweep { .. } => "submit",
            Work::BenchReal { .. } => "bench-real",
        }
    }
}

/// A submitted sweep, as `$RGD_HOME/slurm/<id>.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlurmSweep {
    pub id: String,
    pub shards: u32,
    pub created_at: DateTime<Utc>,
    pub state_dir: PathBuf,
    /// The sweep flags, for the record (secrets redacted).
    pub sweep_args: Vec<String>,
    /// Each `sbatch` of shards (the first, then any resubmissions) with its merge job.
    pub submissions: Vec<Submission>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Submission {
    pub array_job: String,
    pub merge_job: String,
    pub indexes: Vec<u32>,
    pub at: DateTime<Utc>,
}

fn quote(s: &str) -> anyhow::Result<String> {
    Ok(shlex::try_quote(s)
        .with_context(|| format!("{s:?} cannot be quoted for a shell script"))?
        .into_owned())
}

fn quoted<'a>(words: impl IntoIterator<Item = &'a str>) -> anyhow::Result<String> {
    Ok(words.into_iter().map(quote).collect::<anyhow::Result<Vec<_>>>()?.join(" "))
}

/// The run of shard `k` of the sweep `sweep`: `<sweep>-s<k>` (`k` may be a shell variable in a
/// script).
pub fn shard_run_id(sweep: &str, k: impl std::fmt::Display) -> String {
    format!("{sweep}-s{k}")
}

/// `0-3` for every index, `1,3` for some.
pub fn array_range(indexes: &[u32], shards: u32) -> String {
    if shards > 0 && indexes.len() == shards as usize && indexes.iter().copied().eq(0..shards) {
        format!("0-{}", shards - 1)
    } else {
        indexes.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    }
}

impl ScriptSpec {
    fn header(&self, name: &str, output: &str) -> anyhow::Result<String> {
        // `#SBATCH` lines are split at spaces: a path with one would be cut short.
        for (what, path) in [("--state-dir", &self.state_dir), ("the working directory", &self.workdir)] {
            let text = path.display().to_string();
            anyhow::ensure!(
                !text.chars().any(|c| c.is_whitespace() || c.is_control()),
                "{what} {text:?}: Slurm's #SBATCH lines cannot hold a path with spaces; use another directory"
            );
        }
        let mut lines = vec![
            "#!/bin/bash".to_string(),
            format!("#SBATCH --job-name={name}"),
            format!("#SBATCH --output={}", self.state_dir.join("logs").join(output).display()),
            "#SBATCH --open-mode=append".to_string(),
            format!("#SBATCH --chdir={}", self.workdir.display()),
        ];
        if let Some(p) = &self.partition {
            lines.push(format!("#SBATCH --partition={p}"));
        }
        if let Some(t) = &self.time {
            lines.push(format!("#SBATCH --time={t}"));
        }
        for arg in &self.sbatch_args {
            anyhow::ensure!(!arg.contains('\n'), "--sbatch-arg {arg:?}: one line only");
            lines.push(format!("#SBATCH {arg}"));
        }
        Ok(lines.join("\n"))
    }

    fn rgd_line(&self, subcommand: &[&str]) -> anyhow::Result<String> {
        let rgd = self.rgd.display().to_string();
        let home = self.rgd_home.display().to_string();
        Ok(format!(
            "export RGD_HOME={}\nexec {} {}",
            quote(&home)?,
            quoted(std::iter::once(rgd.as_str()).chain(self.global_args.iter().map(String::as_str)))?,
            quoted(subcommand.iter().copied())?
        ))
    }

    /// The job array: element K runs shard K/N: of a sweep as the run `<id>-sK`, which it resumes
    /// when it exists (a requeued or resubmitted element goes on where it stopped); of a bench,
    /// its part of the instances.
    pub fn array_script(&self) -> anyhow::Result<String> {
        let mut header = self.header(&format!("rgd-{}", self.id), "shard-%a.out")?;
        header.push_str(&format!("\n#SBATCH --array=0-{}", self.shards.saturating_sub(1)));
        header.push_str("\n#SBATCH --requeue");
        if let Some(c) = self.cpus_per_task {
            header.push_str(&format!("\n#SBATCH --cpus-per-task={c}"));
        }
        let shard = format!("$SLURM_ARRAY_TASK_ID/{}", self.shards);
        let (what, line) = match &self.work {
            Work::Sweep { args, snapshot } => {
                let mut sweep: Vec<&str> = vec!["sweep"];
                sweep.extend(args.iter().map(String::as_str));
                let run_id = shard_run_id(&self.id, "$SLURM_ARRAY_TASK_ID");
                let tail = match snapshot {
                    Some(s) => format!(" --memory-snapshot {}", quote(&s.display().to_string())?),
                    None => String::new(),
                };
                let line = format!("{} --shard \"{shard}\" --run-id \"{run_id}\"{tail}", self.rgd_line(&sweep)?);
                ("the sweep", line)
            }
            Work::BenchReal { args, .. } => {
                let mut bench: Vec<&str> = vec!["bench", "real"];
                bench.extend(args.iter().map(String::as_str));
                ("the bench", format!("{} --shard \"{shard}\" --resume", self.rgd_line(&bench)?))
            }
        };
        Ok(format!(
            "{header}\n\n# Shard $SLURM_ARRAY_TASK_ID of {what} {id}; generated by rgd slurm {}.\nset -eu\n{line}\n",
            self.work.command(),
            id = self.id,
        ))
    }

    /// The merge job: of a sweep, one run from whatever shards exist (partial if some failed),
    /// replacing an earlier merge of the same sweep; of a bench, the shards' results, verified.
    pub fn merge_script(&self) -> anyhow::Result<String> {
        let header = self.header(&format!("rgd-{}-merge", self.id), "merge-%j.out")?;
        let line = match &self.work {
            Work::Sweep { .. } => self.rgd_line(&["slurm", "merge", &self.id])?,
            Work::BenchReal { results, merged, .. } => {
                let (merged, results): (String, Vec<String>) = (
                    merged.display().to_string(),
                    results.iter().map(|r| r.display().to_string()).collect(),
                );
                let mut words = vec!["bench", "real", "merge", "--out", merged.as_str()];
                words.extend(results.iter().map(String::as_str));
                self.rgd_line(&words)?
            }
        };
        let what = match self.work {
            Work::Sweep { .. } => "the sweep",
            Work::BenchReal { .. } => "the bench",
        };
        Ok(format!(
            "{header}\n\n# Merges the shards of {what} {id}; generated by rgd slurm {}.\nset -eu\n{line}\n",
            self.work.command(),
            id = self.id
        ))
    }

    /// Writes both scripts into the state directory; returns their paths.
    pub fn write(&self) -> anyhow::Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(self.state_dir.join("logs")).with_context(|| self.state_dir.display().to_string())?;
        let array = self.state_dir.join("shards.sbatch");
        let merge = self.state_dir.join("merge.sbatch");
        std::fs::write(&array, self.array_script()?).with_context(|| array.display().to_string())?;
        std::fs::write(&merge, self.merge_script()?).with_context(|| merge.display().to_string())?;
        Ok((array, merge))
    }
}

/// `sbatch --parsable ARGS SCRIPT` -> the job id.
fn sbatch(args: &[String], script: &Path, env: &[(String, String)]) -> anyhow::Result<String> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                anyhow::anyhow!("sbatch not found: run this on a Slurm login node (--dry-run prints the scripts)")
            }
            _ => anyhow::anyhow!("sbatch: {e}"),
        })?;
    if !out.status.success() {
        bail!(
            "sbatch {} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // `--parsable` prints "jobid" or "jobid;cluster".
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    anyhow::ensure!(
        id.chars().all(|c| c.is_ascii_digit()) && !id.is_empty(),
        "sbatch answered {text:?}, not a job id"
    );
    Ok(id)
}

/// Submits the shards `indexes` and a merge job that runs once they have all ended, however.
pub fn submit(array: &Path, merge: &Path, indexes: &[u32], shards: u32, env: &[(String, String)]) -> anyhow::Result<Submission> {
    let array_job = sbatch(&[format!("--array={}", array_range(indexes, shards))], array, env)?;
    let merge_job = sbatch(&[format!("--dependency=afterany:{array_job}")], merge, env)?;
    Ok(Submission {
        array_job,
        merge_job,
        indexes: indexes.to_vec(),
        at: Utc::now(),
    })
}

impl SlurmSweep {
    pub fn dir(home: &Home) -> PathBuf {
        home.root.join("slurm")
    }

    pub fn path(home: &Home, id: &str) -> PathBuf {
        Self::dir(home).join(format!("{id}.json"))
    }

    pub fn shard_run_id(&self, k: u32) -> String {
        shard_run_id(&self.id, k)
    }

    /// Is `run_id` this sweep's merged run or one of its shards?
    pub fn owns(&self, run_id: &str) -> bool {
        run_id == self.id || (0..self.shards).any(|k| run_id == self.shard_run_id(k))
    }

    pub fn save(&self, home: &Home) -> anyhow::Result<()> {
        let path = Self::path(home, &self.id);
        std::fs::create_dir_all(Self::dir(home))?;
        crate::store::write_json_atomically(&path, self)?;
        Ok(())
    }

    pub fn load(home: &Home, id: &str) -> anyhow::Result<SlurmSweep> {
        let path = Self::path(home, id);
        let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => anyhow::anyhow!(
                "no Slurm sweep {id} in {} (rgd slurm status lists the sweeps)",
                Self::dir(home).display()
            ),
            _ => anyhow::anyhow!("{}: {e}", path.display()),
        })?;
        serde_json::from_str(&text).with_context(|| format!("{}: not a Slurm sweep record", path.display()))
    }

    /// Every submitted sweep, newest first.
    pub fn list(home: &Home) -> Vec<SlurmSweep> {
        let Ok(dir) = std::fs::read_dir(Self::dir(home)) else {
            return Vec::new();
        };
        let mut all: Vec<SlurmSweep> = dir
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let id = name.strip_suffix(".json")?;
                SlurmSweep::load(home, id).ok()
            })
            .collect();
        all.sort_by_key(|s| std::cmp::Reverse(s.created_at));
        all
    }
}

/// Where one shard is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShardState {
    Queued,
    Running,
    Done,
    /// Ended without finishing its tasks (cancelled, timed out, failed, or never started).
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct ShardStatus {
    pub index: u32,
    pub run_id: String,
    pub state: ShardState,
    /// The Slurm job (`array_index`) when it is in the queue.
    pub job: Option<String>,
    pub tasks: usize,
    pub finished: usize,
    pub solved: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MergeState {
    /// Waiting for the shards (or for a node).
    Queued,
    Running,
    /// The merged run holds every task.
    Done,
    /// A merged run exists but shards were missing.
    Partial,
    /// No merge job in the queue and no merged run.
    Missing,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepStatus {
    pub id: String,
    pub shards: Vec<ShardStatus>,
    pub tasks: usize,
    pub finished: usize,
    pub solved: usize,
    pub merge: MergeState,
    /// Why the queue could not be read (the states then come from the records alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_error: Option<String>,
}

impl SweepStatus {
    /// pass@1 over the tasks finished so far.
    pub fn pass_so_far(&self) -> f64 {
        if self.finished == 0 {
            0.0
        } else {
            self.solved as f64 / self.finished as f64
        }
    }

    pub fn count(&self, state: ShardState) -> usize {
        self.shards.iter().filter(|s| s.state == state).count()
    }
}

/// The sweep's jobs in the queue: job id (`123_2` for an array element) -> Slurm state.
fn queue(sweep: &SlurmSweep) -> Result<Vec<(String, String, String)>, String> {
    let names = format!("rgd-{0},rgd-{0}-merge", sweep.id);
    let out = Command::new("squeue")
        .args(["-h", "-r", "-o", "%i|%T|%j", "--name", &names])
        .output()
        .map_err(|e| format!("squeue: {e}"))?;
    if !out.status.success() {
        return Err(format!("squeue: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.trim().splitn(3, '|');
            Some((f.next()?.to_string(), f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect())
}

fn queued_state(slurm: &str) -> Option<ShardState> {
    match slurm {
        "PENDING" | "REQUEUED" | "REQUEUE_FED" | "REQUEUE_HOLD" | "RESV_DEL_HOLD" | "SUSPENDED" => Some(ShardState::Queued),
        "RUNNING" | "CONFIGURING" | "COMPLETING" | "RESIZING" | "SIGNALING" | "STAGE_OUT" => Some(ShardState::Running),
        _ => None,
    }
}

/// The sweep's state now: the queue for what is waiting or running, the records for the rest.
pub fn status(home: &Home, sweep: &SlurmSweep) -> SweepStatus {
    let (jobs, queue_error) = match queue(sweep) {
        Ok(jobs) => (jobs, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let mut in_queue: HashMap<u32, (String, ShardState)> = HashMap::new();
    let mut merge_in_queue = None;
    for (job, state, name) in &jobs {
        let Some(state) = queued_state(state) else { continue };
        if name.ends_with("-merge") {
            merge_in_queue = Some(state);
        } else if let Some(k) = job.split_once('_').and_then(|(_, k)| k.parse::<u32>().ok()) {
            in_queue.insert(k, (job.clone(), state));
        }
    }
    let mut shards = Vec::new();
    let mut tasks_total = 0;
    for k in 0..sweep.shards {
        let run_id = sweep.shard_run_id(k);
        let dir = home.run_dir(&run_id);
        let record = RunStatus::read(&dir);
        let manifest = home.read_manifest(&run_id).ok();
        let tasks = manifest.as_ref().map_or(0, |m| m.dataset.selected.len());
        tasks_total = manifest
            .as_ref()
            .and_then(|m| m.shard.as_ref())
            .map_or(tasks_total, |s| s.sweep_tasks.len());
        let (finished, solved) = record.as_ref().map_or((0, 0), |s| (s.finished, s.solved));
        let (job, state) = match in_queue.remove(&k) {
            Some((job, state)) => (Some(job), state),
            None => match &record {
                Some(s) if s.state == RunState::Finished && s.finished >= tasks => (None, ShardState::Done),
                // Its process on another node: the pid means nothing here, Slurm says it ended.
                _ => (None, ShardState::Failed),
            },
        };
        shards.push(ShardStatus {
            index: k,
            run_id,
            state,
            job,
            tasks,
            finished,
            solved,
        });
    }
    let merge = match merge_in_queue {
        Some(ShardState::Running) => MergeState::Running,
        Some(_) => MergeState::Queued,
        None => match home.read_manifest(&sweep.id) {
            Ok(m) if !m.merged_from.is_empty() => match RunStatus::read(&home.run_dir(&sweep.id)) {
                Some(s) if s.state == RunState::Finished => MergeState::Done,
                _ => MergeState::Partial,
            },
            _ => MergeState::Missing,
        },
    };
    SweepStatus {
        id: sweep.id.clone(),
        finished: shards.iter().map(|s| s.finished).sum(),
        solved: shards.iter().map(|s| s.solved).sum(),
        tasks: tasks_total,
        shards,
        merge,
        queue_error,
    }
}

impl SweepStatus {
    /// The sweep's state as `rgd slurm status` prints it; `detailed`: a line per shard too.
    pub fn lines(&self, detailed: bool) -> Vec<String> {
        let mut out = Vec::new();

        let shards = self.shards.len();
        out.push(format!(
        "sweep {}: {shards} shards ({} queued, {} running, {} done, {} failed); {}/{} tasks done, pass@1 so far {:.1}% ({} solved); merge {}",
        self.id,
        self.count(ShardState::Queued),
        self.count(ShardState::Running),
        self.count(ShardState::Done),
        self.count(ShardState::Failed),
        self.finished,
        self.tasks,
        self.pass_so_far() * 100.0,
        self.solved,
        match self.merge {
            MergeState::Queued => "waiting",
            MergeState::Running => "running",
            MergeState::Done => "done",
            MergeState::Partial => "partial (rgd slurm resubmit, then it merges again)",
            MergeState::Missing => "not run",
        }
    ));
        if let Some(e) = &self.queue_error {
            out.push(format!("  (queue unreadable, states from the records alone: {e})"));
        }
        if detailed {
            for s in &self.shards {
                out.push(format!(
                    "  shard {:>3}  {:<8} {:>5}/{:<5} tasks  {:>5} solved  {}{}",
                    s.index,
                    format!("{:?}", s.state).to_lowercase(),
                    s.finished,
                    s.tasks,
                    s.solved,
                    s.run_id,
                    s.job.as_deref().map(|j| format!("  job {j}")).unwrap_or_default()
                ));
            }
        }
        out
    }
}
