//! The TUI entry points: `rgd` (home) and `rgd replay RUN_ID`. `--tui` on run and sweep is in
//! `run.rs`, which hands a prepared run to the TUI instead of the printer.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use crate::config::{Configured, LlmArgs};
use crate::dataset::DEFAULT_SPLIT_SEED;
use crate::launch::{RunPlan, load_dataset_named, new_run, select_tasks};
use crate::store::Home;
use crate::tui::{ForkRequest, Forker, Launcher, RunRequest};

pub async fn replay(home: &Home, run_id: &str, follow: bool, config: Option<&Path>, llm: &LlmArgs) -> anyhow::Result<ExitCode> {
    if follow {
        crate::tui::follow_run(home, &home.find_run(run_id)?).await?;
    } else {
        let forker = forker(home.clone(), config.map(Path::to_path_buf), llm.clone());
        crate::tui::replay_run(home, run_id, Some(forker)).await?;
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn home(home: &Home, data_dir: Option<&Path>, config: Option<&Path>, llm: &LlmArgs) -> anyhow::Result<ExitCode> {
    let configured = Configured::load(config, &home.root, llm)?;
    let (settings, file_path) = (configured.settings(None, None), configured.path);
    let model = settings.agents.values().next().map(|p| p.model.clone()).unwrap_or_default();
    let info = vec![
        (
            "endpoint".to_string(),
            settings
                .openai
                .as_ref()
                .map_or("none: the embedded model (set OPENAI_BASE_URL for an endpoint)".to_string(), |o| {
                    o.base_url.clone()
                }),
        ),
        ("model".to_string(), model),
        (
            "config".to_string(),
            file_path.map_or("none (defaults)".into(), |p| p.display().to_string()),
        ),
        ("state".to_string(), home.root.display().to_string()),
        ("memory".to_string(), memory_line(home)),
    ];
    let launcher = launcher(
        home.clone(),
        data_dir.map(Path::to_path_buf),
        config.map(Path::to_path_buf),
        llm.clone(),
    );
    let forker = forker(home.clone(), config.map(Path::to_path_buf), llm.clone());
    let outcome = crate::tui::home(home, info, launcher, forker).await?;
    if let Some(summary) = outcome {
        eprintln!(
            "run {}: {}/{} solved (pass@1 {:.1}%)",
            summary.run_id,
            summary.solved,
            summary.tasks,
            summary.pass_at_1 * 100.0
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Turns the home form's request into a prepared run, the same way `rgd sweep` does.
fn launcher(home: Home, data_dir: Option<PathBuf>, config: Option<PathBuf>, llm: LlmArgs) -> Launcher {
    Arc::new(move |request: RunRequest| {
        // Notes and progress lines would write over the screen.
        let quiet = &|_: &str| {};
        let dataset = load_dataset_named(&request.dataset, data_dir.as_deref(), DEFAULT_SPLIT_SEED, quiet)?;
        let tasks = select_tasks(&dataset, &request.tasks, request.limit, false)?.tasks;
        let mut llm = llm.clone();
        for (flag, value) in [
            (&mut llm.model, &request.model),
            (&mut llm.guide_model, &request.guide_model),
            (&mut llm.debug_model, &request.debug_model),
            (&mut llm.feedback_model, &request.feedback_model),
        ] {
            if value.is_some() {
                flag.clone_from(value);
            }
        }
        llm.threads = request.threads.or(llm.threads);
        llm.contexts = request.contexts.or(llm.contexts);
        let settings = Configured::load(config.as_deref(), &home.root, &llm)?.settings(Some(request.concurrency), Some(request.max_iters));
        let plan = RunPlan {
            sandbox: request.sandbox,
            memory: request.memory,
            ..RunPlan::new(request.strategy)
        };
        // A background job's thread, not a runtime worker: it may wait for the async assembly.
        let prepared = tokio::runtime::Handle::current().block_on(new_run(&home, &settings, &plan, dataset, tasks, quiet))?;
        Ok((prepared.sweep, prepared.resumed))
    })
}

/// Turns `f` in a replay into a prepared fork, the same way `rgd fork` does, with the debugger on.
fn forker(home: Home, config: Option<PathBuf>, llm: LlmArgs) -> Forker {
    Arc::new(move |request: ForkRequest| {
        let from = crate::launch::ResumeFrom {
            configured: Configured::load(config.as_deref(), &home.root, &llm)?,
            concurrency: Some(1),
        };
        let spec = crate::launch::ForkSpec {
            parent: request.run,
            task_id: request.task,
            at: request.at,
            ..Default::default()
        };
        let control = Some(Arc::new(crate::engine::Control::default()));
        let prepared = tokio::runtime::Handle::current().block_on(crate::launch::fork(&home, from, &spec, control, &|_| {}))?;
        Ok((prepared.sweep, prepared.resumed))
    })
}

/// Where the pool is, without opening it (a live run may hold its lock).
fn memory_line(home: &Home) -> String {
    let dir = crate::memory::MemoryPool::dir_in(&home.root);
    if dir.join("pool").exists() {
        format!("pool at {} (`rgd memory stats`); --no-memory for the ablation", dir.display())
    } else {
        "empty: solved tasks are remembered from the first run on (--no-memory for the ablation)".into()
    }
}
