//! The flags several commands share, in one place: what every run takes (`CommonArgs`),
//! `--plus` of `compare` and `report` (`PlusArgs`), and the dataset commands' tasks (`Tasks`).
//! A command's own flags are beside it (`run::SweepArgs`, `solve::SolveArgs`).

use std::path::{Path, PathBuf};

use clap::Args;

use crate::analysis::RunData;
use crate::dataset::{DEFAULT_SPLIT_SEED, LoadedDataset, load_dataset, resolve_dataset};
use crate::engine::{SelfDebugFeedback, Strategy};
use crate::launch::RunPlan;
use crate::plus::rejudge::judge_runs;
use crate::sandbox::{SandboxKind, TraceMode};
use crate::store::Home;

#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Set by the repository commands from `--allow-in-process` (not a flag of every command):
    /// the memory pool may take a verdict reached with the program in the tests' process.
    #[arg(skip)]
    pub allow_in_process: bool,
    /// RGD's Feedback agent may say a visible test contradicts the task's description; the task
    /// then ends as flagged instead of iterating on (off by default: the paper's prompts as they are)
    #[arg(long)]
    pub allow_flag: bool,
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
    /// Accepted and ignored: every run writes its journal (`events.jsonl`) now; scripts and
    /// Slurm job files written before still pass it
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

pub(super) fn parse_breakpoints(text: &str) -> Result<String, String> {
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
    /// What a run of the agents on one task takes of these flags (`rgd solve`, `fix`).
    pub fn attempt(&self) -> crate::front::attempt::AttemptSettings {
        crate::front::attempt::AttemptSettings {
            plan: self.plan(),
            split_seed: self.split_seed,
            max_iters: self.max_iters,
            json: self.json,
            out: self.out.clone(),
            tui: self.tui,
        }
    }

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
            allow_flag: self.allow_flag,
        }
    }

    fn debugger(&self) -> Option<std::sync::Arc<crate::engine::Control>> {
        debugger(self.breakpoints.as_deref(), self.control, self.tui)
    }
}

/// The debugger: with breakpoints, a control channel, or the TUI (whose keys drive it).
pub(super) fn debugger(
    breakpoints: Option<&str>,
    control: Option<ControlChannel>,
    tui: bool,
) -> Option<std::sync::Arc<crate::engine::Control>> {
    if breakpoints.is_none() && control.is_none() && !tui {
        return None;
    }
    // Checked by the flag's parser already.
    let breakpoints = crate::engine::Breakpoint::parse_list(breakpoints.unwrap_or_default()).unwrap_or_default();
    Some(std::sync::Arc::new(crate::engine::Control::new(breakpoints)))
}

/// Which tasks of which dataset a command works on, and how many at once.
#[derive(Debug, clap::Args)]
pub struct Tasks {
    /// Dataset name or JSONL path
    pub name: String,
    /// Only the first N tasks
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub limit: Option<usize>,
    /// Tasks worked on at once (default: one per core)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub concurrency: Option<usize>,
    #[arg(long, default_value_t = DEFAULT_SPLIT_SEED)]
    pub split_seed: u64,
}

impl Tasks {
    /// The dataset, its tasks cut to `--limit`.
    pub fn load(&self, data_dir: Option<&Path>) -> anyhow::Result<LoadedDataset> {
        let (name, path) = resolve_dataset(&self.name, data_dir)?;
        let mut ds = load_dataset(&name, &path, self.split_seed)?;
        if let Some(n) = self.limit {
            ds.tasks.truncate(n);
        }
        Ok(ds)
    }
}

/// `--plus`: the runs judged again on a plus dataset's tests.
#[derive(Debug, clap::Args)]
pub struct PlusArgs {
    /// Also judge each run's final programs on the hidden tests of its dataset's plus version
    /// (`humaneval` -> `humaneval-plus`): no new model call, the verdicts are kept in the run
    #[arg(long)]
    pub plus: bool,
    /// The plus dataset to judge on, instead of `<the run's dataset>-plus` (implies --plus)
    #[arg(long, value_name = "DATASET")]
    pub plus_dataset: Option<String>,
}

impl PlusArgs {
    /// Adds the plus column to each run that has a plus dataset (`plus::rejudge::judge_runs`).
    pub async fn judge(&self, home: &Home, data_dir: Option<&std::path::Path>, runs: &mut [RunData]) -> anyhow::Result<()> {
        if !self.plus && self.plus_dataset.is_none() {
            return Ok(());
        }
        judge_runs(home, data_dir, runs, self.plus_dataset.as_deref()).await
    }
}
