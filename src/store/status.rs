//! Reading `status.json` (a dead process's "running" is "interrupted") and writing JSON files
//! whole, those of a run with a checksum inside.

use std::path::Path;

use serde::Serialize;

use super::StoreError;
use crate::record::{RunState, RunStatus};

impl RunStatus {
    /// The run's status, `None` when it has none or it cannot be read (`load` says why).
    pub fn read(run_dir: &Path) -> Option<RunStatus> {
        Self::load(run_dir).ok().flatten()
    }

    /// The run's status: `Ok(None)` when it has none yet, `Err` naming the damage when the file
    /// cannot be read, is not whole JSON or does not match its checksum.
    pub fn load(run_dir: &Path) -> Result<Option<RunStatus>, String> {
        let path = run_dir.join("status.json");
        if !path.exists() {
            return Ok(None);
        }
        let mut status: RunStatus = crate::checked::read_json(&path)?;
        if status.state == RunState::Running && !process_alive(status.pid) {
            status.state = RunState::Interrupted;
        }
        Ok(Some(status))
    }

    /// Whether a live process is running the run now.
    pub fn is_live(&self) -> bool {
        self.state == RunState::Running && process_alive(self.pid)
    }
}

fn process_alive(pid: u32) -> bool {
    // Signal 0 checks existence without delivering anything.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_ok()
}

/// Writes JSON through a temporary file and a rename, so readers never see half a file.
pub fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let text = serde_json::to_string_pretty(value).map_err(|e| io_error(path, e.into()))?;
    crate::checked::write_atomically(path, crate::secrets::scrub(&text).as_bytes()).map_err(|e| io_error(path, e))
}

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes `value` (a JSON object) whole, with a checksum of its contents inside
/// (`crate::checked`): a byte changed in the file is seen by `crate::checked::read_json`.
pub fn write_checked_json<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    crate::checked::write_json(path, value).map_err(|e| io_error(path, e))
}
