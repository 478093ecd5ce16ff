//! The RGD engine: a per-task state machine (`machine`), a runner that executes its effects
//! (`runner`), a sweep over many tasks (`sweep`), and the typed event stream they report on (`bus`).

mod bus;
mod control;
mod machine;
mod replay;
mod runner;
mod sweep;

pub use bus::EventBus;
pub use control::{Breakpoint, Command, Control, Field};
pub use machine::{Effect, LoopConfig, MemoryRecord, Outcome, SelfDebugFeedback, Step, Strategy, TaskMachine, Transition, suite_tests};
pub use replay::Replay;
// The record types are the engine's vocabulary; they live in `record/` so that the store can
// persist them without depending on the engine.
pub use crate::record::{
    CodeSimParams, DatasetInfo, Envelope, Event, EventPart, ForkPoint, LpwParams, Manifest, MapCoderParams, MemoryInfo, MgDebuggerParams,
    Pending, Pricing, Recorder, RunSummary, Shard, ShardInfo, Suite, TaskResult, TaskStatus, Tokens,
};
pub use runner::{MemoryLookup, TaskRunner};
pub use sweep::Sweep;
