//! `rgd run` and `rgd sweep`: build the parts, start the engine, subscribe a printer.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;

use super::print::{Printer, PrinterMode};
use crate::agents::Prompts;
use crate::config::{FileConfig, LlmArgs, Settings};
use crate::dataset::{DEFAULT_SPLIT_SEED, LoadedDataset, Task, load_dataset, resolve_dataset};
use crate::engine::{
    DatasetInfo, EventBus, LoopConfig, Manifest, MemoryInfo, MemoryLookup, Recorder, RunSummary, Strategy, Sweep, TaskRunner,
};
use crate::llm::local::LocalChat;
use crate::llm::{ChatModel, OpenAiChat};
use crate::sandbox::{Executor, SandboxKind, make_executor};
use crate::store::{Home, RunStore, export_run};

#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
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
    /// Seconds each test may run
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
    /// rgd (the three agents) or direct (the baseline: one answer from the task, tested once)
    #[arg(long, value_enum, default_value_t = Strategy::Rgd)]
    pub strategy: Strategy,
    /// Use this run id (set by --detach, which must know the id before the run starts)
    #[arg(long, hide = true)]
    pub run_id: Option<String>,
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
    let dataset = load(&args.dataset, data_dir, args.common.split_seed)?;
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
    let prepared = new_run(home, &settings, &args.common, dataset, vec![task], &stderr_line)?;
    execute(prepared, mode, &args.common).await
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
    if args.detach {
        return super::detach::detach(home, &args).await;
    }
    let (file, file_path) = FileConfig::load(config, &home.root)?;
    if let Some(prefix) = &args.resume {
        let prepared = resume(home, file, file_path, llm, &args, prefix)?;
        return execute(prepared, mode, &args.common).await;
    }
    let name = args
        .dataset
        .as_deref()
        .ok_or_else(|| anyhow::anyhow!("--dataset NAME is required (or --resume RUN_ID)"))?;
    let dataset = load(name, data_dir, args.common.split_seed)?;
    let tasks = select_tasks(&dataset, &args.tasks, args.limit)?;
    let settings = Settings::resolve(file, file_path, llm, args.concurrency, args.common.max_iters);
    let prepared = new_run(home, &settings, &args.common, dataset, tasks, &stderr_line)?;
    execute(prepared, mode, &args.common).await
}

/// The tasks of a dataset named by id (all when none), at most `limit`.
pub(crate) fn select_tasks(dataset: &LoadedDataset, ids: &[String], limit: Option<usize>) -> anyhow::Result<Vec<Task>> {
    let mut tasks: Vec<Task> = if ids.is_empty() {
        dataset.tasks.clone()
    } else {
        ids.iter()
            .map(|id| {
                dataset
                    .tasks
                    .iter()
                    .find(|t| &t.id == id)
                    .cloned()
                    .with_context(|| format!("no task {id:?} in {}", dataset.path.display()))
            })
            .collect::<anyhow::Result<_>>()?
    };
    if let Some(n) = limit {
        tasks.truncate(n);
    }
    Ok(tasks)
}

pub(crate) fn load(name: &str, data_dir: Option<&Path>, seed: u64) -> anyhow::Result<LoadedDataset> {
    let (name, path) = resolve_dataset(name, data_dir)?;
    let dataset = load_dataset(&name, &path, seed)?;
    for note in &dataset.notes {
        eprintln!("note: {note}");
    }
    Ok(dataset)
}

pub(crate) fn stderr_line(line: &str) {
    eprintln!("{line}");
}

/// The parts every run needs, from settings.
struct Parts {
    model: Arc<dyn ChatModel>,
    executor: Arc<dyn Executor>,
    prompts: Arc<Prompts>,
    memory: Option<Arc<dyn MemoryLookup>>,
}

/// The memory pool for a run (unless `--no-memory`), and what the manifest says about it.
fn open_memory(
    home: &Home,
    enabled: bool,
    run_id: &str,
    report: &dyn Fn(&str),
) -> anyhow::Result<(Option<Arc<dyn MemoryLookup>>, MemoryInfo)> {
    if !enabled {
        let info = MemoryInfo {
            enabled: false,
            note: "memory disabled (--no-memory): the paper's no-memory ablation".into(),
            entries: None,
            content_hash: None,
        };
        return Ok((None, info));
    }
    let pool = super::memory_cmd::open_pool(home, report)?;
    if !pool.is_owner() {
        report("memory: the pool is owned by another rgd process; this run shares it through that process");
    }
    let state = pool.state()?;
    let info = MemoryInfo {
        enabled: true,
        note: format!("pool {}", pool.dir().display()),
        entries: Some(state.entries),
        content_hash: Some(state.content_hash),
    };
    let lookup = crate::memory::PoolMemory::new(pool, crate::memory::SearchOptions::default(), run_id.to_string());
    Ok((Some(Arc::new(lookup)), info))
}

fn parts(settings: &Settings, common: &CommonArgs, report: &dyn Fn(&str)) -> anyhow::Result<Parts> {
    let model = chat_model(settings, report)?;
    let executor = make_executor(common.sandbox, report)?;
    let prompts = Arc::new(match &common.prompts {
        Some(dir) => Prompts::from_dir(dir)?,
        None => Prompts::builtin(),
    });
    Ok(Parts {
        model,
        executor,
        prompts,
        memory: None,
    })
}

/// The endpoint's client, or (no endpoint configured) the embedded model, fetched and loaded.
pub(crate) fn chat_model(settings: &Settings, report: &dyn Fn(&str)) -> anyhow::Result<Arc<dyn ChatModel>> {
    if let Some(openai) = &settings.openai {
        return Ok(Arc::new(OpenAiChat::new(openai.clone())));
    }
    let local = settings
        .local
        .as_ref()
        .context("no LLM endpoint and no embedded model configured")?;
    let models: std::collections::BTreeSet<&str> = settings.agents.values().map(|p| p.model.as_str()).collect();
    if models.len() > 1 {
        bail!(
            "the embedded model serves every agent, but different models were asked for ({}); per-agent models need an endpoint (OPENAI_BASE_URL)",
            models.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    report(&format!(
        "no endpoint configured (OPENAI_BASE_URL): the agents run on the embedded model {} ({} context(s) of {} thread(s))",
        local.model, local.contexts, local.threads
    ));
    let model = LocalChat::load(local, report).map_err(|e| anyhow::anyhow!("embedded model {}: {e}", local.model))?;
    Ok(Arc::new(model))
}

/// Creates a new recorded run, ready to start.
pub(crate) fn new_run(
    home: &Home,
    settings: &Settings,
    common: &CommonArgs,
    dataset: LoadedDataset,
    tasks: Vec<Task>,
    report: &dyn Fn(&str),
) -> anyhow::Result<Prepared> {
    if tasks.is_empty() {
        bail!("no tasks selected");
    }
    let mut parts = parts(settings, common, report)?;
    let mut limits = settings.limits.clone();
    if let Some(secs) = common.test_timeout {
        limits.per_test = std::time::Duration::from_secs_f64(secs);
    }
    let run_id = common.run_id.clone().unwrap_or_else(|| ulid::Ulid::generate().to_string());
    let direct = common.strategy == Strategy::Direct;
    let (memory, mut memory_info) = open_memory(home, !common.no_memory && !direct, &run_id, report)?;
    if direct {
        memory_info.note = "direct strategy: no memory".into();
    }
    parts.memory = memory;
    let manifest = Manifest {
        run_id: run_id.clone(),
        created_at: chrono::Utc::now(),
        rgd_version: env!("CARGO_PKG_VERSION").into(),
        command: crate::secrets::redact_args(&std::env::args().collect::<Vec<_>>()),
        strategy: common.strategy.name().into(),
        dataset: DatasetInfo {
            name: dataset.name.clone(),
            path: dataset.path.canonicalize().unwrap_or(dataset.path.clone()).display().to_string(),
            format: dataset.format,
            sha256: dataset.sha256.clone(),
            split_seed: dataset.split_seed,
            tasks_in_file: dataset.tasks.len(),
            selected: tasks.iter().map(|t| t.id.clone()).collect(),
        },
        endpoint: parts.model.endpoint(),
        agents: settings.agents.iter().map(|(a, p)| (a.name().to_string(), p.clone())).collect(),
        prompts_source: parts.prompts.source().into(),
        prompts: parts.prompts.hashes().clone(),
        max_iters: if direct { 1 } else { settings.max_iters },
        concurrency: settings.concurrency,
        sandbox: parts.executor.name().into(),
        limits,
        memory: memory_info,
        pricing: settings.pricing,
    };
    let store = Arc::new(RunStore::create(home, &manifest)?);
    prepare(store, parts, settings.concurrency, tasks, false)
}

fn resume(
    home: &Home,
    file: FileConfig,
    file_path: Option<PathBuf>,
    llm: &LlmArgs,
    args: &SweepArgs,
    prefix: &str,
) -> anyhow::Result<Prepared> {
    let run_id = home.find_run(prefix)?;
    let store = Arc::new(RunStore::open(home, &run_id)?);
    let manifest = store.manifest()?;
    let path = PathBuf::from(&manifest.dataset.path);
    let dataset = load_dataset(
        &manifest.dataset.name,
        &path,
        manifest.dataset.split_seed.unwrap_or(DEFAULT_SPLIT_SEED),
    )
    .with_context(|| format!("run {run_id} used {}", path.display()))?;
    if dataset.sha256 != manifest.dataset.sha256 {
        bail!(
            "{} changed since run {run_id} started (sha256 {} now, {} then); resuming would mix task versions",
            path.display(),
            dataset.sha256,
            manifest.dataset.sha256
        );
    }
    let tasks: Vec<Task> = manifest
        .dataset
        .selected
        .iter()
        .map(|id| {
            dataset
                .tasks
                .iter()
                .find(|t| &t.id == id)
                .cloned()
                .with_context(|| format!("task {id} is gone from {}", path.display()))
        })
        .collect::<anyhow::Result<_>>()?;
    // The run keeps its recorded agent settings and limits; only the endpoint (and its key, which
    // is never recorded) comes from the current environment.
    let mut settings = Settings::resolve(
        file,
        file_path,
        llm,
        args.concurrency.or(Some(manifest.concurrency)),
        Some(manifest.max_iters),
    );
    settings.agents = crate::agents::Agent::ALL
        .iter()
        .filter_map(|a| manifest.agents.get(a.name()).map(|p| (*a, p.clone())))
        .collect();
    settings.limits = manifest.limits.clone();
    let mut parts = parts(&settings, &args.common, &stderr_line)?;
    // A resumed run keeps its memory setting; the pool may have grown since (the manifest keeps
    // the state the run started with).
    parts.memory = open_memory(home, manifest.memory.enabled, &run_id, &stderr_line)?.0;
    if parts.prompts.hashes() != &manifest.prompts {
        eprintln!("warning: prompt files differ from the ones run {run_id} started with; its manifest keeps the original hashes");
    }
    eprintln!("resuming run {run_id}");
    prepare(store, parts, settings.concurrency, tasks, true)
}

/// A run with everything wired: the store records, the bus numbers events, the sweep works.
pub(crate) struct Prepared {
    pub store: Arc<RunStore>,
    pub bus: Arc<EventBus>,
    pub sweep: Sweep,
    pub resumed: bool,
}

fn prepare(store: Arc<RunStore>, parts: Parts, concurrency: usize, tasks: Vec<Task>, resumed: bool) -> anyhow::Result<Prepared> {
    let manifest = store.manifest()?;
    let recorder: Arc<dyn Recorder> = store.clone();
    let next_seq = store.next_seq()?;
    let bus = EventBus::new(Some(recorder), next_seq);
    let config = Arc::new(LoopConfig {
        strategy: if manifest.strategy == Strategy::Direct.name() {
            Strategy::Direct
        } else {
            Strategy::Rgd
        },
        max_iters: manifest.max_iters,
        params: crate::agents::Agent::ALL
            .iter()
            .filter_map(|a| manifest.agents.get(a.name()).map(|p| (*a, p.clone())))
            .collect(),
        memory: manifest.memory.enabled,
    });
    let runner = Arc::new(TaskRunner::new(
        parts.model,
        parts.executor,
        parts.memory,
        parts.prompts,
        config,
        manifest.limits.clone(),
        bus.clone(),
        next_seq,
    ));
    let sweep = Sweep {
        store: store.clone(),
        bus: bus.clone(),
        runner,
        tasks: tasks.into_iter().map(Arc::new).collect(),
        concurrency,
    };
    Ok(Prepared {
        store,
        bus,
        sweep,
        resumed,
    })
}

/// Runs a prepared run with a front end: the headless printer, or the TUI.
async fn execute(prepared: Prepared, mode: PrinterMode, common: &CommonArgs) -> anyhow::Result<ExitCode> {
    let (out, tui, journal) = (common.out.as_deref(), common.tui, common.journal);
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
        let outcome = crate::tui::watch_run(sweep, resumed).await;
        close(&bus, journal);
        return finish(&store, outcome?, mode, out);
    }
    let printer = Printer::spawn(mode, bus.subscribe(), sweep.tasks.len());
    let summary = tokio::select! {
        summary = sweep.run(resumed) => summary?,
        _ = tokio::signal::ctrl_c() => {
            close(&bus, journal);
            printer.finish().await;
            eprintln!("\ninterrupted: finished tasks are recorded; continue with `rgd sweep --resume {run_id}`");
            return Ok(ExitCode::from(130));
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
        return Ok(ExitCode::from(130));
    };
    if let Some(dir) = out {
        export_run(store, dir)?;
        eprintln!("wrote samples.jsonl, results.jsonl and summary.json to {}", dir.display());
    }
    if mode != PrinterMode::Json {
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
    Ok(ExitCode::SUCCESS)
}
