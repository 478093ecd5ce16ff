//! Self-debugging (Chen et al., "Teaching Large Language Models to Self-Debug"): a seed program,
//! then up to max-iters turns of feedback from the failing visible tests and a fix, in ONE growing
//! conversation (the model sees all its earlier programs and the feedback on each). It stops when
//! the visible tests pass; the hidden tests then decide, and are never fed back.

use crate::agents::Purpose;
use crate::llm::Message;
use crate::record::Event;

use super::{TaskMachine, Transition};

/// What each feedback turn tells the model (the paper's feedback formats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum SelfDebugFeedback {
    /// Only that the code is wrong.
    Simple,
    /// The failing visible tests with the real output or exception.
    #[default]
    UnitTest,
    /// As unit-test, and the model first explains its code line by line.
    Explain,
    /// As unit-test, and the model first dry-runs the failing test line by line (the paper's
    /// "+Trace": a trace the model simulates, not a real one; `ldb` has real ones).
    Trace,
}

impl SelfDebugFeedback {
    pub fn name(self) -> &'static str {
        match self {
            SelfDebugFeedback::Simple => "simple",
            SelfDebugFeedback::UnitTest => "unit-test",
            SelfDebugFeedback::Explain => "explain",
            SelfDebugFeedback::Trace => "trace",
        }
    }

    pub fn from_name(name: &str) -> Option<SelfDebugFeedback> {
        [Self::Simple, Self::UnitTest, Self::Explain, Self::Trace]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

impl TaskMachine {
    /// A self-debug answer joins the conversation (the seed's prompt opened it).
    pub(super) fn remember_answer(&mut self, answer: &str) {
        if matches!(
            self.last_purpose,
            Some(Purpose::SelfDebugSeed | Purpose::SelfDebugFix | Purpose::LdbSeed | Purpose::LdbVerdict | Purpose::LdbFix)
        ) {
            self.conversation.push(Message::assistant(answer.to_string()));
        }
    }

    /// The next turn: feedback on this round's visible tests, then the model fixes its program.
    pub(super) fn self_debug_turn(&mut self, events: Vec<Event>) -> Transition {
        self.converse(events, Purpose::SelfDebugFix, true)
    }
}
