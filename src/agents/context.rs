//! What prompt templates can refer to. Built only from visible information.

use serde::Serialize;

use crate::dataset::{AgentView, TaskKind, TestCase};
use crate::sandbox::{RunReport, TestOutcome, TestStatus};

/// One visible test and what the code did on it, as prompts show it.
#[derive(Debug, Clone, Serialize)]
pub struct PromptTestResult {
    pub test: String,
    pub status: String,
    pub expected: Option<String>,
    /// RGD's "real execution output": the value the asserted call actually returned.
    pub got: Option<String>,
    pub error: Option<String>,
    pub stdout: Option<String>,
}

impl PromptTestResult {
    pub fn from_report(tests: &[TestCase], report: &RunReport) -> Vec<PromptTestResult> {
        tests
            .iter()
            .zip(&report.tests)
            .map(|(test, outcome)| Self::one(test, outcome))
            .collect()
    }

    fn one(test: &TestCase, o: &TestOutcome) -> PromptTestResult {
        let status = match o.status {
            TestStatus::Passed => "passed",
            TestStatus::Failed => "failed",
            TestStatus::Error => "error",
            TestStatus::Timeout => "timeout",
            TestStatus::Memory => "out of memory",
            TestStatus::NotRun => "not run",
            TestStatus::Tampered => "tampered (the code tried to fool the test harness)",
        };
        let error = o.exc_type.as_ref().map(|t| {
            let mut s = t.clone();
            if let Some(m) = o.exc_msg.as_deref().filter(|m| !m.is_empty()) {
                s.push_str(": ");
                s.push_str(m);
            }
            if let Some(line) = o.line {
                s.push_str(&format!(" (line {line})"));
            }
            s
        });
        PromptTestResult {
            test: test.label(),
            status: status.into(),
            expected: o.expected.clone().or_else(|| test.expected().map(str::to_string)),
            got: o.got.clone(),
            error: error.filter(|_| o.status != TestStatus::Passed),
            stdout: o.stdout.clone(),
        }
    }
}

/// A past task's guidance offered to the Guide agent (from the memory pool).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Retrieved {
    pub question: String,
    pub guidance: String,
    /// Which entry, and why it was chosen (for the record and the TUI; prompts use the two above).
    #[serde(default)]
    pub entry_id: String,
    #[serde(default)]
    pub task_id: String,
    #[serde(default)]
    pub score: f32,
    #[serde(default)]
    pub bm25: f32,
    #[serde(default)]
    pub sbert: f32,
}

/// Every value any prompt template may use. Fields a purpose does not need stay empty.
#[derive(Debug, Clone, Serialize, Default)]
pub struct TurnContext {
    pub question: String,
    pub entry_point: String,
    pub call_based: bool,
    pub visible_tests: Vec<String>,
    pub guidance: String,
    pub code: String,
    pub problem: Option<String>,
    pub results: Vec<PromptTestResult>,
    pub passed: usize,
    pub hidden_failed: bool,
    pub analysis: String,
    pub retrieved: Option<Retrieved>,
    /// Self-planning's plan.
    pub plan: String,
    /// Self-debug's feedback format: simple, unit-test, explain, trace.
    pub feedback_mode: String,
    /// LDB: the failing visible test that was traced, how it ended, and its blocks as text.
    pub trace_test: String,
    pub trace_outcome: String,
    pub trace: String,
    /// Reflexion: how many unit tests the model is asked to write.
    pub max_self_tests: usize,
    /// MapCoder: how many problems to recall; the recalled problem a plan starts from, its plan,
    /// and the algorithm's tutorial.
    pub recall_k: u32,
    pub example_problem: String,
    pub example_plan: String,
    pub algorithm: String,
    /// CodeSIM: the simulation that found the plan wrong.
    pub simulation: String,
    /// LPW: the verified plan's verification on every visible test; the failing test, its own
    /// verification, the code with prints and what it printed on that test; the code's
    /// explanation; earlier programs that failed.
    pub verification: String,
    pub failing_test: String,
    pub failing_verification: String,
    pub printed_code: String,
    pub printed_output: String,
    pub explanation: String,
    pub history: Vec<String>,
    /// MGDebugger: the subfunction at hand, its source, and its unit tests (with how each ran).
    pub function_name: String,
    pub function_code: String,
    pub unit_tests: Vec<PromptTestResult>,
    /// MGDebugger: the repair reads a real trace (`--trace real`) instead of simulating one.
    pub real_trace: bool,
    /// The Feedback agent may say a visible test contradicts the specification (`--allow-flag`).
    pub allow_flag: bool,
}

impl TurnContext {
    pub fn for_task(view: &AgentView<'_>) -> TurnContext {
        TurnContext {
            question: view.prompt.to_string(),
            entry_point: view.entry_point.to_string(),
            call_based: *view.kind == TaskKind::CallBased,
            visible_tests: view.visible.iter().map(TestCase::prompt_text).collect(),
            ..Default::default()
        }
    }
}
