//! Reading `status.json` (a dead process's "running" is "interrupted") and writing JSON files
//! whole.

use std::path::Path;

use serde::Serialize;

use super::StoreError;
use crate::record::{RunState, RunStatus};

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
