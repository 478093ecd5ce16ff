//! The RGD engine: a per-task state machine (`machine`), a runner that executes its effects
//! (`runner`), a sweep over many tasks (`sweep`), and the typed event stream they report on (`bus`).

mod bus;
mod events;
mod machine;
mod manifest;
mod result;
mod runner;
mod sweep;

pub use bus::{EventBus, Recorder};
pub use events::{Envelope, Event, Suite};
pub use machine::{Effect, LoopConfig, MemoryRecord, Outcome, Step, Strategy, TaskMachine, Transition, suite_tests};
pub use manifest::{DatasetInfo, Manifest, MemoryInfo, Pricing};
pub use result::{RunSummary, TaskResult, TaskStatus, Tokens};
pub use runner::{MemoryLookup, TaskRunner};
pub use sweep::Sweep;
