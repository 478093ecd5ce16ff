//! The memory pool checked against its journal (`rgd memory verify`, on a copy of its database)
//! and rebuilt from it (`rgd memory repair`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::shared::OwnerLock;
use super::{DIM, Embedder, Entry, MemoryError, MemoryPool, assets::EmbeddingAssets, record, state_of};

/// One check of the pool.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PoolCheck {
    pub dir: PathBuf,
    /// Entries its database holds.
    pub entries: usize,
    /// What is damaged, one sentence each, naming the file.
    pub damage: Vec<String>,
    /// What is worth knowing and is no damage.
    pub notes: Vec<String>,
}

impl PoolCheck {
    pub fn line(&self) -> String {
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.notes.join("; "))
        };
        match self.damage.is_empty() {
            true => format!("memory pool {}  ok: {} entries{notes}", self.dir.display(), self.entries),
            false => format!("memory pool {}  damaged: {}{notes}", self.dir.display(), self.damage.join("; ")),
        }
    }
}

/// The entries of the database at `dir/pool`, read from a copy; `Err` says what cannot be read.
fn read_db(dir: &Path) -> Result<BTreeMap<String, Entry>, String> {
    let pool = dir.join("pool");
    let copy = tempfile::tempdir().map_err(|e| format!("a folder to check a copy in: {e}"))?;
    let copied = copy.path().join("pool");
    crate::checked::copy_tree(&pool, &copied).map_err(|e| format!("its database {} cannot be read ({e})", pool.display()))?;
    let unreadable = |e: sled::Error| format!("its database {} cannot be read ({e})", pool.display());
    let db = sled::Config::new().path(&copied).open().map_err(|e| match e {
        sled::Error::Corruption { .. } => format!("its database {} holds corrupted data", pool.display()),
        e => unreadable(e),
    })?;
    let entries = db.open_tree("entries").map_err(unreadable)?;
    let vectors = db.open_tree("vectors").map_err(unreadable)?;
    let mut out = BTreeMap::new();
    for item in entries.iter() {
        let (key, value) = item.map_err(unreadable)?;
        let entry: Entry = serde_json::from_slice(&value).map_err(|e| format!("an entry in {} is not whole ({e})", pool.display()))?;
        match vectors.get(&key).map_err(unreadable)? {
            Some(v) if v.len() == DIM * 4 => {}
            _ => return Err(format!("entry {} in {} has no whole vector", entry.id, pool.display())),
        }
        out.insert(entry.id.clone(), entry);
    }
    Ok(out)
}

/// Checks the pool in `dir`; never changes a file of it.
pub fn verify_pool(dir: &Path) -> PoolCheck {
    let mut check = PoolCheck {
        dir: dir.to_path_buf(),
        entries: 0,
        damage: Vec::new(),
        notes: Vec::new(),
    };
    if !dir.join("pool").exists() {
        check.notes.push("no pool yet".into());
        return check;
    }
    let db = read_db(dir).map_err(|e| check.damage.push(e)).ok();
    let recorded = record::read_state(dir).map_err(|e| check.damage.push(e)).ok().flatten();
    let journal = record::replay(dir).map_err(|e| check.damage.push(e.to_string())).ok().flatten();
    let Some(db) = db else { return check };
    check.entries = db.len();
    match &journal {
        None if recorded.is_some() => check
            .damage
            .push(format!("its journal {} is missing", dir.join(record::JOURNAL).display())),
        None => check
            .notes
            .push("it keeps no journal (made before pools kept one): the next open writes one".into()),
        Some(j) => {
            check.damage.extend(j.damaged.iter().cloned());
            let lost = j.entries.keys().filter(|id| !db.contains_key(*id)).count();
            if lost > 0 {
                check.damage.push(format!(
                    "its database {} lacks {lost} of the {} entries its journal holds",
                    dir.join("pool").display(),
                    j.entries.len()
                ));
            }
            let behind = db.values().filter(|e| j.entries.get(&e.id) != Some(*e)).count();
            if behind > 0 && lost == 0 {
                check.notes.push(format!(
                    "{behind} changes reached the database but not the journal (a kill); the next open adds them"
                ));
            }
        }
    }
    if journal.is_none()
        && let Some(r) = &recorded
        && *r != state_of(db.values())
    {
        check.damage.push(format!(
            "{} records another pool than its database holds",
            dir.join(record::STATE).display()
        ));
    }
    check
}

/// What `repair_pool` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PoolRepaired {
    pub entries: usize,
    pub kept_aside: Vec<PathBuf>,
}

/// Rebuilds the pool in `dir` from `from` (an export) or from its journal and whatever its
/// database still reads: every entry again, embedded anew, in a new database; the damaged files
/// kept beside it (`*.damaged-<time>`), the derived BM25 index made again. Refused while another
/// process owns the pool.
pub fn repair_pool(dir: &Path, assets: &EmbeddingAssets, from: Option<&Path>) -> Result<PoolRepaired, MemoryError> {
    std::fs::create_dir_all(dir).map_err(|e| MemoryError::Input(format!("{}: {e}", dir.display())))?;
    let lock_path = dir.join("owner.lock");
    let Some(_lock) = OwnerLock::acquire(&lock_path)? else {
        return Err(MemoryError::Input(format!(
            "the memory pool at {} is in use by {}; stop it first",
            dir.display(),
            OwnerLock::holder(&lock_path).map_or("another rgd process".to_string(), |p| format!("rgd process {p}"))
        )));
    };
    let entries: Vec<Entry> = match from {
        Some(file) => super::read_entries(file)?,
        None => {
            let journal = record::replay(dir)?.unwrap_or_default();
            let mut all = journal.entries;
            if let Ok(db) = read_db(dir) {
                all.extend(db.into_iter().filter(|(id, _)| !journal.removed.contains(id)));
            }
            if all.is_empty() && !dir.join(record::JOURNAL).exists() {
                return Err(MemoryError::Input(format!(
                    "the memory pool at {} keeps no journal and its database cannot be read: rebuild it from an export (`rgd memory repair --from FILE`)",
                    dir.display()
                )));
            }
            all.into_values().collect()
        }
    };
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S").to_string();
    let mut kept_aside = Vec::new();
    for name in ["pool", record::JOURNAL, record::STATE] {
        let moved =
            crate::checked::move_aside(dir, name, &stamp).map_err(|e| MemoryError::Input(format!("{}: {e}", dir.join(name).display())))?;
        kept_aside.extend(moved);
    }
    // Derived from the entries: made again as the pool opens.
    let _ = std::fs::remove_dir_all(dir.join("bm25"));
    let mut pool = MemoryPool::open(dir, Arc::new(Embedder::load(assets)?))?;
    let n = entries.len();
    pool.insert(entries)?;
    Ok(PoolRepaired { entries: n, kept_aside })
}
