//! MapCoder (Islam et al., "MapCoder: Multi-Agent Code Generation for Competitive Problem
//! Solving"): a retrieval agent recalls k similar problems (each with code and a plan) and the
//! algorithm the task needs, as XML; a planning agent writes one plan for the task from each
//! recalled problem and scores its confidence in it (0-100, XML); plans are tried from the most
//! confident: the coding agent writes code from the plan, and while the visible tests fail a
//! debugging agent repairs it, up to t rounds, before the next plan is tried. The hidden tests
//! decide once the visible ones pass, and are never fed back.
//!
//! An answer that is not the XML asked for is recorded (`AnswerMalformed`) and handled: a recall
//! that cannot be read leaves one plan made from the task alone; a confidence that cannot be read
//! counts as 0.

use crate::agents::{Purpose, Recall, parse_confidence, parse_recall};
use crate::record::{Event, TaskStatus};

use super::{TaskMachine, Transition};

/// What MapCoder keeps besides the shared state.
#[derive(Debug, Default)]
pub(super) struct MapCoder {
    recall: Recall,
    /// Each plan and its confidence, in recall order.
    plans: Vec<(String, u32)>,
    /// Places in `plans`, most confident first (ties keep recall order).
    order: Vec<usize>,
    /// The place in `order` of the plan being coded.
    current: usize,
    /// Debug rounds spent on that plan.
    rounds: u32,
}

impl MapCoder {
    /// The recalled problem the plan in the making starts from (description, plan), and the
    /// algorithm's tutorial.
    pub(super) fn example(&self) -> (String, String, String) {
        let (problem, plan) = match self.recall.problems.get(self.plans.len()) {
            Some(p) if self.order.is_empty() => {
                let code = if p.code.is_empty() {
                    String::new()
                } else {
                    format!("\n\n```python\n{}\n```", p.code)
                };
                (format!("{}{code}", p.description), p.planning.clone())
            }
            _ => Default::default(),
        };
        (problem, plan, self.recall.algorithm.clone())
    }

    /// Plans to make: one per recalled problem, and one from the task alone when none was.
    fn wanted(&self) -> usize {
        self.recall.problems.len().max(1)
    }
}

impl TaskMachine {
    /// The retrieval agent's answer: the recalled problems, or (unreadable) none.
    pub(super) fn mapcoder_recalled(&mut self, answer: &str) -> Transition {
        let mut events = Vec::new();
        match parse_recall(answer) {
            Ok(mut recall) => {
                recall.problems.truncate(self.config.mapcoder.k as usize);
                self.mapcoder.recall = recall;
            }
            Err(error) => events.push(self.malformed(Purpose::Recall, error, "one plan is made from the task alone")),
        }
        self.call(events, Purpose::MapPlan)
    }

    /// A plan is written; its confidence is asked next.
    pub(super) fn mapcoder_planned(&mut self, plan: &str) -> Transition {
        self.plan = plan.trim().to_string();
        self.call(vec![], Purpose::Confidence)
    }

    /// The plan's confidence; then the next plan, or, all made, coding from the most confident.
    pub(super) fn mapcoder_scored(&mut self, answer: &str) -> Transition {
        let mut events = Vec::new();
        let confidence = parse_confidence(answer).unwrap_or_else(|error| {
            events.push(self.malformed(Purpose::Confidence, error, "the plan's confidence counts as 0"));
            0
        });
        self.mapcoder.plans.push((self.plan.clone(), confidence));
        if self.mapcoder.plans.len() < self.mapcoder.wanted() {
            return self.call(events, Purpose::MapPlan);
        }
        let mut order: Vec<usize> = (0..self.mapcoder.plans.len()).collect();
        order.sort_by_key(|i| std::cmp::Reverse(self.mapcoder.plans[*i].1));
        events.push(Event::PlansRanked {
            task_id: self.task.id.clone(),
            iteration: self.iteration,
            plans: order.iter().map(|i| (i + 1, self.mapcoder.plans[*i].1)).collect(),
        });
        self.mapcoder.order = order;
        self.mapcoder_code(events)
    }

    /// The coding agent writes code from the current plan.
    fn mapcoder_code(&mut self, events: Vec<Event>) -> Transition {
        let place = self.mapcoder.order[self.mapcoder.current];
        self.plan = self.mapcoder.plans[place].0.clone();
        self.call(events, Purpose::MapCode)
    }

    /// The visible tests failed (or the answer held no code): a debug round, the next plan, or
    /// the end.
    pub(super) fn mapcoder_next(&mut self, mut events: Vec<Event>) -> Transition {
        let m = &mut self.mapcoder;
        let purpose = if m.rounds < self.config.mapcoder.t {
            m.rounds += 1;
            Purpose::MapDebug
        } else if m.current + 1 < m.order.len() {
            m.current += 1;
            m.rounds = 0;
            Purpose::MapCode
        } else {
            return self.finish(events, TaskStatus::Failed, None);
        };
        self.iteration += 1;
        events.push(self.iteration_started());
        match purpose {
            Purpose::MapCode => self.mapcoder_code(events),
            _ => self.call(events, purpose),
        }
    }
}
