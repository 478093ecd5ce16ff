//! A plain-text copy of a run's events (`events.jsonl` in the run directory), appended as they
//! happen. The sled database is the record; it is locked by the process running the sweep, so a
//! detached sweep also writes this journal for other processes to follow.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::record::Envelope;

pub const JOURNAL: &str = "events.jsonl";

pub fn journal_path(run_dir: &Path) -> PathBuf {
    run_dir.join(JOURNAL)
}

/// Appends every event from `events` to the journal until the stream ends. Runs on a thread of its
/// own: each line is written and flushed before the next, so a follower never sees half a line
/// except at the end of the file, which it leaves for later.
pub fn spawn_journal(run_dir: &Path, mut events: UnboundedReceiver<Arc<Envelope>>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(journal_path(run_dir))?;
    std::thread::Builder::new().name("rgd-journal".into()).spawn(move || {
        while let Some(envelope) = events.blocking_recv() {
            let mut line = match serde_json::to_vec(&*envelope) {
                Ok(bytes) => crate::secrets::scrub_bytes(bytes),
                Err(e) => {
                    tracing::error!("event {} not journalled: {e}", envelope.seq);
                    continue;
                }
            };
            line.push(b'\n');
            if let Err(e) = file.write_all(&line).and_then(|()| file.flush()) {
                tracing::error!("journal write failed: {e}; followers will stop seeing events");
                return;
            }
        }
    })
}
