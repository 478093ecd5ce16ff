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
    /// Whether the code pane was scrolled by hand; until it is, it starts at the entry point
    /// (`code_anchor`), and again at each iteration picked.
    pub code_scrolled: bool,
    pub zoom: bool,
    pub show_diff: bool,
}

impl Default for TaskState {
    fn default() -> Self {
        TaskState {
            iteration: None,
            focus: Pane::Code,
            scroll: [0; 5],
            code_scrolled: false,
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
                self.code_scrolled = false;
            }
            Action::Up if focus == Pane::Timeline => self.handle(Action::Left, task, page, out),
            Action::Down if focus == Pane::Timeline => self.handle(Action::Right, task, page, out),
            Action::Up => self.scroll(focus, -1, task),
            Action::Down => self.scroll(focus, 1, task),
            Action::PageUp => self.scroll(focus, -(page as i32), task),
            Action::PageDown => self.scroll(focus, page as i32, task),
            Action::Top => self.jump(focus, 0),
            Action::Bottom => self.jump(focus, u16::MAX / 2),
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

    /// The pane's first line shown: the code pane's is the entry point's until it is scrolled.
    pub fn scroll_of(&self, pane: Pane, task: Option<&TaskView>) -> u16 {
        match (pane, task) {
            (Pane::Code, Some(task)) if !self.code_scrolled => self.code_anchor(task),
            _ => self.scroll[pane.index()],
        }
    }

    pub fn scroll(&mut self, pane: Pane, by: i32, task: Option<&TaskView>) {
        let from = self.scroll_of(pane, task);
        self.jump(pane, (from as i32 + by).clamp(0, u16::MAX as i32 / 2) as u16);
    }

    /// Takes the code pane's scroll from where it was drawn when the view clamped it (the last
    /// page, or the entry point near the file's end), so the next key moves what is seen.
    pub fn settle(&mut self, code_first: Option<u16>, task: Option<&TaskView>) {
        if let Some(first) = code_first.filter(|first| self.scroll_of(Pane::Code, task) > *first) {
            self.jump(Pane::Code, first);
        }
    }

    fn jump(&mut self, pane: Pane, to: u16) {
        self.scroll[pane.index()] = to;
        self.code_scrolled |= pane == Pane::Code;
    }

    /// The wheel over a pane focuses and scrolls it.
    pub fn wheel(&mut self, pane: Option<Pane>, down: bool, task: Option<&TaskView>) {
        if let Some(pane) = pane {
            self.focus = pane;
            self.scroll(pane, if down { 3 } else { -3 }, task);
        }
    }

    /// Where the shown iteration's code pane starts: two lines above the entry point's `def`
    /// (a repository run's code is the whole file, which opens with imports or a licence
    /// header), or at the top when the code does not define it.
    pub fn code_anchor(&self, task: &TaskView) -> u16 {
        let code = self.shown_iteration(task).and_then(|i| task.iterations[i].code.as_deref());
        let name = task.entry_point.rsplit('.').next().unwrap_or_default();
        let Some(code) = code.filter(|_| !name.is_empty()) else {
            return 0;
        };
        let defines = |line: &str| {
            let line = line.trim_start();
            let line = line.strip_prefix("async ").unwrap_or(line);
            line.strip_prefix("def ")
                .or_else(|| line.strip_prefix("class "))
                .is_some_and(|rest| rest.strip_prefix(name).is_some_and(|after| after.starts_with(['(', ':', ' '])))
        };
        let at = code.lines().position(defines).unwrap_or(0);
        u16::try_from(at.saturating_sub(2)).unwrap_or(u16::MAX / 2)
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
