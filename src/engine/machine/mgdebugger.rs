//! MGDebugger (Shi et al., "From Code to Correctness: Closing the Last Mile of Code Generation
//! with Hierarchical Debugging"): a seed program (Direct's first program, or `--seed-from`) that
//! fails the visible tests is rewritten as a tree of subfunctions; each function, callees before
//! callers, gets unit tests the model derives from the visible tests, runs them for real, and
//! while they fail is repaired (up to `repairs` times) from an execution the model simulates
//! itself (the paper), or from a real trace of the failing unit test (`--trace real`); the
//! repaired tree is the next program. A pass that still fails the visible tests starts again
//! from the seed (the authors' `CONTINUOUS_RETRY = False`), up to `retries` passes.
//!
//! The authors' driver chooses which seeds to debug and when to stop by the hidden tests; here
//! only the visible tests steer, and the hidden ones decide once, at the end, as for every method.

use crate::agents::{PromptTestResult, Purpose};
use crate::code::{bottom_up, extract_code, splice, top_functions};
use crate::dataset::TestCase;
use crate::record::{Event, TaskStatus};
use crate::sandbox::{RunReport, TestStatus, TraceMode};

use super::{Effect, Phase, Step, TaskMachine, Transition};

/// What MGDebugger keeps besides the shared state.
#[derive(Debug, Default)]
pub(super) struct MgDebugger {
    /// The program every pass starts from.
    seed: Option<String>,
    passes: u32,
    /// The program being debugged (the decomposed seed, with the repairs so far).
    program: String,
    /// Functions in debugging order, and the one at hand.
    order: Vec<String>,
    at: usize,
    /// The function at hand's unit tests, and how they last ran.
    tests: Vec<TestCase>,
    results: Option<RunReport>,
    repairs: u32,
}

impl MgDebugger {
    /// The function at hand (none once every function is done).
    fn current(&self) -> String {
        self.order.get(self.at).cloned().unwrap_or_default()
    }

    pub(super) fn fill(&self, ctx: &mut crate::agents::TurnContext, real_trace: bool) {
        if !self.program.is_empty() {
            ctx.code = self.program.clone();
        }
        if let Some(name) = self.order.get(self.at) {
            ctx.function_name = name.clone();
            ctx.function_code = top_functions(&self.program)
                .into_iter()
                .find(|f| &f.name == name)
                .map(|f| f.source)
                .unwrap_or_default();
        }
        if let Some(report) = &self.results {
            ctx.unit_tests = PromptTestResult::from_report(&self.tests, report);
        }
        ctx.real_trace = real_trace;
    }
}

/// Python source for a JSON value.
fn python_literal(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        // A JSON string literal is a Python one.
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Value::Array(items) => format!("[{}]", items.iter().map(python_literal).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", serde_json::to_string(k).unwrap_or_default(), python_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// An expected output: a string that is itself a Python value (`"[1, 2]"`, `"True"`, `"'a'"`)
/// is taken as that value, as models write them; anything else as the JSON value it is.
fn expected_literal(v: &serde_json::Value) -> String {
    if let serde_json::Value::String(s) = v {
        let s = s.trim();
        let looks_literal = s.starts_with(['[', '(', '{', '\'', '"']) || matches!(s, "True" | "False" | "None") || s.parse::<f64>().is_ok();
        if looks_literal && crate::code::parses_cleanly(&format!("_ = {s}\n")) {
            return s.to_string();
        }
    }
    python_literal(v)
}

/// The unit tests of an answer's `{"test_cases": [...]}` JSON, as asserts calling `function`
/// (arguments by name from an object, in order from a list); at most `keep` of them.
fn unit_tests(answer: &str, function: &str, keep: usize) -> Result<Vec<TestCase>, String> {
    let json = answer
        .match_indices("```json")
        .last()
        .and_then(|(at, _)| {
            let body = &answer[at + "```json".len()..];
            body.find("```").map(|end| body[..end].to_string())
        })
        .or_else(|| Some(answer[answer.find('{')?..=answer.rfind('}')?].to_string()))
        .ok_or("the answer holds no JSON")?;
    let value: serde_json::Value = serde_json::from_str(json.trim()).map_err(|e| format!("its JSON does not parse: {e}"))?;
    let cases = value["test_cases"].as_array().ok_or("its JSON has no test_cases list")?;
    let mut tests = Vec::new();
    for case in cases {
        let args = match &case["input"] {
            serde_json::Value::Object(map) if map.keys().all(|k| is_identifier(k)) => map
                .iter()
                .map(|(k, v)| format!("{k}={}", python_literal(v)))
                .collect::<Vec<_>>()
                .join(", "),
            serde_json::Value::Array(items) => items.iter().map(python_literal).collect::<Vec<_>>().join(", "),
            _ => continue,
        };
        let Some(expected) = case.get("expected_output") else { continue };
        let src = format!("assert {function}({args}) == {}", expected_literal(expected));
        if crate::code::parses_cleanly(&src) && !tests.iter().any(|t: &TestCase| t.prompt_text() == src) {
            tests.push(TestCase::Assert { src });
        }
    }
    tests.truncate(keep);
    if tests.is_empty() {
        return Err("none of its test cases has an input by parameter name and an expected output".into());
    }
    Ok(tests)
}

fn is_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

impl TaskMachine {
    /// The visible tests failed (or the answer held no code): the next pass, or the end. The
    /// first time, the program that failed is the seed (iteration 1's), which every pass starts
    /// from.
    pub(super) fn mg_next(&mut self, mut events: Vec<Event>) -> Transition {
        if self.mgdebugger.seed.is_none() {
            self.mgdebugger.seed = self.code.clone();
        }
        let Some(seed) = self.mgdebugger.seed.clone() else {
            events.push(self.note("the seed answer held no program: MGDebugger has nothing to debug".into()));
            return self.finish(events, TaskStatus::Failed, None);
        };
        if self.mgdebugger.passes >= self.config.mgdebugger.retries {
            return self.finish(events, TaskStatus::Failed, None);
        }
        self.mgdebugger.passes += 1;
        self.iteration += 1;
        events.push(self.iteration_started());
        self.mgdebugger.program = seed;
        self.call(events, Purpose::MgDecompose)
    }

    /// The tree of subfunctions was answered: debug it bottom up, or (unreadable twice) the seed
    /// as it is written.
    pub(super) fn mg_decomposed(&mut self, answer: &str) -> Transition {
        let entry = self.task.entry_point.clone();
        let extracted = extract_code(answer, &entry);
        let mut events = Vec::new();
        match (extracted.code, extracted.problem) {
            (Some(code), None) => self.mgdebugger.program = super::with_prompt_imports(&self.task.prompt, &code),
            (_, problem) => {
                let why = match problem {
                    Some(crate::code::ExtractProblem::EntryPointMissing) => format!("the decomposition drops the entry point `{entry}`"),
                    Some(crate::code::ExtractProblem::SyntaxError { line }) => format!("the decomposition does not parse (line {line})"),
                    _ => "the answer holds no code".into(),
                };
                if let Some(repeat) = self.ask_again(Purpose::MgDecompose, &why) {
                    return repeat;
                }
                events.push(self.malformed(Purpose::MgDecompose, why, "the seed's own functions are debugged as they are"));
            }
        }
        let functions = top_functions(&self.mgdebugger.program);
        self.mgdebugger.order = bottom_up(&functions, &entry);
        self.mgdebugger.at = 0;
        events.push(self.note(match self.mgdebugger.order.len() {
            0 => format!("the program does not define `{entry}`: no function to debug"),
            n => format!("{n} function(s), debugged bottom up: {}", self.mgdebugger.order.join(" → ")),
        }));
        self.mg_function(events)
    }

    /// The function at hand gets its unit tests, or (all done) the tree is the next program.
    fn mg_function(&mut self, events: Vec<Event>) -> Transition {
        self.mgdebugger.tests.clear();
        self.mgdebugger.results = None;
        self.mgdebugger.repairs = 0;
        if self.mgdebugger.at >= self.mgdebugger.order.len() {
            let program = self.mgdebugger.program.clone();
            let mut next = self.on_code(&format!("```python\n{program}\n```"));
            let mut all = events;
            all.append(&mut next.events);
            next.events = all;
            return next;
        }
        self.call(events, Purpose::MgTests)
    }

    /// The unit tests were answered: run them, or (unreadable twice) go on to the next function.
    pub(super) fn mg_tests_written(&mut self, answer: &str) -> Transition {
        let name = self.mgdebugger.current();
        let keep = self.task.visible.len().max(1);
        match unit_tests(answer, &name, keep) {
            Ok(tests) => {
                let event = Event::SelfTests {
                    task_id: self.task.id.clone(),
                    iteration: self.iteration,
                    kept: tests.iter().map(TestCase::prompt_text).collect(),
                    dropped: Vec::new(),
                };
                self.mgdebugger.tests = tests;
                self.mg_run_tests(vec![event])
            }
            Err(why) => {
                if let Some(repeat) = self.ask_again(Purpose::MgTests, &why) {
                    return repeat;
                }
                let event = self.malformed(Purpose::MgTests, why, &format!("`{name}` is kept as it is"));
                self.mgdebugger.at += 1;
                self.mg_function(vec![event])
            }
        }
    }

    fn mg_run_tests(&mut self, events: Vec<Event>) -> Transition {
        self.phase = Phase::MgUnitTests;
        Transition {
            events,
            step: Step::Run(Effect::RunOwnTests {
                code: self.mgdebugger.program.clone(),
                tests: self.mgdebugger.tests.clone(),
            }),
        }
    }

    /// The unit tests ran: the next function when they pass or the repairs are spent, else a
    /// repair (after a real trace of the failing test with `--trace real`).
    pub(super) fn mg_tested(&mut self, report: Result<RunReport, String>) -> Transition {
        let report = match report {
            Ok(report) => report,
            Err(e) => return self.finish(vec![], TaskStatus::Error, Some(format!("sandbox: {e}"))),
        };
        let failing = report
            .tests
            .iter()
            .find(|t| t.status != TestStatus::Passed)
            .and_then(|t| self.mgdebugger.tests.get(t.index))
            .cloned();
        self.mgdebugger.results = Some(report);
        let Some(failing) = failing.filter(|_| self.mgdebugger.repairs < self.config.mgdebugger.repairs) else {
            self.mgdebugger.at += 1;
            return self.mg_function(vec![]);
        };
        self.mgdebugger.repairs += 1;
        if self.config.mgdebugger.real_trace() {
            self.trace_shown = Default::default();
            self.trace_shown.test = failing.label();
            self.phase = Phase::MgTrace;
            return Transition {
                events: vec![],
                step: Step::Run(Effect::TraceTest {
                    code: self.mgdebugger.program.clone(),
                    test: failing.prompt_text(),
                    mode: TraceMode::Block,
                }),
            };
        }
        self.call(vec![], Purpose::MgDebug)
    }

    pub(super) fn mg_traced(&mut self, traced: Result<crate::sandbox::Trace, String>) -> Transition {
        self.keep_trace(traced);
        self.call(vec![], Purpose::MgDebug)
    }

    /// The repair was answered: the function replaced and its tests run again; an answer
    /// without it is asked again once, then the function is kept.
    pub(super) fn mg_repaired(&mut self, answer: &str) -> Transition {
        let name = self.mgdebugger.current();
        let extracted = extract_code(answer, &name);
        match extracted.code.filter(|_| extracted.problem.is_none()) {
            Some(code) => {
                self.mgdebugger.program = splice(&self.mgdebugger.program, &name, &code);
                let note = self.note(format!("`{name}` repaired"));
                self.mg_run_tests(vec![note])
            }
            None => {
                let why = format!("the answer holds no `{name}`");
                if let Some(repeat) = self.ask_again(Purpose::MgDebug, &why) {
                    return repeat;
                }
                let event = self.malformed(Purpose::MgDebug, why, &format!("`{name}` is kept as it is"));
                self.mgdebugger.at += 1;
                self.mg_function(vec![event])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_tests_come_from_the_json_by_parameter_name() {
        let answer = "**Test Case 1:** ...\n```json\n{\"test_cases\": [{\"input\": {\"xs\": [1, -2]}, \"expected_output\": [1]}, {\"input\": {\"xs\": []}, \"expected_output\": \"[]\"}, {\"input\": {\"s\": \"a\\\"b\"}, \"expected_output\": \"True\"}, {\"input\": {\"s\": \"x\"}, \"expected_output\": \"plain text\"}]}\n```";
        let tests: Vec<String> = unit_tests(answer, "clean", 10).unwrap().iter().map(TestCase::prompt_text).collect();
        assert_eq!(
            tests,
            [
                "assert clean(xs=[1, -2]) == [1]",
                "assert clean(xs=[]) == []",
                "assert clean(s=\"a\\\"b\") == True",
                "assert clean(s=\"x\") == \"plain text\""
            ]
        );
        assert_eq!(unit_tests(answer, "clean", 1).unwrap().len(), 1);
        assert!(unit_tests("no json here", "f", 3).unwrap_err().contains("no JSON"));
        assert!(
            unit_tests("```json\n{\"cases\": []}\n```", "f", 3)
                .unwrap_err()
                .contains("test_cases")
        );
        assert!(
            unit_tests("```json\n{\"test_cases\": [{\"input\": 3}]}\n```", "f", 3)
                .unwrap_err()
                .contains("none of")
        );
    }
}
