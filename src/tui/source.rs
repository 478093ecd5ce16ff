//! A live run: the sweep works on its own task and reports by events (recorded first, then sent
//! here); when it ends, its summary or error arrives once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::task::AbortOnDropHandle;

use super::model::RunModel;
use crate::engine::{Envelope, Event, RunSummary, Sweep};
use crate::record::{RunState, RunStatus};
use crate::store::journal_path;

pub enum LiveMsg {
    /// Every event that was waiting, in order (a burst of streamed tokens is one wake-up and one
    /// redraw, not one per token).
    Events(Vec<Arc<Envelope>>),
    Done(Box<Result<RunSummary, String>>),
}

/// Events taken from the bus per wake-up of the UI loop at most (yazi's `recv_many`).
const BATCH: usize = 512;

pub struct LiveRun {
    /// True when this process runs the sweep (quitting stops it); false when following a
    /// detached run's journal (quitting leaves it running).
    pub owned: bool,
    events: UnboundedReceiver<Arc<Envelope>>,
    handle: Option<AbortOnDropHandle<Result<RunSummary, String>>>,
    pub outcome: Option<Result<RunSummary, String>>,
}

impl LiveRun {
    /// Subscribes, shows what the run recorded before (a resumed run), then starts the sweep.
    pub fn start(sweep: Sweep, resumed: bool, model: &mut RunModel) -> LiveRun {
        // Subscribe before reading the record: an event in both is applied once (by sequence).
        let events = sweep.bus.subscribe();
        for envelope in sweep.record.events().unwrap_or_default() {
            model.apply(&envelope);
        }
        let handle = AbortOnDropHandle::new(tokio::spawn(async move { sweep.run(resumed).await.map_err(|e| e.to_string()) }));
        LiveRun {
            owned: true,
            events,
            handle: Some(handle),
            outcome: None,
        }
    }

    /// Follows the journal of a run another process is running: new lines are read as they are
    /// appended (polled every 100 ms) until the run finishes or its process is gone.
    pub fn follow(run_dir: PathBuf) -> LiveRun {
        let (tx, events) = tokio::sync::mpsc::unbounded_channel();
        let handle = AbortOnDropHandle::new(tokio::spawn(async move {
            let path = journal_path(&run_dir);
            let mut offset = 0u64;
            let mut partial = String::new();
            loop {
                let fresh = read_from(&path, &mut offset).await;
                partial.push_str(&fresh);
                let mut finished = None;
                while let Some(end) = partial.find('\n') {
                    let line: String = partial.drain(..=end).collect();
                    let envelope: Envelope =
                        serde_json::from_str(line.trim_end()).map_err(|e| format!("{}: unreadable line: {e}", path.display()))?;
                    if let Event::RunFinished { summary } = &envelope.event {
                        finished = Some(summary.clone());
                    }
                    let _ = tx.send(Arc::new(envelope));
                }
                if let Some(summary) = finished {
                    return Ok(summary);
                }
                if fresh.is_empty() {
                    let state = RunStatus::read(&run_dir).map(|s| s.state);
                    if state.is_some_and(|s| s != RunState::Running) {
                        return Err(format!(
                            "the run ended without finishing ({state:?}); `rgd sweep --resume` continues it"
                        ));
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }));
        LiveRun {
            owned: false,
            events,
            handle: Some(handle),
            outcome: None,
        }
    }

    pub fn is_done(&self) -> bool {
        self.handle.is_none()
    }

    /// Stops the sweep: in-flight tasks are abandoned (not recorded as finished), so a resume
    /// runs them again; everything finished stays recorded.
    pub fn stop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.abort();
        }
    }

    /// Waits for the sweep to end on its own (a finished run writing its status and flushing).
    pub async fn finish(&mut self) {
        if let Some(handle) = self.handle.take() {
            // Kept in `outcome`; nothing is shown after the app has quit.
            let _ = self.ended(handle.await);
        }
    }

    /// The sweep task's end, kept as the run's outcome.
    fn ended(&mut self, joined: Result<Result<RunSummary, String>, tokio::task::JoinError>) -> Result<RunSummary, String> {
        self.handle = None;
        let outcome = joined.unwrap_or_else(|e| Err(format!("the sweep task failed: {e}")));
        self.outcome = Some(outcome.clone());
        outcome
    }

    /// The next event, or the end of the run. Pending forever once both are consumed.
    pub async fn next(&mut self) -> LiveMsg {
        let mut batch = Vec::new();
        let Some(handle) = self.handle.as_mut() else {
            // Finished: drain what the bus still holds, then wait forever.
            while batch.len() < BATCH
                && let Ok(e) = self.events.try_recv()
            {
                batch.push(e);
            }
            return match batch.is_empty() {
                false => LiveMsg::Events(batch),
                true => std::future::pending().await,
            };
        };
        let received = tokio::select! {
            biased;
            n = self.events.recv_many(&mut batch, BATCH) => Ok(n),
            joined = &mut *handle => Err(joined),
        };
        let joined = match received {
            Ok(n) if n > 0 => return LiveMsg::Events(batch),
            // The bus closed: the run is ending; its outcome follows.
            Ok(_) => handle.await,
            Err(joined) => joined,
        };
        LiveMsg::Done(Box::new(self.ended(joined)))
    }
}

/// Bytes appended to `path` since `offset` (nothing while the file does not exist yet).
async fn read_from(path: &Path, offset: &mut u64) -> String {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let Ok(mut file) = tokio::fs::File::open(path).await else {
        return String::new();
    };
    if file.seek(std::io::SeekFrom::Start(*offset)).await.is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).await.is_err() {
        return String::new();
    }
    // Only whole UTF-8 is returned; a cut multi-byte character waits for the next read.
    let valid = match std::str::from_utf8(&bytes) {
        Ok(_) => bytes.len(),
        Err(e) => e.valid_up_to(),
    };
    *offset += valid as u64;
    String::from_utf8_lossy(&bytes[..valid]).into_owned()
}
