//! Every key of the TUI, in one table. Key handling looks keys up here, the `?` overlay lists the
//! rows of the screens, and docs/tui.md carries the whole table (`tests/all/docs.rs` checks it is the
//! same), so the three cannot disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{Action, App, Screen};
use super::debugger::DebugAction;
use super::form::FormAction;
use super::modal::Modal;
use super::replay::ReplayAction;

/// Where a row applies. The popup on top takes every key; otherwise the replay's keys come first,
/// then the debugger's (live runs this window runs), then the screens'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Before anything else, popups included.
    Always,
    Screens,
    Replay,
    Debugger,
    ConfirmStop,
    Help,
    Form,
    Text,
    Filter,
}

impl Layer {
    /// The heading of the layer's part of docs/tui.md.
    fn title(self) -> &'static str {
        match self {
            Layer::Always => "everywhere",
            Layer::Screens => "home, sweep, task and memory screens",
            Layer::Replay => "replays",
            Layer::Debugger => "live runs (the debugger)",
            Layer::ConfirmStop => "the stop-the-run question",
            Layer::Help => "this help",
            Layer::Form => "the new-run form",
            Layer::Text => "text popups (compare, search hits)",
            Layer::Filter => "typing a filter or a search",
        }
    }
}

/// A key: a code with any modifiers, a code with Ctrl held, or any printable character.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    Code(KeyCode),
    Ctrl(char),
    AnyChar,
}

/// What a key does.
#[derive(Debug, Clone)]
pub enum Does {
    Act(Action),
    /// Only when the condition holds; otherwise the key falls through to later rows and layers.
    When(fn(&App) -> bool, Action),
    /// The typed character goes into the action.
    Typed(fn(char) -> Action),
}

pub struct Row {
    pub layer: Layer,
    /// How the help shows the keys.
    pub keys_label: &'static str,
    pub what: &'static str,
    pub keys: &'static [(Key, Does)],
}

use Does::{Act, Typed, When};
use Key::{AnyChar, Code, Ctrl};
use KeyCode::{BackTab, Backspace, Char, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up};

const fn row(layer: Layer, keys_label: &'static str, what: &'static str, keys: &'static [(Key, Does)]) -> Row {
    Row {
        layer,
        keys_label,
        what,
        keys,
    }
}

fn paused(app: &App) -> bool {
    app.target_paused()
}

/// The table. Within a layer the first row holding a key wins (so Ctrl-d pages before d diffs).
pub const KEYMAP: &[Row] = &[
    row(
        Layer::Always,
        "Ctrl-c",
        "quit (asks first while a run is live)",
        &[(Ctrl('c'), Act(Action::Quit))],
    ),
    // The screens, in the order the help overlay lists them.
    row(
        Layer::Screens,
        "↑↓ / j k",
        "move; scroll the focused pane",
        &[
            (Code(Up), Act(Action::Up)),
            (Code(Char('k')), Act(Action::Up)),
            (Code(Down), Act(Action::Down)),
            (Code(Char('j')), Act(Action::Down)),
        ],
    ),
    row(
        Layer::Screens,
        "← → / h l",
        "previous / next iteration (task view)",
        &[
            (Code(Left), Act(Action::Left)),
            (Code(Char('h')), Act(Action::Left)),
            (Code(Right), Act(Action::Right)),
            (Code(Char('l')), Act(Action::Right)),
        ],
    ),
    row(
        Layer::Screens,
        "PgUp PgDn, Ctrl-u Ctrl-d",
        "page",
        &[
            (Code(PageUp), Act(Action::PageUp)),
            (Code(PageDown), Act(Action::PageDown)),
            (Ctrl('u'), Act(Action::PageUp)),
            (Ctrl('d'), Act(Action::PageDown)),
        ],
    ),
    row(
        Layer::Screens,
        "g G / Home End",
        "top / bottom",
        &[
            (Code(Home), Act(Action::Top)),
            (Code(Char('g')), Act(Action::Top)),
            (Code(End), Act(Action::Bottom)),
            (Code(Char('G')), Act(Action::Bottom)),
        ],
    ),
    row(
        Layer::Screens,
        "Enter",
        "open the selected run or task (click twice with the mouse)",
        &[(Code(Enter), Act(Action::Enter))],
    ),
    row(
        Layer::Screens,
        "Tab / Shift-Tab",
        "next / previous pane",
        &[(Code(Tab), Act(Action::NextPane)), (Code(BackTab), Act(Action::PrevPane))],
    ),
    row(
        Layer::Screens,
        "d",
        "code pane: code / diff against the previous iteration",
        &[(Code(Char('d')), Act(Action::ToggleDiff))],
    ),
    row(
        Layer::Screens,
        "z",
        "zoom the focused pane",
        &[(Code(Char('z')), Act(Action::Zoom))],
    ),
    row(
        Layer::Screens,
        "w",
        "write the shown iteration's code to ./<task>_iter<k>.py",
        &[(Code(Char('w')), Act(Action::WriteCode))],
    ),
    row(
        Layer::Screens,
        "/",
        "filter tasks (Enter keeps, Esc clears)",
        &[(Code(Char('/')), Act(Action::StartFilter))],
    ),
    row(
        Layer::Screens,
        "s",
        "sort tasks: order, status, iterations, time",
        &[(Code(Char('s')), Act(Action::CycleSort))],
    ),
    row(
        Layer::Screens,
        "n",
        "home: start a new run",
        &[(Code(Char('n')), Act(Action::NewRun))],
    ),
    row(
        Layer::Screens,
        "space / c",
        "home: mark runs / compare the marked runs",
        &[(Code(Char(' ')), Act(Action::Mark)), (Code(Char('c')), Act(Action::Compare))],
    ),
    // The same `/` as above: on the home screen its filter searches every recorded run.
    row(
        Layer::Screens,
        "/ (home)",
        "search every run's tasks, errors and LLM messages; n / N step through hits",
        &[],
    ),
    row(
        Layer::Screens,
        "r",
        "home: refresh the run list",
        &[(Code(Char('r')), Act(Action::Refresh))],
    ),
    row(
        Layer::Screens,
        "m",
        "home: the memory browser (/ searches; ← → scroll the entry)",
        &[(Code(Char('m')), Act(Action::OpenMemory))],
    ),
    row(
        Layer::Replay,
        "space",
        "replay: play / pause",
        &[(Code(Char(' ')), Act(Action::Replay(ReplayAction::TogglePlay)))],
    ),
    row(
        Layer::Replay,
        ". ,",
        "replay: one event forward / back",
        &[
            (Code(Char('.')), Act(Action::Replay(ReplayAction::StepForward))),
            (Code(Char(',')), Act(Action::Replay(ReplayAction::StepBack))),
        ],
    ),
    row(
        Layer::Replay,
        "] [",
        "replay: next / previous iteration",
        &[
            (Code(Char(']')), Act(Action::Replay(ReplayAction::NextIteration))),
            (Code(Char('[')), Act(Action::Replay(ReplayAction::PrevIteration))),
        ],
    ),
    row(
        Layer::Replay,
        "+ -",
        "replay: speed 1x, 4x, 16x, instant",
        &[
            (Code(Char('+')), Act(Action::Replay(ReplayAction::Faster))),
            (Code(Char('=')), Act(Action::Replay(ReplayAction::Faster))),
            (Code(Char('-')), Act(Action::Replay(ReplayAction::Slower))),
        ],
    ),
    row(
        Layer::Replay,
        "0 $",
        "replay: start / end",
        &[
            (Code(Char('0')), Act(Action::Replay(ReplayAction::Start))),
            (Code(Char('$')), Act(Action::Replay(ReplayAction::End))),
        ],
    ),
    row(
        Layer::Replay,
        "f",
        "replay, task view: fork the task at the shown iteration",
        &[(Code(Char('f')), Act(Action::Fork))],
    ),
    row(
        Layer::Debugger,
        "p c s",
        "live: pause all / continue / step one effect (if paused)",
        &[
            (Code(Char('p')), Act(Action::Debug(DebugAction::Pause))),
            (Code(Char('c')), Act(Action::Debug(DebugAction::Continue))),
            // Sorting keeps `s` unless a task the key would act on is paused.
            (Code(Char('s')), When(paused, Action::Debug(DebugAction::Step))),
        ],
    ),
    row(
        Layer::Debugger,
        "e G",
        "paused: edit the prompt, code or query / the guidance",
        &[
            (Code(Char('e')), Act(Action::Debug(DebugAction::Edit))),
            (Code(Char('G')), Act(Action::Debug(DebugAction::EditGuidance))),
        ],
    ),
    row(
        Layer::Debugger,
        "x A D b",
        "paused: skip / abort / drop the memory hit / breakpoints",
        &[
            (Code(Char('x')), Act(Action::Debug(DebugAction::Skip))),
            (Code(Char('A')), Act(Action::Debug(DebugAction::Abort))),
            (Code(Char('D')), Act(Action::Debug(DebugAction::DropHit))),
            (Code(Char('b')), Act(Action::Debug(DebugAction::Breakpoints))),
        ],
    ),
    row(Layer::Screens, "mouse", "wheel scrolls, click selects or focuses", &[]),
    row(Layer::Screens, "?", "this help", &[(Code(Char('?')), Act(Action::Help))]),
    row(
        Layer::Screens,
        "Esc / q",
        "back / quit (asks first while a run is live)",
        &[(Code(Esc), Act(Action::Back)), (Code(Char('q')), Act(Action::Quit))],
    ),
    // Popups: each takes every key while it is on top.
    row(
        Layer::ConfirmStop,
        "y / n, Esc q",
        "stop the run / keep it running; back",
        &[
            (Code(Char('y')), Act(Action::Confirm(true))),
            (Code(Char('Y')), Act(Action::Confirm(true))),
            (Code(Char('n')), Act(Action::Confirm(false))),
            (Code(Char('N')), Act(Action::Confirm(false))),
            (Code(Esc), Act(Action::Back)),
            (Code(Char('q')), Act(Action::Back)),
        ],
    ),
    row(
        Layer::Help,
        "Esc q ?",
        "close the help",
        &[
            (Code(Esc), Act(Action::Back)),
            (Code(Char('q')), Act(Action::Back)),
            (Code(Char('?')), Act(Action::Back)),
        ],
    ),
    row(Layer::Form, "Esc", "close the form", &[(Code(Esc), Act(Action::Back))]),
    row(
        Layer::Form,
        "Tab ↓ / Shift-Tab ↑",
        "next / previous field",
        &[
            (Code(Tab), Act(Action::Form(FormAction::Next))),
            (Code(Down), Act(Action::Form(FormAction::Next))),
            (Code(BackTab), Act(Action::Form(FormAction::Prev))),
            (Code(Up), Act(Action::Form(FormAction::Prev))),
        ],
    ),
    row(
        Layer::Form,
        "← →",
        "cycle a field's choices (strategy, sandbox, memory)",
        &[
            (Code(Left), Act(Action::Form(FormAction::Cycle(false)))),
            (Code(Right), Act(Action::Form(FormAction::Cycle(true)))),
        ],
    ),
    row(
        Layer::Form,
        "Enter",
        "start the run",
        &[(Code(Enter), Act(Action::Form(FormAction::Submit)))],
    ),
    row(
        Layer::Form,
        "Backspace, any character",
        "edit the focused field",
        &[
            (Code(Backspace), Act(Action::Form(FormAction::Backspace))),
            (AnyChar, Typed(|c| Action::Form(FormAction::Char(c)))),
        ],
    ),
    row(
        Layer::Text,
        "Esc q",
        "close",
        &[(Code(Esc), Act(Action::Back)), (Code(Char('q')), Act(Action::Back))],
    ),
    row(
        Layer::Text,
        "n N",
        "next / previous hit or flipped task",
        &[(Code(Char('n')), Act(Action::NextHit)), (Code(Char('N')), Act(Action::PrevHit))],
    ),
    row(
        Layer::Text,
        "Enter",
        "open the selected hit (a run), or both runs on the selected flipped task",
        &[(Code(Enter), Act(Action::Enter))],
    ),
    row(
        Layer::Text,
        "↑↓ / j k, PgUp PgDn",
        "scroll",
        &[
            (Code(Up), Act(Action::Up)),
            (Code(Char('k')), Act(Action::Up)),
            (Code(Down), Act(Action::Down)),
            (Code(Char('j')), Act(Action::Down)),
            (Code(PageUp), Act(Action::PageUp)),
            (Code(PageDown), Act(Action::PageDown)),
        ],
    ),
    row(
        Layer::Filter,
        "Enter / Esc",
        "keep the filter (run the search) / clear it",
        &[
            (Code(Enter), Act(Action::EndFilter { keep: true })),
            (Code(Esc), Act(Action::EndFilter { keep: false })),
        ],
    ),
    row(
        Layer::Filter,
        "Backspace, any character",
        "edit it",
        &[
            (Code(Backspace), Act(Action::FilterBackspace)),
            (AnyChar, Typed(Action::FilterChar)),
        ],
    ),
];

/// The layers that take keys now, first first.
fn layers(app: &App) -> Vec<Layer> {
    if let Some(modal) = app.modal() {
        return vec![
            Layer::Always,
            match modal {
                Modal::ConfirmStop => Layer::ConfirmStop,
                Modal::Help => Layer::Help,
                Modal::Form(_) => Layer::Form,
                Modal::Text { .. } => Layer::Text,
                Modal::Filter(_) => Layer::Filter,
            },
        ];
    }
    let mut layers = vec![Layer::Always];
    if app.replay.is_some() {
        layers.push(Layer::Replay);
    }
    if app.control().is_some() && matches!(app.screen(), Screen::Task(_) | Screen::Sweep) {
        layers.push(Layer::Debugger);
    }
    layers.push(Layer::Screens);
    layers
}

/// What `key` does on the screen as it is.
pub fn action(app: &App, key: &KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    for layer in layers(app) {
        for row in KEYMAP.iter().filter(|r| r.layer == layer) {
            for (k, does) in row.keys {
                let hit = match (k, key.code) {
                    (Code(code), pressed) => *code == pressed,
                    (Ctrl(c), Char(pressed)) => ctrl && *c == pressed,
                    (AnyChar, Char(_)) => true,
                    _ => false,
                };
                if !hit {
                    continue;
                }
                match (does, key.code) {
                    (Act(action), _) => return Some(action.clone()),
                    (When(condition, action), _) if condition(app) => return Some(action.clone()),
                    (Typed(make), Char(c)) => return Some(make(c)),
                    _ => {}
                }
            }
        }
    }
    None
}

/// The rows the `?` overlay lists: the screens', the replay's and the debugger's.
pub fn help_rows() -> impl Iterator<Item = &'static Row> {
    KEYMAP
        .iter()
        .filter(|r| matches!(r.layer, Layer::Screens | Layer::Replay | Layer::Debugger))
}

/// The whole table as Markdown, layer by layer (docs/tui.md holds exactly this).
pub fn markdown() -> String {
    let mut out = String::new();
    let mut last = None;
    let order = [
        Layer::Screens,
        Layer::Replay,
        Layer::Debugger,
        Layer::Always,
        Layer::Form,
        Layer::Filter,
        Layer::Text,
        Layer::ConfirmStop,
        Layer::Help,
    ];
    for layer in order {
        for row in KEYMAP.iter().filter(|r| r.layer == layer) {
            if last != Some(layer) {
                if last.is_some() {
                    out.push('\n');
                }
                out.push_str(&format!("| {} | |\n| --- | --- |\n", layer.title()));
                last = Some(layer);
            }
            let keys = row.keys_label.replace('|', "\\|");
            let what = row.what.replace('|', "\\|").replace('<', "&lt;").replace('>', "&gt;");
            out.push_str(&format!("| `{keys}` | {what} |\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How the help names a key.
    fn name(key: &Key) -> Option<String> {
        Some(match key {
            Code(Char(' ')) => "space".into(),
            Code(Char(c)) => c.to_string(),
            Code(Up) => "↑".into(),
            Code(Down) => "↓".into(),
            Code(Left) => "←".into(),
            Code(Right) => "→".into(),
            Code(PageUp) => "PgUp".into(),
            Code(PageDown) => "PgDn".into(),
            Code(Home) => "Home".into(),
            Code(End) => "End".into(),
            Code(Enter) => "Enter".into(),
            Code(Tab) => "Tab".into(),
            Code(BackTab) => "Shift-Tab".into(),
            Code(Esc) => "Esc".into(),
            Code(Backspace) => "Backspace".into(),
            Ctrl(c) => format!("Ctrl-{c}"),
            Code(_) | AnyChar => return None,
        })
    }

    /// Every key a row binds is named in its label: what the help says is what the keys do.
    #[test]
    fn each_rows_label_names_its_keys() {
        for row in KEYMAP {
            for (key, _) in row.keys {
                if let Some(name) = name(key)
                    && !matches!(key, Code(Char('Y' | 'N' | '=')))
                {
                    assert!(row.keys_label.contains(&name), "{:?} is not in {:?}", name, row.keys_label);
                }
            }
        }
    }

    /// Within a layer a key means one thing, except where a condition lets it fall through.
    #[test]
    fn no_key_is_bound_twice_in_a_layer() {
        let mut seen = std::collections::HashSet::new();
        for row in KEYMAP {
            for (key, does) in row.keys {
                if matches!(does, When(..)) {
                    continue;
                }
                let id = format!("{:?} {:?}", row.layer, key);
                assert!(seen.insert(id.clone()), "{id} bound twice");
            }
        }
    }
}

#[cfg(test)]
mod routing {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::super::app::{Action, App, Screen};
    use super::super::form::{Form, FormAction};
    use super::super::modal::Modal;
    use super::super::replay::{Replay, ReplayAction};
    use super::action;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// The layers decide: a replay takes space before the home screen's mark, a popup takes every
    /// key, Ctrl-c quits from anywhere, Ctrl-d pages where d diffs.
    #[test]
    fn keys_go_to_the_layer_on_top() {
        let mut app = App::new(Screen::Home);
        assert_eq!(action(&app, &key(KeyCode::Char(' '))), Some(Action::Mark));
        assert_eq!(action(&app, &key(KeyCode::Char('d'))), Some(Action::ToggleDiff));
        assert_eq!(action(&app, &ctrl('d')), Some(Action::PageDown));
        assert_eq!(action(&app, &key(KeyCode::F(5))), None);
        app.replay = Some(Replay::from_events("r".into(), Vec::new()));
        assert_eq!(
            action(&app, &key(KeyCode::Char(' '))),
            Some(Action::Replay(ReplayAction::TogglePlay))
        );
        assert_eq!(action(&app, &key(KeyCode::Char('f'))), Some(Action::Fork));
        app.modals.push(Modal::Form(Box::new(Form::new(&[]))));
        assert_eq!(action(&app, &key(KeyCode::Char('q'))), Some(Action::Form(FormAction::Char('q'))));
        assert_eq!(action(&app, &key(KeyCode::Char(' '))), Some(Action::Form(FormAction::Char(' '))));
        assert_eq!(action(&app, &ctrl('c')), Some(Action::Quit));
        app.modals.push(Modal::Help);
        assert_eq!(
            action(&app, &key(KeyCode::Char('j'))),
            None,
            "the help takes keys and closes on Esc q ?"
        );
        assert_eq!(action(&app, &key(KeyCode::Char('?'))), Some(Action::Back));
    }
}
