//! The debugger's keys in the live views: pause, continue, step, skip, abort, breakpoints, and
//! edits in `$EDITOR` (as git does). Commands go to the run's `Control`; what they change comes
//! back as events (`paused`, `intervened`), like everything else the views show.

use std::sync::Arc;

use crate::engine::{Command, Control, Field, Pending};

use super::app::{App, Screen};
use super::modal::{Filter, Modal};

/// A debugger key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugAction {
    /// Hold every task before its next effect.
    Pause,
    /// Let the shown task (task view) or every task (sweep view) go on.
    Continue,
    Step,
    Skip,
    Abort,
    /// Edit the pending effect's main content: the prompt, the code or the query.
    Edit,
    EditGuidance,
    DropHit,
    /// Type the breakpoints.
    Breakpoints,
}

/// Text to edit in `$EDITOR`, and where the result goes. The UI loop runs the editor (it owns
/// the terminal), then hands the text back with `App::edited`.
#[derive(Debug, Clone, PartialEq)]
pub struct EditorRequest {
    pub task: String,
    pub field: Field,
    pub text: String,
}

impl App {
    /// The run's debugger, when this window runs the run (not when it follows or replays one).
    pub fn control(&self) -> Option<&Arc<Control>> {
        self.control.as_ref().filter(|_| self.live.as_ref().is_some_and(|l| l.owned))
    }

    /// The task a debugger key acts on: the task view's, or the sweep table's selected one.
    fn debug_target(&self) -> Option<String> {
        match self.screen() {
            Screen::Task(id) => Some(id.clone()),
            Screen::Sweep => {
                let rows = self.visible_tasks();
                rows.get(self.sweep.selected).map(|&i| self.model.tasks[i].id.clone())
            }
            _ => None,
        }
    }

    /// Whether a task the keys act on is paused (then `s` steps rather than sorts).
    pub fn target_paused(&self) -> bool {
        self.debug_target()
            .and_then(|id| self.model.task(&id).map(|t| t.paused.is_some()))
            .unwrap_or(false)
    }

    pub(super) fn debug_action(&mut self, action: DebugAction) {
        let Some(control) = self.control().cloned() else {
            self.status = Some("no debugger: this window does not run the run".into());
            return;
        };
        let target = self.debug_target();
        let in_task_view = matches!(self.screen(), Screen::Task(_));
        let command = match action {
            DebugAction::Pause => Command::Pause { task: None },
            DebugAction::Continue if in_task_view => Command::Continue { task: target },
            DebugAction::Continue => Command::Continue { task: None },
            DebugAction::Step => Command::Step { task: target },
            DebugAction::Skip => Command::Skip { task: target },
            DebugAction::Abort => Command::Abort { task: target },
            DebugAction::DropHit => Command::DropHit { task: target },
            DebugAction::Breakpoints => {
                self.breakpoints_text = control.breakpoints().iter().map(|b| b.name()).collect::<Vec<_>>().join(",");
                self.modals.push(Modal::Filter(Filter::Breakpoints));
                return;
            }
            DebugAction::Edit | DebugAction::EditGuidance => {
                self.editor = target.and_then(|task| self.edit_request(task, action == DebugAction::EditGuidance));
                if self.editor.is_none() {
                    self.status = Some("nothing to edit: the task is not paused".into());
                }
                return;
            }
        };
        match control.command(command) {
            Ok(()) if action == DebugAction::Pause => self.status = Some("pausing every task before its next step".into()),
            Ok(()) => {}
            Err(e) => self.status = Some(e),
        }
    }

    fn edit_request(&self, task: String, guidance: bool) -> Option<EditorRequest> {
        let view = self.model.task(&task)?;
        let (_, pending) = view.paused.as_ref()?;
        let (field, text) = if guidance {
            (Field::Guidance, view.latest_guidance().unwrap_or_default().to_string())
        } else {
            match pending {
                Pending::Agent { messages, .. } => (
                    Field::Messages,
                    messages
                        .iter()
                        .rev()
                        .find(|m| m.role == crate::llm::Role::User)
                        .map(|m| m.content.clone())
                        .unwrap_or_default(),
                ),
                Pending::Tests { code, .. } | Pending::Trace { code, .. } => (Field::Code, code.clone()),
                Pending::Memory { query } => (Field::Query, query.clone()),
                Pending::Store { .. } => return None,
            }
        };
        Some(EditorRequest { task, field, text })
    }

    /// The text the editor left (`None`: it failed or changed nothing), sent as an edit.
    pub fn edited(&mut self, request: EditorRequest, text: Option<String>) {
        let Some(text) = text.filter(|t| *t != request.text) else {
            self.status = Some("no change".into());
            return;
        };
        let Some(control) = self.control().cloned() else { return };
        let command = Command::Edit {
            field: request.field,
            value: serde_json::Value::String(text),
            task: Some(request.task),
        };
        if let Err(e) = control.command(command) {
            self.status = Some(e);
        }
    }

    /// The typed breakpoints, set when the input is closed with Enter.
    pub(super) fn set_breakpoints(&mut self) {
        let Some(control) = self.control().cloned() else { return };
        let set = std::mem::take(&mut self.breakpoints_text);
        self.status = Some(match control.command(Command::Break { set: set.clone() }) {
            Ok(()) if set.trim().is_empty() => "breakpoints cleared".into(),
            Ok(()) => format!("breakpoints: {set}"),
            Err(e) => e,
        });
    }
}

/// Runs `$VISUAL`/`$EDITOR` (else `vi`) on the text, as git does; `None` if it failed.
pub fn run_editor(text: &str) -> Option<String> {
    let file = tempfile::Builder::new().prefix("rgd-edit-").suffix(".txt").tempfile().ok()?;
    std::fs::write(file.path(), text).ok()?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    // The editor's command line may hold arguments ("code --wait"): the shell splits it.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("rgd-editor")
        .arg(file.path())
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    std::fs::read_to_string(file.path()).ok()
}
