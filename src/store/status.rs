//! `status.json`: a run's progress, readable while another process holds the run's database.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StoreError;

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

impl RunStatus {
    pub fn read(run_dir: &Path) -> Option<RunStatus> {
        let text = std::fs::read_to_string(run_dir.join("status.json")).ok()?;
        let mut status: RunStatus = serde_json::from_str(&text).ok()?;
        if status.state == RunState::Running && !process_alive(status.pid) {
            status.state = RunState::Interrupted;
        }
        Some(status)
    }
}

fn process_alive(pid: u32) -> bool {
    // Signal 0 checks existence without delivering anything.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok()
}

/// Writes JSON through a temporary file and a rename, so readers never see half a file.
pub fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let io = |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    let text = serde_json::to_string_pretty(value).map_err(|e| io(e.into()))?;
    std::io::Write::write_all(&mut tmp, crate::secrets::scrub(&text).as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
