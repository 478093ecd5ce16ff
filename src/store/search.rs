//! Search across recorded runs (`rgd runs search`, `/` on the TUI's home): task ids, statuses,
//! failure classes, strategies, models, error text and the content of every LLM message, in a
//! tantivy index beside the runs. Derived data, kept up to date incrementally: a run is
//! (re)indexed when its event count differs from the one indexed; runs another process is
//! writing are left for later.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Home, RunStore, StoreError};
use crate::record::Event;
use crate::retrieval::docs::{DocIndex, DocSchema, DocWriter, TextField};

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

/// A run's documents: keyed by the run, tagged with the task and the kind, their text stored for
/// snippets.
const SCHEMA: DocSchema = DocSchema {
    key: "run",
    tags: &["task", "kind"],
    texts: &[TextField {
        name: TEXT,
        stemmed: false,
        stored: true,
    }],
};
const TEXT: &str = "text";

fn err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("run index: {e}"))
}

pub struct RunIndex {
    docs: DocIndex,
    dir: PathBuf,
}

const STATE: &str = "indexed.json";

impl RunIndex {
    /// `$RGD_HOME/runs-index`, created (or recreated, when unreadable) as needed.
    pub fn open(home: &Home) -> Result<RunIndex, StoreError> {
        let dir = home.root.join("runs-index");
        // Made again when unreadable or of another schema (with it goes `indexed.json`, in the
        // same folder, so every run is indexed again).
        let (docs, _) = DocIndex::open(&dir, &SCHEMA, true).map_err(err)?;
        Ok(RunIndex { docs, dir })
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
        let mut writer: Option<DocWriter<'_>> = None;
        let mut changed = 0;
        for id in home.run_ids() {
            let Ok(store) = RunStore::open(home, &id) else { continue };
            let events = store.next_seq()?;
            if indexed.get(&id) == Some(&events) {
                continue;
            }
            let w = match &mut writer {
                Some(w) => w,
                None => writer.insert(self.docs.writer().map_err(err)?),
            };
            w.delete(&id);
            add_run(w, &store, &id)?;
            indexed.insert(id, events);
            changed += 1;
        }
        if let Some(w) = writer {
            w.commit().map_err(err)?;
            let state = serde_json::to_string(&indexed).map_err(err)?;
            std::fs::write(self.dir.join(STATE), state).map_err(err)?;
        }
        Ok(changed)
    }

    /// The best matches of `query` (words, "phrases", field-free), best first.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<RunHit>, StoreError> {
        let found = self.docs.search(query, &[TEXT], limit, Some(TEXT)).map_err(err)?;
        Ok(found
            .into_iter()
            .map(|f| {
                let mut tags = f.tags.into_iter();
                RunHit {
                    run_id: f.key,
                    task_id: tags.next().unwrap_or_default(),
                    kind: tags.next().unwrap_or_default(),
                    snippet: f.snippet.unwrap_or_default(),
                }
            })
            .collect())
    }
}

/// A run's documents: a task line per result (id, status, failure, error, method and model), and
/// every prompt, answer and failed call.
fn add_run(w: &mut DocWriter<'_>, store: &RunStore, run: &str) -> Result<(), StoreError> {
    let manifest = store.manifest()?;
    let method = format!("{} {}", manifest.method(), manifest.model_shown());
    let mut add = |task: &str, kind: &str, text: String| w.add(run, &[task, kind], &[&text]).map_err(err);
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
