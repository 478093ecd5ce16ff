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

use crate::agents::{Purpose, Recall, TurnContext, parse_confidence, parse_recall};
use crate::record::{Event, TaskStatus};

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Outcome, Phase, Transition};

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
    fn example(&self) -> (String, String, String) {
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

impl Prompted for MapCoder {
    fn fill(&self, ctx: &mut TurnContext, m: &Shared) {
        ctx.recall_k = m.config.mapcoder.k;
        (ctx.example_problem, ctx.example_plan, ctx.algorithm) = self.example();
    }
}

impl Method for MapCoder {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::Recall)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            (Phase::Recall, Outcome::Agent(Ok(resp))) => self.recalled(m, &resp.text),
            (Phase::MapPlan, Outcome::Agent(Ok(resp))) => self.planned(m, &resp.text),
            (Phase::Confidence, Outcome::Agent(Ok(resp))) => self.scored(m, &resp.text),
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// The visible tests failed (or the answer held no code): a debug round, the next plan, or
    /// the end.
    fn next_round(&mut self, m: &mut Shared, mut events: Vec<Event>) -> Transition {
        let purpose = if self.rounds < m.config.mapcoder.t {
            self.rounds += 1;
            Purpose::MapDebug
        } else if self.current + 1 < self.order.len() {
            self.current += 1;
            self.rounds = 0;
            Purpose::MapCode
        } else {
            return m.finish(events, TaskStatus::Failed, None);
        };
        m.iteration += 1;
        events.push(m.iteration_started());
        match purpose {
            Purpose::MapCode => self.code(m, events),
            _ => m.call(self, events, purpose),
        }
    }
}

impl MapCoder {
    /// The retrieval agent's answer: the recalled problems, or (unreadable) none.
    fn recalled(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let mut events = Vec::new();
        match parse_recall(answer) {
            Ok(mut recall) => {
                recall.problems.truncate(m.config.mapcoder.k as usize);
                self.recall = recall;
            }
            Err(error) => events.push(m.malformed(Purpose::Recall, error, "one plan is made from the task alone")),
        }
        m.call(self, events, Purpose::MapPlan)
    }

    /// A plan is written; its confidence is asked next.
    fn planned(&mut self, m: &mut Shared, plan: &str) -> Transition {
        m.plan = plan.trim().to_string();
        m.call(self, vec![], Purpose::Confidence)
    }

    /// The plan's confidence; then the next plan, or, all made, coding from the most confident.
    fn scored(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let mut events = Vec::new();
        let confidence = parse_confidence(answer).unwrap_or_else(|error| {
            events.push(m.malformed(Purpose::Confidence, error, "the plan's confidence counts as 0"));
            0
        });
        self.plans.push((m.plan.clone(), confidence));
        if self.plans.len() < self.wanted() {
            return m.call(self, events, Purpose::MapPlan);
        }
        let mut order: Vec<usize> = (0..self.plans.len()).collect();
        order.sort_by_key(|i| std::cmp::Reverse(self.plans[*i].1));
        events.push(Event::PlansRanked {
            task_id: m.task.id.clone(),
            iteration: m.iteration,
            plans: order.iter().map(|i| (i + 1, self.plans[*i].1)).collect(),
        });
        self.order = order;
        self.code(m, events)
    }

    /// The coding agent writes code from the current plan.
    fn code(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        let place = self.order[self.current];
        m.plan = self.plans[place].0.clone();
        m.call(self, events, Purpose::MapCode)
    }
}
