//! Every run's second record: `events.jsonl` in the run directory, one line per event, appended
//! by the run's own recorder before the database takes the same events. A damaged database is
//! rebuilt from it (`rgd runs repair`), and another process follows a live run through it (the
//! database is locked by the process running the run).
//!
//! A line is the event's JSON with a checksum of it put first: `{"sum":"<16 hex>",` and then the
//! event's JSON after its opening brace. It stays the event as JSON (readers ignore `sum`), and a
//! line whose bytes changed no longer matches its sum.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};

use std::path::{Path, PathBuf};

use crate::record::Envelope;

pub const JOURNAL: &str = "events.jsonl";

pub fn journal_path(run_dir: &Path) -> PathBuf {
    run_dir.join(JOURNAL)
}

/// The journal line (newline included) of an event serialised as `json`.
pub fn line(json: &[u8]) -> Vec<u8> {
    crate::checked::line(json)
}

/// The event a line holds, if the line is whole: its checksum matches and it parses. Lines
/// written before journals carried checksums are taken when they parse.
pub fn parse_line(line: &str) -> Result<Envelope, String> {
    let json = crate::checked::verify_line(line)?;
    serde_json::from_str(&json).map_err(|e| format!("not an event ({e})"))
}

/// What a journal holds: its whole events by sequence number (a resumed run may have written a
/// number twice after a kill; the later line is the one the database holds) and its damaged
/// lines, named.
#[derive(Debug, Default)]
pub struct JournalRead {
    pub events: BTreeMap<u64, Envelope>,
    pub damaged: Vec<String>,
}

/// Reads `events.jsonl` of `run_dir`; `None` when the run keeps none (recorded before every run
/// kept one).
pub fn read_journal(run_dir: &Path) -> std::io::Result<Option<JournalRead>> {
    let path = journal_path(run_dir);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut read = JournalRead::default();
    let (lines, cut) = crate::checked::lines(&bytes);
    let last = lines.last().map_or(0, |(n, _)| *n);
    for (n, l) in &lines {
        match parse_line(l) {
            Ok(envelope) => {
                read.events.insert(envelope.seq, envelope);
            }
            Err(why) if cut && *n == last => read.damaged.push(format!("its last line ({n}) is cut off: {why}")),
            Err(why) => read.damaged.push(format!("line {n} is damaged: {why}")),
        }
    }
    Ok(Some(read))
}

/// A journal open for appending.
pub struct Journal {
    file: std::fs::File,
}

impl Journal {
    /// Opens `events.jsonl` of `run_dir` for appending. A last line left without its newline (the
    /// disk filled, the machine stopped mid-write) is dropped first: the database never took that
    /// event, since it is written after its line.
    pub fn open(run_dir: &Path) -> std::io::Result<Journal> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(journal_path(run_dir))?;
        let len = file.metadata()?.len();
        if len > 0 {
            let whole = Self::whole_length(&mut file, len)?;
            if whole < len {
                file.set_len(whole)?;
            }
        }
        Ok(Journal { file })
    }

    /// The length of the file up to and with its last newline.
    fn whole_length(file: &mut std::fs::File, len: u64) -> std::io::Result<u64> {
        let mut end = len;
        let mut chunk = vec![0u8; 64 << 10];
        while end > 0 {
            let start = end.saturating_sub(chunk.len() as u64);
            let part = &mut chunk[..(end - start) as usize];
            file.seek(SeekFrom::Start(start))?;
            file.read_exact(part)?;
            if let Some(at) = part.iter().rposition(|&b| b == b'\n') {
                return Ok(start + at as u64 + 1);
            }
            end = start;
        }
        Ok(0)
    }

    /// Appends whole lines in one write; `durable` (a finished task among them) waits for the
    /// disk, as the database's flush of the same task does.
    pub fn append(&mut self, lines: &[u8], durable: bool) -> std::io::Result<()> {
        self.file.write_all(lines)?;
        if durable {
            self.file.sync_data()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Event;

    fn envelope(seq: u64) -> Vec<u8> {
        let e = Envelope {
            seq,
            at: chrono::Utc::now(),
            event: Event::RunResumed {
                finished: vec![format!("T/{seq}")],
            },
        };
        serde_json::to_vec(&e).unwrap()
    }

    #[test]
    fn reopening_drops_a_cut_last_line_and_reading_names_damaged_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path()).unwrap();
        j.append(&[line(&envelope(0)), line(&envelope(1))].concat(), true).unwrap();
        let whole = std::fs::metadata(journal_path(dir.path())).unwrap().len();
        let cut = line(&envelope(2));
        j.append(&cut[..cut.len() / 2], false).unwrap();
        drop(j);
        let read = read_journal(dir.path()).unwrap().unwrap();
        assert_eq!(read.events.len(), 2);
        assert!(read.damaged[0].contains("last line (3) is cut off"), "{:?}", read.damaged);
        Journal::open(dir.path()).unwrap().append(&line(&envelope(2)), true).unwrap();
        assert!(std::fs::metadata(journal_path(dir.path())).unwrap().len() > whole);
        let read = read_journal(dir.path()).unwrap().unwrap();
        assert_eq!((read.events.len(), read.damaged.len()), (3, 0), "{:?}", read.damaged);
    }
}
