//! Starting from another run's programs (`--seed-from`), as LDB and the RGD reference did: the
//! seed is the first iteration's code, tested like any answer. A seed counts as solved only if it
//! passes the visible tests and then the hidden ones, never by a hidden result alone (the RGD
//! reference code skipped tasks by their hidden-test result, a leak rgd does not copy).

use crate::agents::Purpose;
use crate::llm::Message;
use crate::record::Event;

use super::{Strategy, TaskMachine, Transition};

impl TaskMachine {
    /// This task's seed, for the strategies that take one.
    pub(super) fn seed(&self) -> Option<String> {
        if !matches!(
            self.config.strategy,
            Strategy::Rgd | Strategy::SelfDebug | Strategy::Ldb | Strategy::MgDebugger
        ) {
            return None;
        }
        self.config
            .seeds
            .as_ref()?
            .get(&self.task.id)
            .filter(|c| !c.trim().is_empty())
            .cloned()
    }

    /// The seed as iteration 1's code. The conversational strategies see it as their own first
    /// answer to their seed prompt, so the turns that follow read as they would have.
    pub(super) fn start_from_seed(&mut self, mut events: Vec<Event>, seed: String) -> Transition {
        let answer = format!("```python\n{}\n```", seed.trim_end());
        let opening = match self.config.strategy {
            Strategy::SelfDebug => Some(Purpose::SelfDebugSeed),
            Strategy::Ldb => Some(Purpose::LdbSeed),
            _ => None,
        };
        if let Some(purpose) = opening {
            match self.prompts.render(purpose, &self.context()) {
                Ok(messages) => {
                    self.conversation = messages;
                    self.conversation.push(Message::assistant(answer.clone()));
                }
                Err(e) => return self.finish(events, crate::record::TaskStatus::Error, Some(e.to_string())),
            }
            self.last_purpose = Some(purpose);
        }
        let mut next = self.on_code(&answer);
        events.append(&mut next.events);
        next.events = events;
        next
    }
}
