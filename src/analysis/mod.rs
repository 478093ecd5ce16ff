//! Reading recorded runs as results: paired comparisons of methods (`rgd compare`) with the
//! statistics that say whether a difference is noise. Reads the store; writes nothing.

mod compare;
mod html;
mod report;
pub mod stats;
mod text;

pub use compare::{AgentCost, Comparison, Cost, Paired, PlusColumn, PlusStats, RunData, RunStats, compare};
pub use html::html;
pub use report::{Entry, Report};
pub use text::render;
