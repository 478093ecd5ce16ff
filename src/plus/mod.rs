//! `rgd datasets plus NAME`: EvalPlus's extra hidden tests, made offline. The inputs of a task's
//! own tests are the seeds; type-aware mutation (`mutate.rs`) makes new inputs of the same kind;
//! the reference solution, run only in the sandbox, gives each its expected output. An input the
//! reference rejects (raises, times out, returns something that is not plain data) is dropped,
//! and so is one whose output differs between two runs (a nondeterministic reference). Seeded:
//! the same seed and dataset give the same file, byte for byte.

pub mod impossible;
pub mod literal;
pub mod mutate;
pub mod reduce;
pub mod rejudge;
pub mod strength;
pub mod timing;
pub mod verify;

use std::collections::HashSet;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::dataset::{Task, TaskKind, TestCase};
use crate::sandbox::{Executor, Job, Limits, TestStatus};
use literal::Lit;
use mutate::{Ingredients, Mutator};

/// How a dataset is extended.
#[derive(Debug, Clone, Copy)]
pub struct PlusOptions {
    pub seed: u64,
    /// Generated tests kept per task, at most.
    pub per_task: usize,
}

/// Candidate inputs tried per test kept: many mutants are rejected by the reference or repeat.
const TRIES_PER_KEPT: usize = 4;
/// Python lines (trace events) one generated input may take the reference: an input over it is
/// dropped, at the same place on every run and machine (a wall-clock cut is not repeatable) ...
pub(crate) const LINE_BUDGET: u64 = 100_000;
/// ... and the deadline behind it, for work that runs no Python lines (one huge builtin call).
pub(crate) const INPUT_SECONDS: f64 = 5.0;

/// What extending one task came to.
#[derive(Debug, Clone)]
pub struct Extended {
    pub task: Task,
    /// Candidate inputs tried, and tests added.
    pub tried: usize,
    pub added: usize,
    /// Why nothing was added, when nothing was.
    pub note: Option<String>,
}

/// The function the generated tests call, and the literal argument lists the task's tests call
/// it with: the entry point (`entry(...)`, or `candidate(...)` in a `check(candidate)`); where no
/// test calls it with literals, the one other function of the reference that the tests do call so
/// (LDB's MBPP names a helper as the entry point of some tasks whose tests call another
/// function). A call with a keyword, a splat or an argument that is not a literal is not a seed.
/// Each list once, in the order met.
pub fn seed_inputs(task: &Task) -> (String, Vec<Vec<Lit>>) {
    let entry = literal_calls(task, &[task.entry_point.as_str(), "candidate"]);
    if !entry.is_empty() {
        return (task.entry_point.clone(), entry);
    }
    let defined = task.canonical.as_deref().map(crate::code::defined_functions).unwrap_or_default();
    let called: Vec<(&String, Vec<Vec<Lit>>)> = defined
        .iter()
        .filter(|d| **d != task.entry_point)
        .map(|d| (d, literal_calls(task, &[d.as_str()])))
        .filter(|(_, seeds)| !seeds.is_empty())
        .collect();
    match called.as_slice() {
        [(name, seeds)] => ((*name).clone(), seeds.clone()),
        _ => (task.entry_point.clone(), Vec::new()),
    }
}

/// Literal argument lists of the tests' calls of any of `callees`, each once, in the order met.
fn literal_calls(task: &Task, callees: &[&str]) -> Vec<Vec<Lit>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for test in task.visible.iter().chain(&task.hidden) {
        let src = match test {
            TestCase::Assert { src } | TestCase::Check { src } => src,
            _ => continue,
        };
        let tree = crate::code::parse_python(src);
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            let mut cursor = node.walk();
            let children: Vec<_> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
            if node.kind() != "call" {
                continue;
            }
            let named = node
                .child_by_field_name("function")
                .is_some_and(|f| f.kind() == "identifier" && callees.contains(&&src[f.byte_range()]));
            let Some(args) = node.child_by_field_name("arguments").filter(|_| named) else {
                continue;
            };
            let mut c = args.walk();
            let read: Option<Vec<Lit>> = args
                .named_children(&mut c)
                .filter(|a| a.kind() != "comment")
                .map(|a| Lit::read(a, src))
                .collect();
            if let Some(lits) = read.filter(|l| !l.is_empty()) {
                let key: Vec<String> = lits.iter().map(Lit::source).collect();
                if seen.insert(key) {
                    out.push(lits);
                }
            }
        }
    }
    out
}

/// Whether the task's own tests compare with a tolerance (`isclose`, `abs(a - b) < eps`): its
/// generated tests with a float in the expected value do too.
pub fn uses_tolerance(task: &Task) -> bool {
    task.visible.iter().chain(&task.hidden).any(|t| match t {
        TestCase::Assert { src } | TestCase::Check { src } => src.contains("isclose") || src.contains("abs("),
        _ => false,
    })
}

/// The relative and absolute tolerance of a generated float comparison.
const TOLERANCE: f64 = 1e-6;

/// A generated test: the call and the reference's value.
fn test_for(entry: &str, args: &str, expected: &str, tolerance: bool) -> TestCase {
    if !tolerance {
        return TestCase::Assert {
            src: format!("assert {entry}({args}) == {expected}"),
        };
    }
    // Floats anywhere in the value are compared with a tolerance, the rest exactly.
    TestCase::Check {
        src: format!(
            "def check(candidate):\n    import math\n    def close(a, b):\n        if isinstance(b, float) and isinstance(a, (int, float)):\n            return math.isclose(a, b, rel_tol={TOLERANCE:e}, abs_tol={TOLERANCE:e})\n        if isinstance(b, (list, tuple)) and type(a) is type(b) and len(a) == len(b):\n            return all(close(x, y) for x, y in zip(a, b))\n        if isinstance(b, dict) and isinstance(a, dict) and a.keys() == b.keys():\n            return all(close(a[k], b[k]) for k in b)\n        return a == b\n    assert close(candidate({args}), {expected})\n"
        ),
    }
}

/// The seed of a task's mutator: the run's seed and the task's id, so tasks do not share one
/// stream (adding a task does not change the others').
fn task_seed(seed: u64, id: &str) -> u64 {
    let digest = Sha256::digest(format!("{seed}:{id}").as_bytes());
    u64::from_le_bytes([
        digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
    ])
}

/// `task` with generated hidden tests added after its own (visible tests unchanged).
pub async fn extend(executor: &dyn Executor, task: &Task, options: PlusOptions) -> Extended {
    let unchanged = |tried: usize, note: &str| Extended {
        task: task.clone(),
        tried,
        added: 0,
        note: Some(note.to_string()),
    };
    let Some(reference) = task.canonical.as_deref() else {
        return unchanged(0, "no reference solution");
    };
    if task.kind != TaskKind::Function || task.entry_point.is_empty() {
        return unchanged(0, "not a function task");
    }
    let (callee, seeds) = seed_inputs(task);
    if seeds.is_empty() {
        return unchanged(0, "no test calls the function with literal arguments");
    }
    // Candidates: mutants of the seeds and of earlier candidates, each once, none a seed.
    let ingredients = Ingredients::of(&seeds);
    let mut mutator = Mutator::new(task_seed(options.seed, &task.id), &ingredients);
    let mut known: HashSet<String> = seeds.iter().map(|a| args_source(a)).collect();
    let mut pool = seeds.clone();
    let mut candidates: Vec<String> = Vec::new();
    let wanted = options.per_task * TRIES_PER_KEPT;
    for _ in 0..wanted * 4 {
        if candidates.len() >= wanted {
            break;
        }
        let from = mutator.pick_input(&pool);
        let args = mutator.mutate_args(&from);
        let src = args_source(&args);
        if known.insert(src.clone()) {
            candidates.push(src);
            pool.push(args);
        }
    }
    let limits = &Limits {
        per_test: Duration::from_secs_f64(INPUT_SECONDS),
        max_total: Duration::from_secs(300),
        line_budget: Some(LINE_BUDGET),
        ..Limits::default()
    };
    // The reference's value for each of `which` (indexes into `candidates`) that it answered
    // with plain data, in `which`'s order.
    let (callee, candidates) = (callee.as_str(), candidates.as_slice());
    let run = |which: Vec<usize>| async move {
        let mut answered: Vec<(usize, String)> = Vec::new();
        let mut pending = which;
        // A test cut at its deadline leaves the ones after it not run: they go again, without it.
        while !pending.is_empty() {
            let tests: Vec<TestCase> = pending
                .iter()
                .map(|&i| TestCase::Value {
                    src: format!("{callee}({})", candidates[i]),
                })
                .collect();
            let report = run_as(executor, task, reference, &tests, limits).await?;
            let mut again = Vec::new();
            for t in &report.tests {
                let Some(&i) = pending.get(t.index) else {
                    continue;
                };
                match (&t.status, &t.got) {
                    (TestStatus::Passed, Some(v)) => answered.push((i, v.clone())),
                    (TestStatus::NotRun, _) => again.push(i),
                    _ => {}
                }
            }
            if again.len() == pending.len() {
                break;
            }
            pending = again;
        }
        answered.sort_by_key(|(i, _)| *i);
        Ok::<_, crate::sandbox::SandboxError>(answered)
    };
    // Twice, the second time only what the first answered: an input whose output differs
    // between the runs is dropped.
    let first = match run((0..candidates.len()).collect()).await {
        Ok(a) => a,
        Err(e) => return unchanged(candidates.len(), &format!("the sandbox failed: {e}")),
    };
    let second: std::collections::HashMap<usize, String> = match run(first.iter().map(|(i, _)| *i).collect()).await {
        Ok(a) => a.into_iter().collect(),
        Err(e) => return unchanged(candidates.len(), &format!("the sandbox failed: {e}")),
    };
    let tolerance = uses_tolerance(task);
    let mut out = task.clone();
    let mut added = 0;
    for (i, value) in &first {
        if added == options.per_task {
            break;
        }
        if second.get(i) != Some(value) {
            continue;
        }
        let float = tolerance && has_float_literal(value);
        out.hidden.push(test_for(callee, &candidates[*i], value, float));
        added += 1;
    }
    Extended {
        task: out,
        tried: candidates.len(),
        added,
        note: (added == 0).then(|| "the reference rejected every generated input".to_string()),
    }
}

/// `program` run against `task`'s hidden tests: how strength, reduction and re-judging see a
/// program other than the reference.
pub(crate) async fn run_hidden(
    executor: &dyn Executor,
    task: &Task,
    program: &str,
    limits: &Limits,
) -> Result<crate::sandbox::RunReport, crate::sandbox::SandboxError> {
    run_as(executor, task, program, &task.hidden, limits).await
}

/// `program` run in the sandbox as `task`'s program, against `tests`.
pub(crate) async fn run_as(
    executor: &dyn Executor,
    task: &Task,
    program: &str,
    tests: &[TestCase],
    limits: &Limits,
) -> Result<crate::sandbox::RunReport, crate::sandbox::SandboxError> {
    let job = Job {
        code: program,
        kind: &task.kind,
        entry_point: &task.entry_point,
        tests,
        limits,
    };
    executor.run(job).await
}

/// An argument list as call source: `1, 'a', [2]`.
fn args_source(args: &[Lit]) -> String {
    args.iter().map(Lit::source).collect::<Vec<_>>().join(", ")
}

/// Whether a value's literal (the runner's, read back) holds a float anywhere.
fn has_float_literal(literal: &str) -> bool {
    let tree = crate::code::parse_python(literal);
    let root = tree.root_node();
    let Some(expr) = root.named_child(0).and_then(|s| s.named_child(0)) else {
        return false;
    };
    Lit::read(expr, literal).is_some_and(|v| v.has_float())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tests: &[&str]) -> Task {
        Task {
            id: "t".into(),
            prompt: String::new(),
            entry_point: "f".into(),
            kind: TaskKind::Function,
            visible: vec![],
            hidden: tests.iter().map(|s| TestCase::Assert { src: s.to_string() }).collect(),
            canonical: None,
            module: None,
        }
    }

    #[test]
    fn seeds_are_the_literal_argument_lists_each_once() {
        let t = task(&[
            "assert f([1, 2], 'a') == 3",
            "assert f([1, 2], 'a') == 3",
            "assert f(x) == 1",
            "assert f(1, k=2) == 1",
            "assert g(5) == f(4)",
        ]);
        let (callee, seeds) = seed_inputs(&t);
        let seeds: Vec<String> = seeds.iter().map(|a| args_source(a)).collect();
        assert_eq!((callee.as_str(), seeds), ("f", vec!["[1, 2], 'a'".to_string(), "4".to_string()]));
        // A test that calls another function of the reference, not the entry point (LDB's MBPP).
        let mut other = task(&["assert find_ways(4) == 2", "assert find_ways(6) == 5"]);
        other.canonical = Some("def f(n):\n    return n\n\ndef find_ways(n):\n    return f(n)\n".into());
        let (callee, seeds) = seed_inputs(&other);
        assert_eq!((callee.as_str(), seeds.len()), ("find_ways", 2));
    }

    #[test]
    fn a_float_expected_value_is_compared_with_a_tolerance_only_where_the_task_does() {
        assert!(has_float_literal("[1, 2.5]"));
        assert!(!has_float_literal("'2.5'"));
        assert!(matches!(test_for("f", "1", "2", false), TestCase::Assert { .. }));
        assert!(matches!(test_for("f", "1", "2.5", true), TestCase::Check { .. }));
    }
}
