//! The TUI's router. `App` holds what every screen shares (the run shown: live or replayed, its
//! model; the run list; popups; the status line) and one component per screen or panel
//! (`screens/`), each owning its state and keys. `handle` routes an action to the popup on top or
//! to the component on screen; components answer with `AppEvent`s, which `apply_event` applies in
//! one place, like the background jobs' results. The views only read this state (they record
//! where they drew things, for the mouse).

use std::path::PathBuf;
use std::sync::Arc;

pub use super::action::Action;
use super::app_event::{AppEvent, JobReceiver, JobSender};
use super::debugger::EditorRequest;
pub use super::drawn::Drawn;
use super::form::Form;
use super::memory_browser::MemoryBrowser;
use super::modal::{Filter, Modal};
use super::model::{RunModel, TaskStage, TaskView};
use super::replay::Replay;
use super::run_list::RunRow;
pub use super::run_switch::{Forker, Launcher};
use super::screens::Outbox;
use super::screens::debugger::Debugger;
use super::screens::home::{HomeCx, HomeScreen};
pub use super::screens::sweep::SweepState;
pub use super::screens::task::{Pane, TaskState};
use super::source::LiveRun;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Home,
    Sweep,
    Task(String),
    Memory,
}

pub struct App {
    pub screens: Vec<Screen>,
    /// Popups and text entry above the screen; the top one takes the keys.
    pub modals: Vec<Modal>,
    pub model: RunModel,
    pub live: Option<LiveRun>,
    pub replay: Option<Replay>,
    pub home: HomeScreen,
    pub sweep: SweepState,
    pub task: TaskState,
    pub memory: Option<MemoryBrowser>,
    pub debugger: Debugger,
    /// `rgd fix --tui`: the fix's panel beside the attempt being watched.
    pub fix: Option<super::fix_panel::FixPanel>,
    /// The recorded runs (home), and those marked for a comparison, in marking order.
    pub runs: Vec<RunRow>,
    pub marked: Vec<String>,
    pub launcher: Option<Launcher>,
    pub forker: Option<Forker>,
    pub home_info: Vec<(String, String)>,
    pub home_dir: Option<PathBuf>,
    pub status: Option<String>,
    pub quit: bool,
    /// Set when the user chose to stop a live run.
    pub stopped: bool,
    pub layout: Drawn,
    /// Lines a page scroll moves (the last drawn list height).
    pub page: usize,
    pub code_cache: super::highlighted::CodeCache,
    /// True while a run from the form or a fork is being prepared.
    pub launching: bool,
    /// Components' events, applied as soon as the component returns; background jobs report
    /// through its channel, which the UI loop takes (`take_job_events`) and feeds `apply_event`.
    pub(super) out: Outbox,
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
            home: HomeScreen::default(),
            sweep: SweepState::default(),
            task: TaskState::default(),
            memory: None,
            debugger: Debugger::default(),
            fix: None,
            runs: Vec::new(),
            marked: Vec::new(),
            launcher: None,
            forker: None,
            home_info: Vec::new(),
            home_dir: None,
            status: None,
            quit: false,
            stopped: false,
            layout: Drawn::default(),
            page: 10,
            code_cache: Default::default(),
            launching: false,
            out: Outbox::new(jobs),
            job_events: Some(job_events),
        }
    }

    /// Where events for `apply_event` may be sent from outside the UI loop.
    pub fn job_sender(&self) -> JobSender {
        self.out.job_sender()
    }

    /// The receiving end of the background jobs' channel (taken once, by the UI loop).
    pub fn take_job_events(&mut self) -> Option<JobReceiver> {
        self.job_events.take()
    }

    /// Applies what the components asked for, in order (an event may ask for more).
    fn drain(&mut self) {
        while let Some(event) = self.out.next() {
            self.apply(event);
        }
    }

    /// An event enters the state here, and only here: a background job's result or a component's
    /// request.
    pub fn apply_event(&mut self, event: AppEvent) {
        self.apply(event);
        self.drain();
    }

    fn apply(&mut self, event: AppEvent) {
        match event {
            AppEvent::Status(text) => self.status = text,
            AppEvent::Popup(modal) => self.modals.push(modal),
            AppEvent::OpenTask(id) => self.open_task(id),
            AppEvent::OpenRun { run_id, running: true } => self.open_follow(&run_id),
            AppEvent::OpenRun { run_id, running: false } => self.open_replay(&run_id),
            AppEvent::OpenMemory => {
                if let Some(browser) = MemoryBrowser::open(self.home_dir.as_deref(), &mut self.out) {
                    self.memory = Some(browser);
                    self.task.scroll = [0; 5];
                    self.screens.push(Screen::Memory);
                }
            }
            AppEvent::Launched(prepared) => self.launched(prepared),
            AppEvent::Fix(event) => self.fix_event(event),
            AppEvent::Compared(Ok(comparison)) => {
                self.status = None;
                self.modals.push(super::screens::compare::popup(&comparison));
            }
            AppEvent::Compared(Err(e)) => self.status = Some(format!("cannot compare: {e}")),
            AppEvent::FlipShown(Ok(lines)) => {
                self.status = None;
                self.modals.push(Modal::text(" one task in the compared runs (Esc closes) ", lines));
            }
            AppEvent::FlipShown(Err(e)) => self.status = Some(format!("cannot show the task: {e}")),
            AppEvent::RunsSearched { query, hits: Ok(hits) } => {
                self.status = None;
                self.modals.push(super::screens::home::hits_popup(&query, &hits));
            }
            AppEvent::RunsSearched { hits: Err(e), .. } => self.status = Some(format!("search failed: {e}")),
            AppEvent::MemoryOpened(opened) => {
                if let Some(b) = &mut self.memory {
                    b.opened(opened, &mut self.out);
                }
            }
            AppEvent::MemorySearched { query, hits } => {
                if let Some(b) = &mut self.memory {
                    b.searched(query, hits, &mut self.out);
                }
            }
            AppEvent::MemoryUses { entry_id, uses } => {
                if let Some(b) = &mut self.memory {
                    b.offered(entry_id, uses);
                }
            }
            AppEvent::ReplayLoaded { run_id, replay } => self.replay_loaded(&run_id, replay),
            AppEvent::RunsListed(runs) => {
                self.home.listed(runs.len());
                self.runs = runs;
            }
        }
    }

    pub fn handle(&mut self, action: Action) {
        if self.modals.is_empty() {
            self.screen_action(action);
        } else {
            self.modal_action(action);
        }
        self.drain();
    }

    fn screen_action(&mut self, action: Action) {
        match action {
            Action::Help => self.modals.push(Modal::Help),
            Action::Quit => self.request_quit(),
            Action::Back if *self.screen() == Screen::Memory && self.memory.as_ref().is_some_and(|b| !b.query.is_empty()) => {
                if let Some(b) = &mut self.memory {
                    b.query.clear();
                    b.search(&mut self.out);
                }
            }
            Action::Back if self.screens.len() > 1 => {
                if self.screens.pop() == Some(Screen::Memory) {
                    // Closing the browser lets go of the pool (its ownership, if no run of this
                    // process holds it, passes to the next rgd process that asks).
                    self.memory = None;
                }
                if *self.screen() == Screen::Home {
                    self.refresh_runs();
                }
            }
            Action::Back => self.request_quit(),
            Action::Replay(r) => self.replay_action(r),
            Action::Debug(d) => {
                let (control, target) = (self.control().cloned(), self.debug_target());
                let in_task_view = matches!(self.screen(), Screen::Task(_));
                self.debugger.act(d, control, target, in_task_view, &self.model, &mut self.out);
            }
            Action::Fork => self.fork_shown(),
            Action::ScrollAt { column, row, down } => self.scroll_at(column, row, down),
            Action::ClickAt { column, row } => self.click_at(column, row),
            other => match self.screen().clone() {
                Screen::Home => {
                    let live = self.run_is_live();
                    let cx = HomeCx {
                        runs: &self.runs,
                        marked: &mut self.marked,
                        dir: self.home_dir.as_deref(),
                        info: &self.home_info,
                        can_launch: self.launcher.is_some(),
                        live,
                    };
                    self.home.handle(other, cx, &mut self.out);
                }
                Screen::Sweep => self.sweep.handle(other, &self.model, self.page, &mut self.out),
                Screen::Task(id) => {
                    let task = self.model.task(&id);
                    self.task.settle(self.layout.code_first, task);
                    self.task.handle(other, task, self.page, &mut self.out)
                }
                Screen::Memory => {
                    if let Some(b) = &mut self.memory {
                        b.handle(other, self.page, &mut self.task.scroll[0], &mut self.out);
                    }
                }
            },
        }
    }

    /// The top popup takes the action.
    fn modal_action(&mut self, action: Action) {
        let Some(top) = self.modals.last_mut() else { return };
        let close = match (top, &action) {
            (Modal::ConfirmStop, Action::Confirm(yes)) => {
                if *yes {
                    self.stopped = true;
                    if let Some(live) = &mut self.live {
                        live.stop();
                    }
                    self.quit = true;
                }
                true
            }
            (Modal::Text { .. }, Action::Enter) => {
                if let Some(flip) = super::modal::selected_flip(self.modals.last()) {
                    super::screens::compare::show_flip(flip, self.home_dir.as_deref(), &mut self.out);
                }
                false
            }
            (text @ Modal::Text { .. }, action) => super::modal::text_key(text, action),
            (Modal::Help, Action::Help | Action::Back | Action::Quit)
            | (Modal::ConfirmStop | Modal::Form(_), Action::Back | Action::Quit) => true,
            (Modal::Form(form), Action::Form(a)) => {
                if let Some(request) = form.apply(a.clone()) {
                    self.launch(request);
                }
                false
            }
            (Modal::Filter(Filter::Tasks), action) => self.sweep.filter_key(action).is_some(),
            (Modal::Filter(Filter::Runs), action) => self.home.query_key(action, self.home_dir.as_deref(), &mut self.out).is_some(),
            (Modal::Filter(Filter::Breakpoints), action) => {
                let control = self.control().cloned();
                self.debugger.breakpoints_key(action, control.as_ref(), &mut self.out).is_some()
            }
            (Modal::Filter(Filter::Memory), action) => match &mut self.memory {
                Some(browser) => browser.query_key(action, &mut self.out).is_some(),
                None => true,
            },
            _ => false,
        };
        if close {
            self.modals.pop();
        }
    }

    fn request_quit(&mut self) {
        // A run whose every task is recorded (its summary came) only writes its status and
        // flushes: quitting waits for that (`run_app`) instead of offering to stop it.
        if self.run_is_live() && self.model.is_live() {
            self.modals.push(Modal::ConfirmStop);
        } else {
            self.quit = true;
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

    /// The sweep table's rows after filter and sort: indexes into `model.tasks`.
    pub fn visible_tasks(&self) -> Vec<usize> {
        self.sweep.visible_tasks(&self.model)
    }

    pub fn current_task(&self) -> Option<&TaskView> {
        match self.screen() {
            Screen::Task(id) => self.model.task(id),
            _ => None,
        }
    }

    /// The iteration shown in the task view (0-based), following the newest unless one was picked.
    pub fn shown_iteration(&self) -> Option<usize> {
        self.task.shown_iteration(self.current_task()?)
    }

    /// Tasks that have not finished, for the header.
    pub fn stage_counts(&self) -> [(TaskStage, usize); 3] {
        super::screens::sweep::stage_counts(&self.model)
    }

    pub fn open_task(&mut self, id: String) {
        self.task = TaskState::default();
        self.screens.push(Screen::Task(id));
    }

    pub fn refresh_runs(&mut self) {
        super::screens::home::refresh(self.home_dir.as_deref(), &mut self.out);
        self.drain();
    }

    /// The run's debugger, when this window runs the run (not when it follows or replays one).
    pub fn control(&self) -> Option<&Arc<crate::engine::Control>> {
        self.debugger
            .control
            .as_ref()
            .filter(|_| self.live.as_ref().is_some_and(|l| l.owned))
    }

    /// The task a debugger key acts on: the task view's, or the sweep table's selected one.
    fn debug_target(&self) -> Option<String> {
        match self.screen() {
            Screen::Task(id) => Some(id.clone()),
            Screen::Sweep => self.sweep.selected_task(&self.model),
            _ => None,
        }
    }

    /// Whether the task the keys act on is paused (then `s` steps rather than sorts).
    pub fn target_paused(&self) -> bool {
        self.debug_target()
            .and_then(|id| self.model.task(&id).map(|t| t.paused.is_some()))
            .unwrap_or(false)
    }

    /// The text the editor left, sent as an edit of what it was opened on.
    pub fn edited(&mut self, request: EditorRequest, text: Option<String>) {
        let control = self.control().cloned();
        self.debugger.edited(control.as_ref(), request, text, &mut self.out);
        self.drain();
    }

    fn scroll_at(&mut self, column: u16, row: u16, down: bool) {
        if let Screen::Task(id) = self.screen() {
            let pane = self.pane_at(column, row);
            let id = id.clone();
            let task = self.model.task(&id);
            self.task.settle(self.layout.code_first, task);
            self.task.wheel(pane, down, task);
        } else {
            for _ in 0..3 {
                self.screen_action(if down { Action::Down } else { Action::Up });
            }
        }
    }

    fn pane_at(&self, column: u16, row: u16) -> Option<Pane> {
        self.layout
            .panes
            .iter()
            .find(|(_, r)| r.contains((column, row).into()))
            .map(|(p, _)| *p)
    }

    fn click_at(&mut self, column: u16, row: u16) {
        let list = self.layout.list;
        // The first list row is the table header.
        let index =
            (list.contains((column, row).into()) && row > list.y + 1).then(|| self.layout.list_offset + (row - list.y - 2) as usize);
        match (self.screen().clone(), index) {
            (Screen::Task(_), _) => {
                if let Some(pane) = self.pane_at(column, row) {
                    self.task.focus = pane;
                }
            }
            (Screen::Sweep, Some(index)) => self.sweep.click(index, &self.model, &mut self.out),
            (Screen::Home, Some(index)) if index < self.runs.len() => self.home.selected = index,
            _ => {}
        }
    }
}
