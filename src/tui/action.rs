//! What a key, click or timer asks for: input handling (`input.rs`, `keymap.rs`) produces these;
//! `App::handle` routes them.

use super::debugger::DebugAction;
use super::replay::ReplayAction;

/// What a key, click or timer asks for. Input handling produces these; `App::handle` applies them.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Left,
    Right,
    Enter,
    Back,
    Quit,
    NextPane,
    PrevPane,
    Help,
    ToggleDiff,
    Zoom,
    WriteCode,
    StartFilter,
    FilterChar(char),
    FilterBackspace,
    EndFilter {
        keep: bool,
    },
    CycleSort,
    NewRun,
    Refresh,
    OpenMemory,
    Confirm(bool),
    ScrollAt {
        column: u16,
        row: u16,
        down: bool,
    },
    ClickAt {
        column: u16,
        row: u16,
    },
    Form(super::form::FormAction),
    Replay(ReplayAction),
    /// Mark or unmark the selected run (home).
    Mark,
    /// Compare the marked runs (home).
    Compare,
    /// The next / previous search hit in a text popup.
    NextHit,
    PrevHit,
    /// A debugger key (live runs this window runs).
    Debug(DebugAction),
    /// Replay: fork the shown task at the shown iteration.
    Fork,
}
