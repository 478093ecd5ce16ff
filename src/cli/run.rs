//! `rgd run` and `rgd sweep`: flags to a plan, the run assembled by `launch`, then a front end
//! (the printer, or the TUI) subscribed while the sweep works.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::print::{Printer, PrinterMode};
use super::stderr_line;
use crate::config::{FileConfig, LlmArgs, Settings};
use crate::dataset::DEFAULT_SPLIT_SEED;
use crate::engine::{EventBus, RunSummary, SelfDebugFeedback, Strategy};
use crate::launch::{Prepared, ResumeFrom, RunPlan, load_dataset_named, new_run, resume, select_tasks};
use crate::sandbox::{SandboxKind, TraceMode};
use crate::store::{Home, RunStore, export_run};

#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Set by the repository commands from `--allow-in-process` (not a flag of every command):
    /// the memory pool may take a verdict reached with the program in the tests' process.
    #[arg(skip)]
    pub allow_in_process: bool,
    /// Most code attempts per task
    #[arg(long, value_parser = crate::validate::parse_iters)]
    pub max_iters: Option<u32>,
    /// Where programs run: wasm (CPython under wasmtime, the default) or native (python3 subprocess, weaker)
    #[arg(long, value_enum, default_value_t = SandboxKind::Wasm)]
    pub sandbox: SandboxKind,
    /// Seed of the 6:4 visible:hidden split of -ET datasets
    #[arg(long, default_value_t = DEFAULT_SPLIT_SEED)]
    pub split_seed: u64,
    /// Directory with prompt files overriding the built-in ones
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// Seconds each test may run, for every task [default: each task's limit measured from its
    /// reference (`rgd datasets limits`), else [sandbox] per_test_timeout_secs, else 5]
    #[arg(long, value_parser = crate::validate::parse_seconds)]
    pub test_timeout: Option<f64>,
    /// Print every event as a JSON line instead of text
    #[arg(long)]
    pub json: bool,
    /// Write samples.jsonl, results.jsonl and summary.json here when done
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Watch the run in the terminal UI instead of printing
    #[arg(long, conflicts_with = "json")]
    pub tui: bool,
    /// Also write the events to `events.jsonl` in the run directory, for `rgd replay --follow`
    /// (set by --detach)
    #[arg(long, hide = true)]
    pub journal: bool,
    /// Run without the memory pool (the paper's ablation): nothing retrieved, nothing stored
    #[arg(long)]
    pub no_memory: bool,
    /// RGD without the Guide agent (ablation): the Debug agent writes and repairs with no guidance
    #[arg(long)]
    pub no_guide: bool,
    /// RGD without the Feedback agent (ablation): the Guide refines from the raw visible-test results
    #[arg(long)]
    pub no_feedback: bool,
    /// The method: rgd (the three agents), or a baseline (direct, cot, self-planning, self-debug,
    /// ldb, reflexion, mapcoder), or a method published after RGD (codesim, lpw, mgdebugger)
    #[arg(long, value_enum, default_value_t = Strategy::Rgd)]
    pub strategy: Strategy,
    /// self-debug's feedback turns: simple ("wrong, fix it"), unit-test (the failing tests and
    /// their real results), explain (and explain the code first), trace (and dry-run a failing test)
    #[arg(long, value_enum, default_value_t = SelfDebugFeedback::UnitTest)]
    pub feedback: SelfDebugFeedback,
    /// rgd: the Feedback agent also reads a real execution of one failing visible test, as basic
    /// blocks with variables (block) or as a call tree (calls); off as in the paper.
    /// mgdebugger: real (a real trace of the failing unit test instead of the model's simulated
    /// one, which is the paper's and the default); for rgd, real is block
    #[arg(long, value_enum, default_value_t = TraceOption::Off)]
    pub trace: TraceOption,
    /// rgd, self-debug, ldb, mgdebugger: start from these programs instead of generating them (another run's
    /// id, or a samples.jsonl of {"task_id", "completion"} lines)
    #[arg(long, value_name = "RUN_ID|FILE")]
    pub seed_from: Option<String>,
    /// rgd: the SBERT cosine a remembered task must reach to be offered to the Guide (default 0.8,
    /// measured: see docs/how-it-works.md, the memory pool)
    #[arg(long, value_name = "COSINE", value_parser = crate::validate::parse_unit)]
    pub memory_threshold: Option<f32>,
    /// mapcoder: problems recalled (one plan each)
    #[arg(long = "k", value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub mapcoder_k: u32,
    /// mapcoder: debug rounds on the visible tests per plan
    #[arg(long = "t", value_name = "T", default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub mapcoder_t: u32,
    /// codesim: plans tried, each simulated, coded and debugged (the paper's p)
    #[arg(long = "plans", value_name = "P", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub codesim_p: u32,
    /// codesim: debug rounds on the visible tests per plan (the paper's d)
    #[arg(long = "debug-rounds", value_name = "D", default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub codesim_d: u32,
    /// lpw: rounds to reach a verified plan (each a verification on the visible tests and its
    /// check; the authors' 12)
    #[arg(long = "verify-rounds", value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=30))]
    pub lpw_verify: u32,
    /// lpw: rounds of refinement once the code fails the visible tests (the authors' 12)
    #[arg(long = "refine-rounds", value_name = "N", default_value_t = 12, value_parser = clap::value_parser!(u32).range(0..=30))]
    pub lpw_refine: u32,
    /// mgdebugger: debugging passes over the seed, each from the seed again (the authors' 10)
    #[arg(long = "retries", value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub mg_retries: u32,
    /// mgdebugger: repairs of each subfunction while its unit tests fail (the authors' 3)
    #[arg(long = "repairs", value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub mg_repairs: u32,
    /// Use this run id; if that run exists, resume it (what a requeued cluster job needs)
    #[arg(long, value_parser = crate::validate::parse_run_id)]
    pub run_id: Option<String>,
    /// Stop tasks here (comma-separated): before:guide|debug|feedback|agent|tests|memory,
    /// on:visible-fail|hidden-fail|llm-error, iter:K. Headless, commands are read from stdin
    #[arg(long = "break", value_name = "WHERE", value_parser = parse_breakpoints)]
    pub breakpoints: Option<String>,
    /// Take debugger commands as JSON lines on stdin (use with --json); see docs/debugger.md for the protocol
    #[arg(long, value_enum, value_name = "CHANNEL")]
    pub control: Option<ControlChannel>,
}

/// Where debugger commands come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ControlChannel {
    Stdio,
}

fn parse_breakpoints(text: &str) -> Result<String, String> {
    crate::engine::Breakpoint::parse_list(text).map(|_| text.to_string())
}

/// `--trace`: which execution trace RGD's Feedback agent reads, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceOption {
    Off,
    Block,
    Calls,
    /// mgdebugger's variant: real traces instead of simulated ones (block for rgd)
    Real,
}

impl CommonArgs {
    /// What these flags ask of the run itself (the rest concern the front end).
    pub fn plan(&self) -> RunPlan {
        RunPlan {
            strategy: self.strategy,
            sandbox: self.sandbox,
            prompts: self.prompts.clone(),
            test_timeout: self.test_timeout,
            memory: !self.no_memory,
            guide: !self.no_guide,
            feedback: !self.no_feedback,
            self_debug: self.feedback,
            trace: match self.trace {
                TraceOption::Off => None,
                TraceOption::Block | TraceOption::Real => Some(TraceMode::Block),
                TraceOption::Calls => Some(TraceMode::Calls),
            },
            seed_from: self.seed_from.clone(),
            memory_threshold: self.memory_threshold,
            mapcoder: crate::engine::MapCoderParams {
                k: self.mapcoder_k,
                t: self.mapcoder_t,
            },
            codesim: crate::engine::CodeSimParams {
                p: self.codesim_p,
                d: self.codesim_d,
            },
            lpw: crate::engine::LpwParams {
                verify_rounds: self.lpw_verify,
                refine_rounds: self.lpw_refine,
            },
            mgdebugger: crate::engine::MgDebuggerParams {
                retries: self.mg_retries,
                repairs: self.mg_repairs,
                trace: if self.trace == TraceOption::Real {
                    crate::record::MgTrace::Real
                } else {
                    crate::record::MgTrace::Simulated
                },
            },
            run_id: self.run_id.clone(),
            control: self.debugger(),
            fork: None,
            shard: None,
            memory_snapshot: None,
            excluded_broken: Vec::new(),
            allow_in_process: self.allow_in_process,
        }
    }

    fn debugger(&self) -> Option<std::sync::Arc<crate::engine::Control>> {
        debugger(self.breakpoints.as_deref(), self.control, self.tui)
    }
}

/// The debugger: with breakpoints, a control channel, or the TUI (whose keys drive it).
fn debugger(breakpoints: Option<&str>, control: Option<ControlChannel>, tui: bool) -> Option<std::sync::Arc<crate::engine::Control>> {
    if breakpoints.is_none() && control.is_none() && !tui {
        return None;
    }
    // Checked by the flag's parser already.
    let breakpoints = crate::engine::Breakpoint::parse_list(breakpoints.unwrap_or_default()).unwrap_or_default();
    Some(std::sync::Arc::new(crate::engine::Control::new(breakpoints)))
}

#[derive(Debug, Args)]
pub struct ForkArgs {
    /// The run to fork (its id, or the start of it)
    pub run: String,
    /// The task to go on with
    #[arg(long)]
    pub task: String,
    /// The first iteration run live: the ones before it are the parent's, replayed without an LLM call
    #[arg(long, value_parser = crate::validate::parse_iters)]
    pub at: u32,
    /// Most code attempts (the parent's otherwise)
    #[arg(long, value_parser = crate::validate::parse_iters)]
    pub max_iters: Option<u32>,
    /// Every agent's temperature (the parent's otherwise); --model and the --*-model flags change the models
    #[arg(long, value_parser = crate::validate::parse_unit)]
    pub temperature: Option<f32>,
    /// Print every event as a JSON line instead of text
    #[arg(long)]
    pub json: bool,
    /// Watch the fork in the terminal UI
    #[arg(long, conflicts_with = "json")]
    pub tui: bool,
    /// Only print the outcome
    #[arg(long)]
    pub quiet: bool,
    /// Write samples.jsonl, results.jsonl and summary.json here when done
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Breakpoints, as for `rgd run`
    #[arg(long = "break", value_name = "WHERE", value_parser = parse_breakpoints)]
    pub breakpoints: Option<String>,
    /// Take debugger commands as JSON lines on stdin
    #[arg(long, value_enum, value_name = "CHANNEL")]
    pub control: Option<ControlChannel>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub async fn fork(home: &Home, config: Option<&Path>, llm: &LlmArgs, args: ForkArgs) -> anyhow::Result<ExitCode> {
    let (file, file_path) = FileConfig::load(config, &home.root)?;
    let from = ResumeFrom {
        config: file,
        config_path: file_path,
        llm,
        concurrency: Some(1),
    };
    let spec = crate::launch::ForkSpec {
        parent: args.run.clone(),
        task_id: args.task.clone(),
        at: args.at,
        max_iters: args.max_iters,
        temperature: args.temperature,
    };
    let control = debugger(args.breakpoints.as_deref(), args.control, args.tui);
    let prepared = crate::launch::fork(home, from, &spec, control, &stderr_line).await?;
    let mode = if args.json {
        PrinterMode::Json
    } else if args.quiet {
        PrinterMode::Quiet
    } else {
        PrinterMode::Detailed
    };
    let front = Front {
        out: args.out.as_deref(),
        tui: args.tui,
        journal: false,
    };
    execute(prepared, mode, &front).await
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Dataset name (see `rgd datasets list`) or path to a JSONL file
    #[arg(long)]
    pub dataset: String,
    /// Task id, e.g. HumanEval/0
    #[arg(long)]
    pub task: String,
    /// Only print the outcome
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Dataset name or JSONL path (not needed with --resume)
    #[arg(long, required_unless_present = "resume")]
    pub dataset: Option<String>,
    /// Comma-separated task ids
    #[arg(long, value_delimiter = ',')]
    pub tasks: Vec<String>,
    /// Only the first N tasks
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub limit: Option<usize>,
    /// Leave out the tasks the dataset lists as broken in the data (`<stem>.broken.toml`
    /// beside it; `rgd datasets verify` shows them); the run records which
    #[arg(long, conflicts_with = "resume")]
    pub exclude_broken: bool,
    /// Tasks worked on at once
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub concurrency: Option<usize>,
    /// Continue a killed or interrupted run: finished tasks are kept, the rest run
    #[arg(long, conflicts_with_all = ["dataset", "tasks", "limit"])]
    pub resume: Option<String>,
    /// Run in the background, independent of this terminal; with --tui, watch it (closing the
    /// TUI then leaves it running)
    #[arg(long, conflicts_with = "json")]
    pub detach: bool,
    /// Run the K-th of N parts of the selected tasks (0-based, by task order): one shard of a
    /// sweep split across machines, merged later with `rgd runs merge`
    #[arg(long, value_name = "K/N", value_parser = crate::engine::Shard::parse, conflicts_with = "resume")]
    pub shard: Option<crate::engine::Shard>,
    /// A shard's memory pool starts from this snapshot (JSON lines, as `rgd memory export`
    /// writes; `rgd slurm submit` writes one for all shards) instead of the main pool as it is now
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub memory_snapshot: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub async fn run_one(
    home: &Home,
    data_dir: Option<&Path>,
    config: Option<&Path>,
    llm: &LlmArgs,
    args: RunArgs,
) -> anyhow::Result<ExitCode> {
    let dataset = load_dataset_named(&args.dataset, data_dir, args.common.split_seed, &stderr_line)?;
    let task = dataset
        .tasks
        .iter()
        .find(|t| t.id == args.task)
        .with_context(|| {
            format!(
                "no task {:?} in {} (ids look like {:?})",
                args.task,
                dataset.path.display(),
                dataset.tasks.first().map(|t| t.id.as_str()).unwrap_or("")
            )
        })?
        .clone();
    let mode = if args.common.json {
        PrinterMode::Json
    } else if args.quiet {
        PrinterMode::Quiet
    } else {
        PrinterMode::Detailed
    };
    let (file, file_path) = FileConfig::load(config, &home.root)?;
    let settings = Settings::resolve(file, file_path, llm, Some(1), args.common.max_iters);
    let prepared = new_run(home, &settings, &args.common.plan(), dataset, vec![task], &stderr_line).await?;
    execute(prepared, mode, &Front::of(&args.common)).await
}

pub async fn sweep(
    home: &Home,
    data_dir: Option<&Path>,
    config: Option<&Path>,
    llm: &LlmArgs,
    args: SweepArgs,
) -> anyhow::Result<ExitCode> {
    let mode = if args.common.json {
        PrinterMode::Json
    } else {
        PrinterMode::Progress
    };
    let (file, file_path) = FileConfig::load(config, &home.root)?;
    // A run id that exists already is resumed: a requeued or restarted cluster job goes on.
    let resume_id = args
        .resume
        .clone()
        .or_else(|| args.common.run_id.clone().filter(|id| home.has_run(id)));
    if let Some(prefix) = &resume_id {
        let from = ResumeFrom {
            config: file,
            config_path: file_path,
            llm,
            concurrency: args.concurrency,
        };
        let prepared = resume(home, from, &args.common.plan(), prefix, &stderr_line).await?;
        return execute(prepared, mode, &Front::of(&args.common)).await;
    }
    let name = args
        .dataset
        .as_deref()
        .ok_or_else(|| anyhow::anyhow!("--dataset NAME is required (or --resume RUN_ID)"))?;
    let dataset = load_dataset_named(name, data_dir, args.common.split_seed, &stderr_line)?;
    let selected = select_tasks(&dataset, &args.tasks, args.limit, args.exclude_broken)?;
    let settings = Settings::resolve(file, file_path, llm, args.concurrency, args.common.max_iters);
    let plan = RunPlan {
        excluded_broken: selected.excluded_broken,
        shard: args.shard,
        memory_snapshot: args.memory_snapshot.clone(),
        ..args.common.plan()
    };
    let prepared = new_run(home, &settings, &plan, dataset, selected.tasks, &stderr_line).await?;
    execute(prepared, mode, &Front::of(&args.common)).await
}

/// Where a run's progress and results go besides its record.
#[derive(Debug, Default)]
pub struct Front<'a> {
    /// Export samples, results and summary here when the run ends.
    pub out: Option<&'a Path>,
    /// Watch it in the TUI instead of printing.
    pub tui: bool,
    /// Also keep `events.jsonl` for followers.
    pub journal: bool,
}

impl Front<'_> {
    fn of(common: &CommonArgs) -> Front<'_> {
        Front {
            out: common.out.as_deref(),
            tui: common.tui,
            journal: common.journal,
        }
    }
}

/// Runs a prepared run with a front end: the headless printer, or the TUI.
pub async fn execute(prepared: Prepared, mode: PrinterMode, front: &Front<'_>) -> anyhow::Result<ExitCode> {
    let (out, tui, journal) = (front.out, front.tui, front.journal);
    let Prepared {
        store,
        bus,
        sweep,
        resumed,
    } = prepared;
    let run_id = store.run_id.clone();
    let journal = match journal {
        true => Some(crate::store::spawn_journal(&store.dir, bus.subscribe())?),
        false => None,
    };
    // Every event reaches the journal before the process ends.
    let close = |bus: &EventBus, journal: Option<std::thread::JoinHandle<()>>| {
        bus.close();
        if let Some(j) = journal {
            let _ = j.join();
        }
    };
    if tui {
        // The files are written when the run finishes, not when the view closes: a view left
        // open still leaves them behind.
        let exporter = out.map(|dir| {
            let (store, dir, mut events) = (store.clone(), dir.to_path_buf(), bus.subscribe());
            tokio::spawn(async move {
                while let Some(envelope) = events.recv().await {
                    if matches!(envelope.event, crate::engine::Event::RunFinished { .. }) {
                        return export_run(&store, &dir).is_ok();
                    }
                }
                false
            })
        });
        let outcome = crate::tui::watch_run(sweep, resumed).await;
        close(&bus, journal);
        if let Some(exporter) = exporter {
            exporter.abort();
        }
        return finish(&store, outcome?, mode, out);
    }
    let printer = Printer::spawn(mode, bus.subscribe(), sweep.tasks.len());
    if let Some(control) = &sweep.runner.control
        && mode != PrinterMode::Silent
    {
        super::control::spawn_stdin(control.clone(), bus.clone());
    }
    let summary = tokio::select! {
        summary = sweep.run(resumed) => summary?,
        _ = tokio::signal::ctrl_c() => {
            close(&bus, journal);
            printer.finish().await;
            eprintln!("\ninterrupted: finished tasks are recorded; continue with `rgd sweep --resume {run_id}`");
            return Ok(super::exit::code(super::exit::INTERRUPTED));
        }
    };
    close(&bus, journal);
    printer.finish().await;
    finish(&store, Some(summary), mode, out)
}

/// Exports and the closing lines, after any front end. `None`: the user stopped the run.
fn finish(store: &RunStore, summary: Option<RunSummary>, mode: PrinterMode, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let run_id = &store.run_id;
    let Some(summary) = summary else {
        eprintln!("stopped: finished tasks are recorded; continue with `rgd sweep --resume {run_id}`");
        return Ok(super::exit::code(super::exit::INTERRUPTED));
    };
    if let Some(dir) = out {
        export_run(store, dir)?;
        eprintln!("wrote samples.jsonl, results.jsonl and summary.json to {}", dir.display());
    }
    if !matches!(mode, PrinterMode::Json | PrinterMode::Silent) {
        eprintln!(
            "run {run_id}: {}/{} solved (pass@1 {:.1}%), {} failed, {} errors{}{}",
            summary.solved,
            summary.tasks,
            summary.pass_at_1 * 100.0,
            summary.failed,
            summary.errors,
            if summary.tampered > 0 {
                format!(", {} tampered with the judge", summary.tampered)
            } else {
                String::new()
            },
            if summary.unfinished.is_empty() {
                String::new()
            } else {
                format!(", {} unfinished (rgd sweep --resume {run_id})", summary.unfinished.len())
            }
        );
        eprintln!("recorded in {}", store.dir.display());
    }
    if let Some(why) = &summary.halted {
        if mode != PrinterMode::Silent {
            eprintln!(
                "stopped early: {why}; {} task(s) left. When the endpoint is back: rgd sweep --resume {run_id}",
                summary.unfinished.len()
            );
        }
        return Ok(super::exit::code(super::exit::UNFINISHED));
    }
    // However few: a script must not take a sweep with tasks left for a finished one.
    if !summary.unfinished.is_empty() {
        return Ok(super::exit::code(super::exit::UNFINISHED));
    }
    Ok(ExitCode::SUCCESS)
}
