//! What sits above the screen and takes the keys first: ONE stack, whose top decides both what a
//! key means (`input`) and what an action does (`App::handle`). Opening a popup pushes it; closing
//! it pops it; nothing else encodes a priority order between them.

use super::action::Action;
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

impl Modal {
    /// A popup of plain text lines, nothing in them to select.
    pub fn text(title: impl Into<String>, lines: Vec<String>) -> Modal {
        Modal::Text {
            title: title.into(),
            lines,
            scroll: 0,
            targets: Vec::new(),
            selected: None,
            flips: Vec::new(),
        }
    }
}

/// The flipped task selected in a compare popup, if `modal` is one with a selection.
pub fn selected_flip(modal: Option<&Modal>) -> Option<Flip> {
    match modal {
        Some(Modal::Text { selected, flips, .. }) => selected.and_then(|i| flips.get(i)).cloned(),
        _ => None,
    }
}

/// A text popup's keys: scrolling, and stepping through its targets (hits, flipped tasks).
/// Returns whether the popup closes.
pub fn text_key(modal: &mut Modal, action: &Action) -> bool {
    let Modal::Text {
        scroll, targets, selected, ..
    } = modal
    else {
        return false;
    };
    match action {
        Action::NextHit | Action::PrevHit if !targets.is_empty() => {
            let n = targets.len();
            let next = match (*selected, action) {
                (None, Action::NextHit) => 0,
                (None, _) => n - 1,
                (Some(i), Action::NextHit) => (i + 1) % n,
                (Some(i), _) => (i + n - 1) % n,
            };
            *selected = Some(next);
            *scroll = targets[next].saturating_sub(2);
        }
        Action::Up => *scroll = scroll.saturating_sub(1),
        Action::Down => *scroll = scroll.saturating_add(1),
        Action::PageUp => *scroll = scroll.saturating_sub(10),
        Action::PageDown => *scroll = scroll.saturating_add(10),
        Action::Back | Action::Quit => return true,
        _ => {}
    }
    false
}
