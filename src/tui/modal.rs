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
    /// `n` / `N` select in turn (hits, flipped tasks); `flips`: what each target opens with
    /// Enter (the compare popup's flipped tasks), when any.
    Text {
        title: String,
        lines: Vec<String>,
        scroll: u16,
        targets: Vec<u16>,
        selected: Option<usize>,
        flips: Vec<Flip>,
    },
}

/// A task one of two compared runs solved and the other did not: Enter shows both runs on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub task: String,
    /// The pair compared (the first run, and the other).
    pub runs: [String; 2],
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
    /// The debugger's breakpoints.
    Breakpoints,
}
