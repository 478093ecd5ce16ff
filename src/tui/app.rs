//! Application state: which screen is open, selections, scroll positions, and where events come
//! from (a live run or a replay). Every change goes through `App::handle`, one action at a time;
//! the views only read this state (they record where they drew things, for the mouse).

use std::path::PathBuf;
use std::sync::Arc;

use ratatui::layout::Rect;

use super::app_event::{AppEvent, JobReceiver, JobSender};
use super::debugger::{self, DebugAction};
use super::form::Form;
use super::modal::{Filter, Flip, Modal};
use super::model::{RunModel, TaskStage, TaskView};
use super::replay::{Replay, ReplayAction};
use super::run_list::RunRow;
use super::source::LiveRun;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Home,
    Sweep,
    Task(String),
    Memory,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    Order,
    Status,
    Iterations,
    Time,
}

impl SortBy {
    fn next(self) -> SortBy {
        match self {
            SortBy::Order => SortBy::Status,
            SortBy::Status => SortBy::Iterations,
            SortBy::Iterations => SortBy::Time,
            SortBy::Time => SortBy::Order,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortBy::Order => "order",
            SortBy::Status => "status",
            SortBy::Iterations => "iterations",
            SortBy::Time => "time",
        }
    }
}

#[derive(Debug, Default)]
pub struct SweepState {
    pub selected: usize,
    pub filter: String,
    pub sort: Option<SortBy>,
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

/// Where the views drew things last frame, for mouse clicks and page sizes.
#[derive(Debug, Default, Clone)]
pub struct Layout {
    pub list: Rect,
    pub list_offset: usize,
    pub panes: Vec<(Pane, Rect)>,
}

/// What a key, click or timer asks for. Input handling produces these; `App::handle` applies them.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Left,
    Right,
    Enter,
    Back,
    Quit,
    NextPane,
    PrevPane,
    Help,
    ToggleDiff,
    Zoom,
    WriteCode,
    StartFilter,
    FilterChar(char),
    FilterBackspace,
    EndFilter {
        keep: bool,
    },
    CycleSort,
    NewRun,
    Refresh,
    OpenMemory,
    Confirm(bool),
    ScrollAt {
        column: u16,
        row: u16,
        down: bool,
    },
    ClickAt {
        column: u16,
        row: u16,
    },
    Form(super::form::FormAction),
    Replay(ReplayAction),
    /// Mark or unmark the selected run (home).
    Mark,
    /// Compare the marked runs (home).
    Compare,
    /// The next / previous search hit in a text popup.
    NextHit,
    PrevHit,
    /// A debugger key (live runs this window runs).
    Debug(DebugAction),
    /// Replay: fork the shown task at the shown iteration.
    Fork,
}

/// Everything a start-a-run form needs from the CLI layer: it turns a request into a prepared
/// sweep (or says why not).
pub type Launcher = Arc<dyn Fn(super::form::RunRequest) -> anyhow::Result<(crate::engine::Sweep, bool)> + Send + Sync>;

/// A fork of the replayed run (`f`): its task from the shown iteration on.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkRequest {
    pub run: String,
    pub task: String,
    /// The first iteration run live (1-based).
    pub at: u32,
}

/// Turns a fork request into a prepared run (the CLI layer does, as `rgd fork` would).
pub type Forker = Arc<dyn Fn(ForkRequest) -> anyhow::Result<(crate::engine::Sweep, bool)> + Send + Sync>;

pub struct App {
    pub screens: Vec<Screen>,
    /// Popups and text entry above the screen; the top one takes the keys.
    pub modals: Vec<Modal>,
    pub model: RunModel,
    pub live: Option<LiveRun>,
    pub replay: Option<Replay>,
    pub sweep: SweepState,
    pub task: TaskState,
    pub runs: Vec<RunRow>,
    pub run_selected: usize,
    pub launcher: Option<Launcher>,
    pub forker: Option<Forker>,
    pub home_info: Vec<(String, String)>,
    pub home_dir: Option<PathBuf>,
    /// Runs marked on the home screen for a comparison, in marking order.
    pub marked: Vec<String>,
    /// The search across runs being typed on the home screen.
    pub run_query: String,
    pub status: Option<String>,
    pub quit: bool,
    /// Set when the user chose to stop a live run.
    pub stopped: bool,
    pub layout: Layout,
    /// Lines a page scroll moves (the last drawn list height).
    pub page: usize,
    pub code_cache: super::highlighted::CodeCache,
    /// True while the form's run is being prepared.
    pub launching: bool,
    pub memory: Option<super::memory_browser::MemoryBrowser>,
    /// The debugger of the run this window runs.
    pub control: Option<Arc<crate::engine::Control>>,
    /// The breakpoints being typed.
    pub breakpoints_text: String,
    /// An edit for the UI loop to open in `$EDITOR`.
    pub editor: Option<debugger::EditorRequest>,
    /// `rgd fix --tui`: the fix's panel beside the attempt being watched.
    pub fix: Option<super::fix_panel::FixPanel>,
    /// Background jobs report here; the UI loop takes `job_events` and feeds `apply_event`.
    jobs: JobSender,
    job_events: Option<JobReceiver>,
}

impl App {
    pub fn new(first: Screen) -> App {
        let (jobs, job_events) = tokio::sync::mpsc::unbounded_channel();
        App {
            screens: vec![first],
            modals: Vec::new(),
            model: RunModel::new(),
            live: None,
            replay: None,
            sweep: SweepState::default(),
            task: TaskState::default(),
            runs: Vec::new(),
            run_selected: 0,
            launcher: None,
            home_info: Vec::new(),
            home_dir: None,
            marked: Vec::new(),
            run_query: String::new(),
            status: None,
            quit: false,
            stopped: false,
            layout: Layout::default(),
            page: 10,
            code_cache: Default::default(),
            launching: false,
            forker: None,
            control: None,
            breakpoints_text: String::new(),
            editor: None,
            memory: None,
            fix: None,
            jobs,
            job_events: Some(job_events),
        }
    }

    /// Where events for `apply_event` may be sent from outside the UI loop.
    pub fn job_sender(&self) -> JobSender {
        self.jobs.clone()
    }

    /// The receiving end of the background jobs' channel (taken once, by the UI loop).
    pub fn take_job_events(&mut self) -> Option<JobReceiver> {
        self.job_events.take()
    }

    /// Runs `job` on a blocking thread; its event comes back through the jobs' channel. Without a
    /// runtime (views drawn in tests) the job runs in place.
    fn spawn(&mut self, job: impl FnOnce() -> AppEvent + Send + 'static) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let jobs = self.jobs.clone();
                runtime.spawn_blocking(move || {
                    let _ = jobs.send(job());
                });
            }
            Err(_) => {
                let event = job();
                self.apply_event(event);
            }
        }
    }

    /// A background job's result enters the state here, and only here.
    pub fn apply_event(&mut self, event: AppEvent) {
        match event {
            AppEvent::Launched(prepared) => self.launched(prepared),
            AppEvent::Fix(event) => self.fix_event(event),
            AppEvent::Compared(Ok(comparison)) => {
                self.status = None;
                let mut lines: Vec<String> = crate::analysis::render(&comparison).lines().map(str::to_string).collect();
                // The flipped tasks of each pair, one a line, to select (n / N) and open (Enter).
                let (mut targets, mut flips) = (Vec::new(), Vec::new());
                lines.push(String::new());
                lines.push("flipped tasks (n / N select, Enter shows both runs on it)".into());
                for p in &comparison.paired {
                    let by = [(&p.first, &p.only_first), (&p.other, &p.only_other)];
                    for (winner, ids) in by {
                        for id in ids {
                            targets.push(lines.len() as u16);
                            lines.push(format!("  {id:<16} solved only by {}", winner.get(..10).unwrap_or(winner)));
                            flips.push(Flip {
                                task: id.clone(),
                                runs: [p.first.clone(), p.other.clone()],
                            });
                        }
                    }
                }
                self.modals.push(Modal::Text {
                    title: format!(" {} runs compared (↑↓ scroll, Esc closes) ", comparison.runs.len()),
                    lines,
                    scroll: 0,
                    targets,
                    selected: None,
                    flips,
                });
            }
            AppEvent::FlipShown(Ok(lines)) => {
                self.status = None;
                self.modals.push(Modal::Text {
                    title: " one task in the compared runs (Esc closes) ".into(),
                    lines,
                    scroll: 0,
                    targets: Vec::new(),
                    selected: None,
                    flips: Vec::new(),
                });
            }
            AppEvent::FlipShown(Err(e)) => self.status = Some(format!("cannot show the task: {e}")),
            AppEvent::Compared(Err(e)) => self.status = Some(format!("cannot compare: {e}")),
            AppEvent::RunsSearched { query, hits: Ok(hits) } => {
                self.status = None;
                let lines = hits
                    .iter()
                    .flat_map(|h| [format!("{}  {}  {}", h.run_id, h.task_id, h.kind), format!("    {}", h.snippet)])
                    .collect();
                self.modals.push(Modal::Text {
                    title: format!(" {} hits for {query:?} (n / N next / previous, Esc closes) ", hits.len()),
                    lines,
                    scroll: 0,
                    targets: (0..hits.len() as u16).map(|i| 2 * i).collect(),
                    selected: None,
                    flips: Vec::new(),
                });
            }
            AppEvent::RunsSearched { hits: Err(e), .. } => self.status = Some(format!("search failed: {e}")),
            AppEvent::MemoryOpened(opened) => {
                if let Some(b) = &mut self.memory {
                    match opened {
                        Ok((pool, entries)) => {
                            b.pool = Some(pool);
                            b.entries = entries;
                        }
                        Err(e) => b.error = Some(format!("{e:#}")),
                    }
                }
                self.load_uses();
            }
            AppEvent::MemorySearched { query, hits } => {
                if let Some(b) = self.memory.as_mut().filter(|b| b.query == query) {
                    match hits {
                        Ok(hits) => b.hits = Some(hits),
                        Err(e) => b.error = Some(format!("{e:#}")),
                    }
                    b.selected = 0;
                }
                self.load_uses();
            }
            AppEvent::MemoryUses { entry_id, uses } => {
                if let Some(b) = &mut self.memory {
                    match uses {
                        Ok(uses) => b.uses = Some((entry_id, uses)),
                        Err(e) => b.error = Some(format!("{e:#}")),
                    }
                }
            }
            AppEvent::ReplayLoaded { run_id, replay } => match replay {
                Ok(mut replay) => {
                    self.model = replay.model_at_end();
                    self.replay = Some(replay);
                    self.sweep = SweepState::default();
                    self.screens.push(Screen::Sweep);
                }
                Err(e) => self.status = Some(format!("cannot open run {run_id}: {e:#}")),
            },
            AppEvent::RunsListed(runs) => {
                self.runs = runs;
                self.run_selected = self.run_selected.min(self.runs.len().saturating_sub(1));
            }
        }
    }

    /// The top popup, if any.
    pub fn modal(&self) -> Option<&Modal> {
        self.modals.last()
    }

    /// The start-a-run form, if open.
    pub fn form(&self) -> Option<&Form> {
        self.modals.iter().find_map(|m| match m {
            Modal::Form(f) => Some(&**f),
            _ => None,
        })
    }

    pub fn form_mut(&mut self) -> Option<&mut Form> {
        self.modals.iter_mut().find_map(|m| match m {
            Modal::Form(f) => Some(&mut **f),
            _ => None,
        })
    }

    /// Whether the user is typing into `filter` now.
    pub fn filtering(&self, filter: Filter) -> bool {
        matches!(self.modal(), Some(Modal::Filter(f)) if *f == filter)
    }

    #[allow(
        clippy::expect_used,
        reason = "the home screen is pushed at start and never popped (pop keeps the last screen)"
    )]
    pub fn screen(&self) -> &Screen {
        self.screens.last().expect("there is always a screen")
    }

    /// True while a run started by this process is still working.
    pub fn run_is_live(&self) -> bool {
        self.live.as_ref().is_some_and(|l| l.owned && !l.is_done())
    }

    /// The sweep grid's rows after filter and sort: indexes into `model.tasks`.
    pub fn visible_tasks(&self) -> Vec<usize> {
        let needle = self.sweep.filter.to_lowercase();
        let mut rows: Vec<usize> = (0..self.model.tasks.len())
            .filter(|&i| {
                let t = &self.model.tasks[i];
                needle.is_empty() || t.id.to_lowercase().contains(&needle) || t.stage.label().contains(&needle)
            })
            .collect();
        let tasks = &self.model.tasks;
        match self.sweep.sort {
            None | Some(SortBy::Order) => {}
            Some(SortBy::Status) => rows.sort_by_key(|&i| tasks[i].stage),
            Some(SortBy::Iterations) => rows.sort_by_key(|&i| std::cmp::Reverse(tasks[i].iterations.len())),
            Some(SortBy::Time) => rows.sort_by(|&a, &b| {
                let secs = |t: &TaskView| t.result.as_ref().map(|r| r.seconds).unwrap_or(0.0);
                secs(&tasks[b]).total_cmp(&secs(&tasks[a]))
            }),
        }
        rows
    }

    pub fn current_task(&self) -> Option<&TaskView> {
        match self.screen() {
            Screen::Task(id) => self.model.task(id),
            _ => None,
        }
    }

    /// The iteration shown in the task view (0-based), following the newest unless one was picked.
    pub fn shown_iteration(&self) -> Option<usize> {
        let task = self.current_task()?;
        let last = task.iterations.len().checked_sub(1)?;
        Some(self.task.iteration.map_or(last, |i| i.min(last)))
    }

    pub fn handle(&mut self, action: Action) {
        if !self.modals.is_empty() {
            self.modal_action(action);
            return;
        }
        match action {
            Action::Help => self.modals.push(Modal::Help),
            Action::Quit => self.request_quit(),
            Action::Back if *self.screen() == Screen::Memory && self.memory.as_ref().is_some_and(|b| !b.query.is_empty()) => {
                if let Some(b) = &mut self.memory {
                    b.query.clear();
                }
                self.search_memory();
            }
            Action::Back => {
                if self.screens.len() > 1 {
                    if self.screens.pop() == Some(Screen::Memory) {
                        // Closing the browser lets go of the pool (its ownership, if no run of
                        // this process holds it, passes to the next rgd process that asks).
                        self.memory = None;
                    }
                    if *self.screen() == Screen::Home {
                        self.refresh_runs();
                    }
                } else {
                    self.request_quit();
                }
            }
            Action::Replay(r) => self.replay_action(r),
            Action::Debug(d) => self.debug_action(d),
            Action::Fork => self.fork_shown(),
            Action::ScrollAt { column, row, down } => self.scroll_at(column, row, down),
            Action::ClickAt { column, row } => self.click_at(column, row),
            other => match self.screen().clone() {
                Screen::Home => self.home_action(other),
                Screen::Sweep => self.sweep_action(other),
                Screen::Task(_) => self.task_action(other),
                Screen::Memory => self.memory_action(other),
            },
        }
    }

    /// The top popup takes the action.
    fn modal_action(&mut self, action: Action) {
        let Some(top) = self.modals.last_mut() else { return };
        match (top, action) {
            (Modal::ConfirmStop, Action::Confirm(yes)) => {
                self.modals.pop();
                if yes {
                    self.stopped = true;
                    if let Some(live) = &mut self.live {
                        live.stop();
                    }
                    self.quit = true;
                }
            }
            (
                Modal::Text {
                    scroll, targets, selected, ..
                },
                action @ (Action::NextHit | Action::PrevHit),
            ) if !targets.is_empty() => {
                let n = targets.len();
                let next = match (*selected, action) {
                    (None, Action::NextHit) => 0,
                    (None, _) => n - 1,
                    (Some(i), Action::NextHit) => (i + 1) % n,
                    (Some(i), _) => (i + n - 1) % n,
                };
                *selected = Some(next);
                *scroll = targets[next].saturating_sub(2);
            }
            (Modal::Text { selected, flips, .. }, Action::Enter) => {
                if let Some(flip) = selected.and_then(|i| flips.get(i)).cloned() {
                    self.show_flip(flip);
                }
            }
            (Modal::Text { scroll, .. }, Action::Up) => *scroll = scroll.saturating_sub(1),
            (Modal::Text { scroll, .. }, Action::Down) => *scroll = scroll.saturating_add(1),
            (Modal::Text { scroll, .. }, Action::PageUp) => *scroll = scroll.saturating_sub(10),
            (Modal::Text { scroll, .. }, Action::PageDown) => *scroll = scroll.saturating_add(10),
            (Modal::Text { .. }, Action::Back | Action::Quit) => {
                self.modals.pop();
            }
            (Modal::Help, Action::Help | Action::Back | Action::Quit)
            | (Modal::ConfirmStop | Modal::Form(_), Action::Back | Action::Quit) => {
                self.modals.pop();
            }
            (Modal::Form(form), Action::Form(a)) => {
                if let Some(request) = form.apply(a) {
                    self.launch(request);
                }
            }
            (Modal::Filter(Filter::Tasks), action) => {
                match action {
                    Action::FilterChar(c) => self.sweep.filter.push(c),
                    Action::FilterBackspace => {
                        self.sweep.filter.pop();
                    }
                    Action::EndFilter { keep } => {
                        self.modals.pop();
                        if !keep {
                            self.sweep.filter.clear();
                        }
                    }
                    _ => {}
                }
                self.sweep.selected = 0;
            }
            (Modal::Filter(Filter::Breakpoints), action) => match action {
                Action::FilterChar(c) => self.breakpoints_text.push(c),
                Action::FilterBackspace => {
                    self.breakpoints_text.pop();
                }
                Action::EndFilter { keep } => {
                    self.modals.pop();
                    if keep {
                        self.set_breakpoints();
                    }
                }
                _ => {}
            },
            (Modal::Filter(Filter::Runs), action) => match action {
                Action::FilterChar(c) => self.run_query.push(c),
                Action::FilterBackspace => {
                    self.run_query.pop();
                }
                Action::EndFilter { keep } => {
                    self.modals.pop();
                    if keep && !self.run_query.trim().is_empty() {
                        self.search_runs();
                    }
                }
                _ => {}
            },
            (Modal::Filter(Filter::Memory), action) => {
                let Some(browser) = &mut self.memory else {
                    self.modals.pop();
                    return;
                };
                match action {
                    Action::FilterChar(c) => browser.query.push(c),
                    Action::FilterBackspace => {
                        browser.query.pop();
                    }
                    Action::EndFilter { keep } => {
                        self.modals.pop();
                        if !keep {
                            browser.query.clear();
                        }
                        self.search_memory();
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn request_quit(&mut self) {
        if self.run_is_live() {
            self.modals.push(Modal::ConfirmStop);
        } else {
            self.quit = true;
        }
    }

    fn home_action(&mut self, action: Action) {
        let n = self.runs.len();
        match action {
            Action::Up => self.run_selected = self.run_selected.saturating_sub(1),
            Action::Down => self.run_selected = (self.run_selected + 1).min(n.saturating_sub(1)),
            Action::Top => self.run_selected = 0,
            Action::Bottom => self.run_selected = n.saturating_sub(1),
            Action::NewRun => {
                if self.run_is_live() {
                    self.status = Some("a run is already live in this window".into());
                } else if self.launcher.is_some() {
                    self.modals.push(Modal::Form(Box::new(Form::new(&self.home_info))));
                }
            }
            Action::Refresh => self.refresh_runs(),
            Action::OpenMemory => self.open_memory(),
            Action::Mark => {
                if let Some(row) = self.runs.get(self.run_selected) {
                    match self.marked.iter().position(|id| *id == row.run_id) {
                        Some(at) => {
                            self.marked.remove(at);
                        }
                        None => self.marked.push(row.run_id.clone()),
                    }
                }
            }
            Action::Compare => self.compare_marked(),
            Action::StartFilter => {
                self.run_query.clear();
                self.modals.push(Modal::Filter(Filter::Runs));
            }
            Action::Enter => {
                if let Some(row) = self.runs.get(self.run_selected) {
                    let id = row.run_id.clone();
                    if row.state == "running" {
                        self.open_follow(&id);
                    } else {
                        self.open_replay(&id);
                    }
                }
            }
            _ => {}
        }
    }

    fn sweep_action(&mut self, action: Action) {
        let rows = self.visible_tasks();
        let n = rows.len();
        let sel = &mut self.sweep.selected;
        match action {
            Action::Up => *sel = sel.saturating_sub(1),
            Action::Down => *sel = (*sel + 1).min(n.saturating_sub(1)),
            Action::PageUp => *sel = sel.saturating_sub(self.page),
            Action::PageDown => *sel = (*sel + self.page).min(n.saturating_sub(1)),
            Action::Top => *sel = 0,
            Action::Bottom => *sel = n.saturating_sub(1),
            Action::StartFilter => self.modals.push(Modal::Filter(Filter::Tasks)),
            Action::CycleSort => self.sweep.sort = Some(self.sweep.sort.unwrap_or(SortBy::Order).next()),
            Action::Enter => {
                if let Some(&i) = rows.get(*sel) {
                    let id = self.model.tasks[i].id.clone();
                    self.open_task(id);
                }
            }
            _ => {}
        }
    }

    fn open_memory(&mut self) {
        let Some(dir) = self.home_dir.clone() else { return };
        if crate::memory::assets::installed().is_none() {
            self.status = Some("no embedding model yet: run `rgd memory setup` (or any run with memory) first".into());
            return;
        }
        self.memory = Some(super::memory_browser::MemoryBrowser::new());
        self.task.scroll = [0; 5];
        self.screens.push(Screen::Memory);
        self.spawn(move || {
            AppEvent::MemoryOpened((|| {
                // Never a download from the browser: only a model already in the cache.
                let assets = crate::memory::assets::installed().ok_or_else(|| anyhow::anyhow!("the embedding model is gone"))?;
                let pool = crate::memory::SharedPool::open_in_home(&dir, &assets)?;
                let entries = pool.entries()?;
                Ok((pool, entries))
            })())
        });
    }

    /// Searches the pool for the browser's query (every entry when it is empty).
    fn search_memory(&mut self) {
        let Some(b) = &mut self.memory else { return };
        b.selected = 0;
        if b.query.trim().is_empty() {
            b.hits = None;
            self.load_uses();
            return;
        }
        let Some(pool) = b.pool.clone() else { return };
        let query = b.query.clone();
        let options = crate::memory::SearchOptions {
            k: 20,
            min_similarity: -1.0,
            ..crate::memory::SearchOptions::default()
        };
        self.spawn(move || {
            let hits = pool.search(&query, &options).map_err(anyhow::Error::from);
            AppEvent::MemorySearched { query, hits }
        });
    }

    /// Who the selected entry was offered to, unless that is already known.
    fn load_uses(&mut self) {
        let Some(b) = &self.memory else { return };
        let (Some(pool), Some(entry_id)) = (b.pool.clone(), b.selected_id()) else {
            return;
        };
        if b.uses_of(&entry_id).is_some() {
            return;
        }
        self.spawn(move || {
            let uses = pool.uses_of(&entry_id).map_err(anyhow::Error::from);
            AppEvent::MemoryUses { entry_id, uses }
        });
    }

    fn memory_action(&mut self, action: Action) {
        let page = self.page;
        let Some(b) = &mut self.memory else { return };
        let n = b.rows().len();
        let before = b.selected;
        match action {
            Action::Up => b.selected = b.selected.saturating_sub(1),
            Action::Down => b.selected = (b.selected + 1).min(n.saturating_sub(1)),
            Action::PageUp => b.selected = b.selected.saturating_sub(page),
            Action::PageDown => b.selected = (b.selected + page).min(n.saturating_sub(1)),
            Action::Top => b.selected = 0,
            Action::Bottom => b.selected = n.saturating_sub(1),
            Action::StartFilter => self.modals.push(Modal::Filter(Filter::Memory)),
            Action::Right => self.task.scroll[0] = self.task.scroll[0].saturating_add(5),
            Action::Left => self.task.scroll[0] = self.task.scroll[0].saturating_sub(5),
            _ => {}
        }
        if self.memory.as_ref().is_some_and(|b| b.selected != before) {
            self.task.scroll[0] = 0;
            self.load_uses();
        }
    }

    /// `rgd fix --tui`: the panel takes the event; a new attempt's run is followed from its
    /// start (its task opened), and the end pops up.
    fn fix_event(&mut self, event: crate::repo::fix_event::FixEvent) {
        let Some(panel) = self.fix.as_mut() else { return };
        match panel.next(event) {
            Some(super::fix_panel::Next::Follow { run_id, task_id }) => {
                let Some(root) = self.home_dir.clone() else { return };
                self.model = RunModel::new();
                self.live = Some(LiveRun::follow(crate::store::Home { root }.run_dir(&run_id)));
                self.modals.clear();
                self.screens = vec![Screen::Sweep];
                self.open_task(task_id);
            }
            Some(super::fix_panel::Next::End { title, lines }) => {
                self.status = Some("the fix ended; q quits, then the diff is printed (and written with --write)".into());
                self.modals.push(Modal::Text {
                    title,
                    lines,
                    scroll: 0,
                    targets: Vec::new(),
                    selected: None,
                    flips: Vec::new(),
                });
            }
            None => {}
        }
    }

    pub fn open_task(&mut self, id: String) {
        self.task = TaskState::default();
        self.screens.push(Screen::Task(id));
    }

    fn task_action(&mut self, action: Action) {
        let iterations = self.current_task().map_or(0, |t| t.iterations.len());
        let focus = self.task.focus;
        match action {
            Action::NextPane => self.task.focus = Pane::ALL[(focus.index() + 1) % Pane::ALL.len()],
            Action::PrevPane => self.task.focus = Pane::ALL[(focus.index() + Pane::ALL.len() - 1) % Pane::ALL.len()],
            Action::Left | Action::Right => {
                let Some(current) = self.shown_iteration() else { return };
                let next = if action == Action::Left {
                    current.saturating_sub(1)
                } else {
                    (current + 1).min(iterations.saturating_sub(1))
                };
                // Back at the newest: follow new iterations again.
                self.task.iteration = (next + 1 < iterations).then_some(next);
                self.task.scroll = [0; 5];
            }
            Action::Up if focus == Pane::Timeline => self.handle(Action::Left),
            Action::Down if focus == Pane::Timeline => self.handle(Action::Right),
            Action::Up => self.scroll(focus, -1),
            Action::Down => self.scroll(focus, 1),
            Action::PageUp => self.scroll(focus, -(self.page as i32)),
            Action::PageDown => self.scroll(focus, self.page as i32),
            Action::Top => self.task.scroll[focus.index()] = 0,
            Action::Bottom => self.task.scroll[focus.index()] = u16::MAX / 2,
            Action::ToggleDiff => self.task.show_diff = !self.task.show_diff,
            Action::Zoom => self.task.zoom = !self.task.zoom,
            Action::WriteCode => self.write_code(),
            _ => {}
        }
    }

    fn scroll(&mut self, pane: Pane, by: i32) {
        let s = &mut self.task.scroll[pane.index()];
        *s = (*s as i32 + by).clamp(0, u16::MAX as i32 / 2) as u16;
    }

    fn scroll_at(&mut self, column: u16, row: u16, down: bool) {
        let by = if down { 3 } else { -3 };
        match self.screen() {
            Screen::Task(_) => {
                let hit = self
                    .layout
                    .panes
                    .iter()
                    .find(|(_, r)| r.contains((column, row).into()))
                    .map(|(p, _)| *p);
                if let Some(pane) = hit {
                    self.task.focus = pane;
                    self.scroll(pane, by);
                }
            }
            _ => {
                for _ in 0..3 {
                    self.handle(if down { Action::Down } else { Action::Up });
                }
            }
        }
    }

    fn click_at(&mut self, column: u16, row: u16) {
        match self.screen() {
            Screen::Memory => {}
            Screen::Task(_) => {
                if let Some((pane, _)) = self.layout.panes.iter().find(|(_, r)| r.contains((column, row).into())) {
                    self.task.focus = *pane;
                }
            }
            Screen::Sweep | Screen::Home => {
                let list = self.layout.list;
                // The first list row is the table header.
                if list.contains((column, row).into()) && row > list.y + 1 {
                    let index = self.layout.list_offset + (row - list.y - 2) as usize;
                    if *self.screen() == Screen::Sweep {
                        if index < self.visible_tasks().len() {
                            if self.sweep.selected == index {
                                self.sweep_action(Action::Enter);
                            } else {
                                self.sweep.selected = index;
                            }
                        }
                    } else if index < self.runs.len() {
                        self.run_selected = index;
                    }
                }
            }
        }
    }

    fn write_code(&mut self) {
        let Some(task) = self.current_task() else { return };
        let Some(i) = self.shown_iteration() else { return };
        let Some(code) = task.iterations[i].code.clone() else {
            self.status = Some("this iteration has no code".into());
            return;
        };
        let name = format!("{}_iter{}.py", task.id.replace(['/', ' '], "_"), i + 1);
        self.status = Some(match std::fs::write(&name, code) {
            Ok(()) => format!("wrote {name}"),
            Err(e) => format!("cannot write {name}: {e}"),
        });
    }

    /// Reads every run's manifest and status (a background job: a home with many runs is slow).
    /// Searches every recorded run (updating the index first) in the background.
    fn search_runs(&mut self) {
        let Some(dir) = self.home_dir.clone() else { return };
        let query = self.run_query.clone();
        self.status = Some(format!("searching runs for {query:?}…"));
        self.spawn(move || {
            let home = crate::store::Home { root: dir };
            let hits = crate::store::RunIndex::open(&home)
                .and_then(|index| {
                    index.update(&home)?;
                    index.search(&query, 100)
                })
                .map_err(|e| e.to_string());
            AppEvent::RunsSearched { query, hits }
        });
    }

    /// The flip's two runs on its task: each iteration's tests, and the diff of the final programs.
    fn show_flip(&mut self, flip: Flip) {
        let Some(dir) = self.home_dir.clone() else { return };
        self.spawn(move || {
            let home = crate::store::Home { root: dir };
            AppEvent::FlipShown(super::flip::lines(&home, &flip.runs, &flip.task).map_err(|e| format!("{e:#}")))
        });
    }

    /// The marked runs compared in the background, shown as a popup.
    fn compare_marked(&mut self) {
        if self.marked.len() < 2 {
            self.status = Some("mark two or more runs (space), then c compares them".into());
            return;
        }
        let Some(dir) = self.home_dir.clone() else { return };
        let ids = self.marked.clone();
        self.status = Some(format!("comparing {} runs…", ids.len()));
        self.spawn(move || {
            let home = crate::store::Home { root: dir };
            let compared = ids
                .iter()
                .map(|id| crate::analysis::RunData::load(&home, id))
                .collect::<anyhow::Result<Vec<_>>>()
                .and_then(|runs| crate::analysis::compare(&runs))
                .map_err(|e| format!("{e:#}"));
            AppEvent::Compared(compared)
        });
    }

    pub fn refresh_runs(&mut self) {
        let Some(dir) = self.home_dir.clone() else { return };
        self.spawn(move || AppEvent::RunsListed(super::run_list::load_runs(&crate::store::Home { root: dir })));
    }

    /// Loads a recorded run (a background job: a long run has many events) and opens it.
    fn open_replay(&mut self, run_id: &str) {
        let Some(dir) = self.home_dir.clone() else { return };
        let run_id = run_id.to_string();
        self.status = Some(format!("loading run {run_id}…"));
        self.spawn(move || {
            let replay = Replay::load(&crate::store::Home { root: dir }, &run_id);
            AppEvent::ReplayLoaded { run_id, replay }
        });
    }

    /// A run going on in another process: followed through its journal when it has one.
    fn open_follow(&mut self, run_id: &str) {
        let Some(dir) = &self.home_dir else { return };
        let run_dir = crate::store::Home { root: dir.clone() }.run_dir(run_id);
        if self.run_is_live() {
            self.status = Some("a run is already live in this window".into());
        } else if !crate::store::journal_path(&run_dir).is_file() {
            self.status = Some(format!(
                "run {run_id} is running in another rgd without --detach: watch it there, or replay it when it ends"
            ));
        } else {
            self.replay = None;
            self.model = RunModel::new();
            self.sweep = SweepState::default();
            self.live = Some(LiveRun::follow(run_dir));
            self.screens.push(Screen::Sweep);
        }
    }

    /// Preparing a run can take a while (loading a dataset; building the sandbox the first time),
    /// so it is a background job that reports back as `AppEvent::Launched`.
    fn launch(&mut self, request: super::form::RunRequest) {
        let Some(launcher) = self.launcher.clone() else { return };
        if self.launching {
            return;
        }
        self.launching = true;
        if let Some(form) = self.form_mut() {
            form.error = None;
            form.starting = true;
        }
        self.spawn(move || AppEvent::Launched(launcher(request)));
    }

    /// The run's debugger, when this window runs the run (not when it follows or replays one).
    pub fn control(&self) -> Option<&Arc<crate::engine::Control>> {
        self.control.as_ref().filter(|_| self.live.as_ref().is_some_and(|l| l.owned))
    }

    /// The task a debugger key acts on: the task view's, or the sweep table's selected one.
    fn debug_target(&self) -> Option<String> {
        match self.screen() {
            Screen::Task(id) => Some(id.clone()),
            Screen::Sweep => self
                .visible_tasks()
                .get(self.sweep.selected)
                .map(|&i| self.model.tasks[i].id.clone()),
            _ => None,
        }
    }

    /// Whether the task the keys act on is paused (then `s` steps rather than sorts).
    pub fn target_paused(&self) -> bool {
        self.debug_target()
            .and_then(|id| self.model.task(&id).map(|t| t.paused.is_some()))
            .unwrap_or(false)
    }

    fn debug_action(&mut self, action: DebugAction) {
        let Some(control) = self.control().cloned() else {
            self.status = Some("no debugger: this window does not run the run".into());
            return;
        };
        let target = self.debug_target();
        let in_task_view = matches!(self.screen(), Screen::Task(_));
        let command = match action {
            DebugAction::Breakpoints => {
                self.breakpoints_text = control.breakpoints().iter().map(|b| b.name()).collect::<Vec<_>>().join(",");
                self.modals.push(Modal::Filter(Filter::Breakpoints));
                return;
            }
            DebugAction::Edit | DebugAction::EditGuidance => {
                let view = target.and_then(|id| self.model.task(&id));
                self.editor = view.and_then(|v| debugger::edit_request(v, action == DebugAction::EditGuidance));
                if self.editor.is_none() {
                    self.status = Some("nothing to edit: the task is not paused".into());
                }
                return;
            }
            other => debugger::command_for(other, target, in_task_view),
        };
        match command.map(|c| control.command(c)) {
            Some(Ok(())) if action == DebugAction::Pause => self.status = Some("pausing every task before its next step".into()),
            Some(Err(e)) => self.status = Some(e),
            _ => {}
        }
    }

    /// The text the editor left, sent as an edit of what it was opened on.
    pub fn edited(&mut self, request: debugger::EditorRequest, text: Option<String>) {
        let Some(command) = debugger::edit_command(request, text) else {
            self.status = Some("no change".into());
            return;
        };
        if let Some(Err(e)) = self.control().map(|c| c.command(command)) {
            self.status = Some(e);
        }
    }

    /// The typed breakpoints, set when the input is closed with Enter.
    fn set_breakpoints(&mut self) {
        let Some(control) = self.control().cloned() else { return };
        let set = std::mem::take(&mut self.breakpoints_text);
        let command = crate::engine::Command::Break { set: set.clone() };
        self.status = Some(match control.command(command) {
            Ok(()) if set.trim().is_empty() => "breakpoints cleared".into(),
            Ok(()) => format!("breakpoints: {set}"),
            Err(e) => e,
        });
    }

    /// `f` in a replay: a new run of the shown task from the shown iteration, watched live.
    fn fork_shown(&mut self) {
        let (Some(forker), Some(_), Screen::Task(task)) = (self.forker.clone(), &self.replay, self.screen().clone()) else {
            self.status = Some("f forks the task shown in a replay (open a task first)".into());
            return;
        };
        let Some(run) = self.model.manifest.as_ref().map(|m| m.run_id.clone()) else {
            return;
        };
        let at = self.shown_iteration().map_or(1, |i| i as u32 + 1);
        if self.launching {
            return;
        }
        self.launching = true;
        self.status = Some(format!("forking {task} at iteration {at}…"));
        self.spawn(move || AppEvent::Launched(forker(ForkRequest { run, task, at })));
    }

    /// The prepared run (or why it could not be prepared) from `launch`.
    fn launched(&mut self, prepared: anyhow::Result<(crate::engine::Sweep, bool)>) {
        self.launching = false;
        if let Some(form) = self.form_mut() {
            form.starting = false;
        }
        match prepared {
            Ok((sweep, resumed)) => {
                self.modals.retain(|m| !matches!(m, Modal::Form(_)));
                self.replay = None;
                self.model = RunModel::new();
                self.sweep = SweepState::default();
                self.live = Some(LiveRun::start(sweep, resumed, &mut self.model));
                self.screens.push(Screen::Sweep);
            }
            Err(e) => match self.form_mut() {
                Some(form) => form.error = Some(format!("{e:#}")),
                None => self.status = Some(format!("{e:#}")),
            },
        }
    }

    fn replay_action(&mut self, action: ReplayAction) {
        let Some(replay) = &mut self.replay else { return };
        let focus = match self.screens.last() {
            Some(Screen::Task(id)) => Some(id.clone()),
            _ => None,
        };
        replay.act(action, focus.as_deref(), &mut self.model);
    }

    /// Tasks that have not finished, for the header.
    pub fn stage_counts(&self) -> [(TaskStage, usize); 3] {
        let count = |f: &dyn Fn(TaskStage) -> bool| self.model.tasks.iter().filter(|t| f(t.stage)).count();
        [
            (TaskStage::Queued, count(&|p| p == TaskStage::Queued)),
            (TaskStage::Coding, count(&|p| !p.is_done() && p != TaskStage::Queued)),
            (TaskStage::Failed, count(&|p| matches!(p, TaskStage::Failed | TaskStage::Error))),
        ]
    }
}
