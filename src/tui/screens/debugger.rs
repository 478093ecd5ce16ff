//! The debugger panel of a run this window runs: its `Control`, the breakpoints being typed, and
//! an edit waiting for `$EDITOR`. Commands go to the run; what they change comes back as events.

use std::sync::Arc;

use super::super::action::Action;
use super::super::app_event::AppEvent;
use super::super::debugger::{self, DebugAction, EditorRequest};
use super::super::modal::{Filter, Modal};
use super::super::model::RunModel;
use super::{Outbox, typed};
use crate::engine::Control;

#[derive(Default)]
pub struct Debugger {
    /// The run's debugger (set when this window starts the run).
    pub control: Option<Arc<Control>>,
    /// The breakpoints being typed.
    pub breakpoints: String,
    /// An edit for the UI loop to open in `$EDITOR`.
    pub editor: Option<EditorRequest>,
}

impl Debugger {
    /// A debugger key on `target` (the task shown, or the sweep table's selected task).
    pub fn act(
        &mut self,
        action: DebugAction,
        control: Option<Arc<Control>>,
        target: Option<String>,
        in_task_view: bool,
        model: &RunModel,
        out: &mut Outbox,
    ) {
        let Some(control) = control else {
            out.status("no debugger: this window does not run the run");
            return;
        };
        let command = match action {
            DebugAction::Breakpoints => {
                self.breakpoints = control.breakpoints().iter().map(|b| b.name()).collect::<Vec<_>>().join(",");
                out.send(AppEvent::Popup(Modal::Filter(Filter::Breakpoints)));
                return;
            }
            DebugAction::Edit | DebugAction::EditGuidance => {
                let view = target.and_then(|id| model.task(&id));
                self.editor = view.and_then(|v| debugger::edit_request(v, action == DebugAction::EditGuidance));
                if self.editor.is_none() {
                    out.status("nothing to edit: the task is not paused");
                }
                return;
            }
            other => debugger::command_for(other, target, in_task_view),
        };
        match command.map(|c| control.command(c)) {
            Some(Ok(())) if action == DebugAction::Pause => out.status("pausing every task before its next step"),
            Some(Err(e)) => out.status(e),
            _ => {}
        }
    }

    /// The text the editor left, sent as an edit of what it was opened on.
    pub fn edited(&self, control: Option<&Arc<Control>>, request: EditorRequest, text: Option<String>, out: &mut Outbox) {
        let Some(command) = debugger::edit_command(request, text) else {
            out.status("no change");
            return;
        };
        if let Some(Err(e)) = control.map(|c| c.command(command)) {
            out.status(e);
        }
    }

    /// Typing the breakpoints; Enter sets them. `Some(())` when the input ended.
    pub fn breakpoints_key(&mut self, action: &Action, control: Option<&Arc<Control>>, out: &mut Outbox) -> Option<()> {
        let keep = typed(&mut self.breakpoints, action)?;
        if keep && let Some(control) = control {
            let set = std::mem::take(&mut self.breakpoints);
            let command = crate::engine::Command::Break { set: set.clone() };
            out.status(match control.command(command) {
                Ok(()) if set.trim().is_empty() => "breakpoints cleared".into(),
                Ok(()) => format!("breakpoints: {set}"),
                Err(e) => e,
            });
        }
        Some(())
    }
}
