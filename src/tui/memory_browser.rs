//! The memory browser's state: the pool handle and the entries it had when opened (both from a
//! background job: loading the embedding model takes a second, and the pool may be served by
//! another rgd process), the current search, the selection, and who the selection was offered to.

use crate::memory::{Entry, Hit, SharedPool};

#[derive(Default)]
pub struct MemoryBrowser {
    pub pool: Option<SharedPool>,
    pub entries: Vec<Entry>,
    pub error: Option<String>,
    pub query: String,
    /// Results of the last search; `None` lists every entry.
    pub hits: Option<Vec<Hit>>,
    pub selected: usize,
    /// (entry id, the (run, task) pairs it was offered to), for the selected entry once loaded.
    pub uses: Option<(String, Vec<(String, String)>)>,
}

impl MemoryBrowser {
    pub fn new() -> MemoryBrowser {
        MemoryBrowser::default()
    }

    /// Rows shown: the entry, and its scores when searching.
    pub fn rows(&self) -> Vec<(&Entry, Option<&Hit>)> {
        match &self.hits {
            None => self.entries.iter().map(|e| (e, None)).collect(),
            Some(hits) => hits.iter().map(|h| (&h.entry, Some(h))).collect(),
        }
    }

    /// The selected entry's id.
    pub fn selected_id(&self) -> Option<String> {
        let rows = self.rows();
        let (e, _) = rows.get(self.selected.min(rows.len().saturating_sub(1)))?;
        Some(e.id.clone())
    }

    /// The offers of `entry_id`, if they are loaded.
    pub fn uses_of(&self, entry_id: &str) -> Option<&[(String, String)]> {
        self.uses.as_ref().filter(|(id, _)| id == entry_id).map(|(_, u)| u.as_slice())
    }
}
