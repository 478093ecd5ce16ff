//! The home screen's data: recorded runs, newest first, from their manifest and status files
//! (never their databases, which a live run holds locked). A Slurm sweep is one row (its shards
//! and its merged run are not listed apart), with each shard's state.

use crate::cluster::slurm::{self, ShardState, SlurmSweep};
use crate::record::RunState;
use crate::store::Home;

#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub run_id: String,
    pub dataset: String,
    pub model: String,
    pub strategy: String,
    pub tasks: usize,
    pub finished: usize,
    pub solved: usize,
    pub created: String,
    pub state: String,
    /// Set for a Slurm sweep: its id and one mark per shard.
    pub slurm: Option<SlurmRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SlurmRow {
    pub sweep: String,
    /// ✓ done, ▶ running, · queued, ✗ failed; counts when there are too many shards to draw.
    pub shards: String,
}

fn shard_marks(status: &slurm::SweepStatus) -> String {
    let mark = |s: ShardState| match s {
        ShardState::Done => '✓',
        ShardState::Running => '▶',
        ShardState::Queued => '·',
        ShardState::Failed => '✗',
    };
    if status.shards.len() <= 10 {
        status.shards.iter().map(|s| mark(s.state)).collect()
    } else {
        [ShardState::Done, ShardState::Running, ShardState::Queued, ShardState::Failed]
            .into_iter()
            .filter(|s| status.count(*s) > 0)
            .map(|s| format!("{}{}", status.count(s), mark(s)))
            .collect()
    }
}

/// One row for a Slurm sweep; opening it opens the merged run, or a shard until it is merged.
fn slurm_row(home: &Home, sweep: &SlurmSweep) -> RunRow {
    let status = slurm::status(home, sweep);
    let shard_ids: Vec<String> = (0..sweep.shards).map(|k| sweep.shard_run_id(k)).collect();
    let opened = std::iter::once(&sweep.id)
        .chain(shard_ids.iter())
        .find(|id| home.has_run(id))
        .cloned()
        .unwrap_or_else(|| sweep.id.clone());
    let manifest = home.read_manifest(&opened).ok();
    let state = match status.merge {
        slurm::MergeState::Done => "merged",
        slurm::MergeState::Partial => "partial",
        _ if status.count(ShardState::Running) + status.count(ShardState::Queued) > 0 => "running",
        _ => "interrupted",
    };
    RunRow {
        run_id: opened,
        dataset: manifest.as_ref().map_or_else(String::new, |m| m.dataset.name.clone()),
        model: manifest.as_ref().map_or_else(String::new, |m| m.model_shown()),
        strategy: manifest
            .as_ref()
            .map_or_else(|| "slurm".into(), |m| format!("{}·slurm", m.method())),
        tasks: status.tasks,
        finished: status.finished,
        solved: status.solved,
        created: sweep.created_at.format("%Y-%m-%d %H:%M").to_string(),
        state: state.to_string(),
        slurm: Some(SlurmRow {
            sweep: sweep.id.clone(),
            shards: shard_marks(&status),
        }),
    }
}

impl RunRow {
    pub fn pass_at_1(&self) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            self.solved as f64 / self.tasks as f64
        }
    }
}

fn damaged_row(run_id: String) -> RunRow {
    RunRow {
        run_id,
        dataset: "?".into(),
        model: "?".into(),
        strategy: "?".into(),
        tasks: 0,
        finished: 0,
        solved: 0,
        created: String::new(),
        state: "damaged".into(),
        slurm: None,
    }
}

pub fn load_runs(home: &Home) -> Vec<RunRow> {
    let sweeps = SlurmSweep::list(home);
    let in_sweep = |id: &str| sweeps.iter().any(|s| s.owns(id));
    let mut rows: Vec<RunRow> = sweeps.iter().map(|s| slurm_row(home, s)).collect();
    let runs = home.run_ids().into_iter().filter(|id| !in_sweep(id)).map(|id| {
        let (m, status) = match crate::store::listing(home, &id) {
            Ok(read) => read,
            // Shown, not dropped: opening it says what is damaged and how to repair it.
            Err(_) => return damaged_row(id),
        };
        let (state, finished, solved) = match &status {
            Some(s) => (
                match s.state {
                    RunState::Running => "running",
                    RunState::Finished => "finished",
                    RunState::Interrupted => "interrupted",
                },
                s.finished,
                s.solved,
            ),
            None => ("unknown", 0, 0),
        };
        RunRow {
            run_id: id,
            dataset: m.dataset.name.clone(),
            model: m.model_shown(),
            strategy: m.method(),
            tasks: m.dataset.selected.len(),
            finished,
            solved,
            created: m.created_at.format("%Y-%m-%d %H:%M").to_string(),
            state: state.to_string(),
            slurm: None,
        }
    });
    rows.extend(runs);
    // Newest first, sweeps among runs.
    if !sweeps.is_empty() {
        rows.sort_by(|a, b| b.created.cmp(&a.created));
    }
    rows
}
