//! Reflexion (Shinn et al., "Reflexion: Language Agents with Verbal Reinforcement Learning"), as
//! its programming runs do it on HumanEval and MBPP: the model first writes its own unit tests
//! from the task (kept only if they parse and call the entry point); it implements, runs its own
//! tests, reflects in words on why they fail, and implements again given the last program, its
//! test results and the reflection. The task's visible tests are never shown to it (as in the
//! paper); its own tests only steer. When they pass, or the iterations run out, the last program
//! is judged like every strategy's: visible tests, then hidden ones, neither fed back.
//! Tasks read from standard input have no function to assert on: there, Reflexion writes no
//! tests and implements once.

use crate::agents::{Purpose, parse_self_tests};
use crate::dataset::TestCase;
use crate::record::{Event, Suite, TaskStatus};
use crate::sandbox::RunReport;

use super::{Effect, Phase, Step, TaskMachine, Transition};

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

impl Reflexion {
    /// The own tests and their last results, for the prompts.
    pub(super) fn results(&self) -> Option<(&[TestCase], &RunReport)> {
        self.report.as_ref().map(|r| (self.own.as_slice(), r))
    }
}

impl TaskMachine {
    /// The first call asks for tests; without a function to call, the first implementation.
    pub(super) fn reflexion_start(&mut self, events: Vec<Event>) -> Transition {
        if self.task.entry_point.is_empty() {
            self.call(events, Purpose::ReflexionImplement)
        } else {
            self.call(events, Purpose::SelfTests)
        }
    }

    /// The tests the model wrote, parsed; then the first implementation.
    pub(super) fn reflexion_tests_written(&mut self, answer: &str) -> Transition {
        let parsed = parse_self_tests(answer, &self.task.entry_point, MAX_SELF_TESTS);
        self.reflexion.own = parsed.kept.iter().map(|src| TestCase::Assert { src: src.clone() }).collect();
        let event = Event::SelfTests {
            task_id: self.task.id.clone(),
            iteration: self.iteration,
            kept: parsed.kept,
            dropped: parsed.dropped,
        };
        self.call(vec![event], Purpose::ReflexionImplement)
    }

    /// A new program runs the model's own tests; with none, it goes to judgement at once.
    pub(super) fn reflexion_test(&mut self, events: Vec<Event>, code: String) -> Transition {
        if self.reflexion.own.is_empty() {
            return self.judge(events, code);
        }
        self.phase = Phase::OwnTests;
        Transition {
            events,
            step: Step::Run(Effect::RunOwnTests {
                code,
                tests: self.reflexion.own.clone(),
            }),
        }
    }

    /// Own tests passed: judgement. Failed: reflect, unless the iterations are spent.
    pub(super) fn reflexion_tested(&mut self, report: RunReport) -> Transition {
        let passed = report.all_passed();
        self.reflexion.report = Some(report);
        match (passed, self.code.clone()) {
            (true, Some(code)) => self.judge(vec![], code),
            _ => self.reflexion_next(vec![]),
        }
    }

    /// After a failed round (own tests failed, or no usable code): reflect and try again, or, with
    /// the iterations spent, the last program is judged as it is (the model's tests may be the
    /// ones that are wrong).
    pub(super) fn reflexion_next(&mut self, events: Vec<Event>) -> Transition {
        if self.iteration >= self.config.max_iters || self.task.entry_point.is_empty() {
            return match self.code.clone().filter(|_| self.problem.is_none()) {
                Some(code) => self.judge(events, code),
                None => self.finish(events, TaskStatus::Failed, None),
            };
        }
        if self.problem.is_some() {
            // An answer without usable code: its results are not this program's.
            self.reflexion.report = None;
        }
        self.call(events, Purpose::Reflect)
    }

    /// The reflection is kept; the next implementation starts a new iteration.
    pub(super) fn reflexion_reflected(&mut self, reflection: &str) -> Transition {
        self.analysis = reflection.trim().to_string();
        self.iteration += 1;
        let events = vec![self.iteration_started()];
        self.call(events, Purpose::ReflexionFix)
    }

    /// The final program meets the task's tests: visible, then hidden; the model hears of neither.
    fn judge(&mut self, events: Vec<Event>, code: String) -> Transition {
        self.phase = Phase::Visible;
        Transition {
            events,
            step: Step::Run(Effect::RunTests {
                suite: Suite::Visible,
                code,
            }),
        }
    }
}
