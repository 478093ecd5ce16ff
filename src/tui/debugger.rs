//! The debugger's keys in the live views: pause, continue, step, skip, abort, breakpoints, and
//! edits in `$EDITOR` (as git does). Commands go to the run's `Control`; what they change comes
//! back as events (`paused`, `intervened`), like everything else the views show.

use crate::engine::{Command, Field, Pending};

use super::model::TaskView;

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

/// The command a debugger key sends, for the task the key acts on (`None`: keys that open
/// something first, an editor or the breakpoint input).
pub fn command_for(action: DebugAction, target: Option<String>, in_task_view: bool) -> Option<Command> {
    Some(match action {
        DebugAction::Pause => Command::Pause { task: None },
        DebugAction::Continue if in_task_view => Command::Continue { task: target },
        DebugAction::Continue => Command::Continue { task: None },
        DebugAction::Step => Command::Step { task: target },
        DebugAction::Skip => Command::Skip { task: target },
        DebugAction::Abort => Command::Abort { task: target },
        DebugAction::DropHit => Command::DropHit { task: target },
        DebugAction::Breakpoints | DebugAction::Edit | DebugAction::EditGuidance => return None,
    })
}

/// What `e` (or `G`, for the guidance) opens in the editor for a paused task.
pub fn edit_request(view: &TaskView, guidance: bool) -> Option<EditorRequest> {
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
    Some(EditorRequest {
        task: view.id.clone(),
        field,
        text,
    })
}

/// The edit the editor's text makes (`None`: the editor failed or nothing changed).
pub fn edit_command(request: EditorRequest, text: Option<String>) -> Option<Command> {
    let text = text.filter(|t| *t != request.text)?;
    Some(Command::Edit {
        field: request.field,
        value: serde_json::Value::String(text),
        task: Some(request.task),
    })
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
