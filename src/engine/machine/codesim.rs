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

use crate::agents::{Purpose, TurnContext};
use crate::record::{Event, TaskStatus};

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Outcome, Phase, Transition};

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

impl Prompted for CodeSim {
    fn fill(&self, ctx: &mut TurnContext, _m: &Shared) {
        ctx.simulation = self.simulation.clone();
    }
}

impl Method for CodeSim {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::SimPlan)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            (Phase::SimPlan, Outcome::Agent(Ok(resp))) => self.planned(m, &resp.text),
            (Phase::Simulate, Outcome::Agent(Ok(resp))) => self.simulated(m, &resp.text),
            (Phase::SimRefine, Outcome::Agent(Ok(resp))) => self.refined(m, &resp.text),
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// The visible tests failed (or the answer held no code): a debug round, a new plan, or the end.
    fn next_round(&mut self, m: &mut Shared, mut events: Vec<Event>) -> Transition {
        let (p, d) = (m.config.codesim.p, m.config.codesim.d);
        let purpose = if self.rounds < d {
            self.rounds += 1;
            Purpose::SimDebug
        } else if self.more_plans + 1 < p {
            self.more_plans += 1;
            self.rounds = 0;
            self.simulation.clear();
            Purpose::SimPlan
        } else {
            return m.finish(events, TaskStatus::Failed, None);
        };
        m.iteration += 1;
        events.push(m.iteration_started());
        m.call(self, events, purpose)
    }
}

impl CodeSim {
    /// The planning agent's answer: its plan is simulated next.
    fn planned(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let plan = plan_of(answer);
        if plan.is_empty() {
            return self.unreadable(m, Purpose::SimPlan, "the answer holds no plan", "the task is coded without a plan");
        }
        m.plan = plan;
        m.call(self, vec![], Purpose::Simulate)
    }

    /// The simulation's verdict: code from the plan, or revise it first.
    fn simulated(&mut self, m: &mut Shared, answer: &str) -> Transition {
        match verdict(answer) {
            None => self.unreadable(
                m,
                Purpose::Simulate,
                "the simulation ends in neither 'Plan Modification Needed' nor 'No Plan Modification Needed'",
                "the plan is coded as it is",
            ),
            Some(Verdict::Keep) => m.call(self, vec![], Purpose::SimCode),
            Some(Verdict::Change) => {
                self.simulation = answer.trim().to_string();
                m.call(self, vec![], Purpose::SimRefine)
            }
        }
    }

    /// The revised plan is coded (the paper does not simulate it again).
    fn refined(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let plan = plan_of(answer);
        let mut events = Vec::new();
        if plan.is_empty() {
            events.push(m.malformed(Purpose::SimRefine, "the answer holds no plan".into(), "the plan is kept as it was"));
        } else {
            m.plan = plan;
        }
        m.call(self, events, Purpose::SimCode)
    }

    /// An answer that could not be read: asked once more, then `fallback`.
    fn unreadable(&mut self, m: &mut Shared, purpose: Purpose, error: &str, fallback: &str) -> Transition {
        if let Some(repeat) = m.ask_again(self, purpose, error) {
            return repeat;
        }
        let event = m.malformed(purpose, error.into(), fallback);
        m.call(self, vec![event], Purpose::SimCode)
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
