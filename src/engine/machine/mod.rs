//! One task's course as a state machine. It never performs I/O: each step returns the next effect
//! (call an agent, run tests, query memory) as data plus the domain events it implies, and
//! consumes the effect's outcome. A runner executes effects; tests drive it directly.
//!
//! The shared loop here handles what every method does alike: a program answered and judged by
//! the visible and then the hidden tests, failed calls and sandboxes, the debugger's edits. It
//! names no method: at each point where methods differ it asks the task's `Method` (`method.rs`),
//! whose phases, state and decisions live in its own file (`rgd.rs`, `ldb.rs`, `lpw.rs` ...).
//! The words they share (`Effect`, `Outcome`, `Phase`) are in `vocabulary.rs`, the state and
//! helpers every method uses in `shared.rs`.

use std::sync::Arc;

use crate::agents::{Prompts, Retrieved};
use crate::dataset::{Task, TestCase};
use crate::llm::Message;
use crate::record::{Suite, TaskStatus};
use crate::sandbox::RunReport;

mod calls;
mod codesim;
mod config;
mod ldb;
mod lpw;
mod mapcoder;
mod method;
mod mgdebugger;
mod one_shot;
mod reflexion;
mod rgd;
mod self_debug;
mod shared;
mod trace;
mod vocabulary;

pub use config::{LoopConfig, Strategy};
pub use self_debug::SelfDebugFeedback;
use shared::Shared;
use vocabulary::Phase;
pub use vocabulary::{Effect, MemoryRecord, Outcome, Step, Transition};

pub struct TaskMachine {
    core: Shared,
    method: Box<dyn method::Method>,
}

impl TaskMachine {
    pub fn new(task: Arc<Task>, prompts: Arc<Prompts>, config: Arc<LoopConfig>) -> Self {
        let method = machine_of(config.strategy);
        TaskMachine {
            core: Shared::new(task, prompts, config),
            method,
        }
    }

    pub fn iteration(&self) -> u32 {
        self.core.iteration
    }

    /// The memory hit the Guide's refinement is (or was last) shown.
    pub fn retrieved(&self) -> Option<&Retrieved> {
        self.core.retrieved.as_ref()
    }

    /// The debugger changed something: the result will say so.
    pub fn mark_intervened(&mut self) {
        self.core.intervened = true;
    }

    /// The program a pending test run will judge, edited by hand: it is this task's code from now on.
    pub fn set_code(&mut self, code: String) {
        self.core.code = Some(code);
    }

    /// New guidance, by hand. Returns the old guidance and, when the pending call is one rendered
    /// from it, that call rendered again.
    pub fn replace_guidance(&mut self, guidance: String) -> (String, Option<Effect>) {
        let old = std::mem::replace(&mut self.core.guidance, guidance);
        (old, self.rerender())
    }

    /// Withdraws the memory hit; returns its task id and the pending refinement rendered without it.
    pub fn drop_retrieved(&mut self) -> Option<(String, Option<Effect>)> {
        let hit = self.core.retrieved.take()?;
        Some((hit.task_id, self.rerender()))
    }

    /// The pending call again, from the current state (only calls rendered from a prompt, not
    /// conversations, and only while one is pending).
    fn rerender(&mut self) -> Option<Effect> {
        let purpose = self.core.last_purpose?;
        if !self.method.rerenders(purpose) || self.core.phase == Phase::Done {
            return None;
        }
        match self.core.call(&*self.method, vec![], purpose).step {
            Step::Run(effect) => Some(effect),
            Step::Finished(_) => None,
        }
    }

    /// The person ended the task.
    pub fn abort(&mut self) -> Transition {
        self.core.intervened = true;
        self.end_with_error("aborted by hand".into())
    }

    /// Ends the task with an error the runner met (a fork whose record does not replay).
    pub fn end_with_error(&mut self, why: String) -> Transition {
        self.core.finish(vec![], TaskStatus::Error, Some(why))
    }

    /// Round 1: the method's first call, or the seed (`--seed-from`) as the first program.
    pub fn start(&mut self) -> Transition {
        let m = &mut self.core;
        m.iteration = 1;
        m.phase = Phase::GuideInit;
        let events = vec![m.iteration_started()];
        if let Some(seed) = self.seed() {
            return self.start_from_seed(events, seed);
        }
        self.method.start(&mut self.core, events)
    }

    /// This task's seed, for the methods that take one. A seed counts as solved only if it passes
    /// the visible tests and then the hidden ones, never by a hidden result alone (the RGD
    /// reference code skipped tasks by their hidden-test result, a leak rgd does not copy).
    fn seed(&self) -> Option<String> {
        if !self.method.takes_seed() {
            return None;
        }
        let m = &self.core;
        m.config.seeds.as_ref()?.get(&m.task.id).filter(|c| !c.trim().is_empty()).cloned()
    }

    /// The seed as iteration 1's code. The conversational methods see it as their own first
    /// answer to their seed prompt, so the turns that follow read as they would have.
    fn start_from_seed(&mut self, events: Vec<crate::record::Event>, seed: String) -> Transition {
        let answer = format!("```python\n{}\n```", seed.trim_end());
        if let Some(purpose) = self.method.seed_opening() {
            let m = &mut self.core;
            match m.prompts.render(purpose, &m.context(&*self.method)) {
                Ok(messages) => {
                    m.conversation = messages;
                    m.conversation.push(Message::assistant(answer.clone()));
                }
                Err(e) => return m.finish(events, TaskStatus::Error, Some(e.to_string())),
            }
            m.last_purpose = Some(purpose);
        }
        method::program_answered(&mut *self.method, &mut self.core, events, &answer)
    }

    pub fn advance(&mut self, outcome: Outcome) -> Transition {
        let m = &mut self.core;
        if let Outcome::Tests(Ok(report)) = &outcome {
            if m.tampered.is_none() {
                m.tampered = report.tampered().map(str::to_string);
            }
            // The verdict's strength is the last run's: the one that decided the task.
            m.best_effort = report.best_effort.clone();
        }
        // Every answer is counted once, for the agent of the call in flight.
        if let (Outcome::Agent(Ok(resp)), Some(purpose)) = (&outcome, m.last_purpose) {
            m.count(purpose.agent(), resp);
        }
        // Under `--allow-flag`, an answer to a prompt that showed the visible results may say one
        // contradicts the task: the task ends there, whatever the method would do next.
        if let (Outcome::Agent(Ok(resp)), Some(purpose)) = (&outcome, m.last_purpose)
            && purpose.may_flag()
            && let Some(flag) = m.flag_in(&resp.text)
        {
            return m.flagged(flag);
        }
        let phase = m.phase;
        // The method's own phases first; what it hands back is the shared loop's.
        let outcome = match self.method.advance(&mut self.core, phase, outcome) {
            Ok(transition) => return transition,
            Err(outcome) => *outcome,
        };
        let m = &mut self.core;
        match (phase, outcome) {
            // A failed call: the task still waits in the phase of the call in flight (RGD's
            // Keywords call, whose failure costs nothing, is its own method's to handle).
            (phase, Outcome::Agent(Err(e))) if m.last_purpose.map(Phase::of_call) == Some(phase) => {
                // The call in flight (`send` records it with every call).
                let purpose = m.last_purpose.unwrap_or(crate::agents::Purpose::Feedback);
                // Refused for what this task asked (400, 413, 422): the task's own end. Anything
                // else is the endpoint's failure, and the task stays to be run again.
                let status = match e.status {
                    Some(400 | 413 | 422) => TaskStatus::Error,
                    _ => TaskStatus::EndpointFailed,
                };
                m.finish(vec![], status, Some(format!("{} agent: {e}", purpose.agent().name())))
            }
            (Phase::Debug, Outcome::Agent(Ok(resp))) => {
                m.remember_answer(&resp.text);
                method::program_answered(&mut *self.method, &mut self.core, vec![], &resp.text)
            }
            (Phase::Visible, Outcome::Tests(Ok(report))) => {
                let all = report.all_passed();
                m.visible = Some(report);
                if !all {
                    return self.method.visible_failed(&mut self.core);
                }
                let events = self.method.visible_passed(m).map(|text| m.note(text)).into_iter().collect();
                m.phase = Phase::Hidden;
                let code = m.code.clone().unwrap_or_default();
                Transition {
                    events,
                    step: Step::Run(Effect::RunTests {
                        suite: Suite::Hidden,
                        code,
                    }),
                }
            }
            (Phase::Hidden, Outcome::Tests(Ok(report))) => {
                if report.all_passed() {
                    // A task caught tampering proves nothing (`proves`), and an in-process
                    // verdict only with the user's leave: neither may be remembered.
                    let proven = crate::record::proves(true, m.tampered.as_deref()).is_ok()
                        && (m.best_effort.is_none() || m.config.allow_in_process);
                    self.method.solved(&mut self.core, proven)
                } else {
                    self.method.hidden_failed(&mut self.core)
                }
            }
            (Phase::FinalJudge, Outcome::Tests(result)) => {
                m.final_hidden = Some(result.as_ref().is_ok_and(RunReport::all_passed));
                let (status, error) = m.pending_end.take().unwrap_or((TaskStatus::Failed, None));
                m.finish(vec![], status, error)
            }
            (Phase::Visible | Phase::Hidden | Phase::OwnTests, Outcome::Tests(Err(e))) => {
                m.finish(vec![], TaskStatus::Error, Some(format!("sandbox: {e}")))
            }
            (phase, outcome) => {
                // A runner bug, not a model or program failure: end the task visibly rather than panic.
                m.finish(
                    vec![],
                    TaskStatus::Error,
                    Some(format!("internal: outcome {outcome:?} in phase {phase:?}")),
                )
            }
        }
    }
}

/// The machine of `strategy`: the one place a strategy's name picks its machine.
fn machine_of(strategy: Strategy) -> Box<dyn method::Method> {
    match strategy {
        Strategy::Rgd => Box::new(rgd::Rgd),
        Strategy::Direct => Box::new(one_shot::OneShot(crate::agents::Purpose::Direct)),
        Strategy::Cot => Box::new(one_shot::OneShot(crate::agents::Purpose::Cot)),
        Strategy::SelfPlanning => Box::new(one_shot::SelfPlanning),
        Strategy::SelfDebug => Box::new(self_debug::SelfDebug),
        Strategy::Ldb => Box::new(ldb::Ldb),
        Strategy::Reflexion => Box::<reflexion::Reflexion>::default(),
        Strategy::MapCoder => Box::<mapcoder::MapCoder>::default(),
        Strategy::CodeSim => Box::<codesim::CodeSim>::default(),
        Strategy::Lpw => Box::<lpw::Lpw>::default(),
        Strategy::MgDebugger => Box::<mgdebugger::MgDebugger>::default(),
    }
}

/// Used by tests and `datasets verify`: which tests an effect refers to.
pub fn suite_tests(task: &Task, suite: Suite) -> &[TestCase] {
    match suite {
        Suite::Visible => &task.visible,
        Suite::Hidden => &task.hidden,
        // A printed run runs the visible tests on the program with prints.
        Suite::Printed => &task.visible,
        // The model's own tests travel in their effect (`Effect::RunOwnTests`).
        Suite::Own => &[],
    }
}
