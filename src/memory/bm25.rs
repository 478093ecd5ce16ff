//! BM25 over each entry's keywords and description (tantivy). The index is derived data: it is
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

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, STORED, STRING, Schema, Value};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, doc};

use super::{Entry, MemoryError};

const MARKER: &str = "pool-state";

pub struct Bm25 {
    index: Index,
    reader: IndexReader,
    id: Field,
    keywords: Field,
    question: Field,
    dir: PathBuf,
    pending: Mutex<Pending>,
}

/// Changes not yet committed, and the pool state they bring the index to.
#[derive(Default)]
struct Pending {
    changes: Vec<Change>,
    state: Option<String>,
}

/// One change to the index, kept as data until the next commit: a tantivy writer (its threads,
/// its indexing heap) exists only while a commit runs, not for the whole life of a sweep.
enum Change {
    Add { id: String, keywords: String, question: String },
    Remove(String),
}

fn schema() -> (Schema, Field, Field, Field) {
    let mut b = Schema::builder();
    let text = crate::retrieval::bm25::stemmed_text();
    let id = b.add_text_field("id", STRING | STORED);
    let keywords = b.add_text_field("keywords", text.clone());
    let question = b.add_text_field("question", text);
    (b.build(), id, keywords, question)
}

fn err(e: impl std::fmt::Display) -> MemoryError {
    MemoryError::Index(e.to_string())
}

impl Bm25 {
    /// Opens the index in `dir`, rebuilding it from `entries` when it is missing, unreadable or
    /// was built from another pool state (`state` is the pool's content hash).
    pub fn open<'a>(dir: &Path, state: &str, entries: impl Fn() -> Box<dyn Iterator<Item = &'a Entry> + 'a>) -> Result<Bm25, MemoryError> {
        let current = std::fs::read_to_string(dir.join(MARKER)).ok();
        let (schema, ..) = schema();
        let opened = crate::retrieval::disk::open_or_recreate(dir, schema, current.as_deref() == Some(state)).map_err(err)?;
        let mut bm25 = Bm25::from_index(opened.index, dir)?;
        if opened.fresh {
            bm25.add(entries())?;
            bm25.mark(state)?;
            bm25.commit()?;
        }
        Ok(bm25)
    }

    fn from_index(index: Index, dir: &Path) -> Result<Bm25, MemoryError> {
        let (_, id, keywords, question) = schema();
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(err)?;
        Ok(Bm25 {
            index,
            reader,
            id,
            keywords,
            question,
            dir: dir.to_path_buf(),
            pending: Mutex::new(Pending::default()),
        })
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
            let mut writer: IndexWriter = crate::retrieval::disk::writer(&self.index).map_err(err)?;
            for change in &pending.changes {
                match change {
                    Change::Add { id, keywords, question } => {
                        writer.delete_term(Term::from_field_text(self.id, id));
                        writer
                            .add_document(doc!(self.id => id.clone(), self.keywords => keywords.clone(), self.question => question.clone()))
                            .map_err(err)?;
                    }
                    Change::Remove(id) => {
                        writer.delete_term(Term::from_field_text(self.id, id));
                    }
                }
            }
            writer.commit().map_err(err)?;
            writer.wait_merging_threads().map_err(err)?;
            self.reader.reload().map_err(err)?;
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
        let searcher = self.reader.searcher();
        let parser = QueryParser::for_index(&self.index, vec![self.keywords, self.question]);
        // Free text is not query syntax: quotes, colons and brackets in a task description must
        // not fail the search.
        let (query, _) = parser.parse_query_lenient(&self.without_common_words(text)?);
        let top = searcher
            .search(&query, &TopDocs::with_limit(n.max(1)).order_by_score())
            .map_err(err)?;
        top.into_iter()
            .map(|(score, address)| {
                let doc: TantivyDocument = searcher.doc(address).map_err(err)?;
                let id = doc.get_first(self.id).and_then(|v| v.as_str()).unwrap_or_default().to_string();
                Ok((id, score))
            })
            .collect()
    }

    /// `text` without the words that occur in more than half of the descriptions ("write",
    /// "function", "the"). Their IDF is below ln 2, so they hardly move a ranking, but their
    /// posting lists are the longest: at 100k entries they were most of a query's time.
    fn without_common_words(&self, text: &str) -> Result<String, MemoryError> {
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs();
        if docs < 2 {
            return Ok(text.to_string());
        }
        let mut analyzer = self.index.tokenizer_for_field(self.question).map_err(err)?;
        let mut kept = Vec::new();
        for word in text.split_whitespace() {
            let mut stream = analyzer.token_stream(word);
            let mut common = true;
            let mut any = false;
            while let Some(token) = stream.next() {
                any = true;
                let df = searcher.doc_freq(&Term::from_field_text(self.question, &token.text)).map_err(err)?;
                common &= df * 2 > docs;
            }
            if !(any && common) {
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
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs();
        let mut analyzer = self.index.tokenizer_for_field(self.question).map_err(err)?;
        let mut stream = analyzer.token_stream(text);
        let mut words = std::collections::BTreeSet::new();
        while let Some(token) = stream.next() {
            words.insert(token.text.clone());
        }
        let mut sum = 0.0;
        for word in words {
            let df = searcher.doc_freq(&Term::from_field_text(self.question, &word)).map_err(err)?;
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
