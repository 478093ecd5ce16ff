//! Assembling a run: settings → model client → executor → memory pool → manifest → store → bus →
//! runner → sweep. Every front end starts runs through here (`rgd run` and `rgd sweep`, the TUI's
//! start-a-run form, the demo; later forks and experiments), so a run is put together the same way
//! whoever starts it. Front ends then subscribe to the bus (printer, TUI, journal) and drive the
//! sweep; nothing here draws or parses flags.

mod parts;
pub mod project;
mod tasks;

pub use parts::{chat_model, missing_models};
pub use tasks::{load_dataset_named, select_tasks};

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::config::{Configured, Settings};
use crate::dataset::{DEFAULT_SPLIT_SEED, LoadedDataset, Task, load_dataset};
use crate::engine::{DatasetInfo, EventBus, LoopConfig, Manifest, Recorder, SelfDebugFeedback, Strategy, Sweep, TaskRunner};
use crate::sandbox::{SandboxKind, TraceMode};
use crate::store::recall::{Recalled, describe_seeds};
use crate::store::{Home, RunStore};

/// How commands report progress on the terminal (never on stdout, which is for results).
pub(crate) fn stderr_line(line: &str) {
    eprintln!("{line}");
}

/// What a run is, beyond the settings (endpoint, agents, limits) every run shares.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub strategy: Strategy,
    pub sandbox: SandboxKind,
    /// Directory of prompt files overriding the built-in ones.
    pub prompts: Option<PathBuf>,
    /// Seconds each test may run (the settings' limit otherwise).
    pub test_timeout: Option<f64>,
    /// The memory pool; off is the paper's no-memory ablation.
    pub memory: bool,
    /// RGD's Guide agent; off is the no-guide ablation.
    pub guide: bool,
    /// RGD's Feedback agent; off is the no-feedback ablation.
    pub feedback: bool,
    /// What self-debug's feedback turns say.
    pub self_debug: SelfDebugFeedback,
    /// RGD's Feedback agent reads a real execution of a failing visible test.
    pub trace: Option<TraceMode>,
    /// Start rgd, self-debug, ldb and mgdebugger from these programs (another run's id, or a samples.jsonl).
    pub seed_from: Option<String>,
    /// MapCoder's k and t.
    pub mapcoder: crate::engine::MapCoderParams,
    /// CodeSIM's p and d.
    pub codesim: crate::engine::CodeSimParams,
    /// LPW's verification and refinement rounds.
    pub lpw: crate::engine::LpwParams,
    /// MGDebugger's retries, repairs per subfunction and trace.
    pub mgdebugger: crate::engine::MgDebuggerParams,
    /// The SBERT cosine a remembered task must reach to be offered (the default otherwise).
    pub memory_threshold: Option<f32>,
    /// A run id chosen beforehand (a detached run's parent must know it).
    pub run_id: Option<String>,
    /// The debugger (breakpoints, commands), when the front end offers one.
    pub control: Option<Arc<crate::engine::Control>>,
    /// A fork of another run's task (`rgd fork`).
    pub fork: Option<crate::engine::ForkPoint>,
    /// One part of the selected tasks (`--shard K/N`).
    pub shard: Option<crate::engine::Shard>,
    /// The pool snapshot a shard starts from (the main pool as it is now otherwise).
    pub memory_snapshot: Option<PathBuf>,
    /// The tasks listed as broken in the data that the selection left out (recorded).
    pub excluded_broken: Vec<String>,
    /// The memory pool may take a repository verdict reached in-process (best effort).
    pub allow_in_process: bool,
    /// The Feedback agent may flag a visible test as contradicting the specification.
    pub allow_flag: bool,
}

impl RunPlan {
    /// The strategy with every other setting at its default (wasm sandbox, memory, Guide and
    /// Feedback on, built-in prompts).
    pub fn new(strategy: Strategy) -> RunPlan {
        RunPlan {
            strategy,
            sandbox: SandboxKind::Wasm,
            prompts: None,
            test_timeout: None,
            memory: true,
            guide: true,
            feedback: true,
            self_debug: SelfDebugFeedback::default(),
            trace: None,
            seed_from: None,
            mapcoder: crate::engine::MapCoderParams::default(),
            codesim: crate::engine::CodeSimParams::default(),
            lpw: crate::engine::LpwParams::default(),
            mgdebugger: crate::engine::MgDebuggerParams::default(),
            memory_threshold: None,
            run_id: None,
            control: None,
            fork: None,
            shard: None,
            memory_snapshot: None,
            excluded_broken: Vec::new(),
            allow_in_process: false,
            allow_flag: false,
        }
    }
}

/// A run with everything wired: the store records, the bus numbers events, the sweep works.
pub struct Prepared {
    pub store: Arc<RunStore>,
    pub bus: Arc<EventBus>,
    pub sweep: Sweep,
    pub resumed: bool,
}

/// Creates a new recorded run, ready to start.
pub async fn new_run(
    home: &Home,
    settings: &Settings,
    plan: &RunPlan,
    dataset: LoadedDataset,
    tasks: Vec<Task>,
    report: &dyn Fn(&str),
) -> anyhow::Result<Prepared> {
    if tasks.is_empty() {
        bail!("no tasks selected");
    }
    // A shard runs its part of the selection and records the whole of it.
    let sweep_tasks: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    let tasks = match plan.shard {
        Some(shard) => shard.part(&tasks).to_vec(),
        None => tasks,
    };
    if tasks.is_empty() {
        bail!(
            "shard {} of {} holds no task: the sweep has only {} tasks",
            plan.shard.map_or(0, |s| s.index),
            plan.shard.map_or(0, |s| s.count),
            sweep_tasks.len()
        );
    }
    let mut parts = parts::Parts::build(settings, plan, &tasks, report)?;
    let mut limits = settings.limits.clone();
    match plan.test_timeout {
        // A limit the user chose holds for every task.
        Some(secs) => limits.per_test = std::time::Duration::from_secs_f64(secs),
        // The whole selection's, not the shard's: every shard of a sweep records the same limits.
        None => limits = limits.with_measured(&dataset, sweep_tasks.iter().map(String::as_str)),
    }
    let run_id = plan.run_id.clone().unwrap_or_else(|| ulid::Ulid::generate().to_string());
    // Only RGD with its Guide retrieves or stores guidance.
    let rgd = plan.strategy == Strategy::Rgd;
    let threshold = plan
        .memory_threshold
        .unwrap_or(crate::memory::SearchOptions::default().min_similarity);
    let source = match plan.shard {
        Some(_) => parts::PoolSource::Shard {
            snapshot: plan.memory_snapshot.as_deref(),
        },
        None => parts::PoolSource::Home,
    };
    let (memory, mut memory_info) = parts::open_memory(home, plan.memory && rgd && plan.guide, threshold, &run_id, source, report)?;
    if !rgd {
        memory_info.note = format!("{} strategy: no memory", plan.strategy.name());
    } else if !plan.guide {
        memory_info.note = "no guide (--no-guide): no guidance to retrieve or remember".into();
    }
    let ablations: Vec<String> = [(!plan.guide, "no-guide"), (!plan.feedback, "no-feedback")]
        .into_iter()
        .filter(|(off, _)| *off && rgd)
        .map(|(_, name)| name.to_string())
        .collect();
    parts.memory = memory;
    let served = parts::ask_endpoint(parts.model.as_ref(), settings, report).await;
    let manifest = Manifest {
        run_id: run_id.clone(),
        created_at: chrono::Utc::now(),
        rgd_version: env!("CARGO_PKG_VERSION").into(),
        command: crate::secrets::redact_args(&std::env::args().collect::<Vec<_>>()),
        strategy: plan.strategy.name().into(),
        dataset: dataset_info(&dataset, &tasks, plan),
        endpoint: parts.model.endpoint(),
        agents: settings.agents.iter().map(|(a, p)| (a.name().to_string(), p.clone())).collect(),
        prompts_source: parts.prompts.source().into(),
        prompts: parts.prompts.hashes().clone(),
        max_iters: iteration_bound(plan, settings.max_iters),
        concurrency: settings.concurrency,
        sandbox: parts.executor.name().into(),
        limits,
        memory: memory_info,
        pricing: settings.pricing,
        served,
        ablations,
        feedback: (plan.strategy == Strategy::SelfDebug).then(|| plan.self_debug.name().to_string()),
        trace: plan.trace.filter(|_| rgd && plan.feedback).map(|m| m.name().to_string()),
        seed_from: match &plan.seed_from {
            Some(from) => Some(describe_seeds(home, from)?),
            None => None,
        },
        mapcoder: (plan.strategy == Strategy::MapCoder).then_some(plan.mapcoder),
        codesim: (plan.strategy == Strategy::CodeSim).then_some(plan.codesim),
        lpw: (plan.strategy == Strategy::Lpw).then_some(plan.lpw),
        mgdebugger: (plan.strategy == Strategy::MgDebugger).then_some(plan.mgdebugger),
        fork: plan.fork.clone(),
        shard: None,
        merged_from: Vec::new(),
        allow_in_process: plan.allow_in_process,
        allow_flag: plan.allow_flag,
    };
    let mut manifest = manifest;
    if let Some(shard) = plan.shard {
        manifest.shard = Some(crate::engine::ShardInfo {
            index: shard.index,
            count: shard.count,
            config_hash: manifest.config_hash(),
            sweep_tasks,
        });
    }
    let store = Arc::new(RunStore::create(home, &manifest)?);
    let recalled = Recalled::read(home, &manifest)?;
    prepare(store, parts, recalled, settings, tasks, false, plan)
}

/// What the manifest records of the dataset: where it is, its hash and split, the tasks selected.
fn dataset_info(dataset: &LoadedDataset, tasks: &[Task], plan: &RunPlan) -> DatasetInfo {
    DatasetInfo {
        name: dataset.name.clone(),
        path: dataset.path.canonicalize().unwrap_or(dataset.path.clone()).display().to_string(),
        format: dataset.format,
        sha256: dataset.sha256.clone(),
        split_seed: dataset.split_seed,
        tasks_in_file: dataset.tasks.len(),
        selected: tasks.iter().map(|t| t.id.clone()).collect(),
        excluded_broken: plan.excluded_broken.clone(),
        impossible: dataset.impossible,
    }
}

/// The most programs a task may get under `plan`'s strategy (`max_iters` for the iterating ones).
fn iteration_bound(plan: &RunPlan, max_iters: u32) -> u32 {
    // MapCoder's bound is its own: k plans, each coded once and debugged t times.
    match plan.strategy {
        Strategy::MapCoder => plan.mapcoder.k * (1 + plan.mapcoder.t),
        // CodeSIM's likewise: p plans, each coded once and debugged d times.
        Strategy::CodeSim => plan.codesim.p * (1 + plan.codesim.d),
        // LPW: the first program and one per refinement round.
        Strategy::Lpw => 1 + plan.lpw.refine_rounds,
        // MGDebugger: the seed and one recomposed program per debugging pass.
        Strategy::MgDebugger => 1 + plan.mgdebugger.retries,
        _ if plan.strategy.iterates() => max_iters,
        _ => 1,
    }
}

/// Where a resumed run's settings come from: the configuration now (for the endpoint and its
/// key, which are never recorded) and the run's manifest (for everything the result depends on).
pub struct ResumeFrom<'a> {
    pub configured: Configured<'a>,
    /// Tasks at once; the run's own concurrency when `None`.
    pub concurrency: Option<usize>,
}

/// Re-opens a killed or interrupted run: the same dataset (checked by hash), tasks, agents and
/// limits; finished tasks are kept.
pub async fn resume(home: &Home, from: ResumeFrom<'_>, plan: &RunPlan, prefix: &str, report: &dyn Fn(&str)) -> anyhow::Result<Prepared> {
    let run_id = home.find_run(prefix)?;
    let store = Arc::new(RunStore::open_to_resume(home, &run_id)?);
    let manifest = store.manifest()?;
    let dataset = dataset_of(&manifest, "resuming")?;
    let tasks = select_tasks(&dataset, &manifest.dataset.selected, None, false)
        .map(|s| s.tasks)
        .with_context(|| format!("resuming run {run_id}"))?;
    let mut settings = from
        .configured
        .settings(from.concurrency.or(Some(manifest.concurrency)), Some(manifest.max_iters));
    settings.agents = agents_of(&manifest);
    settings.limits = manifest.limits.clone();
    let mut parts = parts::Parts::build(&settings, plan, &tasks, report)?;
    // A resumed run keeps its memory setting; the pool may have grown since (the manifest keeps
    // the state the run started with).
    // Runs recorded before the threshold was kept used 0.5.
    let threshold = manifest.memory.min_similarity.unwrap_or(0.5);
    let source = match manifest.shard {
        Some(_) => parts::PoolSource::Shard { snapshot: None },
        None => parts::PoolSource::Home,
    };
    parts.memory = parts::open_memory(home, manifest.memory.enabled, threshold, &run_id, source, report)?.0;
    if parts.prompts.hashes() != &manifest.prompts {
        report(&format!(
            "warning: prompt files differ from the ones run {run_id} started with; its manifest keeps the original hashes"
        ));
    }
    report(&format!("resuming run {run_id}"));
    let recalled = Recalled::read(home, &manifest)?;
    prepare(store, parts, recalled, &settings, tasks, true, plan)
}

/// The dataset a run used, checked by hash: `doing` it with a changed file would mix task versions.
fn dataset_of(manifest: &Manifest, doing: &str) -> anyhow::Result<LoadedDataset> {
    let run_id = &manifest.run_id;
    let path = PathBuf::from(&manifest.dataset.path);
    let dataset = load_dataset(
        &manifest.dataset.name,
        &path,
        manifest.dataset.split_seed.unwrap_or(DEFAULT_SPLIT_SEED),
    )
    .with_context(|| format!("run {run_id} used {}", path.display()))?;
    if dataset.sha256 != manifest.dataset.sha256 {
        bail!(
            "{} changed since run {run_id} started (sha256 {} now, {} then); {doing} would mix task versions",
            path.display(),
            dataset.sha256,
            manifest.dataset.sha256
        );
    }
    Ok(dataset)
}

/// What `rgd fork` continues, from where, and what it changes from the parent run.
#[derive(Debug, Clone, Default)]
pub struct ForkSpec {
    /// The parent run (an id or its start).
    pub parent: String,
    pub task_id: String,
    /// The first iteration run live.
    pub at: u32,
    pub max_iters: Option<u32>,
    pub temperature: Option<f32>,
}

/// A new run of one task of `parent`, starting live at iteration `at` with the state the parent
/// had then (its earlier iterations replayed from its record, no LLM call for them).
pub async fn fork(
    home: &Home,
    from: ResumeFrom<'_>,
    spec: &ForkSpec,
    control: Option<Arc<crate::engine::Control>>,
    report: &dyn Fn(&str),
) -> anyhow::Result<Prepared> {
    let (task_id, at, changes) = (spec.task_id.as_str(), spec.at, spec);
    let parent = home.find_run(&spec.parent)?;
    let store = RunStore::open(home, &parent)?;
    let manifest = store.manifest()?;
    let dataset = dataset_of(&manifest, "forking")?;
    let task = select_tasks(&dataset, &[task_id.to_string()], None, false)
        .map(|s| s.tasks)
        .with_context(|| format!("forking run {parent}"))?;
    let ran = store
        .results()?
        .into_iter()
        .find(|r| r.task_id == task_id)
        .map(|r| r.iterations)
        .ok_or_else(|| anyhow::anyhow!("run {parent} has no result for {task_id} to fork"))?;
    if at == 0 || at > ran {
        bail!("{task_id} ran {ran} iteration(s) in run {parent}: fork at 1..={ran}");
    }
    // Opened again to read its events: a sled store is opened once at a time.
    drop(store);
    let recorded = plan_of(&manifest)?;
    let mut settings = from
        .configured
        .settings(Some(1), Some(changes.max_iters.unwrap_or(manifest.max_iters)));
    let llm = from.configured.llm;
    // The parent's agents, but for what the fork's flags change.
    for agent in crate::agents::Agent::ALL {
        let Some(mut params) = manifest.agents.get(agent.name()).cloned() else {
            continue;
        };
        let model = match agent {
            crate::agents::Agent::Guide => llm.guide_model.as_ref(),
            crate::agents::Agent::Debug => llm.debug_model.as_ref(),
            crate::agents::Agent::Feedback => llm.feedback_model.as_ref(),
        };
        if let Some(model) = model.or(llm.model.as_ref()) {
            params.model = model.clone();
        }
        if let Some(t) = changes.temperature {
            params.temperature = t;
        }
        settings.agents.insert(agent, params);
    }
    settings.limits = manifest.limits.clone();
    let plan = RunPlan {
        memory_threshold: manifest.memory.min_similarity,
        control,
        fork: Some(crate::engine::ForkPoint {
            parent_run: parent.clone(),
            task_id: task_id.to_string(),
            at_iteration: at,
        }),
        // A fork never inherited the parent's --allow-in-process: its verdicts reach the memory
        // pool only when isolated (unchanged when the recorded plan came to be read in one place).
        allow_in_process: false,
        ..recorded
    };
    report(&format!("forking {task_id} of run {parent} at iteration {at}"));
    new_run(home, &settings, &plan, dataset, task, report).await
}

/// The agents' parameters a run recorded.
fn agents_of(manifest: &Manifest) -> std::collections::BTreeMap<crate::agents::Agent, crate::llm::CallParams> {
    crate::agents::Agent::ALL
        .iter()
        .filter_map(|a| manifest.agents.get(a.name()).map(|p| (*a, p.clone())))
        .collect()
}

/// The loop a run recorded in its manifest (strategy, memory, ablations, feedback, trace, each
/// method's parameters), read in one place for a resume and a fork alike.
fn plan_of(manifest: &Manifest) -> anyhow::Result<RunPlan> {
    let strategy = Strategy::from_name(&manifest.strategy)
        .ok_or_else(|| anyhow::anyhow!("run {} names an unknown strategy {:?}", manifest.run_id, manifest.strategy))?;
    let has = |a: &str| manifest.ablations.iter().any(|x| x == a);
    Ok(RunPlan {
        memory: manifest.memory.enabled,
        guide: !has("no-guide"),
        feedback: !has("no-feedback"),
        self_debug: manifest
            .feedback
            .as_deref()
            .and_then(SelfDebugFeedback::from_name)
            .unwrap_or_default(),
        trace: manifest.trace.as_deref().and_then(TraceMode::from_name),
        mapcoder: manifest.mapcoder.unwrap_or_default(),
        codesim: manifest.codesim.unwrap_or_default(),
        lpw: manifest.lpw.unwrap_or_default(),
        mgdebugger: manifest.mgdebugger.unwrap_or_default(),
        allow_in_process: manifest.allow_in_process,
        allow_flag: manifest.allow_flag,
        ..RunPlan::new(strategy)
    })
}

fn prepare(
    store: Arc<RunStore>,
    parts: parts::Parts,
    recalled: Recalled,
    settings: &Settings,
    tasks: Vec<Task>,
    resumed: bool,
    plan: &RunPlan,
) -> anyhow::Result<Prepared> {
    let manifest = store.manifest()?;
    let recorder: Arc<dyn Recorder> = store.clone();
    let next_seq = store.next_seq()?;
    let bus = EventBus::new(Some(recorder), next_seq);
    let recorded = plan_of(&manifest)?;
    let config = Arc::new(LoopConfig {
        strategy: recorded.strategy,
        max_iters: manifest.max_iters,
        params: agents_of(&manifest),
        memory: recorded.memory,
        self_debug: recorded.self_debug,
        trace: recorded.trace,
        seeds: recalled.seeds,
        guide: recorded.guide,
        feedback: recorded.feedback,
        context_size: manifest
            .served
            .as_ref()
            .and_then(|s| s.context_size)
            .or(settings.openai.as_ref().and_then(|o| o.context_size)),
        mapcoder: recorded.mapcoder,
        codesim: recorded.codesim,
        lpw: recorded.lpw,
        mgdebugger: recorded.mgdebugger,
        allow_in_process: recorded.allow_in_process,
        impossible: manifest.dataset.impossible,
        allow_flag: recorded.allow_flag,
    });
    let runner = Arc::new(
        TaskRunner::new(
            parts.model,
            parts.executor,
            parts.memory,
            parts.prompts,
            config,
            manifest.limits.clone(),
            bus.clone(),
            next_seq,
        )
        .with_control(plan.control.clone())
        .with_replay(recalled.replay),
    );
    let sweep = Sweep {
        record: store.clone(),
        bus: bus.clone(),
        runner,
        tasks: tasks.into_iter().map(Arc::new).collect(),
        concurrency: settings.concurrency,
        halt_after: settings.halt_after_endpoint_failures,
    };
    Ok(Prepared {
        store,
        bus,
        sweep,
        resumed,
    })
}
