//! `--seed-from`: programs from another run (its id, or a prefix) or from a `samples.jsonl` file
//! (`{"task_id", "completion"}` lines, as rgd and evalplus write them), by task id. The manifest
//! records where they came from ("run:ID", or "file:PATH sha256:HASH"), so a resume takes the same.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::store::{Home, RunStore};

/// Where the seeds come from, resolved and written as the manifest records it.
pub fn describe(home: &Home, from: &str) -> anyhow::Result<String> {
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
pub fn load(home: &Home, described: &str) -> anyhow::Result<HashMap<String, String>> {
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
