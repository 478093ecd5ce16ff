//! Reflexion (Shinn et al., "Reflexion: Language Agents with Verbal Reinforcement Learning"), as
//! its programming runs do it on HumanEval and MBPP: the model first writes its own unit tests
//! from the task (kept only if they parse and call the entry point); it implements, runs its own
//! tests, reflects in words on why they fail, and implements again given the last program, its
//! test results and the reflection. The task's visible tests are never shown to it (as in the
//! paper); its own tests only steer. When they pass, or the iterations run out, the last program
//! is judged like every strategy's: visible tests, then hidden ones, neither fed back.
//! Tasks read from standard input have no function to assert on: there, Reflexion writes no
//! tests and implements once.

use crate::agents::{PromptTestResult, Purpose, TurnContext, parse_self_tests};
use crate::dataset::TestCase;
use crate::record::{Event, TaskStatus};
use crate::sandbox::RunReport;

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Effect, Outcome, Phase, Step, Transition};

/// Reflexion keeps at most this many of the model's tests (its `max_num_tests`).
pub(super) const MAX_SELF_TESTS: usize = 5;

/// What Reflexion keeps besides the shared state.
#[derive(Debug, Default)]
pub(super) struct Reflexion {
    /// The model's own tests.
    own: Vec<TestCase>,
    /// The last program's run of them.
    report: Option<RunReport>,
}

impl Prompted for Reflexion {
    /// Reflexion sees its own tests' results, never the visible tests'.
    fn fill(&self, ctx: &mut TurnContext, _m: &Shared) {
        if let Some(report) = &self.report {
            ctx.results = PromptTestResult::from_report(&self.own, report);
            ctx.passed = report.passed();
        }
        ctx.max_self_tests = MAX_SELF_TESTS;
    }
}

impl Method for Reflexion {
    /// The first call asks for tests; without a function to call, the first implementation.
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        if m.task.entry_point.is_empty() {
            m.call(self, events, Purpose::ReflexionImplement)
        } else {
            m.call(self, events, Purpose::SelfTests)
        }
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            (Phase::SelfTests, Outcome::Agent(Ok(resp))) => self.tests_written(m, &resp.text),
            (Phase::OwnTests, Outcome::Tests(Ok(report))) => self.tested(m, report),
            (Phase::Reflect, Outcome::Agent(Ok(resp))) => self.reflected(m, &resp.text),
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// A new program runs the model's own tests; with none, it goes to judgement at once.
    fn code_ready(&mut self, m: &mut Shared, events: Vec<Event>, code: String) -> Transition {
        if self.own.is_empty() {
            return m.run_visible(events, code);
        }
        m.phase = Phase::OwnTests;
        Transition {
            events,
            step: Step::Run(Effect::RunOwnTests {
                code,
                tests: self.own.clone(),
            }),
        }
    }

    /// After a failed round (own tests failed, or no usable code): reflect and try again, or, with
    /// the iterations spent, the last program is judged as it is (the model's tests may be the
    /// ones that are wrong).
    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        if m.out_of_rounds() || m.task.entry_point.is_empty() {
            return match m.code.clone().filter(|_| m.problem.is_none()) {
                Some(code) => m.run_visible(events, code),
                None => m.finish(events, TaskStatus::Failed, None),
            };
        }
        if m.problem.is_some() {
            // An answer without usable code: its results are not this program's.
            self.report = None;
        }
        m.call(self, events, Purpose::Reflect)
    }

    /// The last program was judged: the visible tests never steer Reflexion.
    fn visible_failed(&mut self, m: &mut Shared) -> Transition {
        m.finish(vec![], TaskStatus::Failed, None)
    }
}

impl Reflexion {
    /// The tests the model wrote, parsed; then the first implementation.
    fn tests_written(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let parsed = parse_self_tests(answer, &m.task.entry_point, MAX_SELF_TESTS);
        self.own = parsed.kept.iter().map(|src| TestCase::Assert { src: src.clone() }).collect();
        let event = Event::SelfTests {
            task_id: m.task.id.clone(),
            iteration: m.iteration,
            kept: parsed.kept,
            dropped: parsed.dropped,
        };
        m.call(self, vec![event], Purpose::ReflexionImplement)
    }

    /// Own tests passed: judgement. Failed: reflect, unless the iterations are spent.
    fn tested(&mut self, m: &mut Shared, report: RunReport) -> Transition {
        let passed = report.all_passed();
        self.report = Some(report);
        match (passed, m.code.clone()) {
            (true, Some(code)) => m.run_visible(vec![], code),
            _ => self.next_round(m, vec![]),
        }
    }

    /// The reflection is kept; the next implementation starts a new iteration.
    fn reflected(&mut self, m: &mut Shared, reflection: &str) -> Transition {
        m.analysis = reflection.trim().to_string();
        m.iteration += 1;
        let events = vec![m.iteration_started()];
        m.call(self, events, Purpose::ReflexionFix)
    }
}
