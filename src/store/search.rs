//! Search across recorded runs (`rgd runs search`, `/` on the TUI's home): task ids, statuses,
//! failure classes, strategies, models, error text and the content of every LLM message, in a
//! tantivy index beside the runs. Derived data, kept up to date incrementally: a run is
//! (re)indexed when its event count differs from the one indexed; runs another process is
//! writing are left for later.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, STORED, STRING, Schema, TEXT, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, TantivyDocument, Term, doc};

use super::{Home, RunStore, StoreError};
use crate::record::Event;

/// One place a query matched.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunHit {
    pub run_id: String,
    pub task_id: String,
    /// "task" (id, status, failure, method, model), "prompt", "answer" or "error".
    pub kind: String,
    /// The matching text around the match, on one line.
    pub snippet: String,
}

struct Fields {
    run: Field,
    task: Field,
    kind: Field,
    text: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let fields = Fields {
        run: b.add_text_field("run", STRING | STORED),
        task: b.add_text_field("task", STRING | STORED),
        kind: b.add_text_field("kind", STRING | STORED),
        text: b.add_text_field("text", TEXT | STORED),
    };
    (b.build(), fields)
}

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("run index: {e}"))
}

pub struct RunIndex {
    index: Index,
    fields: Fields,
    dir: PathBuf,
}

const STATE: &str = "indexed.json";

impl RunIndex {
    /// `$RGD_HOME/runs-index`, created (or recreated, when unreadable) as needed.
    pub fn open(home: &Home) -> Result<RunIndex, StoreError> {
        let dir = home.root.join("runs-index");
        // Made again when unreadable or of another schema (with it goes `indexed.json`, in the
        // same folder, so every run is indexed again).
        let opened = crate::retrieval::disk::open_or_recreate(&dir, schema().0, true).map_err(err)?;
        Ok(RunIndex {
            index: opened.index,
            fields: schema().1,
            dir,
        })
    }

    fn indexed(&self) -> BTreeMap<String, u64> {
        std::fs::read_to_string(self.dir.join(STATE))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Indexes every run whose record changed since; returns how many were (re)indexed.
    pub fn update(&self, home: &Home) -> Result<usize, StoreError> {
        let mut indexed = self.indexed();
        let mut writer: Option<tantivy::IndexWriter> = None;
        let mut changed = 0;
        for id in home.run_ids() {
            let Ok(store) = RunStore::open(home, &id) else { continue };
            let events = store.next_seq()?;
            if indexed.get(&id) == Some(&events) {
                continue;
            }
            let w = match &mut writer {
                Some(w) => w,
                None => writer.insert(crate::retrieval::disk::writer(&self.index).map_err(err)?),
            };
            w.delete_term(Term::from_field_text(self.fields.run, &id));
            self.add_run(w, &store, &id)?;
            indexed.insert(id, events);
            changed += 1;
        }
        if let Some(mut w) = writer {
            w.commit().map_err(err)?;
            let state = serde_json::to_string(&indexed).map_err(err)?;
            std::fs::write(self.dir.join(STATE), state).map_err(err)?;
        }
        Ok(changed)
    }

    fn add_run(&self, w: &mut tantivy::IndexWriter, store: &RunStore, run: &str) -> Result<(), StoreError> {
        let f = &self.fields;
        let manifest = store.manifest()?;
        let method = format!("{} {}", manifest.method(), manifest.model_shown());
        let add = |task: &str, kind: &str, text: String| {
            w.add_document(doc!(f.run => run, f.task => task, f.kind => kind, f.text => text))
                .map(|_| ())
                .map_err(err)
        };
        for r in store.results()? {
            let status = serde_json::to_value(r.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let failure = r.failure.as_ref().map(|f| f.label()).unwrap_or_default();
            let error = r.error.clone().unwrap_or_default();
            add(&r.task_id, "task", format!("{} {status} {failure} {error} {method}", r.task_id))?;
        }
        for envelope in store.events() {
            match envelope?.event {
                Event::AgentRequest { task_id, messages, .. } => {
                    let text: Vec<String> = messages.into_iter().map(|m| m.content).collect();
                    add(&task_id, "prompt", text.join("\n"))?;
                }
                Event::AgentResponse { task_id, text, .. } => add(&task_id, "answer", text)?,
                Event::AgentFailed { task_id, error, .. } => add(&task_id, "error", error.to_string())?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The best matches of `query` (words, "phrases", field-free), best first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<RunHit>, StoreError> {
        let reader = self.index.reader().map_err(err)?;
        let searcher = reader.searcher();
        let f = &self.fields;
        let parser = QueryParser::for_index(&self.index, vec![f.text]);
        let (q, _) = parser.parse_query_lenient(query);
        let snippets = SnippetGenerator::create(&searcher, &*q, f.text).map_err(err)?;
        let top = searcher
            .search(&q, &TopDocs::with_limit(limit.max(1)).order_by_score())
            .map_err(err)?;
        top.into_iter()
            .map(|(_, address)| {
                let d: TantivyDocument = searcher.doc(address).map_err(err)?;
                let get = |field: Field| d.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string();
                let snippet = snippets
                    .snippet_from_doc(&d)
                    .fragment()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                Ok(RunHit {
                    run_id: get(f.run),
                    task_id: get(f.task),
                    kind: get(f.kind),
                    snippet,
                })
            })
            .collect()
    }
}
