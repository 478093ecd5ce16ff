//! `status.json`: a run's progress, readable while another process holds the run's database.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    Running,
    Finished,
    /// Was running when its process died (kill, crash, power loss): `--resume` continues it.
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStatus {
    pub state: RunState,
    pub pid: u32,
    pub tasks: usize,
    pub finished: usize,
    pub solved: usize,
    pub updated_at: DateTime<Utc>,
}
