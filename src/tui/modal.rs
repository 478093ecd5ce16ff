//! What sits above the screen and takes the keys first: ONE stack, whose top decides both what a
//! key means (`input`) and what an action does (`App::handle`). Opening a popup pushes it; closing
//! it pops it; nothing else encodes a priority order between them.

use super::form::Form;

pub enum Modal {
    /// The key list.
    Help,
    /// Quitting would stop a live run.
    ConfirmStop,
    /// Starting a run.
    Form(Box<Form>),
    /// Typing a filter or a search.
    Filter(Filter),
    /// Text to read and scroll (the comparison of marked runs, search hits). `targets`: the lines
    /// `n` / `N` select in turn (hits, flipped tasks); `tasks`: the task each target opens with
    /// Enter (the compare popup's flips), when any.
    Text {
        title: String,
        lines: Vec<String>,
        scroll: u16,
        targets: Vec<u16>,
        selected: Option<usize>,
        tasks: Vec<String>,
    },
}

/// What a `Modal::Filter` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// The sweep table's task filter.
    Tasks,
    /// The memory browser's search.
    Memory,
    /// The home screen's search across recorded runs.
    Runs,
}
