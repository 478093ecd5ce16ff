//! A fork's prefix: the outcomes its parent run recorded for one task, handed back to the same
//! state machine effect by effect, so the fork reaches the start of its iteration with exactly the
//! parent's guidance, code, analysis, memory hit and token counts, and no LLM call or sandbox run.
//! Every replayed agent call is checked against the recorded request: if the prompts or rgd
//! changed since, the machine asks for something else, and the fork stops rather than diverge.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::machine::{Effect, Outcome};
use crate::llm::{CallParams, ChatResponse, Message};
use crate::record::Event;

/// One effect's recorded outcome.
enum Recorded {
    Agent {
        messages: Vec<Message>,
        params: CallParams,
        outcome: Outcome,
    },
    Other(Outcome),
}

pub struct Replay {
    pub task_id: String,
    /// Effects are replayed while the machine is in an earlier iteration than this.
    pub before_iteration: u32,
    outcomes: Mutex<VecDeque<Recorded>>,
}

impl Replay {
    /// From the parent's events of its last attempt at `task_id`, in order.
    pub fn from_events(task_id: &str, before_iteration: u32, events: &[Event]) -> Result<Replay, String> {
        let start = events
            .iter()
            .rposition(|e| matches!(e, Event::TaskStarted { task_id: t, .. } if t == task_id))
            .ok_or_else(|| format!("the parent run never started {task_id}"))?;
        let mut outcomes = VecDeque::new();
        let mut request: Option<(Vec<Message>, CallParams)> = None;
        for event in &events[start..] {
            if event.task_id() != Some(task_id) {
                continue;
            }
            let outcome = match event {
                Event::Intervened { iteration, field, .. } if *iteration < before_iteration => {
                    return Err(format!(
                        "{task_id} was changed by hand in iteration {iteration} ({field}) of the parent run; fork at or before it"
                    ));
                }
                Event::AgentRequest { messages, params, .. } => {
                    request = Some((messages.clone(), params.clone()));
                    continue;
                }
                Event::AgentResponse {
                    text,
                    usage,
                    latency_ms,
                    attempts,
                    finish_reason,
                    served_model,
                    ..
                } => Outcome::Agent(Ok(ChatResponse {
                    text: text.clone(),
                    usage: *usage,
                    finish_reason: finish_reason.clone(),
                    attempts: *attempts,
                    latency_ms: *latency_ms,
                    served_model: served_model.clone(),
                })),
                Event::AgentFailed { error, .. } => Outcome::Agent(Err(error.clone())),
                Event::TestsRun { report, .. } => Outcome::Tests(Ok(report.clone())),
                Event::TestTraced { trace, .. } => Outcome::Traced(Ok(trace.clone())),
                Event::MemoryHit { hit, .. } => Outcome::Memory(hit.clone()),
                Event::MemoryStored { entry_id, error, .. } => Outcome::Stored(match (entry_id, error) {
                    (Some(id), _) => Ok(id.clone()),
                    (None, e) => Err(e.clone().unwrap_or_default()),
                }),
                _ => continue,
            };
            outcomes.push_back(match (request.take(), outcome) {
                (Some((messages, params)), outcome @ Outcome::Agent(_)) => Recorded::Agent { messages, params, outcome },
                (_, outcome) => Recorded::Other(outcome),
            });
        }
        Ok(Replay {
            task_id: task_id.to_string(),
            before_iteration,
            outcomes: Mutex::new(outcomes),
        })
    }

    /// The recorded outcome of `effect`, or why the record and the machine part ways. A replayed
    /// call takes the parameters it was sent with then (a fork's own apply from its fork point).
    pub fn next(&self, effect: &mut Effect) -> Result<Outcome, String> {
        let mut outcomes = self.outcomes.lock().unwrap_or_else(|p| p.into_inner());
        let diverged =
            |what: &str| format!("the fork does not replay its parent: {what} (the prompts or rgd changed since the parent ran)");
        match (effect, outcomes.pop_front()) {
            (
                Effect::CallAgent { messages, params, .. },
                Some(Recorded::Agent {
                    messages: recorded,
                    params: sent,
                    outcome,
                }),
            ) => {
                if *messages == recorded {
                    *params = sent;
                    Ok(outcome)
                } else {
                    Err(diverged("an agent call's messages differ from the recorded request"))
                }
            }
            (Effect::RunTests { .. } | Effect::RunOwnTests { .. }, Some(Recorded::Other(outcome @ Outcome::Tests(_))))
            | (Effect::TraceTest { .. }, Some(Recorded::Other(outcome @ Outcome::Traced(_))))
            | (Effect::QueryMemory { .. }, Some(Recorded::Other(outcome @ Outcome::Memory(_))))
            | (Effect::StoreMemory { .. }, Some(Recorded::Other(outcome @ Outcome::Stored(_)))) => Ok(outcome),
            (_, None) => Err(diverged("the record ends before the fork point")),
            _ => Err(diverged("the next recorded step is of another kind")),
        }
    }
}
