//! Benchmark tasks: one `Task` shape for HumanEval, MBPP, their -ET variants, APPS and rgd's own samples.
//!
//! Loaders only translate file formats; which tests are visible and which are hidden is decided here
//! once, so no later stage can leak a hidden test into a prompt by accident.

mod bundled;
mod catalog;
mod doctest;
mod formats;
mod sidecar;
mod split;
mod user;

pub use bundled::{bundled_dir, provenance};
pub use catalog::{CATALOG, DatasetEntry, resolve_dataset};
pub use formats::{Format, LoadedDataset, RGD_RECORD, load_dataset, rgd_record};
pub use sidecar::{
    BROKEN_SUFFIX, BrokenTask, CONTRADICTIONS, LIMITS_SUFFIX, LIMITS_VERSION, MeasuredTask, TaskLimit, TimeLimits, sidecar_path,
    write_broken,
};
pub use split::{DEFAULT_SPLIT_SEED, split_visible_hidden};
pub use user::{UserTask, test_sources, user_task};

use serde::{Deserialize, Serialize};

/// How a program is exercised by its tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum TaskKind {
    /// A Python function called by assert statements or a `check(candidate)` function.
    Function,
    /// A whole program fed on stdin, judged on stdout (APPS standard input tasks).
    Stdio,
    /// APPS tasks with starter code: the function is called with one argument per input line.
    CallBased,
    /// One function of a Python project (`rgd solve --repo`): the program is the file `file`
    /// (relative to `root`), and the tests are the project's own, run by pytest with `python` in a
    /// throw-away copy of the project. `target` is the function's qualified name in `file`
    /// (`name`, `Class.name`); `hidden` the hidden tests' node ids, which the copy for a visible
    /// run leaves out.
    Project {
        root: String,
        file: String,
        python: String,
        #[serde(default)]
        target: String,
        #[serde(default)]
        hidden: Vec<String>,
    },
}

impl TaskKind {
    pub fn runner_mode(&self) -> &'static str {
        match self {
            TaskKind::Function => "function",
            TaskKind::Stdio => "stdio",
            TaskKind::CallBased => "call",
            TaskKind::Project { .. } => "project",
        }
    }
}

/// One test as the sandbox runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum TestCase {
    /// A single `assert` statement.
    Assert { src: String },
    /// A dataset's `def check(candidate): ...` source; the runner calls it with the entry point.
    Check { src: String },
    /// Standard input and the expected standard output (or, for call-based tasks, argument lines
    /// and the expected return value).
    Io { input: String, output: String },
    /// A stdin/stdout program run with no expectation (`rgd sandbox run`): it passes when it ends
    /// without an exception, and its output is reported.
    Run { input: String },
    /// An expression whose value the run reports whole, as a Python literal, in `got` (`rgd
    /// datasets plus`: the reference solution's output on a generated input); it passes when the
    /// value is plain data.
    Value { src: String },
    /// One of a project's own tests: pytest's node id, and the test function's source (what an
    /// agent reads of it).
    Pytest { node: String, src: String },
}

impl TestCase {
    /// A one-line label for tables and prompts.
    pub fn label(&self) -> String {
        match self {
            TestCase::Assert { src } | TestCase::Value { src } => src.trim().to_string(),
            TestCase::Check { .. } => "check(candidate)".to_string(),
            TestCase::Io { input, .. } | TestCase::Run { input } => format!("input: {}", input.trim_end().replace('\n', "\\n")),
            TestCase::Pytest { node, .. } => node.clone(),
        }
    }

    /// The test as a prompt shows it: the label, or for a project's test its node id and source.
    pub fn prompt_text(&self) -> String {
        match self {
            TestCase::Pytest { node, src } if !src.is_empty() => format!("# {node}\n{}", src.trim_end()),
            _ => self.label(),
        }
    }

    /// What the test expects, where it can be stated on its own (I/O tests).
    pub fn expected(&self) -> Option<&str> {
        match self {
            TestCase::Io { output, .. } => Some(output.as_str()),
            _ => None,
        }
    }
}

/// A benchmark task. `hidden` and `canonical` never reach an agent: prompts are built from
/// `AgentView`, which has neither.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    /// The task description Q given to the agents.
    pub prompt: String,
    /// The entry point E (function name); empty for stdin/stdout tasks.
    pub entry_point: String,
    pub kind: TaskKind,
    pub visible: Vec<TestCase>,
    pub hidden: Vec<TestCase>,
    /// A complete reference program, when the dataset has one (used only by `datasets verify`).
    pub canonical: Option<String>,
    /// A task cut out of a user's file (`rgd solve`): the whole file. The agents' program takes
    /// the entry point's place in it (`code::splice`), so tests run the user's module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
}

/// The part of a task an agent may see.
#[derive(Debug, Clone, Serialize)]
pub struct AgentView<'a> {
    pub id: &'a str,
    pub prompt: &'a str,
    pub entry_point: &'a str,
    pub kind: &'a TaskKind,
    pub visible: &'a [TestCase],
}

impl Task {
    pub fn agent_view(&self) -> AgentView<'_> {
        AgentView {
            id: &self.id,
            prompt: &self.prompt,
            entry_point: &self.entry_point,
            kind: &self.kind,
            visible: &self.visible,
        }
    }
}

/// Errors that point at the offending place in a dataset file.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{path}:{line}: {message}")]
    Malformed { path: String, line: usize, message: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unknown dataset format (fields of the first record: {fields})")]
    UnknownFormat { path: String, fields: String },
    #[error("{path}: the file holds no tasks")]
    Empty { path: String },
    #[error("no dataset named {name:?}; looked in: {searched}. Known names: {known}. A path to a .jsonl file works too")]
    NotFound { name: String, searched: String, known: String },
}
