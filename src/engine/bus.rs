//! One event stream per run. Each event is numbered, persisted (when a recorder is attached) and
//! then handed to every subscriber, in that order, so a subscriber never sees an unrecorded event.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::events::{Envelope, Event};

/// Durable storage of a run's events (the run store).
pub trait Recorder: Send + Sync {
    fn record(&self, envelope: &Envelope) -> Result<(), String>;
}

pub struct EventBus {
    inner: Mutex<Inner>,
    recorder: Option<Arc<dyn Recorder>>,
    broken: AtomicBool,
}

struct Inner {
    next_seq: u64,
    subscribers: Vec<mpsc::UnboundedSender<Arc<Envelope>>>,
}

impl EventBus {
    pub fn new(recorder: Option<Arc<dyn Recorder>>, next_seq: u64) -> Arc<EventBus> {
        Arc::new(EventBus {
            inner: Mutex::new(Inner {
                next_seq,
                subscribers: Vec::new(),
            }),
            recorder,
            broken: AtomicBool::new(false),
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
        let envelope = Arc::new(Envelope {
            seq: inner.next_seq,
            at: chrono::Utc::now(),
            event,
        });
        inner.next_seq += 1;
        if let Some(recorder) = &self.recorder
            && let Err(e) = recorder.record(&envelope)
        {
            tracing::error!("recording event {} failed: {e}", envelope.seq);
            self.broken.store(true, Ordering::SeqCst);
        }
        inner.subscribers.retain(|s| s.send(envelope.clone()).is_ok());
    }

    /// Drops all subscriber channels so their receivers end.
    pub fn close(&self) {
        self.lock().subscribers.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave Inner inconsistent (two plain fields).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}
