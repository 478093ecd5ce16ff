//! `rgd demo`: the first thing a new user runs. Gets every part ready (sandbox component,
//! embedding model, and the embedded LLM when no endpoint is configured), each with a progress
//! bar, then runs RGD on the bundled sample tasks in the TUI (headless without a terminal), and
//! ends with a summary: how long each step took and where the run is recorded.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;

use super::stderr_line;
use crate::config::{Configured, LlmArgs};
use crate::dataset::DEFAULT_SPLIT_SEED;
use crate::engine::{Event, Strategy};
use crate::front::print::PrinterMode;
use crate::front::{Front, execute};
use crate::launch::{RunPlan, load_dataset_named, new_run, select_tasks};
use crate::llm::local::{LocalChat, ModelSource, catalog};
use crate::store::{Home, RunStore};

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub llm: LlmArgs,
    /// Print progress lines instead of opening the terminal UI
    #[arg(long)]
    pub headless: bool,
    /// Dataset to run (default: the bundled sample tasks)
    #[arg(long, default_value = "sample")]
    pub dataset: String,
    /// Only the first N tasks (default 2 of the sample with the embedded model, else all)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub limit: Option<usize>,
    /// Most code attempts per task (default 2 with the embedded model, else 10)
    #[arg(long, value_parser = crate::validate::parse_iters)]
    pub max_iters: Option<u32>,
}

pub async fn demo(home: &Home, data_dir: Option<&Path>, config: Option<&Path>, llm: &LlmArgs, args: DemoArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let tui = !args.headless && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let say = |line: &str| eprintln!("{line}");
    // Read once: the first settings say whether the embedded model serves, the run's take the
    // iteration bound that follows from it.
    let configured = Configured::load(config, &home.root, llm)?;
    let settings = configured.settings(None, args.max_iters);
    let embedded = settings.local.is_some();

    say("rgd demo: getting every part ready (each is fetched or built once, then cached)");
    let step = Instant::now();
    let sandbox = tokio::task::spawn_blocking(|| crate::sandbox::WasmExecutor::new(&|l| eprintln!("  {l}")).map(|_| ())).await?;
    sandbox?;
    let sandbox_secs = step.elapsed().as_secs_f64();
    say(&format!("  sandbox ready ({sandbox_secs:.1} s)"));

    let step = Instant::now();
    tokio::task::spawn_blocking(|| crate::retrieval::assets::ensure(&|l| eprintln!("  {l}"))).await??;
    let embedding_secs = step.elapsed().as_secs_f64();
    say(&format!("  embedding model ready ({embedding_secs:.1} s)"));

    let (mut fetch_secs, mut load_secs) = (0.0, 0.0);
    if let Some(local) = settings.local.clone() {
        let step = Instant::now();
        let source = ModelSource::parse(&local.model).map_err(anyhow::Error::msg)?;
        tokio::task::spawn_blocking(move || catalog::ensure(&source, &|l| eprintln!("  {l}")))
            .await?
            .map_err(anyhow::Error::msg)?;
        fetch_secs = step.elapsed().as_secs_f64();
        let step = Instant::now();
        // Loaded once per process: the run below reuses it.
        let model = tokio::task::spawn_blocking(move || LocalChat::load(&local, &|l| eprintln!("  {l}")))
            .await?
            .map_err(anyhow::Error::msg)?;
        load_secs = step.elapsed().as_secs_f64();
        say(&format!(
            "  embedded model {} ready (fetch {fetch_secs:.1} s, load {load_secs:.1} s, {} threads)",
            model.label(),
            model.info().threads
        ));
        say("  note: a 135M-parameter CPU model shows the whole loop offline; real results need a real endpoint (OPENAI_BASE_URL)");
    }
    let ready_secs = started.elapsed().as_secs_f64();

    let run_id = ulid::Ulid::generate().to_string();
    // A small local model rarely gains from more rounds; two show the whole loop (code, tests,
    // the Feedback agent's analysis, refined guidance, a repair), and two tasks (one it solves at
    // once, one it repairs) keep the first demo to about two minutes on two cores.
    let max_iters = args.max_iters.or(embedded.then_some(2));
    let settings = configured.settings(None, max_iters);
    let dataset = load_dataset_named(&args.dataset, data_dir, DEFAULT_SPLIT_SEED, &stderr_line)?;
    let limit = args.limit.or((embedded && args.dataset == "sample").then_some(DEMO_TASKS));
    let selected = select_tasks(&dataset, &[], limit, false)?;
    let total = dataset.tasks.len();
    let left = total.saturating_sub(selected.tasks.len());
    let plan = RunPlan {
        run_id: Some(run_id.clone()),
        // The TUI's keys drive the debugger.
        control: tui.then(|| std::sync::Arc::new(crate::engine::Control::new(Vec::new()))),
        ..RunPlan::new(Strategy::Rgd)
    };
    say(&format!(
        "running RGD on the {} tasks{}",
        args.dataset,
        if tui { " (q quits the view)" } else { "" }
    ));
    let run_started = Instant::now();
    let prepared = new_run(home, &settings, &plan, dataset, selected.tasks, &stderr_line).await?;
    let front = Front { tui, ..Front::default() };
    let code = execute(prepared, PrinterMode::Progress, &front).await?;
    let run_secs = run_started.elapsed().as_secs_f64();

    let store = RunStore::open(home, &run_id)?;
    let first_task = first_task_secs(&store);
    eprintln!();
    eprintln!("demo finished in {:.1} s:", started.elapsed().as_secs_f64());
    eprintln!(
        "  ready in {ready_secs:.1} s (sandbox {sandbox_secs:.1} s, embedding model {embedding_secs:.1} s, LLM fetch {fetch_secs:.1} s, LLM load {load_secs:.1} s)"
    );
    match first_task {
        Some(secs) => eprintln!("  run {run_secs:.1} s; first task finished {secs:.1} s after the run started"),
        None => eprintln!("  run {run_secs:.1} s; no task finished"),
    }
    eprintln!("  recorded as run {run_id} in {}", store.dir.display());
    eprintln!("  watch it again: rgd replay {run_id}    all runs: rgd    checks: rgd doctor");
    if left > 0 {
        eprintln!(
            "  this was {} of the {total} {} tasks; all of them: rgd demo --dataset {} --limit {total}",
            total - left,
            args.dataset,
            args.dataset
        );
    }
    Ok(code)
}

/// How many sample tasks the demo runs on the embedded model when not told.
const DEMO_TASKS: usize = 2;

/// Seconds from the run's first event to its first finished task.
fn first_task_secs(store: &RunStore) -> Option<f64> {
    let mut start = None;
    for envelope in store.events().flatten() {
        let start = *start.get_or_insert(envelope.at);
        if matches!(envelope.event, Event::TaskFinished { .. }) {
            return Some((envelope.at - start).num_milliseconds() as f64 / 1000.0);
        }
    }
    None
}
