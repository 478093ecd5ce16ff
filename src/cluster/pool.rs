//! The memory pool across shards. Shards may run on different machines over a shared filesystem,
//! where no sled database may be opened by two processes, so a shard never touches the main pool
//! while it runs: it starts from a snapshot of it (a JSON lines file written once for the whole
//! sweep, or taken when the shard starts) in a pool of its own under its run directory, and every
//! entry it adds is staged there, tagged with its run id. Merging the shards folds those entries
//! into the main pool, each once (by entry id), however often the merge is repeated.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::memory::{Entry, MemoryError, SharedPool, assets, read_entries, write_entries};
use crate::record::Manifest;
use crate::store::Home;

/// The snapshot a shard started from, kept in its run directory.
pub const SNAPSHOT_FILE: &str = "pool-snapshot.jsonl";
/// Written once the snapshot is in the shard's pool: a shard killed while seeding seeds again.
const SEEDED: &str = "seeded";

/// Where a shard keeps its own pool.
pub fn shard_pool_dir(home: &Home, run_id: &str) -> PathBuf {
    home.run_dir(run_id).join("memory")
}

/// The shard's own pool, filled from `snapshot` (or from the main pool as it is now) the first
/// time the shard opens it.
pub fn open_shard_pool(home: &Home, run_id: &str, snapshot: Option<&Path>, report: &dyn Fn(&str)) -> Result<SharedPool, MemoryError> {
    let assets = assets::ensure(report)?;
    let dir = shard_pool_dir(home, run_id);
    let pool = SharedPool::open(&dir, &assets)?;
    if dir.join(SEEDED).exists() {
        return Ok(pool);
    }
    let copy = home.run_dir(run_id).join(SNAPSHOT_FILE);
    let entries = match snapshot {
        Some(file) => read_entries(file)?,
        None if copy.exists() => read_entries(&copy)?,
        None => SharedPool::open_in_home(&home.root, &assets)?.entries()?,
    };
    if !copy.exists() {
        write_entries(&copy, &entries)?;
    }
    // Inserting an id again replaces it, so seeding again after a kill is harmless.
    for chunk in entries.chunks(128) {
        pool.insert(chunk.to_vec())?;
    }
    std::fs::write(dir.join(SEEDED), entries.len().to_string()).map_err(|e| MemoryError::Input(format!("{}: {e}", dir.display())))?;
    report(&format!(
        "memory: this shard's own pool starts from a snapshot of {} entries",
        entries.len()
    ));
    Ok(pool)
}

/// Writes the main pool's entries to `file`, the snapshot every shard of a sweep starts from;
/// returns how many.
pub fn write_snapshot(home: &Home, file: &Path, report: &dyn Fn(&str)) -> Result<usize, MemoryError> {
    let entries = SharedPool::open_fetching(&home.root, report)?.entries()?;
    write_entries(file, &entries)?;
    Ok(entries.len())
}

/// What folding the shards' pools into the main pool did.
#[derive(Debug, Clone, Serialize)]
pub struct FoldReport {
    /// Entries the shards added to their own pools.
    pub staged: usize,
    /// Of those, the ones the main pool did not have yet.
    pub added: usize,
    pub entries_now: usize,
}

/// Folds every entry the shards added into the main pool, each once. `None` when no shard used
/// the memory pool.
pub fn fold_shard_pools(home: &Home, shards: &[&Manifest]) -> Result<Option<FoldReport>, MemoryError> {
    let with_pool: Vec<&&Manifest> = shards
        .iter()
        .filter(|m| m.shard.is_some() && m.memory.enabled && shard_pool_dir(home, &m.run_id).join(SEEDED).exists())
        .collect();
    if with_pool.is_empty() {
        return Ok(None);
    }
    let assets = assets::ensure(&|_| {})?;
    let mut staged: Vec<Entry> = Vec::new();
    for m in with_pool {
        let pool = SharedPool::open(&shard_pool_dir(home, &m.run_id), &assets)?;
        staged.extend(
            pool.entries()?
                .into_iter()
                .filter(|e| e.run_id.as_deref() == Some(m.run_id.as_str())),
        );
    }
    let main = SharedPool::open_in_home(&home.root, &assets)?;
    let have: HashSet<String> = main.entries()?.into_iter().map(|e| e.id).collect();
    let new: Vec<Entry> = staged.iter().filter(|e| !have.contains(&e.id)).cloned().collect();
    for chunk in new.chunks(128) {
        main.insert(chunk.to_vec())?;
    }
    Ok(Some(FoldReport {
        staged: staged.len(),
        added: new.len(),
        entries_now: main.state()?.entries,
    }))
}
