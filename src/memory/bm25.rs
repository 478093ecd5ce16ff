//! BM25 over each entry's keywords and description (tantivy). The index is derived data: it is
//! rebuilt from the sled store whenever it is missing or was built from a different pool state.
//!
//! Tokenizer: tantivy's `en_stem` (split on non-alphanumerics, lowercase, English stemming), so a
//! code identifier like `sort_matrix` matches the words "sort matrix" and "sorting matrices".

use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value};
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
}

fn schema() -> (Schema, Field, Field, Field) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
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
        if current.as_deref() == Some(state)
            && let Ok(index) = Index::open_in_dir(dir)
        {
            return Bm25::from_index(index, dir);
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(err)?;
        }
        std::fs::create_dir_all(dir).map_err(err)?;
        let (schema, ..) = schema();
        let index = Index::create_in_dir(dir, schema).map_err(err)?;
        let mut bm25 = Bm25::from_index(index, dir)?;
        bm25.add(entries())?;
        bm25.mark(state)?;
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
        })
    }

    fn writer(&self) -> Result<IndexWriter, MemoryError> {
        self.index.writer_with_num_threads(1, 32 << 20).map_err(err)
    }

    /// Adds entries (replacing any with the same id) and commits.
    pub fn add<'a>(&mut self, entries: impl Iterator<Item = &'a Entry>) -> Result<(), MemoryError> {
        let mut writer = self.writer()?;
        for e in entries {
            writer.delete_term(tantivy::Term::from_field_text(self.id, &e.id));
            writer
                .add_document(doc!(self.id => e.id.clone(), self.keywords => e.keywords.join(" "), self.question => e.question.clone()))
                .map_err(err)?;
        }
        writer.commit().map_err(err)?;
        self.reader.reload().map_err(err)
    }

    pub fn remove(&mut self, id: &str) -> Result<(), MemoryError> {
        let mut writer = self.writer()?;
        writer.delete_term(tantivy::Term::from_field_text(self.id, id));
        writer.commit().map_err(err)?;
        self.reader.reload().map_err(err)
    }

    /// Records which pool state the index reflects.
    pub fn mark(&self, state: &str) -> Result<(), MemoryError> {
        std::fs::write(self.dir.join(MARKER), state).map_err(err)
    }

    /// The best `n` entries for `text`: (id, BM25 score), best first.
    pub fn search(&self, text: &str, n: usize) -> Result<Vec<(String, f32)>, MemoryError> {
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
