//! What a key or mouse event means, given what is on screen (keys: the table in `keymap.rs`). No
//! state changes here.

use crossterm::event::{Event, KeyEventKind, MouseButton, MouseEventKind};

use super::app::{Action, App};

pub fn action_for(app: &App, event: &Event) -> Option<Action> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => super::keymap::action(app, key),
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
