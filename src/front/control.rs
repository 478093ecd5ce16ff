//! Debugger commands from stdin for headless runs: JSON lines (`--control stdio`, for scripts and
//! editors' plugins) or short words typed at a terminal (`c`, `s`, `p`, `skip`, `abort`,
//! `b before:tests`, `edit code FILE`). Bad lines become `error` events; nothing here can stop
//! the run.

use std::io::BufRead;
use std::sync::Arc;

use crate::engine::{Command, Control, Event, EventBus, Field};

/// Reads commands until stdin closes. A thread of its own: a blocking read of a terminal cannot
/// be cancelled, and a runtime must never wait on one to shut down.
pub fn spawn_stdin(control: Arc<Control>, bus: Arc<EventBus>) {
    let spawned = std::thread::Builder::new().name("rgd-control".into()).spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { return };
            if line.trim().is_empty() {
                continue;
            }
            if let Err(message) = parse(&line).and_then(|command| control.command(command)) {
                bus.emit(Event::ControlError { message });
            }
        }
    });
    if let Err(e) = spawned {
        tracing::error!("cannot read debugger commands: {e}");
    }
}

/// One line: a JSON command, or the short form.
pub fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    if line.starts_with('{') {
        return serde_json::from_str(line).map_err(|e| format!("bad command {line:?}: {e}"));
    }
    let mut words = line.splitn(3, char::is_whitespace);
    let verb = words.next().unwrap_or_default();
    let (arg, rest) = (words.next(), words.next());
    let task = arg.map(str::to_string);
    Ok(match verb {
        "c" | "continue" => Command::Continue { task },
        "s" | "step" => Command::Step { task },
        "p" | "pause" => Command::Pause { task },
        "skip" => Command::Skip { task },
        "abort" => Command::Abort { task },
        "drop-hit" => Command::DropHit { task },
        "b" | "break" => Command::Break {
            set: arg.unwrap_or_default().to_string(),
        },
        "e" | "edit" => {
            let field: Field = serde_json::from_value(serde_json::Value::String(arg.unwrap_or_default().into()))
                .map_err(|_| "edit FIELD FILE: FIELD is code, messages, guidance or query".to_string())?;
            let file = rest.ok_or("edit FIELD FILE: the new value is read from FILE")?.trim();
            let value = std::fs::read_to_string(file).map_err(|e| format!("edit: reading {file}: {e}"))?;
            Command::Edit {
                field,
                value: serde_json::Value::String(value),
                task: None,
            }
        }
        _ => {
            return Err(format!(
                "unknown command {line:?}: c(ontinue), s(tep), p(ause), skip, abort, drop-hit, b(reak) SPEC, edit FIELD FILE, or a JSON command"
            ));
        }
    })
}
