//! The memory browser's behaviour (its state is `MemoryBrowser`): opening the pool, searching it,
//! loading who an entry was offered to, and its keys. Every pool call is a background job.

use std::path::Path;

use super::super::action::Action;
use super::super::app_event::AppEvent;
use super::super::memory_browser::MemoryBrowser;
use super::super::modal::{Filter, Modal};
use super::{Outbox, moved, typed};
use crate::memory::{Entry, Hit, SharedPool};

impl MemoryBrowser {
    /// A browser whose pool opens in the background; `None` (and why, on the status line) when
    /// there is no embedding model in the cache yet.
    pub fn open(dir: Option<&Path>, out: &mut Outbox) -> Option<MemoryBrowser> {
        let dir = dir?.to_path_buf();
        if crate::retrieval::assets::installed().is_none() {
            out.status("no embedding model yet: run `rgd memory setup` (or any run with memory) first");
            return None;
        }
        out.spawn(move || {
            AppEvent::MemoryOpened((|| {
                // Never a download from the browser: only a model already in the cache.
                let assets = crate::retrieval::assets::installed().ok_or_else(|| anyhow::anyhow!("the embedding model is gone"))?;
                let pool = SharedPool::open_in_home(&dir, &assets)?;
                let entries = pool.entries()?;
                Ok((pool, entries))
            })())
        });
        Some(MemoryBrowser::new())
    }

    /// `scroll`: the selected entry's pane (← → scroll it).
    pub fn handle(&mut self, action: Action, page: usize, scroll: &mut u16, out: &mut Outbox) {
        let before = self.selected;
        if let Some(to) = moved(self.selected, &action, self.rows().len(), page) {
            self.selected = to;
        }
        match action {
            Action::StartFilter => out.send(AppEvent::Popup(Modal::Filter(Filter::Memory))),
            Action::Right => *scroll = scroll.saturating_add(5),
            Action::Left => *scroll = scroll.saturating_sub(5),
            _ => {}
        }
        if self.selected != before {
            *scroll = 0;
            self.load_uses(out);
        }
    }

    /// Typing the search: every change searches again once the input ends. `Some(())` when it
    /// ended.
    pub fn query_key(&mut self, action: &Action, out: &mut Outbox) -> Option<()> {
        let keep = typed(&mut self.query, action)?;
        if !keep {
            self.query.clear();
        }
        self.search(out);
        Some(())
    }

    /// Searches the pool for the query (every entry when it is empty).
    pub fn search(&mut self, out: &mut Outbox) {
        self.selected = 0;
        if self.query.trim().is_empty() {
            self.hits = None;
            self.load_uses(out);
            return;
        }
        let Some(pool) = self.pool.clone() else { return };
        let query = self.query.clone();
        let options = crate::memory::SearchOptions {
            k: 20,
            min_similarity: -1.0,
            ..crate::memory::SearchOptions::default()
        };
        out.spawn(move || {
            let hits = pool.search(&query, &options).map_err(anyhow::Error::from);
            AppEvent::MemorySearched { query, hits }
        });
    }

    /// Who the selected entry was offered to, unless that is already known.
    pub fn load_uses(&self, out: &mut Outbox) {
        let (Some(pool), Some(entry_id)) = (self.pool.clone(), self.selected_id()) else {
            return;
        };
        if self.uses_of(&entry_id).is_some() {
            return;
        }
        out.spawn(move || {
            let uses = pool.uses_of(&entry_id).map_err(anyhow::Error::from);
            AppEvent::MemoryUses { entry_id, uses }
        });
    }

    pub fn opened(&mut self, opened: anyhow::Result<(SharedPool, Vec<Entry>)>, out: &mut Outbox) {
        match opened {
            Ok((pool, entries)) => {
                self.pool = Some(pool);
                self.entries = entries;
            }
            Err(e) => self.error = Some(format!("{e:#}")),
        }
        self.load_uses(out);
    }

    /// A search's hits, dropped when the query changed meanwhile.
    pub fn searched(&mut self, query: String, hits: anyhow::Result<Vec<Hit>>, out: &mut Outbox) {
        if self.query != query {
            self.load_uses(out);
            return;
        }
        match hits {
            Ok(hits) => self.hits = Some(hits),
            Err(e) => self.error = Some(format!("{e:#}")),
        }
        self.selected = 0;
        self.load_uses(out);
    }

    pub fn offered(&mut self, entry_id: String, uses: anyhow::Result<Vec<(String, String)>>) {
        match uses {
            Ok(uses) => self.uses = Some((entry_id, uses)),
            Err(e) => self.error = Some(format!("{e:#}")),
        }
    }
}
