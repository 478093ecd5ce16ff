//! BM25 over each entry's keywords and description (`retrieval::docs`, tantivy). The index is derived data: it is
//! rebuilt from the sled store whenever it is missing or was built from a different pool state.
//!
//! Tokenizer: tantivy's `en_stem` (split on non-alphanumerics, lowercase, English stemming), so a
//! code identifier like `sort_matrix` matches the words "sort matrix" and "sorting matrices".
//!
//! Writes: changes are kept as data, and a commit (only when a search needs the new entries or the
//! index is closed) makes a writer, applies them, commits and lets the writer go. A writer and a
//! commit per stored task cost ~70 ms each; a writer kept for a sweep's whole life held its
//! threads and indexing heap all along (12 MB of the memory benchmark's peak). The state marker is
//! written after the commit it describes, so an index left uncommitted by a crash has an old
//! marker and is rebuilt from sled on the next open.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use super::{Entry, MemoryError};
use crate::retrieval::docs::{DocIndex, DocSchema, TextField};

const MARKER: &str = "pool-state";

/// An entry: its id, then its keywords and its description, both stemmed.
const SCHEMA: DocSchema = DocSchema {
    key: "id",
    tags: &[],
    texts: &[
        TextField {
            name: KEYWORDS,
            stemmed: true,
            stored: false,
        },
        TextField {
            name: QUESTION,
            stemmed: true,
            stored: false,
        },
    ],
};
const KEYWORDS: &str = "keywords";
const QUESTION: &str = "question";

pub struct Bm25 {
    docs: DocIndex,
    dir: PathBuf,
    pending: Mutex<Pending>,
}

/// Changes not yet committed, and the pool state they bring the index to.
#[derive(Default)]
struct Pending {
    changes: Vec<Change>,
    state: Option<String>,
}

/// One change to the index, kept as data until the next commit: a writer (its threads, its
/// indexing heap) exists only while a commit runs, not for the whole life of a sweep.
enum Change {
    Add { id: String, keywords: String, question: String },
    Remove(String),
}

fn err(e: impl std::fmt::Display) -> MemoryError {
    MemoryError::Index(e.to_string())
}

impl Bm25 {
    /// Opens the index in `dir`, rebuilding it from `entries` when it is missing, unreadable or
    /// was built from another pool state (`state` is the pool's content hash).
    pub fn open<'a>(dir: &Path, state: &str, entries: impl Fn() -> Box<dyn Iterator<Item = &'a Entry> + 'a>) -> Result<Bm25, MemoryError> {
        let current = std::fs::read_to_string(dir.join(MARKER)).ok();
        let (docs, fresh) = DocIndex::open(dir, &SCHEMA, current.as_deref() == Some(state)).map_err(err)?;
        let mut bm25 = Bm25 {
            docs,
            dir: dir.to_path_buf(),
            pending: Mutex::new(Pending::default()),
        };
        if fresh {
            bm25.add(entries())?;
            bm25.mark(state)?;
            bm25.commit()?;
        }
        Ok(bm25)
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds entries (replacing any with the same id); searched after the next commit.
    pub fn add<'a>(&mut self, entries: impl Iterator<Item = &'a Entry>) -> Result<(), MemoryError> {
        self.pending().changes.extend(entries.map(|e| Change::Add {
            id: e.id.clone(),
            keywords: e.keywords.join(" "),
            question: e.question.clone(),
        }));
        Ok(())
    }

    pub fn remove(&mut self, id: &str) -> Result<(), MemoryError> {
        self.pending().changes.push(Change::Remove(id.to_string()));
        Ok(())
    }

    /// Records which pool state the index will reflect once the pending changes are committed.
    pub fn mark(&self, state: &str) -> Result<(), MemoryError> {
        self.pending().state = Some(state.to_string());
        Ok(())
    }

    /// Commits pending changes (if any), makes them searchable, then writes the state marker.
    pub fn commit(&self) -> Result<(), MemoryError> {
        let mut pending = self.pending();
        if !pending.changes.is_empty() {
            let mut writer = self.docs.writer().map_err(err)?;
            for change in &pending.changes {
                match change {
                    Change::Add { id, keywords, question } => {
                        writer.delete(id);
                        writer.add(id, &[], &[keywords, question]).map_err(err)?;
                    }
                    Change::Remove(id) => writer.delete(id),
                }
            }
            writer.commit().map_err(err)?;
            pending.changes.clear();
        }
        if let Some(state) = pending.state.take() {
            std::fs::write(self.dir.join(MARKER), state).map_err(err)?;
        }
        Ok(())
    }

    /// The best `n` entries for `text`: (id, BM25 score), best first.
    pub fn search(&self, text: &str, n: usize) -> Result<Vec<(String, f32)>, MemoryError> {
        // Later tasks see earlier solutions: whatever was stored before this search is in it.
        self.commit()?;
        let query = self.without_common_words(text)?;
        let found = self.docs.search(&query, &[KEYWORDS, QUESTION], n, None).map_err(err)?;
        Ok(found.into_iter().map(|f| (f.key, f.score)).collect())
    }

    /// `text` without the words that occur in more than half of the descriptions ("write",
    /// "function", "the"). Their IDF is below ln 2, so they hardly move a ranking, but their
    /// posting lists are the longest: at 100k entries they were most of a query's time.
    fn without_common_words(&self, text: &str) -> Result<String, MemoryError> {
        let docs = self.docs.num_docs();
        if docs < 2 {
            return Ok(text.to_string());
        }
        let mut kept = Vec::new();
        for word in text.split_whitespace() {
            let tokens = self.docs.words(QUESTION, word).map_err(err)?;
            let mut common = true;
            for token in &tokens {
                common &= self.docs.doc_freq(QUESTION, token).map_err(err)? * 2 > docs;
            }
            if tokens.is_empty() || !common {
                kept.push(word);
            }
        }
        Ok(kept.join(" "))
    }

    /// What an entry whose description holds every word of `text` once would score on that
    /// field: the sum of the words' IDFs (BM25 at tf 1 and average length). Words the pool has
    /// never seen count fully, so a query that is mostly unknown words has a high ceiling that
    /// its best match falls far below. Fusion divides by this, not only by the best score, so
    /// the best of poor BM25 matches is not lifted to a full 1.0.
    pub fn ceiling(&self, text: &str) -> Result<f32, MemoryError> {
        self.commit()?;
        let docs = self.docs.num_docs();
        let words: std::collections::BTreeSet<String> = self.docs.words(QUESTION, text).map_err(err)?.into_iter().collect();
        let mut sum = 0.0;
        for word in words {
            let df = self.docs.doc_freq(QUESTION, &word).map_err(err)?;
            // tantivy's IDF; at tf 1 and average length BM25's tf factor is exactly 1.
            let df = df.min(docs) as f32;
            sum += (1.0 + (docs as f32 - df + 0.5) / (df + 0.5)).ln();
        }
        Ok(sum)
    }
}

impl Drop for Bm25 {
    fn drop(&mut self) {
        // A failure leaves an old marker behind: the next open rebuilds the index from sled.
        if let Err(e) = self.commit() {
            tracing::warn!("memory index not committed: {e}");
        }
    }
}
