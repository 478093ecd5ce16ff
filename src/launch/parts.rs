//! The parts a run is made of, from settings: the model client, the executor, the prompts and the
//! memory pool.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{Context, bail};

use super::RunPlan;
use crate::agents::Prompts;
use crate::config::Settings;
use crate::dataset::{Task, TaskKind};
use crate::engine::{MemoryInfo, MemoryLookup};
use crate::llm::local::LocalChat;
use crate::llm::{ChatModel, EndpointInfo, OpenAiChat};
use crate::memory::{PoolMemory, SearchOptions, SharedPool};
use crate::repo::run::executor::ProjectExecutor;
use crate::sandbox::{Executor, make_executor};
use crate::store::Home;

pub(super) struct Parts {
    pub model: Arc<dyn ChatModel>,
    pub executor: Arc<dyn Executor>,
    pub prompts: Arc<Prompts>,
    pub memory: Option<Arc<dyn MemoryLookup>>,
}

impl Parts {
    /// Everything but the memory pool (which needs the run id). A project's tasks (`rgd solve
    /// --repo`) run with the project's own tests, whatever the plan's sandbox; this is decided by
    /// the tasks, so a resumed or replayed run gets the same executor.
    pub fn build(settings: &Settings, plan: &RunPlan, tasks: &[Task], report: &dyn Fn(&str)) -> anyhow::Result<Parts> {
        let model = chat_model(settings, report)?;
        let executor: Arc<dyn Executor> = if tasks.iter().any(|t| matches!(t.kind, TaskKind::Project { .. })) {
            Arc::new(ProjectExecutor::default())
        } else {
            make_executor(plan.sandbox, report)?
        };
        let prompts = Arc::new(match &plan.prompts {
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
}

/// The endpoint's client, or (no endpoint configured) the embedded model, fetched and loaded.
pub fn chat_model(settings: &Settings, report: &dyn Fn(&str)) -> anyhow::Result<Arc<dyn ChatModel>> {
    if let Some(openai) = &settings.openai {
        return Ok(Arc::new(OpenAiChat::new(openai.clone())));
    }
    let local = settings
        .local
        .as_ref()
        .context("no LLM endpoint and no embedded model configured")?;
    let models: BTreeSet<&str> = settings.agents.values().map(|p| p.model.as_str()).collect();
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

/// What the endpoint serves and its context size, with a warning when the configured model is
/// not among its models (llama-server answers with its one model whatever name is asked). An
/// endpoint that cannot say is a note, not an error: the run may still work.
pub async fn ask_endpoint(model: &dyn ChatModel, settings: &Settings, report: &dyn Fn(&str)) -> Option<EndpointInfo> {
    let info = match model.describe().await {
        Ok(info) => info,
        Err(e) => {
            report(&format!("note: the endpoint did not say what it serves ({e})"));
            return None;
        }
    };
    let missing = missing_models(&info, settings);
    if !missing.is_empty() {
        report(&format!(
            "warning: the endpoint serves {}, not {}; answers come from what it serves (recorded per answer)",
            info.models.join(", "),
            missing.join(", ")
        ));
    }
    Some(info)
}

/// The configured models the endpoint does not list (none when it lists nothing).
pub fn missing_models<'a>(info: &EndpointInfo, settings: &'a Settings) -> Vec<&'a str> {
    let wanted: BTreeSet<&str> = settings.agents.values().map(|p| p.model.as_str()).collect();
    if info.models.is_empty() {
        return Vec::new();
    }
    wanted.into_iter().filter(|m| !info.models.iter().any(|s| s == m)).collect()
}

/// Which pool a run uses.
#[derive(Debug, Clone, Copy)]
pub(super) enum PoolSource<'a> {
    /// The home's pool, shared with every rgd process on the machine.
    Home,
    /// A shard's own pool, started from a snapshot (a file, or the home's pool as it is now).
    Shard { snapshot: Option<&'a std::path::Path> },
}

/// The memory pool for a run (unless disabled), and what the manifest says about it.
pub(super) fn open_memory(
    home: &Home,
    enabled: bool,
    min_similarity: f32,
    run_id: &str,
    source: PoolSource<'_>,
    report: &dyn Fn(&str),
) -> anyhow::Result<(Option<Arc<dyn MemoryLookup>>, MemoryInfo)> {
    if !enabled {
        let info = MemoryInfo {
            enabled: false,
            note: "memory disabled (--no-memory): the paper's no-memory ablation".into(),
            entries: None,
            content_hash: None,
            min_similarity: None,
        };
        return Ok((None, info));
    }
    let pool = match source {
        PoolSource::Home => SharedPool::open_fetching(&home.root, report)?,
        PoolSource::Shard { snapshot } => crate::cluster::pool::open_shard_pool(home, run_id, snapshot, report)?,
    };
    if !pool.is_owner() {
        report("memory: the pool is owned by another rgd process; this run shares it through that process");
    }
    let state = pool.state()?;
    let note = match source {
        PoolSource::Home => format!("pool {}", pool.dir().display()),
        PoolSource::Shard { .. } => format!(
            "shard pool {} (from a snapshot of the main pool; new entries are folded into it by rgd runs merge)",
            pool.dir().display()
        ),
    };
    let info = MemoryInfo {
        enabled: true,
        note,
        entries: Some(state.entries),
        content_hash: Some(state.content_hash),
        min_similarity: Some(min_similarity),
    };
    let options = SearchOptions {
        min_similarity,
        ..SearchOptions::default()
    };
    let lookup = PoolMemory::new(pool, options, run_id.to_string());
    Ok((Some(Arc::new(lookup)), info))
}
