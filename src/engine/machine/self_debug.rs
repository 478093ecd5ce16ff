//! Self-debugging (Chen et al., "Teaching Large Language Models to Self-Debug"): a seed program,
//! then up to max-iters turns of feedback from the failing visible tests and a fix, in ONE growing
//! conversation (the model sees all its earlier programs and the feedback on each). It stops when
//! the visible tests pass; the hidden tests then decide, and are never fed back.

use crate::agents::Purpose;
use crate::record::{Event, TaskStatus};

use super::Transition;
use super::method::Method;
use super::shared::{Prompted, Shared};

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

pub(super) struct SelfDebug;

impl Prompted for SelfDebug {}

impl Method for SelfDebug {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::SelfDebugSeed)
    }

    /// The next turn: feedback on this round's visible tests, then the model fixes its program.
    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        if m.out_of_rounds() {
            return m.finish(events, TaskStatus::Failed, None);
        }
        m.converse(self, events, Purpose::SelfDebugFix, true)
    }

    fn takes_seed(&self) -> bool {
        true
    }

    fn seed_opening(&self) -> Option<Purpose> {
        Some(Purpose::SelfDebugSeed)
    }
}
