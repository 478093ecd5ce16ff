//! The home screen's data: recorded runs, newest first, from their manifest and status files
//! (never their databases, which a live run holds locked).

use crate::record::{RunState, RunStatus};
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

pub fn load_runs(home: &Home) -> Vec<RunRow> {
    home.run_ids()
        .into_iter()
        .filter_map(|id| {
            let m = home.read_manifest(&id).ok()?;
            let status = RunStatus::read(&home.run_dir(&id));
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
            Some(RunRow {
                run_id: id,
                dataset: m.dataset.name.clone(),
                model: m.model_shown(),
                strategy: m.method(),
                tasks: m.dataset.selected.len(),
                finished,
                solved,
                created: m.created_at.format("%Y-%m-%d %H:%M").to_string(),
                state: state.to_string(),
            })
        })
        .collect()
}
