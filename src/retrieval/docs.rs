//! A BM25 index of documents kept on disk (tantivy), for the indexes rgd derives from what it
//! stores: the memory pool's (entries by id: keywords, description) and the run search's (runs by
//! id: each task's status, prompts, answers and errors). A document has a key it is replaced and
//! deleted by, tags stored with it (a task id, a kind), and text fields searched by BM25. The
//! rest of rgd reaches tantivy only through this room.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, STORED, STRING, Schema, TEXT, TextOptions, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// A text field: `stemmed` indexes its words as the in-memory BM25 does (English stemming),
/// otherwise as they are written; `stored` keeps the text for snippets.
#[derive(Debug, Clone, Copy)]
pub struct TextField {
    pub name: &'static str,
    pub stemmed: bool,
    pub stored: bool,
}

/// What a document holds: its key, its tags (stored, matched exactly) and its text fields.
#[derive(Debug, Clone, Copy)]
pub struct DocSchema {
    pub key: &'static str,
    pub tags: &'static [&'static str],
    pub texts: &'static [TextField],
}

impl DocSchema {
    fn build(&self) -> (Schema, Field, Vec<Field>, Vec<Field>) {
        let mut b = Schema::builder();
        let key = b.add_text_field(self.key, STRING | STORED);
        let tags = self.tags.iter().map(|t| b.add_text_field(t, STRING | STORED)).collect();
        let texts = self
            .texts
            .iter()
            .map(|t| {
                let options: TextOptions = if t.stemmed { super::bm25::stemmed_text() } else { TEXT };
                b.add_text_field(t.name, if t.stored { options | STORED } else { options })
            })
            .collect();
        (b.build(), key, tags, texts)
    }
}

/// One match: its score, key and tags, and (when asked) the matching text around the match.
#[derive(Debug, Clone)]
pub struct Found {
    pub score: f32,
    pub key: String,
    pub tags: Vec<String>,
    pub snippet: Option<String>,
}

/// An index of documents on disk.
pub struct DocIndex {
    index: Index,
    reader: IndexReader,
    key: Field,
    tags: Vec<Field>,
    texts: Vec<Field>,
    names: Vec<&'static str>,
}

impl DocIndex {
    /// The index in `dir` when `current` (its owner's marker agrees) and it has `schema`; else
    /// `dir` made again with an empty one (`true`: the owner must add what it is derived from).
    pub fn open(dir: &Path, schema: &DocSchema, current: bool) -> tantivy::Result<(DocIndex, bool)> {
        let (built, key, tags, texts) = schema.build();
        let opened = super::disk::open_or_recreate(dir, built, current)?;
        let reader = opened.index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let index = DocIndex {
            index: opened.index,
            reader,
            key,
            tags,
            texts,
            names: schema.texts.iter().map(|t| t.name).collect(),
        };
        Ok((index, opened.fresh))
    }

    fn text(&self, name: &str) -> tantivy::Result<Field> {
        let at = self.names.iter().position(|n| *n == name);
        at.map(|i| self.texts[i])
            .ok_or_else(|| tantivy::TantivyError::FieldNotFound(name.to_string()))
    }

    /// A writer for a batch of changes; searches see them once it is committed.
    pub fn writer(&self) -> tantivy::Result<DocWriter<'_>> {
        Ok(DocWriter {
            writer: super::disk::writer(&self.index)?,
            docs: self,
        })
    }

    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// In how many documents the text field `field` holds the (already analysed) word `word`.
    pub fn doc_freq(&self, field: &str, word: &str) -> tantivy::Result<u64> {
        self.reader.searcher().doc_freq(&Term::from_field_text(self.text(field)?, word))
    }

    /// `text`'s words as the field `field` indexes them (lower case, stemmed where it stems).
    pub fn words(&self, field: &str, text: &str) -> tantivy::Result<Vec<String>> {
        let mut analyzer = self.index.tokenizer_for_field(self.text(field)?)?;
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(token) = stream.next() {
            out.push(token.text.clone());
        }
        Ok(out)
    }

    /// The best `n` documents for the free text `query` (never a syntax error: quotes, colons
    /// and brackets are words) over the text fields `fields`, best first; with `snippet_of`, the
    /// matching text of that stored field around the match, on one line.
    pub fn search(&self, query: &str, fields: &[&str], n: usize, snippet_of: Option<&str>) -> tantivy::Result<Vec<Found>> {
        let searcher = self.reader.searcher();
        let parser = QueryParser::for_index(&self.index, fields.iter().map(|f| self.text(f)).collect::<tantivy::Result<_>>()?);
        let (q, _) = parser.parse_query_lenient(query);
        let snippets = match snippet_of {
            Some(field) => Some(SnippetGenerator::create(&searcher, &*q, self.text(field)?)?),
            None => None,
        };
        let top = searcher.search(&q, &TopDocs::with_limit(n.max(1)).order_by_score())?;
        top.into_iter()
            .map(|(score, address)| {
                let d: TantivyDocument = searcher.doc(address)?;
                let get = |field: Field| d.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string();
                let snippet = snippets.as_ref().map(|s| {
                    let fragment = s.snippet_from_doc(&d);
                    fragment.fragment().split_whitespace().collect::<Vec<_>>().join(" ")
                });
                Ok(Found {
                    score,
                    key: get(self.key),
                    tags: self.tags.iter().map(|t| get(*t)).collect(),
                    snippet,
                })
            })
            .collect()
    }
}

/// Changes to an index, applied together by `commit`; the writer (its threads and indexing heap)
/// lives only as long as the batch.
pub struct DocWriter<'a> {
    writer: IndexWriter,
    docs: &'a DocIndex,
}

impl DocWriter<'_> {
    /// Takes out every document with this key.
    pub fn delete(&mut self, key: &str) {
        self.writer.delete_term(Term::from_field_text(self.docs.key, key));
    }

    /// Adds a document: its key, its tags and its texts in the schema's order.
    pub fn add(&mut self, key: &str, tags: &[&str], texts: &[&str]) -> tantivy::Result<()> {
        let mut d = TantivyDocument::default();
        d.add_text(self.docs.key, key);
        for (field, value) in self.docs.tags.iter().zip(tags) {
            d.add_text(*field, value);
        }
        for (field, value) in self.docs.texts.iter().zip(texts) {
            d.add_text(*field, value);
        }
        self.writer.add_document(d)?;
        Ok(())
    }

    /// Commits the batch and makes it searchable.
    pub fn commit(mut self) -> tantivy::Result<()> {
        self.writer.commit()?;
        self.writer.wait_merging_threads()?;
        self.docs.reader.reload()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: DocSchema = DocSchema {
        key: "id",
        tags: &["kind"],
        texts: &[
            TextField {
                name: "words",
                stemmed: true,
                stored: false,
            },
            TextField {
                name: "text",
                stemmed: false,
                stored: true,
            },
        ],
    };

    #[test]
    fn documents_are_replaced_by_key_found_by_their_words_and_reopened_from_disk() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("docs");
        let (docs, fresh) = DocIndex::open(&at, &SCHEMA, true).unwrap();
        assert!(fresh);
        let mut w = docs.writer().unwrap();
        w.add("a", &["task"], &["sorting matrices", "sort the rows of a matrix"]).unwrap();
        w.add("b", &["answer"], &["merge dictionaries", "merge two dicts into one"])
            .unwrap();
        w.commit().unwrap();
        let hits = docs.search("sort matrix", &["words"], 5, None).unwrap();
        assert_eq!(hits[0].key, "a", "stemmed: sort matches sorting, matrix matches matrices");
        assert_eq!(hits[0].tags, ["task"]);
        assert!(
            docs.search("a:b \"(", &["text"], 5, None).is_ok(),
            "free text is never a syntax error"
        );
        let hits = docs.search("two dicts", &["text"], 5, Some("text")).unwrap();
        assert_eq!(hits.len(), 1);
        assert!(hits[0].snippet.as_deref().unwrap().contains("two dicts"), "{:?}", hits[0].snippet);
        assert_eq!(docs.words("words", "Sorting Matrices").unwrap(), ["sort", "matric"]);
        assert_eq!(docs.doc_freq("words", "merg").unwrap(), 1);

        let mut w = docs.writer().unwrap();
        w.delete("a");
        w.add("a", &["task"], &["binary to decimal", ""]).unwrap();
        w.commit().unwrap();
        assert_eq!(docs.num_docs(), 2, "replaced, not added twice");
        assert!(docs.search("matrix", &["words"], 5, None).unwrap().is_empty());
        drop(docs);
        let (again, fresh) = DocIndex::open(&at, &SCHEMA, true).unwrap();
        assert!(!fresh);
        assert_eq!(again.search("decimal", &["words"], 5, None).unwrap()[0].key, "a");
    }
}
