//! CodeSIM (Islam et al., "CodeSim: Multi-Agent Code Generation and Problem Solving through
//! Simulation-Driven Planning and Debugging", NAACL 2025 Findings): the planning agent recalls
//! one example problem itself and writes a plan; the plan is verified by simulating it by hand on
//! a visible test, and revised once when the simulation says it needs changing; the coding agent
//! writes code from it; while the visible tests fail, the debugging agent simulates the code on a
//! failing test and repairs it, up to d rounds, before a new plan is made, up to p plans. The
//! hidden tests decide once the visible ones pass, and are never fed back.
//!
//! An answer that is not what was asked is recorded (`AnswerMalformed`) and handled: a plan with
//! no steps or a simulation that ends in no verdict is asked again once; then the task is coded
//! from the task alone, or the plan is coded as it is.

use crate::agents::Purpose;
use crate::record::{Event, TaskStatus};

use super::{TaskMachine, Transition};

/// What CodeSIM keeps besides the shared state.
#[derive(Debug, Default)]
pub(super) struct CodeSim {
    /// Plans made after the first.
    more_plans: u32,
    /// Debug rounds spent on the current plan.
    rounds: u32,
    /// The simulation that found the plan wrong, for its revision.
    simulation: String,
}

impl CodeSim {
    pub(super) fn simulation(&self) -> &str {
        &self.simulation
    }
}

/// What a simulation concluded: its last verdict line.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Keep,
    Change,
}

fn verdict(answer: &str) -> Option<Verdict> {
    let line = answer
        .lines()
        .rev()
        .find(|l| l.to_ascii_lowercase().contains("plan modification needed"))?;
    Some(match line.to_ascii_lowercase().contains("no plan modification needed") {
        true => Verdict::Keep,
        false => Verdict::Change,
    })
}

/// The plan of an answer: what follows its last `### Plan` heading, else the whole answer (as
/// the authors' code reads it); empty when it holds no step.
fn plan_of(answer: &str) -> String {
    let body = match answer.rfind("### Plan") {
        Some(at) => answer[at + "### Plan".len()..].to_string(),
        None => answer.to_string(),
    };
    body.trim().to_string()
}

impl TaskMachine {
    /// The planning agent's answer: its plan is simulated next.
    pub(super) fn codesim_planned(&mut self, answer: &str) -> Transition {
        let plan = plan_of(answer);
        if plan.is_empty() {
            return self.codesim_unreadable(Purpose::SimPlan, "the answer holds no plan", "the task is coded without a plan");
        }
        self.plan = plan;
        self.call(vec![], Purpose::Simulate)
    }

    /// The simulation's verdict: code from the plan, or revise it first.
    pub(super) fn codesim_simulated(&mut self, answer: &str) -> Transition {
        match verdict(answer) {
            None => self.codesim_unreadable(
                Purpose::Simulate,
                "the simulation ends in neither 'Plan Modification Needed' nor 'No Plan Modification Needed'",
                "the plan is coded as it is",
            ),
            Some(Verdict::Keep) => self.call(vec![], Purpose::SimCode),
            Some(Verdict::Change) => {
                self.codesim.simulation = answer.trim().to_string();
                self.call(vec![], Purpose::SimRefine)
            }
        }
    }

    /// The revised plan is coded (the paper does not simulate it again).
    pub(super) fn codesim_refined(&mut self, answer: &str) -> Transition {
        let plan = plan_of(answer);
        let mut events = Vec::new();
        if plan.is_empty() {
            events.push(self.malformed(Purpose::SimRefine, "the answer holds no plan".into(), "the plan is kept as it was"));
        } else {
            self.plan = plan;
        }
        self.call(events, Purpose::SimCode)
    }

    /// An answer that could not be read: asked once more, then `fallback`.
    fn codesim_unreadable(&mut self, purpose: Purpose, error: &str, fallback: &str) -> Transition {
        if let Some(repeat) = self.ask_again(purpose, error) {
            return repeat;
        }
        let event = self.malformed(purpose, error.into(), fallback);
        self.call(vec![event], Purpose::SimCode)
    }

    /// The visible tests failed (or the answer held no code): a debug round, a new plan, or the end.
    pub(super) fn codesim_next(&mut self, mut events: Vec<Event>) -> Transition {
        let (p, d) = (self.config.codesim.p, self.config.codesim.d);
        let purpose = if self.codesim.rounds < d {
            self.codesim.rounds += 1;
            Purpose::SimDebug
        } else if self.codesim.more_plans + 1 < p {
            self.codesim.more_plans += 1;
            self.codesim.rounds = 0;
            self.codesim.simulation.clear();
            Purpose::SimPlan
        } else {
            return self.finish(events, TaskStatus::Failed, None);
        };
        self.iteration += 1;
        events.push(self.iteration_started());
        self.call(events, purpose)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_verdict_line_decides_and_the_plan_follows_its_heading() {
        assert_eq!(verdict("step 1 ...\nNo Plan Modification Needed"), Some(Verdict::Keep));
        assert_eq!(verdict("**Plan Modification Needed**: step 2 is wrong"), Some(Verdict::Change));
        // The verdict at the end wins over one quoted earlier.
        assert_eq!(
            verdict("Either 'No Plan Modification Needed' or not.\n...\nPlan Modification Needed"),
            Some(Verdict::Change)
        );
        assert_eq!(verdict("the output is 5, as expected"), None);
        assert_eq!(plan_of("### Problem Understanding\nx\n### Plan\n1. a\n2. b"), "1. a\n2. b");
        assert_eq!(plan_of("1. just steps"), "1. just steps");
        assert_eq!(plan_of("### Plan\n   "), "");
    }
}
