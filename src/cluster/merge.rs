//! `rgd runs merge`: one run made from the shards of a sweep. Every task's events and result come
//! from the shard that ran it (the per-task records, never averaged summaries); the summary is
//! computed again over the whole sweep. Shards that are not parts of one sweep are refused.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::store::{Home, RunStore, StoreError};

use super::pool::{FoldReport, fold_shard_pools};
use crate::record::{Envelope, Event, Manifest, Recorder, RunState, RunStatus, RunSummary, TaskResult};

/// Which result wins when two shards finished the same task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Prefer {
    Newest,
    Oldest,
}

/// What a merge made.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MergeReport {
    pub run_id: String,
    /// The sweep's tasks, and how many of them the merged run has a final result for.
    pub tasks: usize,
    pub merged: usize,
    pub missing_tasks: Vec<String>,
    /// Shard indexes of the sweep that were not given (when the shards say how many there are).
    pub missing_shards: Vec<u32>,
    /// Tasks finished in more than one shard, settled by `--prefer`.
    pub duplicates: Vec<String>,
    pub summary: RunSummary,
    /// The memory entries the shards added to their own pools, folded into the main pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<FoldReport>,
}

/// How to merge.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// The merged run's id (a new one otherwise).
    pub into: Option<String>,
    /// Which result wins when two shards finished the same task (refused when `None`).
    pub prefer: Option<Prefer>,
    /// Replace the `into` run if an earlier merge made it (a sweep merged again after a shard was
    /// resubmitted).
    pub replace: bool,
}

impl MergeReport {
    pub fn is_partial(&self) -> bool {
        self.merged < self.tasks
    }
}

/// One shard as read.
struct Part {
    manifest: Manifest,
    /// Each task's events, in order, and when its final result was recorded.
    tasks: HashMap<String, (Vec<Envelope>, Option<DateTime<Utc>>)>,
    results: HashMap<String, TaskResult>,
}

fn read_part(home: &Home, run_id: &str) -> Result<Part, StoreError> {
    let store = RunStore::open(home, run_id)?;
    let manifest = store.manifest()?;
    let results: HashMap<String, TaskResult> = store
        .results()?
        .into_iter()
        .filter(TaskResult::is_final)
        .map(|r| (r.task_id.clone(), r))
        .collect();
    let mut tasks: HashMap<String, (Vec<Envelope>, Option<DateTime<Utc>>)> = HashMap::new();
    for envelope in store.events() {
        let envelope = envelope?;
        let Some(task) = envelope.event.task_id().map(str::to_string) else {
            continue;
        };
        let entry = tasks.entry(task).or_default();
        if matches!(&envelope.event, Event::TaskFinished { result } if result.is_final()) {
            entry.1 = Some(envelope.at);
        }
        entry.0.push(envelope);
    }
    Ok(Part { manifest, tasks, results })
}

/// The sweep's identity as a shard states it (a run that is not a shard states its own).
fn identity(m: &Manifest) -> [(&'static str, String); 4] {
    [
        ("dataset (sha256)", m.dataset.sha256.clone()),
        (
            "configuration (agents, prompts, limits, memory settings)",
            m.shard.as_ref().map_or_else(|| m.config_hash(), |s| s.config_hash.clone()),
        ),
        ("strategy", m.method()),
        ("models", m.model_label()),
    ]
}

pub fn merge_runs(home: &Home, run_ids: &[String], options: &MergeOptions) -> anyhow::Result<MergeReport> {
    let prefer = options.prefer;
    anyhow::ensure!(!run_ids.is_empty(), "name the runs to merge");
    let ids: Vec<String> = run_ids.iter().map(|p| home.find_run(p)).collect::<Result<_, _>>()?;
    let mut parts = Vec::with_capacity(ids.len());
    for id in &ids {
        parts.push(read_part(home, id)?);
    }
    let first = &parts[0].manifest;
    for part in &parts[1..] {
        for ((what, a), (_, b)) in identity(first).into_iter().zip(identity(&part.manifest)) {
            anyhow::ensure!(
                a == b,
                "run {} and run {} are not parts of one sweep: their {what} differ ({a} vs {b})",
                first.run_id,
                part.manifest.run_id
            );
        }
    }
    // The sweep's tasks: as its shards recorded them, else every run's in order.
    let sweep = sweep_tasks(&parts);
    let missing_shards = match &first.shard {
        Some(s) => (0..s.count)
            .filter(|k| !parts.iter().any(|p| p.manifest.shard.as_ref().is_some_and(|x| x.index == *k)))
            .collect(),
        None => Vec::new(),
    };

    // Each task from the shard that finished it.
    let (chosen, missing, duplicates) = choose(&parts, &sweep, prefer)?;

    let run_id = options.into.clone().unwrap_or_else(|| ulid::Ulid::generate().to_string());
    if home.run_dir(&run_id).exists() {
        let earlier = home.read_manifest(&run_id).ok();
        anyhow::ensure!(
            options.replace && earlier.as_ref().is_some_and(|m| !m.merged_from.is_empty()),
            "a run {run_id} exists already{}; choose another --into name",
            if options.replace {
                " and no merge made it"
            } else {
                " (--replace replaces an earlier merge)"
            }
        );
        anyhow::ensure!(!ids.contains(&run_id), "run {run_id} is one of the runs being merged");
        std::fs::remove_dir_all(home.run_dir(&run_id))?;
    }
    let mut manifest = first.clone();
    manifest.run_id = run_id.clone();
    manifest.created_at = Utc::now();
    manifest.command = crate::secrets::redact_args(&std::env::args().collect::<Vec<_>>());
    manifest.dataset.selected = sweep.clone();
    manifest.shard = None;
    manifest.merged_from = ids.clone();
    let results: Vec<TaskResult> = chosen.iter().map(|(i, t)| parts[*i].results[*t].clone()).collect();
    let summary = RunSummary::compute(
        &run_id,
        &manifest.dataset.name,
        &manifest.model_label(),
        &sweep,
        &results,
        manifest.max_iters,
    );

    let store = RunStore::create(home, &manifest)?;
    let mut seq = 0u64;
    let mut batch: Vec<Arc<Envelope>> = Vec::with_capacity(1024);
    let mut push = |event: Event, at: DateTime<Utc>, batch: &mut Vec<Arc<Envelope>>| -> anyhow::Result<()> {
        batch.push(Arc::new(Envelope { seq, at, event }));
        seq += 1;
        if batch.len() >= 1024 {
            store.record(batch).map_err(anyhow::Error::msg)?;
            batch.clear();
        }
        Ok(())
    };
    push(
        Event::RunStarted {
            manifest: Box::new(manifest.clone()),
        },
        manifest.created_at,
        &mut batch,
    )?;
    for (i, task) in &chosen {
        for envelope in parts[*i].tasks.get(*task).map(|t| t.0.as_slice()).unwrap_or_default() {
            push(envelope.event.clone(), envelope.at, &mut batch)?;
        }
    }
    if missing.is_empty() {
        push(Event::RunFinished { summary: summary.clone() }, Utc::now(), &mut batch)?;
    }
    store.record(&batch).map_err(anyhow::Error::msg)?;
    store.write_status(&RunStatus {
        state: if missing.is_empty() {
            RunState::Finished
        } else {
            RunState::Interrupted
        },
        pid: std::process::id(),
        tasks: sweep.len(),
        finished: summary.finished,
        solved: summary.solved,
        updated_at: Utc::now(),
    })?;
    store.flush()?;
    drop(store);
    let pool = fold_shard_pools(home, &parts.iter().map(|p| &p.manifest).collect::<Vec<_>>())
        .map_err(|e| anyhow::anyhow!("run {run_id} is merged, but folding the shards' memory entries into the pool failed: {e:#}; merge again with --into {run_id} --replace"))?;
    Ok(MergeReport {
        run_id,
        tasks: sweep.len(),
        merged: chosen.len(),
        missing_tasks: missing,
        missing_shards,
        duplicates,
        summary,
        pool,
    })
}

/// The sweep's tasks: as its shards recorded them, else every run's tasks in order.
fn sweep_tasks(parts: &[Part]) -> Vec<String> {
    match &parts[0].manifest.shard {
        Some(s) => s.sweep_tasks.clone(),
        None => {
            let mut all: Vec<String> = Vec::new();
            for p in parts {
                all.extend(
                    p.manifest
                        .dataset
                        .selected
                        .iter()
                        .filter(|t| !all.contains(t))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
            all
        }
    }
}

/// For each of the sweep's tasks, the part that finished it (with `prefer` when more than one
/// did), and the tasks none or several finished.
#[allow(clippy::type_complexity, reason = "one private helper's three lists")]
fn choose<'a>(
    parts: &[Part],
    sweep: &'a [String],
    prefer: Option<Prefer>,
) -> anyhow::Result<(Vec<(usize, &'a String)>, Vec<String>, Vec<String>)> {
    let mut chosen: Vec<(usize, &String)> = Vec::new();
    let (mut missing, mut duplicates) = (Vec::new(), Vec::new());
    for task in sweep {
        let holders: Vec<usize> = (0..parts.len()).filter(|&i| parts[i].results.contains_key(task)).collect();
        let pick = match (holders.as_slice(), prefer) {
            ([], _) => {
                missing.push(task.clone());
                continue;
            }
            ([one], _) => *one,
            (many, None) => anyhow::bail!(
                "task {task} was finished by {} runs ({}); merge one of them, or pass --prefer newest|oldest",
                many.len(),
                many.iter()
                    .map(|&i| parts[i].manifest.run_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (many, Some(prefer)) => {
                duplicates.push(task.clone());
                let when = |i: &usize| parts[*i].tasks.get(task).and_then(|t| t.1);
                match prefer {
                    Prefer::Newest => many.iter().copied().max_by_key(when),
                    Prefer::Oldest => many.iter().copied().min_by_key(when),
                }
                .unwrap_or(many[0])
            }
        };
        chosen.push((pick, task));
    }
    Ok((chosen, missing, duplicates))
}
