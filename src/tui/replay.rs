//! Replaying a recorded run: the recorded events are fed to the same model the live view uses,
//! one at a time, by the user's keys or at a chosen speed.

use std::time::{Duration, Instant};

use super::model::RunModel;
use crate::engine::{Envelope, Event};
use crate::store::{Home, RunStore};

const SPEEDS: [Option<u32>; 4] = [Some(1), Some(4), Some(16), None];
/// The longest recorded pause played back (a run that sat idle for an hour is not replayed so).
const MAX_GAP: Duration = Duration::from_secs(2);

/// What the replay keys ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayAction {
    TogglePlay,
    StepForward,
    StepBack,
    NextIteration,
    PrevIteration,
    Faster,
    Slower,
    Start,
    End,
}

pub struct Replay {
    pub run_id: String,
    pub events: Vec<Envelope>,
    /// Events applied: the model shows the run after `events[..cursor]`.
    pub cursor: usize,
    pub playing: bool,
    speed: usize,
    next_at: Option<Instant>,
}

impl Replay {
    pub fn load(home: &Home, run_id: &str) -> anyhow::Result<Replay> {
        let run_id = home.find_run(run_id)?;
        let store = RunStore::open(home, &run_id)?;
        let events = store.events().collect::<Result<Vec<_>, _>>()?;
        Ok(Replay::from_events(run_id, events))
    }

    pub fn from_events(run_id: String, events: Vec<Envelope>) -> Replay {
        Replay {
            run_id,
            events,
            cursor: 0,
            playing: false,
            speed: 0,
            next_at: None,
        }
    }

    pub fn speed_label(&self) -> String {
        match SPEEDS[self.speed] {
            Some(x) => format!("{x}x"),
            None => "instant".into(),
        }
    }

    pub fn model_at_end(&mut self) -> RunModel {
        let mut model = RunModel::new();
        self.seek(self.events.len(), &mut model);
        model
    }

    /// Moves to `target` events applied: forward by applying, backward by rebuilding.
    pub fn seek(&mut self, target: usize, model: &mut RunModel) {
        let target = target.min(self.events.len());
        if target < self.cursor {
            *model = RunModel::new();
            self.cursor = 0;
        }
        for envelope in &self.events[self.cursor..target] {
            model.apply(envelope);
        }
        self.cursor = target;
    }

    /// The next event index after the cursor that starts an iteration or finishes a task (of
    /// `task` when given).
    fn boundary_after(&self, from: usize, task: Option<&str>) -> usize {
        (from + 1..self.events.len())
            .find(|&i| is_boundary(&self.events[i].event, task))
            .unwrap_or(self.events.len())
    }

    fn boundary_before(&self, from: usize, task: Option<&str>) -> usize {
        (0..from.saturating_sub(1))
            .rev()
            .find(|&i| is_boundary(&self.events[i].event, task))
            .unwrap_or(0)
    }

    pub fn act(&mut self, action: ReplayAction, task: Option<&str>, model: &mut RunModel) {
        match action {
            ReplayAction::TogglePlay => {
                self.playing = !self.playing && self.cursor < self.events.len();
                self.next_at = self.playing.then(Instant::now);
            }
            ReplayAction::StepForward => self.seek(self.cursor + 1, model),
            ReplayAction::StepBack => self.seek(self.cursor.saturating_sub(1), model),
            // Stop right after the boundary event so the new iteration is on screen.
            ReplayAction::NextIteration => {
                let to = self.boundary_after(self.cursor.saturating_sub(1), task);
                self.seek(to + 1, model)
            }
            ReplayAction::PrevIteration => {
                let to = self.boundary_before(self.cursor.saturating_sub(1), task);
                self.seek(to + 1, model)
            }
            ReplayAction::Faster => self.speed = (self.speed + 1).min(SPEEDS.len() - 1),
            ReplayAction::Slower => self.speed = self.speed.saturating_sub(1),
            ReplayAction::Start => self.seek(0, model),
            ReplayAction::End => self.seek(self.events.len(), model),
        }
        if self.cursor >= self.events.len() {
            self.playing = false;
        }
    }

    /// When the next played event is due, if playing.
    pub fn due(&self) -> Option<Instant> {
        if self.playing { self.next_at } else { None }
    }

    /// Plays what is due now; schedules the next event by its recorded gap divided by the speed.
    pub fn tick(&mut self, model: &mut RunModel) {
        if !self.playing {
            return;
        }
        let Some(speed) = SPEEDS[self.speed] else {
            self.seek(self.events.len(), model);
            self.playing = false;
            return;
        };
        self.seek(self.cursor + 1, model);
        match (self.events.get(self.cursor.wrapping_sub(1)), self.events.get(self.cursor)) {
            (Some(prev), Some(next)) => {
                let gap = (next.at - prev.at).to_std().unwrap_or_default().min(MAX_GAP);
                self.next_at = Some(Instant::now() + gap / speed);
            }
            _ => self.playing = false,
        }
    }
}

fn is_boundary(event: &Event, task: Option<&str>) -> bool {
    let relevant = task.is_none() || event.task_id() == task;
    relevant && matches!(event, Event::IterationStarted { .. } | Event::TaskFinished { .. })
}
