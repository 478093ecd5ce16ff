//! The terminal UI. It subscribes to the engine's event stream (live) or reads a recorded run
//! (replay); it never drives the RGD loop itself.
//!
//! One loop owns the state: terminal input, engine events and timers arrive in a single `select!`,
//! each becomes an action applied in one place, and the screen is redrawn only when something
//! changed, at most 60 times a second (codex-rs, yazi).

mod action;
mod app;
mod app_event;
mod debugger;
mod drawn;
mod fix_panel;
mod flip;
mod form;
mod highlighted;
mod input;
pub mod keymap;
mod memory_browser;
pub mod modal;
pub mod model;
pub mod picture;
mod replay;
mod run_list;
mod run_switch;
mod screens;
mod source;
pub mod views;

pub use action::Action;
pub use app::{App, Pane, Screen};
pub use app_event::AppEvent;
pub use form::{Form, RunRequest};
pub use memory_browser::MemoryBrowser;
pub use modal::{Filter, Modal};
pub use replay::{Replay, ReplayAction};
pub use run_list::{RunRow, SlurmRow, load_runs};
pub use run_switch::{ForkRequest, Forker, Launcher};

use std::time::{Duration, Instant};

use crossterm::event::{DisableMouseCapture, EnableMouseCapture, EventStream};
use futures::StreamExt;
use ratatui::DefaultTerminal;

use crate::engine::{RunSummary, Sweep};
use crate::store::Home;
use source::{LiveMsg, LiveRun};

/// Frames are at least this far apart (60 fps); bursts of events become one frame.
const FRAME: Duration = Duration::from_millis(16);
/// How often the clock of a live run is redrawn when nothing else happens.
const CLOCK: Duration = Duration::from_secs(1);

/// Raw mode, alternate screen and mouse capture, undone on drop and on panic.
struct TerminalGuard {
    terminal: DefaultTerminal,
}

impl TerminalGuard {
    fn enter() -> anyhow::Result<TerminalGuard> {
        // ratatui::init installs a panic hook that restores the terminal; ours also releases the
        // mouse first.
        let terminal = ratatui::try_init()?;
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
            previous(info);
        }));
        crossterm::execute!(std::io::stdout(), EnableMouseCapture)?;
        Ok(TerminalGuard { terminal })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        ratatui::restore();
    }
}

/// Runs the UI until the user quits.
async fn run_app(app: &mut App) -> anyhow::Result<()> {
    let mut guard = TerminalGuard::enter()?;
    let mut input = EventStream::new();
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    let mut last_clock = Instant::now();
    let mut jobs = app.take_job_events();
    while !app.quit {
        let frame_due = last_draw + FRAME;
        let replay_due = app.replay.as_ref().and_then(Replay::due);
        let clock_due = app.run_is_live().then_some(last_clock + CLOCK);
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    if let Some(action) = input::action_for(app, &event) {
                        app.status = None;
                        app.handle(action);
                    }
                    if let Some(request) = app.debugger.editor.take() {
                        // The editor gets the terminal: our input reader stops first, so it
                        // takes none of the editor's keys, and starts again after.
                        drop(input);
                        drop(guard);
                        let text = debugger::run_editor(&request.text);
                        guard = TerminalGuard::enter()?;
                        input = EventStream::new();
                        app.edited(request, text);
                    }
                    dirty = true;
                }
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            msg = next_live(&mut app.live) => {
                match msg {
                    LiveMsg::Events(batch) => {
                        for envelope in &batch {
                            app.model.apply(envelope);
                        }
                    }
                    LiveMsg::Done(outcome) => match *outcome {
                        Err(e) => app.status = Some(format!("the run failed: {e}")),
                        Ok(summary) => app.status = Some(match &summary.halted {
                            Some(why) => format!(
                                "stopped early: {why}; when it is back: rgd sweep --resume {}",
                                summary.run_id
                            ),
                            None => "run finished; Esc/q to leave, everything is recorded".into(),
                        }),
                    },
                }
                dirty = true;
            }
            Some(event) = next_job(&mut jobs) => {
                app.apply_event(event);
                dirty = true;
            }
            () = sleep_until(replay_due) => {
                if let Some(replay) = &mut app.replay {
                    replay.tick(&mut app.model);
                }
                dirty = true;
            }
            () = sleep_until(clock_due) => {
                last_clock = Instant::now();
                dirty = true;
            }
            () = tokio::time::sleep_until(frame_due.into()), if dirty => {
                guard.terminal.draw(|frame| {
                    views::draw(frame, app);
                    crate::terminal::clean_buffer(frame.buffer_mut());
                })?;
                last_draw = Instant::now();
                dirty = false;
            }
        }
    }
    // Quit after every task was recorded: the sweep still writes its status and flushes. (A run
    // not finished is stopped when the app goes, as before.)
    let finished = !app.model.is_live();
    if let Some(live) = app.live.as_mut().filter(|l| l.owned && finished) {
        live.finish().await;
    }
    Ok(())
}

async fn next_live(live: &mut Option<LiveRun>) -> LiveMsg {
    match live {
        Some(live) => live.next().await,
        None => std::future::pending().await,
    }
}

async fn next_job(jobs: &mut Option<app_event::JobReceiver>) -> Option<AppEvent> {
    match jobs {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// `rgd run|sweep --tui`: watch a run live. `None` when the user stopped it.
pub async fn watch_run(sweep: Sweep, resumed: bool) -> anyhow::Result<Option<RunSummary>> {
    let mut app = App::new(Screen::Sweep);
    app.debugger.control = sweep.runner.control.clone();
    let single = (sweep.tasks.len() == 1).then(|| sweep.tasks[0].id.clone());
    app.live = Some(LiveRun::start(sweep, resumed, &mut app.model));
    if let Some(id) = single {
        app.open_task(id);
    }
    run_app(&mut app).await?;
    finish_live(&mut app).await
}

/// After the UI closed: the run's summary, waiting for the sweep if it is still finishing.
async fn finish_live(app: &mut App) -> anyhow::Result<Option<RunSummary>> {
    let Some(mut live) = app.live.take() else { return Ok(None) };
    if app.stopped {
        live.stop();
        return Ok(None);
    }
    if let Some(outcome) = live.outcome.take() {
        return outcome.map(Some).map_err(anyhow::Error::msg);
    }
    loop {
        match live.next().await {
            LiveMsg::Events(_) => {}
            LiveMsg::Done(outcome) => return (*outcome).map(Some).map_err(anyhow::Error::msg),
        }
    }
}

/// `rgd fix --tui`: the fix's events (suspects, attempts, the diff) in a panel, each attempt's
/// run followed beside it through its journal. The view runs on a thread of its own, with its own
/// runtime: the fix's test runs block the task that drives them, never the view. It ends when the
/// user quits; closing the channel (the fix ended) leaves it open.
pub fn watch_fix(
    home: Home,
    mut events: tokio::sync::mpsc::UnboundedReceiver<crate::repo::fix::event::FixEvent>,
) -> std::thread::JoinHandle<anyhow::Result<()>> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async move {
            let mut app = App::new(Screen::Sweep);
            app.home_dir = Some(home.root);
            app.fix = Some(fix_panel::FixPanel::default());
            let jobs = app.job_sender();
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    if jobs.send(AppEvent::Fix(event)).is_err() {
                        return;
                    }
                }
            });
            run_app(&mut app).await
        })
    })
}

/// `rgd replay RUN_ID --follow` and `rgd sweep --detach --tui`: watch a run that another process
/// is running. Quitting leaves it running.
pub async fn follow_run(home: &Home, run_id: &str) -> anyhow::Result<()> {
    let mut app = App::new(Screen::Sweep);
    app.live = Some(LiveRun::follow(home.run_dir(run_id)));
    run_app(&mut app).await
}

/// `rgd replay RUN_ID`: the recorded run, at its end, ready to step through.
pub async fn replay_run(home: &Home, run_id: &str, forker: Option<Forker>) -> anyhow::Result<()> {
    let mut replay = Replay::load(home, run_id)?;
    let mut app = App::new(Screen::Sweep);
    app.model = replay.model_at_end();
    app.replay = Some(replay);
    app.forker = forker;
    run_app(&mut app).await?;
    // A fork started from the replay runs to its end (or stops with the window, as asked).
    finish_live(&mut app).await.map(|_| ())
}

/// `rgd` with no arguments: recent runs, configuration, and a form that starts runs.
pub async fn home(home: &Home, info: Vec<(String, String)>, launcher: Launcher, forker: Forker) -> anyhow::Result<Option<RunSummary>> {
    let mut app = App::new(Screen::Home);
    app.home_dir = Some(home.root.clone());
    app.home_info = info;
    app.launcher = Some(launcher);
    app.forker = Some(forker);
    app.refresh_runs();
    run_app(&mut app).await?;
    finish_live(&mut app).await
}

/// Shared by the CLI and tests: the model after all events of a recorded run.
pub fn model_of(events: &[crate::engine::Envelope]) -> model::RunModel {
    let mut m = model::RunModel::new();
    for e in events {
        m.apply(e);
    }
    m
}
