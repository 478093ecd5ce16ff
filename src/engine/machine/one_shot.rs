//! The methods that answer once and are tested once, never repaired: Direct (the task alone),
//! zero-shot chain of thought, and self-planning (Jiang et al.: a numbered plan, few-shot with
//! rgd's own examples, then the code from task and plan).

use crate::agents::Purpose;
use crate::record::{Event, TaskStatus};

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Outcome, Phase, Transition};

/// One call of `purpose` (Direct's, chain of thought's), one program.
pub(super) struct OneShot(pub(super) Purpose);

impl Prompted for OneShot {}

impl Method for OneShot {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        let purpose = self.0;
        m.call(self, events, purpose)
    }

    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.finish(events, TaskStatus::Failed, None)
    }
}

/// A plan first, then the code from it.
pub(super) struct SelfPlanning;

impl Prompted for SelfPlanning {}

impl Method for SelfPlanning {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::Plan)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        match (phase, outcome) {
            (Phase::Plan, Outcome::Agent(Ok(resp))) => {
                m.plan = resp.text.trim().to_string();
                Ok(m.call(self, vec![], Purpose::Implement))
            }
            (_, outcome) => Err(Box::new(outcome)),
        }
    }

    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.finish(events, TaskStatus::Failed, None)
    }
}
