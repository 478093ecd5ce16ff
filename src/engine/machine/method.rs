//! One interface every method's machine implements. The shared loop (`TaskMachine::advance`)
//! handles what all methods do alike (a program answered, the visible and hidden tests, failed
//! calls and sandboxes) and asks the method at each point where methods differ; a method's own
//! phases, state and decisions live in its own file; what it adds to its prompts' context is its
//! `Prompted` side. (`TaskMachine::new` is the one place that maps a strategy to its machine.)

use crate::agents::Purpose;
use crate::record::{Event, TaskStatus};

use super::shared::{Prompted, Shared};
use super::{Outcome, Phase, Transition};

/// A method's answer to an outcome: the next step, or the outcome handed back to the shared loop
/// (boxed: by far the larger of the two).
pub(super) type Advanced = Result<Transition, Box<Outcome>>;

pub(super) trait Method: Prompted + Send {
    /// Iteration 1's first call.
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition;

    /// An outcome in one of this method's own phases; any other is handed back (`Err`) to the
    /// shared loop.
    fn advance(&mut self, _m: &mut Shared, _phase: Phase, outcome: Outcome) -> Advanced {
        Err(Box::new(outcome))
    }

    /// After a round that failed (the visible tests, or an answer without usable code).
    fn next_round(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition;

    /// A program was read from an answer (and is the task's code now): by default the visible
    /// tests judge it.
    fn code_ready(&mut self, m: &mut Shared, events: Vec<Event>, code: String) -> Transition {
        m.run_visible(events, code)
    }

    /// The visible tests passed, before the hidden ones run: a note to record, if any.
    fn visible_passed(&self, _m: &Shared) -> Option<String> {
        None
    }

    /// The visible tests failed.
    fn visible_failed(&mut self, m: &mut Shared) -> Transition {
        m.hidden_failed = false;
        self.next_round(m, vec![])
    }

    /// The hidden tests failed. Methods stop once their visible (or own) tests pass: hidden
    /// results are never fed back.
    fn hidden_failed(&mut self, m: &mut Shared) -> Transition {
        m.hidden_failed = true;
        m.finish(vec![], TaskStatus::Failed, None)
    }

    /// Visible and hidden tests passed; `proven`: the verdict may be remembered.
    fn solved(&mut self, m: &mut Shared, _proven: bool) -> Transition {
        m.solved()
    }

    /// Whether a pending call of `purpose` is rendered again when a person edits the guidance or
    /// withdraws the memory hit (the debugger).
    fn rerenders(&self, _purpose: Purpose) -> bool {
        false
    }

    /// Whether a program from another run (`--seed-from`) may be iteration 1's code, and the
    /// conversation it then opens as the model's own first answer.
    fn takes_seed(&self) -> bool {
        false
    }

    fn seed_opening(&self) -> Option<Purpose> {
        None
    }
}

/// A program answered (or, for MGDebugger, assembled): the method judges it; without usable
/// code the round failed, and the method's next round hears of it.
pub(super) fn program_answered<M: Method + ?Sized>(method: &mut M, m: &mut Shared, mut events: Vec<Event>, answer: &str) -> Transition {
    let (event, code) = m.extract(answer);
    events.push(event);
    match code {
        Some(code) => {
            m.code = Some(code.clone());
            method.code_ready(m, events, code)
        }
        None => {
            m.visible = None;
            m.hidden_failed = false;
            method.next_round(m, events)
        }
    }
}
