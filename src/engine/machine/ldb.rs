//! LDB (Zhong et al., "Debugging like a Human"): debugging from REAL executions. After a round
//! whose visible tests fail, one failing visible test (a seeded choice: the same run picks the
//! same test) runs traced in the sandbox; the model sees at most 10 of its basic blocks (the
//! first 5 and the last 5) with the variables before and after each, judges every block, and then
//! fixes the program, all in one conversation. A program that raises is traced up to the raise.
//! Only visible tests are ever traced or shown; the hidden tests decide, as for every method.

use crate::agents::Purpose;
use crate::record::{Event, TaskStatus};
use crate::sandbox::TraceMode;

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Outcome, Phase, Transition};

pub(super) struct Ldb;

impl Prompted for Ldb {}

impl Method for Ldb {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::LdbSeed)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            // The traced run is shown and judged block by block.
            (Phase::Trace, Outcome::Traced(traced)) => {
                m.keep_trace(traced);
                m.converse(self, vec![], Purpose::LdbVerdict, false)
            }
            // The verdicts join the conversation; the model is asked for the fix.
            (Phase::Verdict, Outcome::Agent(Ok(resp))) => {
                m.remember_answer(&resp.text);
                m.converse(self, vec![], Purpose::LdbFix, true)
            }
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// After a failed round: run one failing visible test traced (block trace), or (no code, or a
    /// test that is not a call) go to the verdict turn without a trace.
    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        if m.out_of_rounds() {
            return m.finish(events, TaskStatus::Failed, None);
        }
        match m.trace_failing(events, TraceMode::Block) {
            Ok(transition) => transition,
            Err((events, why)) => {
                m.trace_shown.text = format!("(no trace: {why})");
                m.converse(self, events, Purpose::LdbVerdict, false)
            }
        }
    }

    fn takes_seed(&self) -> bool {
        true
    }

    fn seed_opening(&self) -> Option<Purpose> {
        Some(Purpose::LdbSeed)
    }
}
