//! RGD (Refinement and Guidance Debugging): the Guide agent writes guidance from the task, the
//! Debug agent writes the code from it; while the visible tests fail (or the hidden ones do: the
//! agents learn only that the code was not accepted, never which tests failed), the Feedback
//! agent analyses the visible results (with a real trace of a failing test under `--trace`), the
//! Guide refines its guidance with that analysis and the best matching past guidance from the
//! memory pool, and the Debug agent repairs the code, up to max-iters rounds. A task solved with
//! guidance is remembered: the Guide names its keywords and the entry is stored. `--no-guide` and
//! `--no-feedback` take those agents out (the paper's ablations).

use crate::agents::Purpose;
use crate::record::{Event, TaskStatus};

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Effect, MemoryRecord, Outcome, Phase, Step, Transition};

pub(super) struct Rgd;

impl Prompted for Rgd {}

impl Method for Rgd {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        let first = if m.config.guide { Purpose::GuideInit } else { Purpose::DebugInit };
        m.call(self, events, first)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            // `--trace`: the Feedback agent gets the real execution of a failing test.
            (Phase::Trace, Outcome::Traced(traced)) => {
                m.keep_trace(traced);
                m.call(self, vec![], Purpose::Feedback)
            }
            (Phase::GuideInit, Outcome::Agent(Ok(resp))) => {
                m.guidance = resp.text.trim().to_string();
                m.call(self, vec![], Purpose::DebugInit)
            }
            (Phase::Refine, Outcome::Agent(Ok(resp))) => {
                m.guidance = resp.text.trim().to_string();
                m.iteration += 1;
                let events = vec![m.iteration_started()];
                m.call(self, events, Purpose::DebugFix)
            }
            (Phase::Feedback, Outcome::Agent(Ok(resp))) => {
                m.analysis = resp.text.trim().to_string();
                self.refine(m)
            }
            (Phase::Memory, Outcome::Memory(hit)) => {
                m.retrieved = hit;
                m.call(self, vec![], Purpose::GuideRefine)
            }
            (Phase::Keywords, Outcome::Agent(answer)) => {
                // A failed keyword call costs the entry its LLM keywords, not the task its success.
                let keywords = answer.map(|resp| crate::agents::parse_keywords(&resp.text)).unwrap_or_default();
                m.phase = Phase::Store;
                let record = MemoryRecord {
                    task_id: m.task.id.clone(),
                    entry_point: m.task.entry_point.clone(),
                    question: m.task.prompt.clone(),
                    guidance: m.guidance.clone(),
                    keywords,
                    code: m.code.clone().unwrap_or_default(),
                };
                Transition {
                    events: vec![],
                    step: Step::Run(Effect::StoreMemory { record }),
                }
            }
            (Phase::Store, Outcome::Stored(_)) => m.solved(),
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// The Feedback agent analyses the round (after a traced failing test under `--trace`), or,
    /// without it, the refinement reads the raw results.
    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        if m.out_of_rounds() {
            return m.finish(events, TaskStatus::Failed, None);
        }
        if let (Some(mode), true) = (m.config.trace, m.config.feedback) {
            return match m.trace_failing(events, mode) {
                Ok(transition) => transition,
                // Nothing to trace this round (no code, all visible passed, stdin tests).
                Err((events, _)) => m.call(self, events, Purpose::Feedback),
            };
        }
        if !m.config.feedback {
            // The refinement reads the raw results; the events of this round still go out.
            let mut next = self.refine(m);
            let mut all = events;
            all.append(&mut next.events);
            next.events = all;
            return next;
        }
        m.call(self, events, Purpose::Feedback)
    }

    /// The agents learn only that the code was not accepted, never which tests failed.
    fn hidden_failed(&mut self, m: &mut Shared) -> Transition {
        m.hidden_failed = true;
        self.next_round(m, vec![])
    }

    /// A proven success with guidance is remembered (without guidance there is nothing worth
    /// remembering): the Guide names its keywords first.
    fn solved(&mut self, m: &mut Shared, proven: bool) -> Transition {
        if proven && m.config.memory && m.config.guide {
            m.call(self, vec![], Purpose::Keywords)
        } else {
            m.solved()
        }
    }

    fn rerenders(&self, purpose: Purpose) -> bool {
        use Purpose::*;
        matches!(purpose, GuideInit | GuideRefine | DebugInit | DebugFix | Feedback | Keywords)
    }

    fn takes_seed(&self) -> bool {
        true
    }
}

impl Rgd {
    /// After the analysis (or, without the Feedback agent, straight after the tests): the Guide
    /// refines (with the best past guidance when memory is on); without the Guide, the Debug
    /// agent repairs at once.
    fn refine(&mut self, m: &mut Shared) -> Transition {
        if !m.config.guide {
            m.iteration += 1;
            let events = vec![m.iteration_started()];
            return m.call(self, events, Purpose::DebugFix);
        }
        if m.config.memory {
            m.phase = Phase::Memory;
            let query = m.task.prompt.clone();
            let events = vec![Event::MemoryQuery {
                task_id: m.task.id.clone(),
                iteration: m.iteration,
                query: query.clone(),
            }];
            return Transition {
                events,
                step: Step::Run(Effect::QueryMemory { query }),
            };
        }
        m.call(self, vec![], Purpose::GuideRefine)
    }
}
