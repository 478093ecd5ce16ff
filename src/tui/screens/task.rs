//! The task screen: one task's iterations in panes (timeline, guidance, code, tests, analysis),
//! which iteration is shown, the focused pane, scrolling, zoom and the diff toggle.

use super::super::action::Action;
use super::super::model::TaskView;
use super::Outbox;

/// The panes of the task view, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Timeline,
    Guidance,
    Code,
    Tests,
    Analysis,
}

impl Pane {
    pub const ALL: [Pane; 5] = [Pane::Timeline, Pane::Guidance, Pane::Code, Pane::Tests, Pane::Analysis];

    /// The pane's title under a strategy: each names its calls by its own roles (self-planning's
    /// Guide call is its plan, LDB's Feedback call its block verdicts).
    pub fn title_for(self, strategy: &str) -> &'static str {
        match (self, strategy) {
            (Pane::Guidance, "self-planning") => "Plan",
            (Pane::Guidance, "reflexion") => "Own unit tests (written by the model)",
            (Pane::Guidance, "mapcoder") => "Plan (from a recalled problem)",
            (Pane::Tests, "reflexion") => "Tests (own tests steer; visible tests judge, unseen)",
            (Pane::Analysis, "reflexion") => "Self-reflection",
            (Pane::Analysis, "mapcoder") => "Plan confidence",
            (Pane::Guidance, "codesim") => "Plan (from a self-recalled example, simulated before coding)",
            (Pane::Analysis, "codesim") => "Plan simulation",
            (Pane::Guidance, "lpw") => "Plan (verified on the visible tests before any code)",
            (Pane::Analysis, "lpw") => "Verification, its check, explanation, analysis",
            (Pane::Guidance, "mgdebugger") => "Unit tests of each subfunction (written by the model)",
            (Pane::Analysis, "mgdebugger") => "Analysis (none: each repair simulates in its own answer)",
            (Pane::Guidance, "direct" | "cot" | "self-debug" | "ldb") => "Guidance (none in this strategy)",
            (Pane::Analysis, "ldb") => "Block verdicts (on a real trace)",
            (Pane::Analysis, "self-debug" | "direct" | "cot" | "self-planning") => "Analysis (none in this strategy)",
            _ => self.title(),
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Timeline => "Iterations",
            Pane::Guidance => "Guidance",
            Pane::Code => "Code",
            Pane::Tests => "Visible tests",
            Pane::Analysis => "Feedback analysis",
        }
    }

    fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }
}

#[derive(Debug)]
pub struct TaskState {
    /// Selected iteration (0-based); `None` follows the newest one.
    pub iteration: Option<usize>,
    pub focus: Pane,
    pub scroll: [u16; 5],
    pub zoom: bool,
    pub show_diff: bool,
}

impl Default for TaskState {
    fn default() -> Self {
        TaskState {
            iteration: None,
            focus: Pane::Code,
            scroll: [0; 5],
            zoom: false,
            show_diff: false,
        }
    }
}

impl TaskState {
    /// The iteration shown (0-based), following the newest unless one was picked.
    pub fn shown_iteration(&self, task: &TaskView) -> Option<usize> {
        let last = task.iterations.len().checked_sub(1)?;
        Some(self.iteration.map_or(last, |i| i.min(last)))
    }

    pub fn handle(&mut self, action: Action, task: Option<&TaskView>, page: usize, out: &mut Outbox) {
        let iterations = task.map_or(0, |t| t.iterations.len());
        let focus = self.focus;
        match action {
            Action::NextPane => self.focus = Pane::ALL[(focus.index() + 1) % Pane::ALL.len()],
            Action::PrevPane => self.focus = Pane::ALL[(focus.index() + Pane::ALL.len() - 1) % Pane::ALL.len()],
            Action::Left | Action::Right => {
                let Some(current) = task.and_then(|t| self.shown_iteration(t)) else {
                    return;
                };
                let next = if action == Action::Left {
                    current.saturating_sub(1)
                } else {
                    (current + 1).min(iterations.saturating_sub(1))
                };
                // Back at the newest: follow new iterations again.
                self.iteration = (next + 1 < iterations).then_some(next);
                self.scroll = [0; 5];
            }
            Action::Up if focus == Pane::Timeline => self.handle(Action::Left, task, page, out),
            Action::Down if focus == Pane::Timeline => self.handle(Action::Right, task, page, out),
            Action::Up => self.scroll(focus, -1),
            Action::Down => self.scroll(focus, 1),
            Action::PageUp => self.scroll(focus, -(page as i32)),
            Action::PageDown => self.scroll(focus, page as i32),
            Action::Top => self.scroll[focus.index()] = 0,
            Action::Bottom => self.scroll[focus.index()] = u16::MAX / 2,
            Action::ToggleDiff => self.show_diff = !self.show_diff,
            Action::Zoom => self.zoom = !self.zoom,
            Action::WriteCode => {
                if let Some(task) = task {
                    self.write_code(task, out);
                }
            }
            _ => {}
        }
    }

    pub fn scroll(&mut self, pane: Pane, by: i32) {
        let s = &mut self.scroll[pane.index()];
        *s = (*s as i32 + by).clamp(0, u16::MAX as i32 / 2) as u16;
    }

    /// The wheel over a pane focuses and scrolls it.
    pub fn wheel(&mut self, pane: Option<Pane>, down: bool) {
        if let Some(pane) = pane {
            self.focus = pane;
            self.scroll(pane, if down { 3 } else { -3 });
        }
    }

    /// The shown iteration's code, written to `./<task>_iter<k>.py`.
    fn write_code(&self, task: &TaskView, out: &mut Outbox) {
        let Some(i) = self.shown_iteration(task) else { return };
        let Some(code) = task.iterations[i].code.clone() else {
            out.status("this iteration has no code");
            return;
        };
        let name = format!("{}_iter{}.py", task.id.replace(['/', ' '], "_"), i + 1);
        out.status(match std::fs::write(&name, code) {
            Ok(()) => format!("wrote {name}"),
            Err(e) => format!("cannot write {name}: {e}"),
        });
    }
}
