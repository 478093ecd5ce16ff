//! The data of a run, with no I/O: events and their envelopes, the manifest, per-task results and
//! summaries, the progress status, and the traits through which the engine hands them to storage.
//! The engine produces these, the store persists them, the views and analyses read them; none of
//! those needs another's types. (They do name the agents', sandbox's and model client's data types
//! that events carry, so this room sits above those, not at the very bottom.)

mod events;
mod manifest;
mod result;
mod status;

use std::collections::HashMap;
use std::sync::Arc;

pub use events::{Envelope, Event, EventPart, Pending, Suite};
pub use manifest::{
    CodeSimParams, DatasetInfo, ForkPoint, LpwParams, Manifest, MapCoderParams, MemoryInfo, MgDebuggerParams, MgTrace, Pricing, Shard,
    ShardInfo,
};
pub use result::{Cheat, Failure, ImpossibleCounts, ImpossibleVerdict, RunSummary, TaskResult, TaskStatus, Tokens, proves};
pub use status::{RunState, RunStatus};

/// Why storage failed, as text: the engine reports it and stops; it never inspects it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RecordError(pub String);

/// Durable storage of a run's events (what the event bus's recorder thread writes to).
pub trait Recorder: Send + Sync {
    /// Persists a batch in order. When the batch holds a `TaskFinished`, that event and its
    /// result must be durable when this returns.
    fn record(&self, batch: &[Arc<Envelope>]) -> Result<(), String>;
}

/// A run's record as a sweep needs it: what it is, what finished, how often each task started,
/// and where its progress goes.
pub trait RunRecord: Recorder {
    fn manifest(&self) -> Result<Manifest, RecordError>;
    /// Finished tasks' results.
    fn results(&self) -> Result<Vec<TaskResult>, RecordError>;
    /// Every recorded event, in order.
    fn events(&self) -> Result<Vec<Envelope>, RecordError>;
    fn write_status(&self, status: &RunStatus) -> Result<(), RecordError>;
    /// Everything recorded so far is durable.
    fn flush(&self) -> Result<(), RecordError>;

    /// How many times each task started (a resumed task's next attempt is one more).
    fn attempts(&self) -> Result<HashMap<String, u32>, RecordError> {
        let mut attempts = HashMap::new();
        for envelope in self.events()? {
            if let Event::TaskStarted { task_id, .. } = envelope.event {
                *attempts.entry(task_id).or_default() += 1;
            }
        }
        Ok(attempts)
    }
}
