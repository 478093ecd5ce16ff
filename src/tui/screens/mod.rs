//! The screens and panels of the TUI as components: each owns its state and turns the actions it
//! is given into changes of that state, and into `AppEvent`s for everything beyond it (open a
//! task, show a popup, say something on the status line, start a background job). `App` only
//! routes actions to the component on screen and applies the events (`app.rs`).

pub mod compare;
pub mod debugger;
pub mod home;
pub mod memory;
pub mod sweep;
pub mod task;

use super::app_event::{AppEvent, JobSender};

/// What a component asks of the rest of the app: events `App` applies as soon as the component
/// returns, and background jobs whose events come back through the jobs' channel.
pub struct Outbox {
    events: std::collections::VecDeque<AppEvent>,
    jobs: JobSender,
}

impl Outbox {
    pub fn new(jobs: JobSender) -> Outbox {
        Outbox {
            events: Default::default(),
            jobs,
        }
    }

    pub fn send(&mut self, event: AppEvent) {
        self.events.push_back(event);
    }

    pub fn status(&mut self, text: impl Into<String>) {
        self.send(AppEvent::Status(Some(text.into())));
    }

    /// Runs `job` on a blocking thread; its event comes back through the jobs' channel. Without a
    /// runtime (views drawn in tests) the job runs in place and its event is applied next.
    pub fn spawn(&mut self, job: impl FnOnce() -> AppEvent + Send + 'static) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let jobs = self.jobs.clone();
                runtime.spawn_blocking(move || {
                    let _ = jobs.send(job());
                });
            }
            Err(_) => self.events.push_back(job()),
        }
    }

    pub fn next(&mut self) -> Option<AppEvent> {
        self.events.pop_front()
    }

    pub fn job_sender(&self) -> JobSender {
        self.jobs.clone()
    }
}

/// A list selection moved by `action` over `n` rows (`page` rows a page); `None` when the action
/// does not move a selection.
pub fn moved(selected: usize, action: &super::action::Action, n: usize, page: usize) -> Option<usize> {
    use super::action::Action;
    let last = n.saturating_sub(1);
    Some(match action {
        Action::Up => selected.saturating_sub(1),
        Action::Down => (selected + 1).min(last),
        Action::PageUp => selected.saturating_sub(page),
        Action::PageDown => (selected + page).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => return None,
    })
}

/// Typing into a text field from a `Modal::Filter`: the field after `action`, and whether the
/// input ended (`Some(keep)`).
pub fn typed(field: &mut String, action: &super::action::Action) -> Option<bool> {
    use super::action::Action;
    match action {
        Action::FilterChar(c) => field.push(*c),
        Action::FilterBackspace => {
            field.pop();
        }
        Action::EndFilter { keep } => return Some(*keep),
        _ => {}
    }
    None
}
