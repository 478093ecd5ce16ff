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

use super::method::{Advanced, Method, program_answered};
use super::shared::{Prompted, Shared};
use super::{Effect, Outcome, Phase, Step, Transition};

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

    fn fill_context(&self, ctx: &mut crate::agents::TurnContext, real_trace: bool) {
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

impl Prompted for MgDebugger {
    fn fill(&self, ctx: &mut crate::agents::TurnContext, m: &Shared) {
        self.fill_context(ctx, m.config.mgdebugger.real_trace());
    }
}

impl Method for MgDebugger {
    /// The seed: Direct's first program, recorded as iteration 1.
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::Direct)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            (Phase::MgDecompose, Outcome::Agent(Ok(resp))) => self.decomposed(m, &resp.text),
            (Phase::MgTests, Outcome::Agent(Ok(resp))) => self.tests_written(m, &resp.text),
            (Phase::MgUnitTests, Outcome::Tests(report)) => self.tested(m, report),
            (Phase::MgTrace, Outcome::Traced(traced)) => {
                m.keep_trace(traced);
                m.call(self, vec![], Purpose::MgDebug)
            }
            (Phase::MgDebug, Outcome::Agent(Ok(resp))) => self.repaired(m, &resp.text),
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// The visible tests failed (or the answer held no code): the next pass, or the end. The
    /// first time, the program that failed is the seed (iteration 1's), which every pass starts
    /// from.
    fn next_round(&mut self, m: &mut Shared, mut events: Vec<Event>) -> Transition {
        if self.seed.is_none() {
            self.seed = m.code.clone();
        }
        let Some(seed) = self.seed.clone() else {
            events.push(m.note("the seed answer held no program: MGDebugger has nothing to debug".into()));
            return m.finish(events, TaskStatus::Failed, None);
        };
        if self.passes >= m.config.mgdebugger.retries {
            return m.finish(events, TaskStatus::Failed, None);
        }
        self.passes += 1;
        m.iteration += 1;
        events.push(m.iteration_started());
        self.program = seed;
        m.call(self, events, Purpose::MgDecompose)
    }

    fn visible_passed(&self, m: &Shared) -> Option<String> {
        (m.iteration == 1).then(|| "the seed program passes the visible tests: MGDebugger has nothing to debug".into())
    }

    fn takes_seed(&self) -> bool {
        true
    }
}

impl MgDebugger {
    /// The tree of subfunctions was answered: debug it bottom up, or (unreadable twice) the seed
    /// as it is written.
    fn decomposed(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let entry = m.task.entry_point.clone();
        let extracted = extract_code(answer, &entry);
        let mut events = Vec::new();
        match (extracted.code, extracted.problem) {
            (Some(code), None) => self.program = super::shared::with_prompt_imports(&m.task.prompt, &code),
            (_, problem) => {
                let why = match problem {
                    Some(crate::code::ExtractProblem::EntryPointMissing) => format!("the decomposition drops the entry point `{entry}`"),
                    Some(crate::code::ExtractProblem::SyntaxError { line }) => format!("the decomposition does not parse (line {line})"),
                    _ => "the answer holds no code".into(),
                };
                if let Some(repeat) = m.ask_again(self, Purpose::MgDecompose, &why) {
                    return repeat;
                }
                events.push(m.malformed(Purpose::MgDecompose, why, "the seed's own functions are debugged as they are"));
            }
        }
        let functions = top_functions(&self.program);
        self.order = bottom_up(&functions, &entry);
        self.at = 0;
        events.push(m.note(match self.order.len() {
            0 => format!("the program does not define `{entry}`: no function to debug"),
            n => format!("{n} function(s), debugged bottom up: {}", self.order.join(" → ")),
        }));
        self.function(m, events)
    }

    /// The function at hand gets its unit tests, or (all done) the tree is the next program.
    fn function(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        self.tests.clear();
        self.results = None;
        self.repairs = 0;
        if self.at >= self.order.len() {
            let program = self.program.clone();
            return program_answered(self, m, events, &format!("```python\n{program}\n```"));
        }
        m.call(self, events, Purpose::MgTests)
    }

    /// The unit tests were answered: run them, or (unreadable twice) go on to the next function.
    fn tests_written(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let name = self.current();
        let keep = m.task.visible.len().max(1);
        match unit_tests(answer, &name, keep) {
            Ok(tests) => {
                let event = Event::SelfTests {
                    task_id: m.task.id.clone(),
                    iteration: m.iteration,
                    kept: tests.iter().map(TestCase::prompt_text).collect(),
                    dropped: Vec::new(),
                };
                self.tests = tests;
                self.run_tests(m, vec![event])
            }
            Err(why) => {
                if let Some(repeat) = m.ask_again(self, Purpose::MgTests, &why) {
                    return repeat;
                }
                let event = m.malformed(Purpose::MgTests, why, &format!("`{name}` is kept as it is"));
                self.at += 1;
                self.function(m, vec![event])
            }
        }
    }

    fn run_tests(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.phase = Phase::MgUnitTests;
        Transition {
            events,
            step: Step::Run(Effect::RunOwnTests {
                code: self.program.clone(),
                tests: self.tests.clone(),
            }),
        }
    }

    /// The unit tests ran: the next function when they pass or the repairs are spent, else a
    /// repair (after a real trace of the failing test with `--trace real`).
    fn tested(&mut self, m: &mut Shared, report: Result<RunReport, String>) -> Transition {
        let report = match report {
            Ok(report) => report,
            Err(e) => return m.finish(vec![], TaskStatus::Error, Some(format!("sandbox: {e}"))),
        };
        let failing = report
            .tests
            .iter()
            .find(|t| t.status != TestStatus::Passed)
            .and_then(|t| self.tests.get(t.index))
            .cloned();
        self.results = Some(report);
        let Some(failing) = failing.filter(|_| self.repairs < m.config.mgdebugger.repairs) else {
            self.at += 1;
            return self.function(m, vec![]);
        };
        self.repairs += 1;
        if m.config.mgdebugger.real_trace() {
            m.trace_shown = Default::default();
            m.trace_shown.test = failing.label();
            m.phase = Phase::MgTrace;
            return Transition {
                events: vec![],
                step: Step::Run(Effect::TraceTest {
                    code: self.program.clone(),
                    test: failing.prompt_text(),
                    mode: TraceMode::Block,
                }),
            };
        }
        m.call(self, vec![], Purpose::MgDebug)
    }

    /// The repair was answered: the function replaced and its tests run again; an answer
    /// without it is asked again once, then the function is kept.
    fn repaired(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let name = self.current();
        let extracted = extract_code(answer, &name);
        match extracted.code.filter(|_| extracted.problem.is_none()) {
            Some(code) => {
                self.program = splice(&self.program, &name, &code);
                let note = m.note(format!("`{name}` repaired"));
                self.run_tests(m, vec![note])
            }
            None => {
                let why = format!("the answer holds no `{name}`");
                if let Some(repeat) = m.ask_again(self, Purpose::MgDebug, &why) {
                    return repeat;
                }
                let event = m.malformed(Purpose::MgDebug, why, &format!("`{name}` is kept as it is"));
                self.at += 1;
                self.function(m, vec![event])
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
