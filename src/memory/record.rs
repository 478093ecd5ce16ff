//! The memory pool's second record and its state, beside its database: `journal.jsonl` holds every
//! entry put and every id removed, one checksummed line each (`crate::checked`); `pool.json` holds
//! how many entries there are and their content hash, written last. A put reaches the journal
//! after the database's flush, a removal before it, so a kill between the two leaves the journal
//! behind by puts (added from the database at the next open) or ahead by a removal (applied to
//! the database then): an entry the journal holds and the database lacks was lost, and the pool
//! is named as damaged, never read as a smaller pool. `rgd memory repair` rebuilds it from the
//! journal.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Entry, MemoryError, PoolState};

pub const JOURNAL: &str = "journal.jsonl";
pub const STATE: &str = "pool.json";

/// One change to the pool, as a journal line holds it (`{"put": {...}}`, `{"rm": "id"}`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Put(Entry),
    Rm(String),
}

/// What the journal holds: the entries it leaves, by id, the ids whose last change removed
/// them, and its damaged lines, named.
#[derive(Debug, Default)]
pub struct Replayed {
    pub entries: BTreeMap<String, Entry>,
    pub removed: std::collections::BTreeSet<String>,
    pub damaged: Vec<String>,
}

fn io(path: &Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::Input(format!("{}: {e}", path.display()))
}

/// The entries `journal.jsonl` in `dir` leaves; `None` when the pool keeps none (made before
/// pools kept one).
pub fn replay(dir: &Path) -> Result<Option<Replayed>, MemoryError> {
    let path = dir.join(JOURNAL);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path, e)),
    };
    let mut out = Replayed::default();
    let (lines, cut) = crate::checked::lines(&bytes);
    let last = lines.last().map_or(0, |(n, _)| *n);
    for (n, line) in &lines {
        let change = crate::checked::verify_line(line).and_then(|json| serde_json::from_str::<Change>(&json).map_err(|e| e.to_string()));
        match change {
            Ok(Change::Put(e)) => {
                out.removed.remove(&e.id);
                out.entries.insert(e.id.clone(), e);
            }
            Ok(Change::Rm(id)) => {
                out.entries.remove(&id);
                out.removed.insert(id);
            }
            Err(why) if cut && *n == last => out
                .damaged
                .push(format!("{}: its last line ({n}) is cut off: {why}", path.display())),
            Err(why) => out.damaged.push(format!("{}: line {n} is damaged: {why}", path.display())),
        }
    }
    Ok(Some(out))
}

/// The pool's state as `pool.json` last recorded it: `Ok(None)` when there is none yet.
pub fn read_state(dir: &Path) -> Result<Option<PoolState>, String> {
    let path = dir.join(STATE);
    if !path.exists() {
        return Ok(None);
    }
    crate::checked::read_json(&path).map(Some)
}

/// The journal, open for appending, and where the state goes.
pub struct PoolRecord {
    dir: PathBuf,
    journal: std::fs::File,
}

impl PoolRecord {
    pub fn open(dir: &Path) -> Result<PoolRecord, MemoryError> {
        let path = dir.join(JOURNAL);
        let journal = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        Ok(PoolRecord {
            dir: dir.to_path_buf(),
            journal,
        })
    }

    /// Appends `changes` in one write and waits for the disk.
    pub fn append(&mut self, changes: impl IntoIterator<Item = Change>) -> Result<(), MemoryError> {
        let path = self.dir.join(JOURNAL);
        let mut lines = Vec::new();
        for change in changes {
            let json = serde_json::to_vec(&change).map_err(|e| io(&path, e))?;
            lines.extend(crate::checked::line(&json));
        }
        self.journal
            .write_all(&lines)
            .and_then(|()| self.journal.sync_data())
            .map_err(|e| io(&path, e))
    }

    pub fn write_state(&self, state: &PoolState) -> Result<(), MemoryError> {
        let path = self.dir.join(STATE);
        crate::checked::write_json(&path, state).map_err(|e| io(&path, e))
    }
}
