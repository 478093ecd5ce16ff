//! One event stream per run. Each event is numbered, queued for the recorder, and handed to every
//! subscriber, in that order.
//!
//! Recording happens on a thread of its own, fed by a bounded queue, so no disk I/O runs on a
//! runtime worker: it writes whatever has queued up as one batch, and merges the streamed tokens of
//! one agent call that arrive within 50 ms into one record (the live subscribers still get every
//! token). The queue never drops an event: when it is full, `emit` waits. A finished task is
//! different: `emit` waits until it, and everything before it, is on disk, so a kill -9 right
//! after can neither lose it nor make a resume run it again. Subscribers' channels are unbounded:
//! the printer and the TUI fold every event (the TUI takes them in batches and redraws at its
//! frame rate), so a slow one costs memory for a while, never an event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::record::{Envelope, Event, Recorder};

/// Events queued for the recorder at most; `emit` waits beyond it.
const QUEUE: usize = 4096;
/// Events written in one batch at most.
const BATCH: usize = 1024;
/// How long streamed tokens are gathered before they are written.
const TOKEN_WINDOW: Duration = Duration::from_millis(50);

enum ToRecorder {
    Event(Arc<Envelope>),
    /// Answered once everything queued before it is written.
    Barrier(SyncSender<()>),
}

pub struct EventBus {
    inner: Mutex<Inner>,
    recorder_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    broken: Arc<AtomicBool>,
}

struct Inner {
    next_seq: u64,
    subscribers: Vec<mpsc::UnboundedSender<Arc<Envelope>>>,
    /// The recorder's queue; `None` without a recorder, or once closed.
    recorder: Option<SyncSender<ToRecorder>>,
}

impl EventBus {
    pub fn new(recorder: Option<Arc<dyn Recorder>>, next_seq: u64) -> Arc<EventBus> {
        let broken = Arc::new(AtomicBool::new(false));
        let recording = recorder.and_then(|recorder| {
            let (queue, rx) = std::sync::mpsc::sync_channel(QUEUE);
            let flag = broken.clone();
            let spawned = std::thread::Builder::new()
                .name("rgd-recorder".into())
                .spawn(move || record_loop(&*recorder, &rx, &flag));
            match spawned {
                Ok(thread) => Some((queue, thread)),
                Err(e) => {
                    tracing::error!("cannot start the recorder thread: {e}");
                    broken.store(true, Ordering::SeqCst);
                    None
                }
            }
        });
        let (queue, thread) = recording.unzip();
        Arc::new(EventBus {
            inner: Mutex::new(Inner {
                next_seq,
                subscribers: Vec::new(),
                recorder: queue,
            }),
            recorder_thread: Mutex::new(thread),
            broken,
        })
    }

    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Arc<Envelope>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().subscribers.push(tx);
        rx
    }

    /// True once recording failed; the sweep stops starting tasks so nothing unrecorded piles up.
    pub fn broken(&self) -> bool {
        self.broken.load(Ordering::SeqCst)
    }

    pub fn emit(&self, event: Event) {
        let mut inner = self.lock();
        let finished = matches!(event, Event::TaskFinished { .. });
        let envelope = Arc::new(Envelope {
            seq: inner.next_seq,
            at: chrono::Utc::now(),
            event,
        });
        inner.next_seq += 1;
        // Queued under the lock: the recorder sees events in their numbered order.
        if let Some(queue) = &inner.recorder {
            let sent = queue.send(ToRecorder::Event(envelope.clone()));
            if sent.is_err() || (finished && !barrier(queue)) {
                tracing::error!("recording event {} failed: the recorder stopped", envelope.seq);
                self.broken.store(true, Ordering::SeqCst);
            }
        }
        inner.subscribers.retain(|s| s.send(envelope.clone()).is_ok());
    }

    /// Records what is queued, stops the recorder, and drops all subscriber channels so their
    /// receivers end.
    pub fn close(&self) {
        drop(self.lock().recorder.take());
        let thread = self.recorder_thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(thread) = thread
            && thread.join().is_err()
        {
            tracing::error!("the recorder thread panicked");
            self.broken.store(true, Ordering::SeqCst);
        }
        self.lock().subscribers.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave Inner inconsistent (plain fields, each whole).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for EventBus {
    fn drop(&mut self) {
        self.close();
    }
}

/// Queues a barrier and waits for the recorder to reach it; false when the recorder is gone.
fn barrier(queue: &SyncSender<ToRecorder>) -> bool {
    let (done, wait) = std::sync::mpsc::sync_channel(1);
    queue.send(ToRecorder::Barrier(done)).is_ok() && wait.recv().is_ok()
}

fn record_loop(recorder: &dyn Recorder, rx: &Receiver<ToRecorder>, broken: &AtomicBool) {
    let mut batch: Vec<Arc<Envelope>> = Vec::new();
    let mut barriers: Vec<SyncSender<()>> = Vec::new();
    loop {
        let first = match rx.recv() {
            Ok(msg) => msg,
            Err(_) => return,
        };
        let mut closed = false;
        let mut deadline: Option<Instant> = None;
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                ToRecorder::Barrier(done) => {
                    barriers.push(done);
                    break;
                }
                ToRecorder::Event(envelope) => {
                    if matches!(envelope.event, Event::AgentTokens { .. }) && deadline.is_none() {
                        deadline = Some(Instant::now() + TOKEN_WINDOW);
                    }
                    batch.push(envelope);
                }
            }
            if batch.len() >= BATCH {
                break;
            }
            next = match rx.try_recv() {
                Ok(msg) => Some(msg),
                Err(TryRecvError::Disconnected) => {
                    closed = true;
                    None
                }
                // Tokens wait a little for the rest of their stream; other events go at once.
                Err(TryRecvError::Empty) => match deadline {
                    Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                        Ok(msg) => Some(msg),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => {
                            closed = true;
                            None
                        }
                    },
                    None => None,
                },
            };
        }
        if !batch.is_empty() {
            let merged = coalesce_tokens(std::mem::take(&mut batch));
            if let Err(e) = recorder.record(&merged) {
                tracing::error!("recording events {}..: {e}", merged.first().map(|e| e.seq).unwrap_or(0));
                broken.store(true, Ordering::SeqCst);
            }
        }
        for done in barriers.drain(..) {
            let _ = done.send(());
        }
        if closed {
            return;
        }
    }
}

/// Runs of token events of one call become one event: the first's number and time, the texts
/// joined. Other events, and their order, are untouched.
fn coalesce_tokens(batch: Vec<Arc<Envelope>>) -> Vec<Arc<Envelope>> {
    let mut out: Vec<Arc<Envelope>> = Vec::with_capacity(batch.len());
    for envelope in batch {
        if let Event::AgentTokens { task_id, call_id, text } = &envelope.event
            && let Some(last) = out.last_mut()
            && let Event::AgentTokens {
                task_id: last_task,
                call_id: last_call,
                text: last_text,
            } = &last.event
            && last_task == task_id
            && last_call == call_id
        {
            let joined = Envelope {
                seq: last.seq,
                at: last.at,
                event: Event::AgentTokens {
                    task_id: task_id.clone(),
                    call_id: *call_id,
                    text: format!("{last_text}{text}"),
                },
            };
            *last = Arc::new(joined);
            continue;
        }
        out.push(envelope);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Memory(Mutex<Vec<Arc<Envelope>>>);

    impl Recorder for Memory {
        fn record(&self, batch: &[Arc<Envelope>]) -> Result<(), String> {
            self.0.lock().unwrap().extend(batch.iter().cloned());
            Ok(())
        }
    }

    fn tokens(call_id: u64, text: &str) -> Event {
        Event::AgentTokens {
            task_id: "T/1".into(),
            call_id,
            text: text.into(),
        }
    }

    #[test]
    fn tokens_of_one_call_are_recorded_as_one_event_and_subscribers_see_each() {
        let memory = Arc::new(Memory(Mutex::new(Vec::new())));
        let bus = EventBus::new(Some(memory.clone()), 0);
        let mut live = bus.subscribe();
        for t in ["de", "f f", "():"] {
            bus.emit(tokens(1, t));
        }
        bus.emit(tokens(2, "x"));
        bus.close();
        let recorded = memory.0.lock().unwrap().clone();
        let texts: Vec<(u64, String)> = recorded
            .iter()
            .map(|e| match &e.event {
                Event::AgentTokens { call_id, text, .. } => (*call_id, text.clone()),
                _ => (0, String::new()),
            })
            .collect();
        assert_eq!(texts, [(1, "def f():".to_string()), (2, "x".to_string())]);
        assert_eq!(recorded.iter().map(|e| e.seq).collect::<Vec<_>>(), [0, 3]);
        let mut seen = 0;
        while live.try_recv().is_ok() {
            seen += 1;
        }
        assert_eq!(seen, 4, "the live stream keeps every token");
    }
}
