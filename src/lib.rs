//! rgd: three LLM agents (Guide, Debug, Feedback) write, test and debug Python code with the
//! RGD method (arXiv 2410.01242). The engine turns tasks into a stream of typed events; the
//! headless printer, the recorder and the TUI only subscribe to it.

// Non-test code never unwraps, expects or panics: bad input is an error, not a crash. The few
// invariants that cannot fail are allowed one by one, each with its reason.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod agents;
pub mod analysis;
pub mod assets;
pub mod checked;
pub mod cli;
pub mod cluster;
pub mod code;
pub mod config;
pub mod dataset;
pub mod engine;
pub mod front;
pub mod launch;
pub mod llm;
pub mod memory;
pub mod plus;
pub mod record;
pub mod repo;
pub mod retrieval;
pub mod sandbox;
pub mod secrets;
pub mod sled_open;
pub mod store;
pub mod terminal;
pub mod text;
pub mod tui;
pub mod validate;
