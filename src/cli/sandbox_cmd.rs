//! `rgd sandbox run FILE`: try any program in the sandbox.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

use crate::dataset::{TaskKind, TestCase};
use crate::sandbox::{Job, Limits, SandboxKind, TraceJob, TraceMode, make_executor};

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Build (once) and load the wasm sandbox, and say where it lives
    Build,
    /// Run FILE as a program (stdin from --stdin) and print the JSON verdict
    Run {
        file: PathBuf,
        /// Seconds the program may run
        #[arg(long, default_value_t = 5.0, value_parser = crate::validate::parse_seconds)]
        timeout: f64,
        /// Memory limit in MiB
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(16..=1 << 20))]
        memory: u64,
        /// Text given to the program on standard input
        #[arg(long, default_value = "")]
        stdin: String,
        /// Expected standard output (compared token by token); without it the program passes when
        /// it ends without an exception, and the verdict shows what it printed
        #[arg(long)]
        expect: Option<String>,
        /// A directory of data files the program may read (read-only, its working directory;
        /// `/data` inside the wasm sandbox)
        #[arg(long, value_name = "DIR")]
        files: Option<PathBuf>,
        /// Use the native python3 executor instead of the wasm sandbox (weaker isolation)
        #[arg(long)]
        native: bool,
    },
    /// Trace one call of FILE's code: its basic blocks with the variables before and after each,
    /// or its call tree
    Trace {
        file: PathBuf,
        /// The call to trace, e.g. 'f(1, 2)'
        #[arg(long)]
        call: String,
        #[arg(long, value_enum, default_value_t = TraceMode::Block)]
        mode: TraceMode,
        /// Seconds the traced call may run
        #[arg(long, default_value_t = 5.0, value_parser = crate::validate::parse_seconds)]
        timeout: f64,
        /// Trace events (executed lines and calls) at most
        #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        max_events: u64,
        /// The whole trace as one JSON object
        #[arg(long)]
        json: bool,
        /// Use the native python3 executor instead of the wasm sandbox
        #[arg(long)]
        native: bool,
    },
}

pub async fn execute(cmd: SandboxCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SandboxCommand::Build => build(),
        SandboxCommand::Run {
            file,
            timeout,
            memory,
            stdin,
            expect,
            files,
            native,
        } => {
            let limits = Limits {
                per_test: Duration::from_secs_f64(timeout),
                memory_mb: memory,
                data_dir: files,
                ..Limits::default()
            };
            run(file, limits, stdin, expect, native).await
        }
        SandboxCommand::Trace {
            file,
            call,
            mode,
            timeout,
            max_events,
            json,
            native,
        } => {
            let code = std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let kind = if native { SandboxKind::Native } else { SandboxKind::Wasm };
            let executor = make_executor(kind, &|line| eprintln!("{line}"))?;
            let limits = Limits {
                per_test: Duration::from_secs_f64(timeout),
                ..Limits::default()
            };
            let trace = executor
                .trace(TraceJob {
                    kind: &crate::dataset::TaskKind::Function,
                    code: &code,
                    call: &call,
                    mode,
                    max_events: max_events as usize,
                    limits: &limits,
                })
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&trace)?);
            } else {
                let mut out = crate::terminal::CleanWriter(std::io::stdout().lock());
                std::io::Write::write_all(&mut out, crate::sandbox::render_trace(&trace).as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn build() -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let executor = crate::sandbox::WasmExecutor::new(&|line| eprintln!("{line}"))?;
    let path = executor.component_path();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    println!("wasm sandbox ready in {:.1}s", started.elapsed().as_secs_f64());
    println!("component  {} ({:.1} MB)", path.display(), size as f64 / 1e6);
    println!("cache      {}", crate::sandbox::wasm::cache_dir().display());
    Ok(ExitCode::SUCCESS)
}

async fn run(file: PathBuf, limits: Limits, stdin: String, expect: Option<String>, native: bool) -> anyhow::Result<ExitCode> {
    let code = std::fs::read_to_string(&file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let kind = if native { SandboxKind::Native } else { SandboxKind::Wasm };
    let executor = make_executor(kind, &|line| eprintln!("{line}"))?;
    // The program runs as a stdin/stdout program: the verdict shows what it printed, raised, or how
    // it was stopped, and compares the output when an expectation is given.
    let tests = [match expect {
        Some(output) => TestCase::Io { input: stdin, output },
        None => TestCase::Run { input: stdin },
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
