//! A failing visible test run traced in the sandbox, as the prompts show it: LDB's block trace
//! and RGD's `--trace` use the same choice of test (seeded: the same run picks the same test)
//! and the same window of the trace. Only visible tests are ever traced or shown.

use sha2::{Digest, Sha256};

use crate::dataset::TestCase;
use crate::record::Event;
use crate::sandbox::{TestStatus, Trace, TraceMode, render_trace_window};

use super::shared::Shared;
use super::{Effect, Phase, Step, Transition};

/// Blocks shown from each end of a trace.
const SHOWN: usize = 5;
/// The trace's text in a prompt, at most.
const TRACE_CHARS: usize = 6_000;

impl Shared {
    /// Runs one failing visible test traced (a seeded choice among them), or says why none can be.
    pub(super) fn trace_failing(&mut self, events: Vec<Event>, mode: TraceMode) -> Result<Transition, (Vec<Event>, &'static str)> {
        self.trace_shown = Default::default();
        let failing: Vec<&TestCase> = match (&self.visible, &self.code, &self.problem) {
            (Some(report), Some(_), None) => report
                .tests
                .iter()
                .filter(|t| t.status != TestStatus::Passed)
                .filter_map(|t| self.task.visible.get(t.index))
                .collect(),
            _ => Vec::new(),
        };
        let traceable: Vec<(String, String)> = failing
            .iter()
            .filter_map(|t| match t {
                TestCase::Assert { src } => Some((t.label(), src.clone())),
                TestCase::Check { src } => Some((t.label(), format!("{src}\ncheck({})", self.task.entry_point))),
                // A project's test is traced by its node id (the project executor runs it).
                TestCase::Pytest { node, .. } => Some((t.label(), node.clone())),
                TestCase::Io { .. } | TestCase::Run { .. } | TestCase::Value { .. } => None,
            })
            .collect();
        let Some(code) = self.code.clone().filter(|_| !traceable.is_empty()) else {
            let why = if self.code.is_none() || self.problem.is_some() {
                "there is no program to trace"
            } else if failing.is_empty() {
                "no visible test failed"
            } else {
                "this task's tests run the whole program on standard input: there is no call to trace"
            };
            return Err((events, why));
        };
        let pick = seeded_pick(&self.task.id, self.iteration, traceable.len());
        let (label, test) = traceable[pick].clone();
        self.trace_shown.test = label;
        self.phase = Phase::Trace;
        Ok(Transition {
            events,
            step: Step::Run(Effect::TraceTest { code, test, mode }),
        })
    }

    /// Keeps the traced run as the model will read it (how it ended, and a window of its records).
    pub(super) fn keep_trace(&mut self, traced: Result<Trace, String>) {
        let (outcome, text) = match traced {
            Ok(trace) => (trace_outcome(&trace), clip(render_trace_window(&trace, SHOWN, SHOWN))),
            Err(e) => (String::new(), format!("(no trace: the sandbox failed: {e})")),
        };
        self.trace_shown.outcome = outcome;
        self.trace_shown.text = text;
    }
}

/// Which of `n` failing tests to trace: the same for the same task and round in every run.
fn seeded_pick(task_id: &str, iteration: u32, n: usize) -> usize {
    let digest = Sha256::digest(format!("{task_id}\0{iteration}").as_bytes());
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    (u64::from_le_bytes(word) % n.max(1) as u64) as usize
}

fn trace_outcome(trace: &Trace) -> String {
    match (&trace.end, &trace.stopped) {
        (Some(end), _) => match (&end.exception, &end.result) {
            (Some(e), _) => {
                let line = e.line.map(|l| format!(" at line {l}")).unwrap_or_default();
                format!("it raised {}{line}: {}", e.kind, e.message)
            }
            (None, Some(v)) if v != "None" => format!("its call returned {v}"),
            _ => String::new(),
        },
        (None, Some(why)) => format!("it was stopped: {why}"),
        (None, None) => String::new(),
    }
}

fn clip(text: String) -> String {
    crate::text::clip(&text, TRACE_CHARS, TRACE_CHARS - 40, "\n... (the rest of the trace is cut)\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pick_is_stable_and_in_range() {
        let a = super::seeded_pick("HumanEval/1", 2, 3);
        assert_eq!(a, super::seeded_pick("HumanEval/1", 2, 3));
        assert!(a < 3);
        assert_eq!(super::seeded_pick("x", 1, 1), 0);
    }
}
