//! `rgd sandbox run FILE`: try any program in the sandbox.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

use crate::dataset::{TaskKind, TestCase};
use crate::sandbox::{Executor, Job, Limits, NativeExecutor};

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Run FILE as a program (stdin from --stdin) and print the JSON verdict
    Run {
        file: PathBuf,
        /// Seconds the program may run
        #[arg(long, default_value_t = 5.0)]
        timeout: f64,
        /// Memory limit in MiB
        #[arg(long, default_value_t = 1024)]
        memory: u64,
        /// Text given to the program on standard input
        #[arg(long, default_value = "")]
        stdin: String,
        /// Use the native python3 executor (the only one until the wasm sandbox lands)
        #[arg(long)]
        native: bool,
    },
}

pub async fn execute(cmd: SandboxCommand) -> anyhow::Result<ExitCode> {
    let SandboxCommand::Run {
        file,
        timeout,
        memory,
        stdin,
        native: _,
    } = cmd;
    let code = std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let executor = NativeExecutor::discover()?;
    let limits = Limits {
        per_test: Duration::from_secs_f64(timeout),
        memory_mb: memory,
        ..Limits::default()
    };
    // The program runs as a stdin/stdout program with one "test" whose expected output is unknown:
    // the verdict then shows what it printed, raised, or how it was stopped.
    let tests = [TestCase::Io {
        input: stdin,
        output: String::new(),
    }];
    let report = executor
        .run(Job {
            code: &code,
            kind: &TaskKind::Stdio,
            entry_point: "",
            tests: &tests,
            limits: &limits,
        })
        .await?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(ExitCode::SUCCESS)
}
