//! What a run takes from other runs, as its manifest names them, read before the run is prepared
//! (so preparing reads nothing outside the run):
//! - `--seed-from`: programs from another run (its id, or a prefix) or from a `samples.jsonl` file
//!   (`{"task_id", "completion"}` lines, as rgd and evalplus write them), by task id. The manifest
//!   records where they came from ("run:ID", or "file:PATH sha256:HASH"), so a resume takes the same.
//! - a fork's prefix: the parent's events up to the iteration the fork starts live at.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use super::{Home, RunStore};
use crate::record::Manifest;

/// Where the seeds come from, resolved and written as the manifest records it.
pub fn describe_seeds(home: &Home, from: &str) -> anyhow::Result<String> {
    let path = Path::new(from);
    if path.is_file() {
        let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
        let full = path.canonicalize().unwrap_or(path.to_path_buf());
        return Ok(format!("file:{} sha256:{}", full.display(), hex::encode(Sha256::digest(&bytes))));
    }
    Ok(format!(
        "run:{}",
        home.find_run(from)
            .with_context(|| format!("--seed-from {from}: no such file or run"))?
    ))
}

/// The seeds a description names.
pub fn load_seeds(home: &Home, described: &str) -> anyhow::Result<HashMap<String, String>> {
    if let Some(run_id) = described.strip_prefix("run:") {
        let store = RunStore::open(home, run_id).with_context(|| format!("seeds from run {run_id}"))?;
        return Ok(store
            .results()?
            .into_iter()
            .filter(|r| r.is_final() && !r.completion.trim().is_empty())
            .map(|r| (r.task_id, r.completion))
            .collect());
    }
    let Some(rest) = described.strip_prefix("file:") else {
        bail!("seeds: cannot read {described:?}");
    };
    let (path, hash) = rest.rsplit_once(" sha256:").unwrap_or((rest, ""));
    let bytes = std::fs::read(path).with_context(|| format!("seeds: {path}"))?;
    if !hash.is_empty() && hex::encode(Sha256::digest(&bytes)) != hash {
        bail!("seeds: {path} changed since the run started (its sha256 differs)");
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut seeds = HashMap::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line).with_context(|| format!("{path}:{}", n + 1))?;
        let (Some(id), Some(code)) = (value["task_id"].as_str(), value["completion"].as_str()) else {
            bail!("{path}:{}: needs \"task_id\" and \"completion\"", n + 1);
        };
        seeds.insert(id.to_string(), code.to_string());
    }
    Ok(seeds)
}

/// What `manifest` takes from other runs.
pub struct Recalled {
    pub seeds: Option<Arc<HashMap<String, String>>>,
    pub replay: Option<crate::engine::Replay>,
}

impl Recalled {
    pub fn read(home: &Home, manifest: &Manifest) -> anyhow::Result<Recalled> {
        let seeds = match &manifest.seed_from {
            Some(from) => Some(Arc::new(load_seeds(home, from)?)),
            None => None,
        };
        let replay = match &manifest.fork {
            Some(fork) => {
                let parent = RunStore::open(home, &fork.parent_run)?;
                let events: Vec<crate::engine::Event> = parent.events().map(|e| e.map(|e| e.event)).collect::<Result<_, _>>()?;
                Some(crate::engine::Replay::from_events(&fork.task_id, fork.at_iteration, &events).map_err(|e| anyhow::anyhow!(e))?)
            }
            None => None,
        };
        Ok(Recalled { seeds, replay })
    }
}
