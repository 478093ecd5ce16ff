//! BM25 over texts held in memory (tantivy: its tokenizer, stemming and scoring).

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value};
use tantivy::{Index, IndexReader, TantivyDocument, doc};

/// A field of words for BM25: tantivy's `en_stem` (split on non-alphanumerics, lowercase,
/// English stemming) with frequencies and positions: this in-memory index and the memory pool's
/// on disk index their words the same way, so a query means the same to both.
pub fn stemmed_text() -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    )
}

/// BM25 (tantivy, in memory, English stemming) over texts of words (a repository's chunks: their
/// split identifiers and docstrings; `rgd locate`'s functions).
pub struct Bm25 {
    index: Index,
    reader: IndexReader,
    chunk_field: Field,
    text_field: Field,
}

impl Bm25 {
    /// The index of `texts`, each found again by its place among them.
    pub fn build<'a>(texts: impl IntoIterator<Item = &'a str>) -> anyhow::Result<Bm25> {
        let mut b = Schema::builder();
        let chunk = b.add_u64_field("chunk", STORED);
        let text = b.add_text_field("text", stemmed_text());
        let index = Index::create_in_ram(b.build());
        let mut writer: tantivy::IndexWriter = index.writer(32 << 20)?;
        for (i, t) in texts.into_iter().enumerate() {
            writer.add_document(doc!(chunk => i as u64, text => t))?;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(Bm25 {
            index,
            reader,
            chunk_field: chunk,
            text_field: text,
        })
    }

    /// The `k` texts (indexes into what it was built from) best matching `query`'s words (its
    /// identifiers split as the texts' were).
    pub fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<(usize, f32)>> {
        let words = split_identifiers(query);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        // Any word may match (tantivy's default is OR); the words are bare alphanumeric terms.
        let parser = QueryParser::for_index(&self.index, vec![self.text_field]);
        let (q, _) = parser.parse_query_lenient(&words);
        let top = searcher.search(&q, &TopDocs::with_limit(k).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (score, address) in top {
            let d: TantivyDocument = searcher.doc(address)?;
            if let Some(i) = d.get_first(self.chunk_field).and_then(|v| v.as_u64()) {
                out.push((i as usize, score));
            }
        }
        Ok(out)
    }
}

/// `sortedByKey_v2` -> `sorted by key v2`; `take_while` -> `take while`: identifiers as words,
/// for BM25.
pub fn split_identifiers(code: &str) -> String {
    let mut out = String::with_capacity(code.len() * 2);
    let mut prev: Option<char> = None;
    for c in code.chars() {
        if c == '_' || !c.is_alphanumeric() {
            out.push(' ');
        } else {
            if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
