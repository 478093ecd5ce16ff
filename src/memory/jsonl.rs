//! Entries as JSON lines: `rgd memory export`/`import`, and the snapshot a sharded sweep starts from.

use std::io::{BufRead, Write};
use std::path::Path;

use super::{Entry, MemoryError};

fn io(path: &Path, e: impl std::fmt::Display) -> MemoryError {
    MemoryError::Input(format!("{}: {e}", path.display()))
}

/// Writes every entry, one JSON object a line, through a temporary file: a reader never sees half
/// a snapshot.
pub fn write_entries(path: &Path, entries: &[Entry]) -> Result<(), MemoryError> {
    let tmp = path.with_extension("jsonl.part");
    let file = std::fs::File::create(&tmp).map_err(|e| io(&tmp, e))?;
    let mut w = std::io::BufWriter::new(file);
    for e in entries {
        let line = serde_json::to_string(e).map_err(|e| io(path, e))?;
        writeln!(w, "{line}").map_err(|e| io(&tmp, e))?;
    }
    w.into_inner()
        .map_err(|e| io(&tmp, e.error()))?
        .sync_all()
        .map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

/// Entries from a JSON lines file; a bad line is named by file and line.
pub fn read_entries(path: &Path) -> Result<Vec<Entry>, MemoryError> {
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let mut entries = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| MemoryError::Input(format!("{}:{}: {e}", path.display(), n + 1)))?;
        if line.trim().is_empty() {
            continue;
        }
        let e: Entry = serde_json::from_str(&line)
            .map_err(|e| MemoryError::Input(format!("{}:{}: not a memory entry: {e}", path.display(), n + 1)))?;
        entries.push(e);
    }
    Ok(entries)
}
