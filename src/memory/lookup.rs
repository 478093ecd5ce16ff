//! The engine's view of the pool: best match for the Guide's refinement, and storing solved tasks.
//! Searches and inserts embed text (CPU work), so they run on blocking threads.

use crate::agents::Retrieved;
use crate::engine::{MemoryLookup, MemoryRecord};

use super::keywords::code_keywords;
use super::{Entry, SearchOptions, SharedPool};

pub struct PoolMemory {
    pool: SharedPool,
    options: SearchOptions,
    run_id: String,
}

impl PoolMemory {
    pub fn new(pool: SharedPool, options: SearchOptions, run_id: String) -> PoolMemory {
        PoolMemory { pool, options, run_id }
    }
}

#[async_trait::async_trait]
impl MemoryLookup for PoolMemory {
    async fn best_match(&self, task_id: &str, query: &str) -> Result<Option<Retrieved>, String> {
        let (pool, query, task_id, run_id) = (self.pool.clone(), query.to_string(), task_id.to_string(), self.run_id.clone());
        // One more than needed: the task's own entry (from an earlier run) is never offered.
        let options = SearchOptions {
            k: self.options.k.max(1) + 1,
            ..self.options
        };
        tokio::task::spawn_blocking(move || {
            let hits = pool.search(&query, &options).map_err(|e| e.to_string())?;
            let best = hits.into_iter().find(|h| h.entry.task_id != task_id);
            if let Some(h) = &best {
                pool.record_use(&h.entry.id, &run_id, &task_id).map_err(|e| e.to_string())?;
            }
            Ok(best.map(|h| Retrieved {
                question: h.entry.record.question,
                guidance: h.entry.record.guidance,
                entry_id: h.entry.id,
                task_id: h.entry.record.task_id,
                score: h.score,
                bm25: h.bm25,
                sbert: h.sbert,
            }))
        })
        .await
        .map_err(|e| e.to_string())?
    }

    async fn store(&self, mut record: MemoryRecord) -> Result<String, String> {
        let pool = self.pool.clone();
        for k in code_keywords(&record.code) {
            if !record.keywords.iter().any(|x| x.eq_ignore_ascii_case(&k)) {
                record.keywords.push(k);
            }
        }
        let entry = Entry {
            id: ulid::Ulid::generate().to_string(),
            record,
            run_id: Some(self.run_id.clone()),
            created_at: chrono::Utc::now(),
        };
        let id = entry.id.clone();
        tokio::task::spawn_blocking(move || pool.insert(vec![entry]).map_err(|e| e.to_string()))
            .await
            .map_err(|e| e.to_string())??;
        Ok(id)
    }
}
