//! The memory browser's state: the pool (opened on a blocking task, as loading the embedding model
//! takes a second), the current search, and the selection.

use crate::memory::{Hit, MemoryPool, SearchOptions};

pub struct MemoryBrowser {
    pub pool: Option<MemoryPool>,
    pub error: Option<String>,
    pub query: String,
    pub editing: bool,
    /// Results of the last search; `None` lists every entry.
    pub hits: Option<Vec<Hit>>,
    pub selected: usize,
}

impl MemoryBrowser {
    pub fn new() -> MemoryBrowser {
        MemoryBrowser {
            pool: None,
            error: None,
            query: String::new(),
            editing: false,
            hits: None,
            selected: 0,
        }
    }

    /// Rows shown: (entry index in the pool, hit scores if searching).
    pub fn rows(&self) -> Vec<(usize, Option<&Hit>)> {
        let Some(pool) = &self.pool else { return Vec::new() };
        match &self.hits {
            None => (0..pool.len()).map(|i| (i, None)).collect(),
            Some(hits) => hits
                .iter()
                .filter_map(|h| pool.index_of(&h.entry.id).map(|i| (i, Some(h))))
                .collect(),
        }
    }

    pub fn search(&mut self) {
        let Some(pool) = &self.pool else { return };
        self.selected = 0;
        if self.query.trim().is_empty() {
            self.hits = None;
            return;
        }
        let options = SearchOptions {
            k: 20,
            min_similarity: -1.0,
            ..SearchOptions::default()
        };
        match pool.search(&self.query, &options) {
            Ok(hits) => self.hits = Some(hits),
            Err(e) => self.error = Some(e.to_string()),
        }
    }
}

impl Default for MemoryBrowser {
    fn default() -> Self {
        MemoryBrowser::new()
    }
}
