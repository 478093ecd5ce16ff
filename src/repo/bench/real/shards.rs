//! `rgd bench real --shard K/N` and `rgd bench real merge`: a measurement split across machines.
//! Each shard measures its contiguous part of the chosen list (`engine::Shard::part`, as sweeps
//! split tasks) and writes, beside its results, which list it was cut from (a hash of every
//! instance's key, in order), its place and its instances. The merge takes the shards' results
//! only when they are all of one list and one kind of measurement, every shard is there once, and
//! each holds exactly its own instances: none lost, none counted twice.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Instance;
use super::measure::{Measured, key};

/// What a shard writes beside its results (`FILE.shard.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// The whole chosen list's identity: sha256 of its instances' keys, in order.
    pub list: String,
    /// Which measurement: "tuning", "held-out-fix-oracle", ...
    pub kind: String,
    pub index: u32,
    pub count: u32,
    /// This shard's instances, in order.
    pub keys: Vec<String>,
}

/// The identity of a chosen list.
pub fn list_hash(chosen: &[Instance]) -> String {
    keys_hash(chosen.iter().map(key))
}

fn keys_hash(keys: impl IntoIterator<Item = String>) -> String {
    let mut h = Sha256::new();
    for k in keys {
        h.update(k);
        h.update("\n");
    }
    hex::encode(h.finalize())
}

/// Where a results file's shard record is.
pub fn record_path(results: &Path) -> PathBuf {
    let mut name = results.file_name().unwrap_or_default().to_os_string();
    name.push(".shard.json");
    results.with_file_name(name)
}

/// Where shard `shard` of the measurement `kind` of the list `list` keeps its results in `dir`
/// (named by the list too: shards of another list never write over these).
pub fn results_file(dir: &Path, kind: &str, list: &str, shard: crate::record::Shard) -> PathBuf {
    dir.join(format!("{kind}-{}-shard-{}-of-{}.jsonl", &list[..12], shard.index, shard.count))
}

pub fn write_record(results: &Path, record: &ShardRecord) -> anyhow::Result<()> {
    let path = record_path(results);
    crate::checked::write_atomically(&path, serde_json::to_string_pretty(record)?.as_bytes())?;
    Ok(())
}

/// The shards' results as one measurement, in the list's order; refused, saying why, unless they
/// are every shard of one list once, each with exactly its own instances.
pub fn merge(files: &[PathBuf]) -> anyhow::Result<(ShardRecord, Vec<Measured>)> {
    if files.is_empty() {
        bail!("name the shards' results files to merge");
    }
    let mut shards = Vec::new();
    for f in files {
        let record_file = record_path(f);
        let text = std::fs::read_to_string(&record_file).with_context(|| {
            format!(
                "{}: no shard record beside it ({}); was it measured with --shard?",
                f.display(),
                record_file.display()
            )
        })?;
        let record: ShardRecord = serde_json::from_str(&text).with_context(|| format!("{}: not a shard record", record_file.display()))?;
        let results: Vec<Measured> = std::fs::read_to_string(f)
            .with_context(|| f.display().to_string())?
            .lines()
            .enumerate()
            .map(|(n, l)| serde_json::from_str(l).with_context(|| format!("{}:{}: not a result", f.display(), n + 1)))
            .collect::<anyhow::Result<_>>()?;
        shards.push((f, record, results));
    }
    let first = shards[0].1.clone();
    for (f, r, _) in &shards[1..] {
        if (&r.list, &r.kind, r.count) != (&first.list, &first.kind, first.count) {
            bail!(
                "{} is not a shard of the same measurement as {} (list {}…, {}, {} shards against list {}…, {}, {} shards)",
                f.display(),
                files[0].display(),
                r.list.get(..12).unwrap_or(&r.list),
                r.kind,
                r.count,
                first.list.get(..12).unwrap_or(&first.list),
                first.kind,
                first.count
            );
        }
    }
    shards.sort_by_key(|s| s.1.index);
    let seen: Vec<u32> = shards.iter().map(|s| s.1.index).collect();
    if let Some(twice) = seen.windows(2).find(|w| w[0] == w[1]) {
        bail!("shard {}/{} is given twice", twice[0], first.count);
    }
    let missing: Vec<String> = (0..first.count)
        .filter(|k| !seen.contains(k))
        .map(|k| format!("{k}/{}", first.count))
        .collect();
    if !missing.is_empty() {
        bail!("shards missing: {} (merge every shard of the measurement)", missing.join(", "));
    }
    let (mut keys, mut merged) = (Vec::new(), Vec::new());
    for (f, record, results) in shards {
        let got: Vec<&str> = results.iter().map(|m| m.key.as_str()).collect();
        let unique: HashSet<&str> = got.iter().copied().collect();
        if unique.len() != got.len() {
            bail!("{}: an instance is counted twice", f.display());
        }
        if let Some(lost) = record.keys.iter().find(|k| !unique.contains(k.as_str())) {
            bail!(
                "{}: instance {lost} of this shard has no result (resume the shard first)",
                f.display()
            );
        }
        if let Some(extra) = got.iter().find(|k| !record.keys.iter().any(|r| r == *k)) {
            bail!("{}: a result for {extra}, which is not this shard's", f.display());
        }
        for k in &record.keys {
            merged.extend(results.iter().find(|m| &m.key == k).cloned());
        }
        keys.extend(record.keys);
    }
    // The parts put together are the list they were cut from, in its order.
    if keys_hash(keys.iter().cloned()) != first.list {
        bail!("the shards' instances put together are not the list they name: were they cut from one list?");
    }
    let whole = ShardRecord {
        keys,
        index: 0,
        count: 1,
        ..first
    };
    Ok((whole, merged))
}
