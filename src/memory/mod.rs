//! The memory pool: (task description Q, guidance G, keywords K, solving code) of tasks solved on
//! visible and hidden tests, retrieved by hybrid search, SBERT embeddings (fastembed) and BM25
//! (tantivy), for the Guide agent's refinement in the debug phase.
//!
//! sled is the source of truth (entries and their vectors, written together in one transaction);
//! the tantivy index and the in-memory vector matrix are derived from it on open. Every change is
//! also journalled (`record.rs`), so a damaged database is named and rebuilt, never read as a
//! smaller pool.

mod bm25;
mod check;
mod jsonl;
pub mod keywords;
mod lookup;
pub mod record;
mod scan;
mod search;
mod shared;

pub use crate::retrieval::{DIM, Embedder, assets, embed};
pub use check::{PoolCheck, PoolRepaired, repair_pool, verify_pool};
pub use jsonl::{read_entries, write_entries};
pub use lookup::PoolMemory;
pub use search::{Fusion, Hit, Method, SearchOptions};
pub use shared::SharedPool;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::engine::MemoryRecord;

use bm25::Bm25;

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("memory assets: {0}")]
    Assets(String),
    #[error("embedding model: {0}")]
    Embedding(String),
    #[error("memory index: {0}")]
    Index(String),
    #[error("memory pool: {0}")]
    Store(#[from] sled::Error),
    /// sled's own lock: another process has the database open (the owner lock should prevent it).
    #[error("the memory pool database at {0} is open in another process")]
    Locked(String),
    #[error(
        "the memory pool at {dir} is owned by {} but it does not answer at {socket}; \
         wait for it, stop it, or use --no-memory",
        pid.map_or("another process".to_string(), |p| format!("rgd process {p}"))
    )]
    Unreachable { dir: String, pid: Option<u32>, socket: String },
    #[error("memory pool: corrupt record {0}")]
    Corrupt(String),
    #[error("the memory pool is damaged: {0} (`rgd memory verify` says more; `rgd memory repair` rebuilds it from its journal)")]
    Damaged(String),
    #[error("{0}")]
    Input(String),
}

impl From<crate::retrieval::RetrievalError> for MemoryError {
    fn from(e: crate::retrieval::RetrievalError) -> MemoryError {
        match e {
            crate::retrieval::RetrievalError::Assets(why) => MemoryError::Assets(why),
            crate::retrieval::RetrievalError::Embedding(why) => MemoryError::Embedding(why),
        }
    }
}

/// One remembered solution: the record a run asked to keep (Q the task description, G the
/// guidance that led to the solution, K its keywords, LLM-extracted merged with identifiers from
/// the code, and the code), under an id, with the run it came from and when. Stored as one flat
/// JSON object, as before the record was a type of its own; the embedding of `question` is kept
/// beside it in the store. Its record's fields read as its own (`entry.question`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    #[serde(flatten)]
    pub record: MemoryRecord,
    #[serde(default)]
    pub run_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl std::ops::Deref for Entry {
    type Target = MemoryRecord;

    fn deref(&self) -> &MemoryRecord {
        &self.record
    }
}

/// What a run records about the pool it started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolState {
    pub entries: usize,
    pub content_hash: String,
}

pub struct MemoryPool {
    dir: PathBuf,
    db: sled::Db,
    entries_tree: sled::Tree,
    vectors_tree: sled::Tree,
    /// `entry id \0 run id \0 task id` for every time an entry was offered to a Guide.
    uses_tree: sled::Tree,
    entries: Vec<Entry>,
    /// Row i is the unit embedding of `entries[i].question`.
    vectors: Vec<f32>,
    /// The same vectors as int8 (x127): a first pass over 100k entries reads 38 MB instead of 154.
    quantized: Vec<i8>,
    /// Their sign bits (`scan::WORDS` u64 a row), for the first pass over large pools.
    signs: Vec<u64>,
    position: HashMap<String, usize>,
    /// The sum of every entry's digest, kept as entries come and go (see `ContentSum`).
    content: ContentSum,
    bm25: Bm25,
    embedder: Arc<Embedder>,
    /// The journal every change goes to first, and the state recorded after it.
    record: record::PoolRecord,
}

fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

impl MemoryPool {
    /// `$RGD_HOME/memory`.
    pub fn dir_in(home_root: &Path) -> PathBuf {
        home_root.join("memory")
    }

    pub fn open(dir: &Path, embedder: Arc<Embedder>) -> Result<MemoryPool, MemoryError> {
        std::fs::create_dir_all(dir).map_err(|e| MemoryError::Input(format!("{}: {e}", dir.display())))?;
        // sled's page cache defaults to 1 GB and grows with every write; the pool's working set is
        // the entries and vectors rgd keeps in memory anyway.
        let db = crate::sled_open::open(sled::Config::new().cache_capacity(16 << 20), &dir.join("pool")).map_err(|e| match e {
            e if crate::sled_open::is_lock_error(&e) => MemoryError::Locked(dir.display().to_string()),
            sled::Error::Corruption { .. } => {
                MemoryError::Damaged(format!("its database {} holds corrupted data", dir.join("pool").display()))
            }
            e => MemoryError::Store(e),
        })?;
        let entries_tree = db.open_tree("entries")?;
        let vectors_tree = db.open_tree("vectors")?;
        let uses_tree = db.open_tree("uses")?;
        let mut entries = Vec::new();
        let mut vectors = Vec::new();
        for item in entries_tree.iter() {
            let (key, value) = item?;
            let entry: Entry = serde_json::from_slice(&value).map_err(|e| MemoryError::Corrupt(format!("entry: {e}")))?;
            let raw = vectors_tree
                .get(&key)?
                .ok_or_else(|| MemoryError::Corrupt(format!("entry {} has no vector", entry.id)))?;
            if raw.len() != DIM * 4 {
                return Err(MemoryError::Corrupt(format!("entry {} vector of {} bytes", entry.id, raw.len())));
            }
            vectors.extend(raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])));
            entries.push(entry);
        }
        let (record, removed) = agreed_record(dir, &entries)?;
        if !removed.is_empty() {
            // Removed by the journal before a kill kept the database from following.
            for id in &removed {
                entries_tree.remove(id.as_bytes())?;
                vectors_tree.remove(id.as_bytes())?;
            }
            db.flush()?;
            let keep: Vec<bool> = entries.iter().map(|e| !removed.contains(&e.id)).collect();
            vectors = vectors
                .chunks_exact(DIM)
                .zip(&keep)
                .filter(|(_, k)| **k)
                .flat_map(|(v, _)| v.to_vec())
                .collect();
            entries.retain(|e| !removed.contains(&e.id));
        }
        let position = entries.iter().enumerate().map(|(i, e)| (e.id.clone(), i)).collect();
        let quantized = embed::quantize(&vectors);
        let signs = vectors.chunks_exact(DIM).flat_map(scan::signs).collect();
        let mut content = ContentSum::default();
        entries.iter().for_each(|e| content.add(e));
        let bm25 = Bm25::open(&dir.join("bm25"), &content.hash(entries.len()), || Box::new(entries.iter()))?;
        Ok(MemoryPool {
            dir: dir.to_path_buf(),
            db,
            entries_tree,
            vectors_tree,
            uses_tree,
            entries,
            vectors,
            quantized,
            signs,
            position,
            content,
            bm25,
            embedder,
            record,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn embedder(&self) -> &Arc<Embedder> {
        &self.embedder
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.position.get(id).map(|&i| &self.entries[i])
    }

    /// Entry ids starting with `prefix` (ids are ULIDs; a unique prefix is enough).
    pub fn find(&self, prefix: &str) -> Result<&Entry, MemoryError> {
        let matches: Vec<&Entry> = self.entries.iter().filter(|e| e.id.starts_with(prefix)).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(MemoryError::Input(format!("no memory entry {prefix}"))),
            _ => Err(MemoryError::Input(format!(
                "{prefix} matches {} entries; give more of the id",
                matches.len()
            ))),
        }
    }

    pub fn state(&self) -> PoolState {
        PoolState {
            entries: self.entries.len(),
            content_hash: self.content.hash(self.entries.len()),
        }
    }

    /// Stores entries (embedding their questions in batches), each with its vector in one sled
    /// transaction, flushed before returning: a kill leaves the old or the new state of each.
    pub fn insert(&mut self, new: Vec<Entry>) -> Result<(), MemoryError> {
        for chunk in new.chunks(256) {
            let texts: Vec<&str> = chunk.iter().map(|e| e.question.as_str()).collect();
            let vecs = self.embedder.embed(&texts)?;
            self.insert_embedded(chunk.iter().cloned().zip(vecs).collect())?;
        }
        Ok(())
    }

    /// Stores entries whose embeddings are already known (imports, benchmarks).
    pub fn insert_embedded(&mut self, new: Vec<(Entry, Vec<f32>)>) -> Result<(), MemoryError> {
        use sled::Transactional;
        for (entry, vector) in &new {
            if vector.len() != DIM {
                return Err(MemoryError::Input(format!(
                    "entry {}: a vector of {} numbers, not {DIM}",
                    entry.id,
                    vector.len()
                )));
            }
            let value = serde_json::to_vec(entry).map_err(|e| MemoryError::Corrupt(e.to_string()))?;
            let bytes = vector_bytes(vector);
            (&self.entries_tree, &self.vectors_tree)
                .transaction(|(entries, vectors)| {
                    entries.insert(entry.id.as_bytes(), value.as_slice())?;
                    vectors.insert(entry.id.as_bytes(), bytes.as_slice())?;
                    Ok::<_, sled::transaction::ConflictableTransactionError<()>>(())
                })
                .map_err(|e| MemoryError::Corrupt(format!("{e:?}")))?;
        }
        self.db.flush()?;
        // After the flush: a kill before this line leaves puts the next open adds to the journal.
        self.record.append(new.iter().map(|(e, _)| record::Change::Put(e.clone())))?;
        for (entry, vector) in &new {
            match self.position.get(&entry.id) {
                Some(&i) => {
                    self.content.remove(&self.entries[i]);
                    self.content.add(entry);
                    self.entries[i] = entry.clone();
                    self.vectors[i * DIM..(i + 1) * DIM].copy_from_slice(vector);
                    self.quantized[i * DIM..(i + 1) * DIM].copy_from_slice(&embed::quantize(vector));
                    self.signs[i * scan::WORDS..(i + 1) * scan::WORDS].copy_from_slice(&scan::signs(vector));
                }
                None => {
                    self.content.add(entry);
                    self.position.insert(entry.id.clone(), self.entries.len());
                    self.entries.push(entry.clone());
                    self.vectors.extend_from_slice(vector);
                    self.quantized.extend(embed::quantize(vector));
                    self.signs.extend(scan::signs(vector));
                }
            }
        }
        self.record.write_state(&self.state())?;
        self.bm25.add(new.iter().map(|(e, _)| e))?;
        self.bm25.mark(&self.content.hash(self.entries.len()))
    }

    pub fn remove(&mut self, id: &str) -> Result<(), MemoryError> {
        use sled::Transactional;
        let Some(&i) = self.position.get(id) else {
            return Err(MemoryError::Input(format!("no memory entry {id}")));
        };
        // Before the database: a kill after this line leaves a removal the next open applies.
        self.record.append([record::Change::Rm(id.to_string())])?;
        (&self.entries_tree, &self.vectors_tree)
            .transaction(|(entries, vectors)| {
                entries.remove(id.as_bytes())?;
                vectors.remove(id.as_bytes())?;
                Ok::<_, sled::transaction::ConflictableTransactionError<()>>(())
            })
            .map_err(|e| MemoryError::Corrupt(format!("{e:?}")))?;
        self.db.flush()?;
        self.content.remove(&self.entries[i]);
        self.entries.remove(i);
        self.vectors.drain(i * DIM..(i + 1) * DIM);
        self.quantized.drain(i * DIM..(i + 1) * DIM);
        self.signs.drain(i * scan::WORDS..(i + 1) * scan::WORDS);
        self.position = self.entries.iter().enumerate().map(|(i, e)| (e.id.clone(), i)).collect();
        self.record.write_state(&self.state())?;
        self.bm25.remove(id)?;
        self.bm25.mark(&self.content.hash(self.entries.len()))
    }

    fn bm25_index(&self) -> &Bm25 {
        &self.bm25
    }

    /// Where entry `id` is in `entries()`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.position.get(id).copied()
    }

    /// Records that an entry was offered to a run's task (for "which runs used it").
    pub fn record_use(&self, entry_id: &str, run_id: &str, task_id: &str) -> Result<(), MemoryError> {
        self.uses_tree.insert(format!("{entry_id}\0{run_id}\0{task_id}").as_bytes(), &[])?;
        self.uses_tree.flush()?;
        Ok(())
    }

    /// (run id, task id) pairs an entry was offered to.
    pub fn uses_of(&self, entry_id: &str) -> Vec<(String, String)> {
        self.uses_tree
            .scan_prefix(format!("{entry_id}\0").as_bytes())
            .keys()
            .flatten()
            .filter_map(|k| {
                let k = String::from_utf8_lossy(&k).into_owned();
                let mut parts = k.split('\0').skip(1);
                Some((parts.next()?.to_string(), parts.next()?.to_string()))
            })
            .collect()
    }

    /// Every embedding in int8 form, row i for entry i (for the first pass of a search).
    pub fn quantized_matrix(&self) -> &[i8] {
        &self.quantized
    }

    /// Every embedding's sign bits, row i for entry i.
    pub fn sign_matrix(&self) -> &[u64] {
        &self.signs
    }

    /// The embedding stored for entry `i`.
    pub fn vector(&self, i: usize) -> &[f32] {
        &self.vectors[i * DIM..(i + 1) * DIM]
    }
}

/// The state of a set of entries: how many, and their content hash.
fn state_of<'a>(entries: impl Iterator<Item = &'a Entry>) -> PoolState {
    let mut sum = ContentSum::default();
    let mut n = 0;
    entries.for_each(|e| {
        sum.add(e);
        n += 1;
    });
    PoolState {
        entries: n,
        content_hash: sum.hash(n),
    }
}

/// The pool's record, once its database agrees with its journal (`record.rs`): puts the journal
/// missed are added to it, and the ids it removed that the database still holds are returned, to
/// be removed. A pool made before pools kept a journal gets one written from its database. An
/// entry the journal holds and the database lacks was lost: `Damaged`.
fn agreed_record(dir: &Path, entries: &[Entry]) -> Result<(record::PoolRecord, Vec<String>), MemoryError> {
    let now = state_of(entries.iter());
    let recorded = record::read_state(dir).map_err(MemoryError::Damaged)?;
    if recorded.as_ref() == Some(&now) && dir.join(record::JOURNAL).exists() {
        return Ok((record::PoolRecord::open(dir)?, Vec::new()));
    }
    let Some(journal) = record::replay(dir)? else {
        if recorded.is_some() {
            return Err(MemoryError::Damaged(format!(
                "its journal {} is missing",
                dir.join(record::JOURNAL).display()
            )));
        }
        let mut rec = record::PoolRecord::open(dir)?;
        rec.append(entries.iter().cloned().map(record::Change::Put))?;
        rec.write_state(&now)?;
        return Ok((rec, Vec::new()));
    };
    let held: HashMap<&str, &Entry> = entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let lost: Vec<&String> = journal.entries.keys().filter(|id| !held.contains_key(id.as_str())).collect();
    if !lost.is_empty() {
        let mut what = format!(
            "its database {} lacks {} of the {} entries its journal {} holds",
            dir.join("pool").display(),
            lost.len(),
            journal.entries.len(),
            dir.join(record::JOURNAL).display()
        );
        for d in &journal.damaged {
            what.push_str("; ");
            what.push_str(d);
        }
        return Err(MemoryError::Damaged(what));
    }
    let removed: Vec<String> = entries
        .iter()
        .filter(|e| journal.removed.contains(&e.id))
        .map(|e| e.id.clone())
        .collect();
    let missed = entries
        .iter()
        .filter(|e| !journal.removed.contains(&e.id) && journal.entries.get(&e.id) != Some(*e));
    let mut rec = record::PoolRecord::open(dir)?;
    rec.append(missed.cloned().map(record::Change::Put))?;
    rec.write_state(&state_of(entries.iter().filter(|e| !removed.contains(&e.id))))?;
    Ok((rec, removed))
}

/// Identity of the pool's content: what is searched (id, question, keywords) of every entry,
/// in no particular order. Each entry's sha256 is added into four 64-bit lanes (wrapping), so an
/// insert or a removal updates it in O(1) instead of re-hashing the pool, and the same set of
/// entries gives the same hash whatever order they came in.
#[derive(Debug, Default, Clone, Copy)]
struct ContentSum([u64; 4]);

impl ContentSum {
    fn digest(e: &Entry) -> [u64; 4] {
        let mut h = Sha256::new();
        h.update(e.id.as_bytes());
        h.update([0]);
        h.update(e.question.as_bytes());
        h.update([0]);
        h.update(e.keywords.join("\u{1f}").as_bytes());
        let d = h.finalize();
        std::array::from_fn(|i| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&d[i * 8..(i + 1) * 8]);
            u64::from_le_bytes(word)
        })
    }

    fn add(&mut self, e: &Entry) {
        let d = Self::digest(e);
        (0..4).for_each(|i| self.0[i] = self.0[i].wrapping_add(d[i]));
    }

    fn remove(&mut self, e: &Entry) {
        let d = Self::digest(e);
        (0..4).for_each(|i| self.0[i] = self.0[i].wrapping_sub(d[i]));
    }

    /// The hash recorded in run manifests and in the BM25 index's marker.
    fn hash(&self, entries: usize) -> String {
        let mut h = Sha256::new();
        h.update(b"rgd memory v2\0");
        h.update((entries as u64).to_le_bytes());
        self.0.iter().for_each(|lane| h.update(lane.to_le_bytes()));
        hex::encode(h.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_stored_as_the_same_flat_object_as_before_its_record_had_a_type() {
        let stored = r#"{"id":"01A","task_id":"HumanEval/1","entry_point":"f","question":"Q","guidance":"G","keywords":["k"],"code":"def f(): pass","run_id":"R","created_at":"2026-11-27T06:00:00Z"}"#;
        let entry: Entry = serde_json::from_str(stored).unwrap();
        assert_eq!(
            (entry.task_id.as_str(), entry.guidance.as_str(), entry.keywords.len()),
            ("HumanEval/1", "G", 1)
        );
        assert_eq!(serde_json::to_string(&entry).unwrap(), stored);
        let older = r#"{"id":"01B","task_id":"t","entry_point":"f","question":"Q","guidance":"G","keywords":[],"code":"","created_at":"2026-11-27T06:00:00Z"}"#;
        assert_eq!(
            serde_json::from_str::<Entry>(older).unwrap().run_id,
            None,
            "entries from before run ids were kept"
        );
    }
}
