//! rgd's integration tests, one binary: each file a module (as codex-rs does), so the suite links
//! wasmtime, tantivy, fastembed and llama.cpp once, not once per file. `cargo test --test all
//! NAME` runs one module's tests (`cargo test --test all pictures::`).

#[path = "../support/mod.rs"]
mod support;

mod adversarial;
mod analysis;
mod cli;
mod debugger;
mod docs;
mod endpoints;
mod engine_loop;
mod exit_status;
mod faults;
mod first_run;
mod floor_plan;
mod forging;
mod impossible;
mod local_model;
mod memory;
mod memory_loop;
mod memory_shared;
mod never_panics;
mod no_leak;
mod pictures;
mod plus;
mod real;
mod repo_fallbacks;
mod repo_fix;
mod repo_forging;
mod repo_index;
mod repo_locate;
mod repo_solve;
mod repo_testrun;
mod resume;
mod sandbox;
mod secrets;
mod shards;
mod slurm;
mod store_faults;
mod strategies;
mod terminal_safety;
mod tracer;
mod tui_tmux;
mod tui_views;
