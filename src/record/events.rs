//! The typed event stream. Everything a view, the recorder or an audit needs is in here; views
//! never look at engine state directly.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::manifest::Manifest;
use super::result::{RunSummary, TaskResult};
use crate::agents::{Agent, Purpose, Retrieved};
use crate::code::ExtractProblem;
use crate::llm::{CallParams, LlmError, Message, Usage};
use crate::sandbox::RunReport;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    Visible,
    Hidden,
    /// Tests the model wrote itself (Reflexion, MGDebugger's subfunction tests): they steer its
    /// repairs; they decide nothing.
    Own,
    /// A visible test run again with the model's print statements added (LPW): it shows the
    /// program's intermediate values; it decides nothing (the program without prints is judged).
    Printed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        manifest: Box<Manifest>,
    },
    /// A resumed run: these tasks were already finished and are not run again.
    RunResumed {
        finished: Vec<String>,
    },
    TaskStarted {
        task_id: String,
        /// 1, or more when a killed run is resumed and the task had begun before.
        attempt: u32,
        entry_point: String,
        prompt: String,
        visible_tests: Vec<String>,
        hidden_tests: usize,
    },
    IterationStarted {
        task_id: String,
        iteration: u32,
    },
    AgentRequest {
        task_id: String,
        iteration: u32,
        call_id: u64,
        agent: Agent,
        purpose: Purpose,
        params: CallParams,
        messages: Vec<Message>,
    },
    /// Streamed answer text; `AgentRetry` means the text so far is void and starts again.
    AgentTokens {
        task_id: String,
        call_id: u64,
        text: String,
    },
    AgentRetry {
        task_id: String,
        call_id: u64,
        attempt: u32,
        error: LlmError,
        wait_ms: u64,
    },
    AgentResponse {
        task_id: String,
        iteration: u32,
        call_id: u64,
        agent: Agent,
        purpose: Purpose,
        text: String,
        usage: Usage,
        latency_ms: u64,
        attempts: u32,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        finish_reason: Option<String>,
        /// The model the server says answered.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        served_model: Option<String>,
    },
    /// A visible test run traced (LDB), with the trace the model was shown a window of.
    TestTraced {
        task_id: String,
        iteration: u32,
        test: String,
        trace: crate::sandbox::Trace,
    },
    /// Reflexion's own unit tests, as parsed from the model's answer: the kept ones (they parse
    /// and call the entry point) and the dropped lines with why.
    SelfTests {
        task_id: String,
        iteration: u32,
        kept: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        dropped: Vec<String>,
    },
    /// An answer the strategy could not read as asked (MapCoder's XML or confidence score), and
    /// what the strategy did instead.
    AnswerMalformed {
        task_id: String,
        iteration: u32,
        purpose: Purpose,
        error: String,
        handled: String,
    },
    /// What a method decided that is neither a call nor a test run: LPW found no verified plan,
    /// MGDebugger's seed already passes, its functions in the order they are debugged.
    StrategyNote {
        task_id: String,
        iteration: u32,
        text: String,
    },
    /// MapCoder's plans in the order they will be tried (highest confidence first).
    PlansRanked {
        task_id: String,
        iteration: u32,
        /// Each plan's place in recall order (1-based) and confidence, in trying order.
        plans: Vec<(usize, u32)>,
    },
    /// A call fitted to the endpoint's context (`agents::budget`): fields cut, `max_tokens` lowered.
    PromptFitted {
        task_id: String,
        iteration: u32,
        purpose: Purpose,
        context: u32,
        /// The prompt's estimated tokens after fitting.
        prompt_tokens: u32,
        max_tokens: u32,
        asked_max_tokens: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        trimmed: Vec<crate::agents::budget::Trim>,
    },
    AgentFailed {
        task_id: String,
        iteration: u32,
        call_id: u64,
        agent: Agent,
        purpose: Purpose,
        error: LlmError,
    },
    CodeExtracted {
        task_id: String,
        iteration: u32,
        code: Option<String>,
        /// Unified diff against the previous iteration's code.
        diff: Option<String>,
        problem: Option<ExtractProblem>,
    },
    TestsStarted {
        task_id: String,
        iteration: u32,
        suite: Suite,
        tests: usize,
    },
    TestsRun {
        task_id: String,
        iteration: u32,
        suite: Suite,
        passed: usize,
        total: usize,
        report: RunReport,
    },
    MemoryQuery {
        task_id: String,
        iteration: u32,
        query: String,
    },
    /// What memory offered the Guide's refinement (`None`: nothing above the threshold).
    MemoryHit {
        task_id: String,
        iteration: u32,
        hit: Option<Retrieved>,
    },
    /// A solved task entered the memory pool (or could not: `error`).
    MemoryStored {
        task_id: String,
        entry_id: Option<String>,
        error: Option<String>,
    },
    /// The debugger holds the task before `pending` runs (a breakpoint, a pause or a step;
    /// `reason` says which). Sent again after each edit, with the effect as it now stands.
    Paused {
        task_id: String,
        iteration: u32,
        reason: String,
        pending: Pending,
    },
    /// The held task goes on: `how` is continue, step, skip or abort.
    Resumed {
        task_id: String,
        iteration: u32,
        how: String,
    },
    /// A person changed the task's course: `field` (code, messages, guidance, query, hit,
    /// skip, abort) and what changed, as a unified diff.
    Intervened {
        task_id: String,
        iteration: u32,
        field: String,
        diff: String,
    },
    /// An agent said a visible test contradicts the specification (`--allow-flag`): the task ends.
    TestFlagged {
        task_id: String,
        iteration: u32,
        test: String,
        reason: String,
    },
    /// A debugger command that could not be carried out, and why; nothing changed.
    #[serde(rename = "error")]
    ControlError {
        message: String,
    },
    TaskFinished {
        result: TaskResult,
    },
    RunFinished {
        summary: RunSummary,
    },
}

/// Which part of a run an event is about: the views (the TUI's model, the printer) each handle
/// a part in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventPart {
    /// The run as a whole: started, resumed, finished, a debugger error.
    Run,
    /// An agent's call and what the engine made of its answer.
    Call,
    /// A task's progress: its code, tests, memory and end.
    Task,
    /// What the debugger and the people at it did to a task.
    Debugger,
}

impl Event {
    pub fn part(&self) -> EventPart {
        use Event::*;
        match self {
            RunStarted { .. } | RunResumed { .. } | RunFinished { .. } | ControlError { .. } => EventPart::Run,
            AgentRequest { .. }
            | AgentTokens { .. }
            | AgentRetry { .. }
            | AgentResponse { .. }
            | AgentFailed { .. }
            | PromptFitted { .. }
            | TestTraced { .. }
            | SelfTests { .. }
            | AnswerMalformed { .. }
            | StrategyNote { .. }
            | PlansRanked { .. } => EventPart::Call,
            TaskStarted { .. }
            | IterationStarted { .. }
            | CodeExtracted { .. }
            | TestsStarted { .. }
            | TestsRun { .. }
            | MemoryQuery { .. }
            | MemoryHit { .. }
            | MemoryStored { .. }
            | TaskFinished { .. } => EventPart::Task,
            Paused { .. } | Resumed { .. } | Intervened { .. } | TestFlagged { .. } => EventPart::Debugger,
        }
    }

    pub fn task_id(&self) -> Option<&str> {
        use Event::*;
        match self {
            TaskStarted { task_id, .. }
            | IterationStarted { task_id, .. }
            | AgentRequest { task_id, .. }
            | AgentTokens { task_id, .. }
            | AgentRetry { task_id, .. }
            | AgentResponse { task_id, .. }
            | AgentFailed { task_id, .. }
            | PromptFitted { task_id, .. }
            | TestTraced { task_id, .. }
            | SelfTests { task_id, .. }
            | AnswerMalformed { task_id, .. }
            | StrategyNote { task_id, .. }
            | PlansRanked { task_id, .. }
            | CodeExtracted { task_id, .. }
            | TestsStarted { task_id, .. }
            | TestsRun { task_id, .. }
            | MemoryQuery { task_id, .. }
            | MemoryHit { task_id, .. }
            | MemoryStored { task_id, .. }
            | Paused { task_id, .. }
            | Resumed { task_id, .. }
            | TestFlagged { task_id, .. }
            | Intervened { task_id, .. } => Some(task_id),
            TaskFinished { result } => Some(&result.task_id),
            RunStarted { .. } | RunResumed { .. } | RunFinished { .. } | ControlError { .. } => None,
        }
    }
}

/// The effect a held task will run next, as the debugger shows it (and lets a person edit it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pending {
    /// An agent call: the exact messages and parameters; for the Guide's refinement, the memory
    /// hit its prompt holds.
    Agent {
        agent: Agent,
        purpose: Purpose,
        messages: Vec<Message>,
        params: CallParams,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_hit: Option<Retrieved>,
    },
    /// A test run: the program and the tests (visible or the model's own; hidden tests are
    /// counted, never shown).
    Tests { suite: Suite, code: String, tests: Vec<String> },
    /// One visible test run traced.
    Trace { code: String, test: String },
    /// A memory query.
    Memory { query: String },
    /// A solved task about to enter the memory pool.
    Store { guidance: String, keywords: Vec<String> },
}

impl Pending {
    /// "guide call", "visible tests", ...: what the sweep table and the printer show.
    pub fn label(&self) -> String {
        match self {
            Pending::Agent { agent, purpose, .. } => format!("{} call ({})", agent.name(), purpose.prompt_name()),
            Pending::Tests { suite, .. } => format!("{} tests", suite.name()),
            Pending::Trace { .. } => "traced test".into(),
            Pending::Memory { .. } => "memory query".into(),
            Pending::Store { .. } => "memory store".into(),
        }
    }
}

impl Suite {
    pub fn name(self) -> &'static str {
        match self {
            Suite::Visible => "visible",
            Suite::Hidden => "hidden",
            Suite::Own => "own",
            Suite::Printed => "printed",
        }
    }
}

/// An event as recorded: its place in the run and when it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub seq: u64,
    pub at: DateTime<Utc>,
    pub event: Event,
}
