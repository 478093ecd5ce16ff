//! What a key or mouse event means, given what is on screen. No state changes here.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind};

use super::app::{Action, App, Screen};
use super::debugger::DebugAction;
use super::form::FormAction;
use super::modal::Modal;
use super::replay::ReplayAction;

pub fn action_for(app: &App, event: &Event) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => key_action(app, key),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollDown => Some(Action::ScrollAt {
                column: m.column,
                row: m.row,
                down: true,
            }),
            MouseEventKind::ScrollUp => Some(Action::ScrollAt {
                column: m.column,
                row: m.row,
                down: false,
            }),
            MouseEventKind::Down(MouseButton::Left) => Some(Action::ClickAt {
                column: m.column,
                row: m.row,
            }),
            _ => None,
        },
        _ => None,
    }
}

fn key_action(app: &App, key: &KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('c') {
        return Some(Action::Quit);
    }
    if let Some(modal) = app.modal() {
        return modal_key(modal, key.code);
    }
    if app.replay.is_some() {
        let replay = match key.code {
            KeyCode::Char(' ') => Some(ReplayAction::TogglePlay),
            KeyCode::Char('.') => Some(ReplayAction::StepForward),
            KeyCode::Char(',') => Some(ReplayAction::StepBack),
            KeyCode::Char(']') => Some(ReplayAction::NextIteration),
            KeyCode::Char('[') => Some(ReplayAction::PrevIteration),
            KeyCode::Char('+') | KeyCode::Char('=') => Some(ReplayAction::Faster),
            KeyCode::Char('-') => Some(ReplayAction::Slower),
            KeyCode::Char('0') => Some(ReplayAction::Start),
            KeyCode::Char('$') => Some(ReplayAction::End),
            _ => None,
        };
        if let Some(r) = replay {
            return Some(Action::Replay(r));
        }
        if key.code == KeyCode::Char('f') {
            return Some(Action::Fork);
        }
    }
    if app.control().is_some() && matches!(app.screen(), Screen::Task(_) | Screen::Sweep) {
        let debug = match key.code {
            KeyCode::Char('p') => Some(DebugAction::Pause),
            KeyCode::Char('c') => Some(DebugAction::Continue),
            // Sorting keeps `s` unless a task the key would act on is paused.
            KeyCode::Char('s') if app.target_paused() => Some(DebugAction::Step),
            KeyCode::Char('x') => Some(DebugAction::Skip),
            KeyCode::Char('A') => Some(DebugAction::Abort),
            KeyCode::Char('e') => Some(DebugAction::Edit),
            KeyCode::Char('G') => Some(DebugAction::EditGuidance),
            KeyCode::Char('D') => Some(DebugAction::DropHit),
            KeyCode::Char('b') => Some(DebugAction::Breakpoints),
            _ => None,
        };
        if let Some(d) = debug {
            return Some(Action::Debug(d));
        }
    }
    Some(match key.code {
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Esc => Action::Back,
        KeyCode::Char('?') => Action::Help,
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::Left | KeyCode::Char('h') => Action::Left,
        KeyCode::Right | KeyCode::Char('l') => Action::Right,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Char('u') if ctrl => Action::PageUp,
        KeyCode::Char('d') if ctrl => Action::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Action::Top,
        KeyCode::End | KeyCode::Char('G') => Action::Bottom,
        KeyCode::Enter => Action::Enter,
        KeyCode::Tab => Action::NextPane,
        KeyCode::BackTab => Action::PrevPane,
        KeyCode::Char('d') => Action::ToggleDiff,
        KeyCode::Char('z') => Action::Zoom,
        KeyCode::Char('w') => Action::WriteCode,
        KeyCode::Char('/') => Action::StartFilter,
        KeyCode::Char('s') => Action::CycleSort,
        KeyCode::Char('n') => Action::NewRun,
        KeyCode::Char('r') => Action::Refresh,
        KeyCode::Char('m') => Action::OpenMemory,
        KeyCode::Char(' ') => Action::Mark,
        KeyCode::Char('c') => Action::Compare,
        _ => return None,
    })
}

/// The keys of the popup on top of the stack (it takes them all).
fn modal_key(modal: &Modal, code: KeyCode) -> Option<Action> {
    match modal {
        Modal::ConfirmStop => match code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Some(Action::Confirm(true)),
            KeyCode::Char('n') | KeyCode::Char('N') => Some(Action::Confirm(false)),
            KeyCode::Esc | KeyCode::Char('q') => Some(Action::Back),
            _ => None,
        },
        Modal::Help => match code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') => Some(Action::Back),
            _ => None,
        },
        Modal::Form(_) => Some(match code {
            KeyCode::Esc => Action::Back,
            KeyCode::Tab | KeyCode::Down => Action::Form(FormAction::Next),
            KeyCode::BackTab | KeyCode::Up => Action::Form(FormAction::Prev),
            KeyCode::Left => Action::Form(FormAction::Cycle(false)),
            KeyCode::Right => Action::Form(FormAction::Cycle(true)),
            KeyCode::Enter => Action::Form(FormAction::Submit),
            KeyCode::Backspace => Action::Form(FormAction::Backspace),
            KeyCode::Char(c) => Action::Form(FormAction::Char(c)),
            _ => return None,
        }),
        Modal::Text { .. } => Some(match code {
            KeyCode::Esc | KeyCode::Char('q') => Action::Back,
            KeyCode::Char('n') => Action::NextHit,
            KeyCode::Char('N') => Action::PrevHit,
            KeyCode::Enter => Action::Enter,
            KeyCode::Up | KeyCode::Char('k') => Action::Up,
            KeyCode::Down | KeyCode::Char('j') => Action::Down,
            KeyCode::PageUp => Action::PageUp,
            KeyCode::PageDown => Action::PageDown,
            _ => return None,
        }),
        Modal::Filter(_) => Some(match code {
            KeyCode::Enter => Action::EndFilter { keep: true },
            KeyCode::Esc => Action::EndFilter { keep: false },
            KeyCode::Backspace => Action::FilterBackspace,
            KeyCode::Char(c) => Action::FilterChar(c),
            _ => return None,
        }),
    }
}

/// Every key, for the help overlay and the README. Kept next to the mapping above.
pub const HELP: &[(&str, &str)] = &[
    ("↑↓ / j k", "move; scroll the focused pane"),
    ("← → / h l", "previous / next iteration (task view)"),
    ("PgUp PgDn, Ctrl-u Ctrl-d", "page"),
    ("g G / Home End", "top / bottom"),
    ("Enter", "open the selected run or task (click twice with the mouse)"),
    ("Tab / Shift-Tab", "next / previous pane"),
    ("d", "code pane: code / diff against the previous iteration"),
    ("z", "zoom the focused pane"),
    ("w", "write the shown iteration's code to ./<task>_iter<k>.py"),
    ("/", "filter tasks (Enter keeps, Esc clears)"),
    ("s", "sort tasks: order, status, iterations, time"),
    ("n", "home: start a new run"),
    ("space / c", "home: mark runs / compare the marked runs"),
    (
        "/ (home)",
        "search every run's tasks, errors and LLM messages; n / N step through hits",
    ),
    ("r", "home: refresh the run list"),
    ("m", "home: the memory browser (/ searches; ← → scroll the entry)"),
    ("space", "replay: play / pause"),
    (". ,", "replay: one event forward / back"),
    ("] [", "replay: next / previous iteration"),
    ("+ -", "replay: speed 1x, 4x, 16x, instant"),
    ("0 $", "replay: start / end"),
    ("f", "replay, task view: fork the task at the shown iteration"),
    ("p c s", "live: pause all / continue / step one effect (if paused)"),
    ("e G", "paused: edit the prompt, code or query / the guidance"),
    ("x A D b", "paused: skip / abort / drop the memory hit / breakpoints"),
    ("mouse", "wheel scrolls, click selects or focuses"),
    ("?", "this help"),
    ("Esc / q", "back / quit (asks first while a run is live)"),
];
