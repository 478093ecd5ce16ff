//! Work the UI loop must not wait for (preparing a run, opening the memory pool, searching it,
//! loading a recorded run, listing runs) runs on a blocking task and reports back here, through
//! one channel the loop reads beside input and engine events (codex-rs's `AppEvent`, gitui's
//! async jobs). The screens' components ask for what lies beyond them through the same events.
//! `App::apply_event` is the only place they enter the state.

use crate::engine::Sweep;
use crate::memory::{Entry, Hit, SharedPool};

use super::replay::Replay;
use super::run_list::RunRow;

pub enum AppEvent {
    /// The status line's text (`None` clears it).
    Status(Option<String>),
    /// A popup to open.
    Popup(super::modal::Modal),
    /// Open a task of the run shown.
    OpenTask(String),
    /// Open a recorded run: a replay, or followed when it is still running elsewhere.
    OpenRun {
        run_id: String,
        running: bool,
    },
    /// Open the memory browser.
    OpenMemory,
    /// A run prepared from the form (and whether it resumed one), or why it could not be.
    Launched(anyhow::Result<(Sweep, bool)>),
    /// The memory pool opened for the browser, with its entries.
    MemoryOpened(anyhow::Result<(SharedPool, Vec<Entry>)>),
    /// Hits for a search (dropped if the query changed meanwhile).
    MemorySearched {
        query: String,
        hits: anyhow::Result<Vec<Hit>>,
    },
    /// The runs an entry was offered to.
    MemoryUses {
        entry_id: String,
        uses: anyhow::Result<Vec<(String, String)>>,
    },
    ReplayLoaded {
        run_id: String,
        replay: anyhow::Result<Replay>,
    },
    RunsListed(Vec<RunRow>),
    /// The marked runs compared (`rgd compare`'s text), or why they cannot be.
    Compared(Result<crate::analysis::Comparison, String>),
    /// The marked runs side by side on one task.
    FlipShown(Result<Vec<String>, String>),
    /// Hits of a search across runs.
    RunsSearched {
        query: String,
        hits: Result<Vec<crate::store::RunHit>, String>,
    },
    /// What `rgd fix` reports (the fix runs outside the view: `tui::watch_fix`).
    Fix(crate::repo::fix::event::FixEvent),
}

pub type JobSender = tokio::sync::mpsc::UnboundedSender<AppEvent>;
pub type JobReceiver = tokio::sync::mpsc::UnboundedReceiver<AppEvent>;
