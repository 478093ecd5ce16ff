//! `rgd datasets plus --reduce`: EvalPlus's test-suite reduction by mutant killing. The
//! reference's single-fault mutants (`code::mutate`, the operators `rgd bench fix` plants) run
//! against every hidden test; the task keeps all its own hidden tests and, of the generated ones,
//! the fewest that still kill every mutant the whole suite kills (greedy set cover: the test that
//! kills most of what is left first, the earlier test on a tie). Mutant runs take the same
//! Python-line budget as generation, so the choice is the same on every run and machine.

use std::collections::BTreeSet;
use std::time::Duration;

use super::{Extended, INPUT_SECONDS, LINE_BUDGET};
use crate::dataset::Task;
use crate::sandbox::{Executor, Limits, TestStatus};

/// What reducing one task came to.
#[derive(Debug, Clone, Default)]
pub struct Reduction {
    /// Generated tests before and after.
    pub generated: usize,
    pub kept: usize,
    /// Mutants run, and how many the whole suite kills (the reduced suite kills the same).
    pub mutants: usize,
    pub killed: usize,
}

/// Up to `n` mutants of `reference`, spread evenly over all it has (the same every run).
pub fn spread_mutants(reference: &str, n: usize) -> Vec<String> {
    let all = crate::code::mutate::mutants(reference);
    let step = all.len().div_ceil(n.max(1)).max(1);
    all.into_iter().step_by(step).take(n).map(|m| m.text).collect()
}

/// `extended` with its generated tests reduced to the fewest that keep the suite's killing power
/// over up to `mutants` mutants of the reference.
pub async fn reduce(executor: &dyn Executor, extended: Extended, mutants: usize) -> (Extended, Reduction) {
    let task = &extended.task;
    let first_generated = task.hidden.len() - extended.added;
    let mut r = Reduction {
        generated: extended.added,
        kept: extended.added,
        ..Reduction::default()
    };
    let Some(reference) = task.canonical.as_deref().filter(|_| extended.added > 0) else {
        return (extended, r);
    };
    // kills[t]: the mutants test t rejects.
    let mut kills: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); task.hidden.len()];
    let programs = spread_mutants(reference, mutants);
    r.mutants = programs.len();
    for (m, program) in programs.iter().enumerate() {
        match rejected_by(executor, task, program).await {
            Some(rejecting) => rejecting.into_iter().for_each(|t| {
                kills[t].insert(m);
            }),
            // The sandbox failed: no verdict on this mutant, so it cannot drive the choice.
            None => continue,
        }
    }
    let by_own: BTreeSet<usize> = kills[..first_generated].iter().flatten().copied().collect();
    let mut left: BTreeSet<usize> = kills[first_generated..]
        .iter()
        .flatten()
        .copied()
        .filter(|m| !by_own.contains(m))
        .collect();
    r.killed = by_own.len() + left.len();
    let mut chosen: BTreeSet<usize> = BTreeSet::new();
    while !left.is_empty() {
        let best = (first_generated..task.hidden.len())
            .filter(|t| !chosen.contains(t))
            .max_by_key(|t| (kills[*t].intersection(&left).count(), std::cmp::Reverse(*t)));
        let Some(best) = best.filter(|t| kills[*t].intersection(&left).count() > 0) else {
            break;
        };
        left.retain(|m| !kills[best].contains(m));
        chosen.insert(best);
    }
    let mut out = extended;
    let hidden = std::mem::take(&mut out.task.hidden);
    out.task.hidden = hidden
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i < first_generated || chosen.contains(i))
        .map(|(_, t)| t)
        .collect();
    out.added = chosen.len();
    r.kept = chosen.len();
    (out, r)
}

/// The indexes of the hidden tests that reject `program`; None when the sandbox itself failed.
async fn rejected_by(executor: &dyn Executor, task: &Task, program: &str) -> Option<Vec<usize>> {
    let limits = Limits {
        per_test: Duration::from_secs_f64(INPUT_SECONDS),
        max_total: Duration::from_secs(300),
        line_budget: Some(LINE_BUDGET),
        ..Limits::default()
    };
    let report = super::run_hidden(executor, task, program, &limits).await.ok()?;
    let passed: BTreeSet<usize> = report
        .tests
        .iter()
        .filter(|t| t.status == TestStatus::Passed && report.setup == crate::sandbox::SetupStatus::Ok)
        .map(|t| t.index)
        .collect();
    Some((0..task.hidden.len()).filter(|i| !passed.contains(i)).collect())
}
