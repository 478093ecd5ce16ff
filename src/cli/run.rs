//! `rgd run` and `rgd sweep`: flags to a plan, the run assembled by `launch`, then a front end
//! (the printer, or the TUI) subscribed while the sweep works.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::args::{CommonArgs, ControlChannel, debugger, parse_breakpoints};

use super::stderr_line;
use crate::config::{Configured, LlmArgs};
use crate::front::print::PrinterMode;
use crate::front::{Front, execute};

use crate::launch::{ResumeFrom, RunPlan, load_dataset_named, new_run, resume, select_tasks};

use crate::store::Home;

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
    let from = ResumeFrom {
        configured: Configured::load(config, &home.root, llm)?,
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
    let settings = Configured::load(config, &home.root, llm)?.settings(Some(1), args.common.max_iters);
    let prepared = new_run(home, &settings, &args.common.plan(), dataset, vec![task], &stderr_line).await?;
    execute(prepared, mode, &front_of(&args.common)).await
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
    let configured = Configured::load(config, &home.root, llm)?;
    // A run id that exists already is resumed: a requeued or restarted cluster job goes on.
    let resume_id = args
        .resume
        .clone()
        .or_else(|| args.common.run_id.clone().filter(|id| home.has_run(id)));
    if let Some(prefix) = &resume_id {
        let from = ResumeFrom {
            configured,
            concurrency: args.concurrency,
        };
        let prepared = resume(home, from, &args.common.plan(), prefix, &stderr_line).await?;
        return execute(prepared, mode, &front_of(&args.common)).await;
    }
    let name = args
        .dataset
        .as_deref()
        .ok_or_else(|| anyhow::anyhow!("--dataset NAME is required (or --resume RUN_ID)"))?;
    let dataset = load_dataset_named(name, data_dir, args.common.split_seed, &stderr_line)?;
    let selected = select_tasks(&dataset, &args.tasks, args.limit, args.exclude_broken)?;
    let settings = configured.settings(args.concurrency, args.common.max_iters);
    let plan = RunPlan {
        excluded_broken: selected.excluded_broken,
        shard: args.shard,
        memory_snapshot: args.memory_snapshot.clone(),
        ..args.common.plan()
    };
    let prepared = new_run(home, &settings, &plan, dataset, selected.tasks, &stderr_line).await?;
    execute(prepared, mode, &front_of(&args.common)).await
}

fn front_of(common: &CommonArgs) -> Front<'_> {
    Front {
        out: common.out.as_deref(),
        tui: common.tui,
    }
}
