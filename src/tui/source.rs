//! A live run: the sweep works on its own task and reports by events (recorded first, then sent
//! here); when it ends, its summary or error arrives once.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::task::AbortOnDropHandle;

use super::model::RunModel;
use crate::engine::{Envelope, RunSummary, Sweep};
use crate::store::RunStore;

pub enum LiveMsg {
    Event(Arc<Envelope>),
    Done(Box<Result<RunSummary, String>>),
}

pub struct LiveRun {
    pub store: Arc<RunStore>,
    events: UnboundedReceiver<Arc<Envelope>>,
    handle: Option<AbortOnDropHandle<Result<RunSummary, String>>>,
    pub outcome: Option<Result<RunSummary, String>>,
}

impl LiveRun {
    /// Subscribes, shows what the run recorded before (a resumed run), then starts the sweep.
    pub fn start(sweep: Sweep, resumed: bool, model: &mut RunModel) -> LiveRun {
        let store = sweep.store.clone();
        // Subscribe before reading the record: an event in both is applied once (by sequence).
        let events = sweep.bus.subscribe();
        for envelope in store.events().flatten() {
            model.apply(&envelope);
        }
        let handle = AbortOnDropHandle::new(tokio::spawn(async move { sweep.run(resumed).await.map_err(|e| e.to_string()) }));
        LiveRun {
            store,
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

    /// The next event, or the end of the run. Pending forever once both are consumed.
    pub async fn next(&mut self) -> LiveMsg {
        let Some(handle) = self.handle.as_mut() else {
            // Finished: drain what the bus still holds, then wait forever.
            return match self.events.try_recv() {
                Ok(e) => LiveMsg::Event(e),
                Err(_) => std::future::pending().await,
            };
        };
        tokio::select! {
            biased;
            Some(e) = self.events.recv() => LiveMsg::Event(e),
            joined = handle => {
                self.handle = None;
                let outcome = joined.unwrap_or_else(|e| Err(format!("the sweep task failed: {e}")));
                self.outcome = Some(outcome.clone());
                LiveMsg::Done(Box::new(outcome))
            }
        }
    }
}
