//! Switching the run the views show: a recorded run loaded as a replay, a run going on in another
//! process followed, a run started from the form or forked from a replay, and `rgd fix`'s attempts
//! followed one after another. Each resets the model and the screens it invalidates.

use std::sync::Arc;

use super::app::{App, Screen, SweepState};
use super::app_event::AppEvent;
use super::modal::Modal;
use super::model::RunModel;
use super::replay::{Replay, ReplayAction};
use super::source::LiveRun;

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

impl App {
    /// A loaded recorded run becomes the replay shown.
    pub(super) fn replay_loaded(&mut self, run_id: &str, replay: anyhow::Result<Replay>) {
        match replay {
            Ok(mut replay) => {
                self.model = replay.model_at_end();
                self.replay = Some(replay);
                self.sweep = SweepState::default();
                self.screens.push(Screen::Sweep);
            }
            Err(e) => self.status = Some(format!("cannot open run {run_id}: {e:#}")),
        }
    }

    /// Loads a recorded run (a background job: a long run has many events) and opens it.
    pub(super) fn open_replay(&mut self, run_id: &str) {
        let Some(dir) = self.home_dir.clone() else { return };
        let run_id = run_id.to_string();
        self.status = Some(format!("loading run {run_id}…"));
        self.out.spawn(move || {
            let replay = Replay::load(&crate::store::Home { root: dir }, &run_id);
            AppEvent::ReplayLoaded { run_id, replay }
        });
    }
    /// A run going on in another process: followed through its journal when it has one.
    pub(super) fn open_follow(&mut self, run_id: &str) {
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
    pub(super) fn launch(&mut self, request: super::form::RunRequest) {
        let Some(launcher) = self.launcher.clone() else { return };
        if self.launching {
            return;
        }
        self.launching = true;
        if let Some(form) = self.form_mut() {
            form.error = None;
            form.starting = true;
        }
        self.out.spawn(move || AppEvent::Launched(launcher(request)));
    }
    /// `f` in a replay: a new run of the shown task from the shown iteration, watched live.
    pub(super) fn fork_shown(&mut self) {
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
        self.out.spawn(move || AppEvent::Launched(forker(ForkRequest { run, task, at })));
    }
    /// The prepared run (or why it could not be prepared) from `launch`.
    pub(super) fn launched(&mut self, prepared: anyhow::Result<(crate::engine::Sweep, bool)>) {
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
    /// `rgd fix --tui`: the panel takes the event; a new attempt's run is followed from its
    /// start (its task opened), and the end pops up.
    pub(super) fn fix_event(&mut self, event: crate::repo::fix::event::FixEvent) {
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
                self.modals.push(Modal::text(title, lines));
            }
            None => {}
        }
    }

    pub(super) fn replay_action(&mut self, action: ReplayAction) {
        let Some(replay) = &mut self.replay else { return };
        let focus = match self.screens.last() {
            Some(Screen::Task(id)) => Some(id.clone()),
            _ => None,
        };
        replay.act(action, focus.as_deref(), &mut self.model);
    }
}
