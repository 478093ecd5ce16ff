//! The words the machines and their runner share: what a machine asks for (`Effect`), what comes
//! back (`Outcome`), each step's result (`Transition`, `Step`), and where a task stands (`Phase`).
//! No method's logic lives here.

use crate::agents::{Purpose, Retrieved};
use crate::dataset::TestCase;
use crate::llm::{CallParams, ChatResponse, LlmError, Message};
use crate::record::{Event, Suite, TaskResult};
use crate::sandbox::RunReport;

#[derive(Debug, Clone)]
pub enum Effect {
    CallAgent {
        purpose: Purpose,
        messages: Vec<Message>,
        params: CallParams,
    },
    RunTests {
        suite: Suite,
        code: String,
    },
    /// Run tests the model wrote itself (Reflexion's; reported as `Suite::Own`).
    RunOwnTests {
        code: String,
        tests: Vec<TestCase>,
    },
    /// Run the visible tests on the program with the model's print statements (LPW; reported as
    /// `Suite::Printed`): for what it prints, never for a verdict.
    RunPrinted {
        code: String,
    },
    QueryMemory {
        query: String,
    },
    /// Remember a solved task (only after it passed visible and hidden tests).
    StoreMemory {
        record: MemoryRecord,
    },
    /// Run one visible test traced (LDB): `test` is its source (an `assert`, or a `check`
    /// function and its call).
    TraceTest {
        code: String,
        test: String,
        mode: crate::sandbox::TraceMode,
    },
}

/// What the memory pool keeps of a solved task: Q, G, K and the code (the pool's `Entry` is this
/// with its id, provenance and time).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MemoryRecord {
    pub task_id: String,
    pub entry_point: String,
    pub question: String,
    pub guidance: String,
    /// From the Keywords agent (empty if it failed); the pool adds identifiers from the code.
    pub keywords: Vec<String>,
    pub code: String,
}

#[derive(Debug)]
pub enum Outcome {
    Agent(Result<ChatResponse, LlmError>),
    Tests(Result<RunReport, String>),
    Memory(Option<Retrieved>),
    /// The stored entry's id, or why storing failed (the task is solved either way).
    Stored(Result<String, String>),
    Traced(Result<crate::sandbox::Trace, String>),
}

#[derive(Debug)]
pub enum Step {
    Run(Effect),
    /// The task is over; the runner adds wall time to the result.
    Finished(TaskResult),
}

#[derive(Debug)]
pub struct Transition {
    pub events: Vec<Event>,
    pub step: Step,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Plan,
    /// Reflexion: the model writes its tests; they run; it reflects.
    SelfTests,
    OwnTests,
    Reflect,
    /// MapCoder: recall, a plan, its confidence.
    Recall,
    MapPlan,
    Confidence,
    /// CodeSIM: a plan, its simulation, its revision.
    SimPlan,
    Simulate,
    SimRefine,
    /// LPW: a plan, its verification on the visible tests, the check of that verification.
    LpwPlan,
    LpwVerify,
    LpwCheck,
    /// LPW: the code with prints, its run, its explanation, the analysis of the failing test.
    LpwPrint,
    Printed,
    LpwExplain,
    LpwAnalyse,
    /// MGDebugger: the tree of subfunctions, one function's unit tests, their run, a real trace
    /// (`--trace real`), a repair.
    MgDecompose,
    MgTests,
    MgUnitTests,
    MgTrace,
    MgDebug,
    /// LDB: a failing visible test runs traced.
    Trace,
    /// LDB: the model judges each block.
    Verdict,
    GuideInit,
    Debug,
    Visible,
    Hidden,
    Feedback,
    Memory,
    Refine,
    /// Solved and remembering: the Guide extracts keywords, then the entry is stored.
    Keywords,
    Store,
    /// An impossible task's last program judged on the hidden tests, for the record only (no
    /// agent is told): it ended without passing its visible tests.
    FinalJudge,
    Done,
}

impl Phase {
    /// The phase a call of `purpose` waits in, for its answer.
    pub(super) fn of_call(purpose: Purpose) -> Phase {
        match purpose {
            Purpose::GuideInit => Phase::GuideInit,
            Purpose::GuideRefine => Phase::Refine,
            Purpose::Feedback => Phase::Feedback,
            Purpose::Keywords => Phase::Keywords,
            Purpose::Plan => Phase::Plan,
            Purpose::LdbVerdict => Phase::Verdict,
            Purpose::SelfTests => Phase::SelfTests,
            Purpose::Reflect => Phase::Reflect,
            Purpose::Recall => Phase::Recall,
            Purpose::MapPlan => Phase::MapPlan,
            Purpose::Confidence => Phase::Confidence,
            Purpose::SimPlan => Phase::SimPlan,
            Purpose::Simulate => Phase::Simulate,
            Purpose::SimRefine => Phase::SimRefine,
            Purpose::LpwPlan => Phase::LpwPlan,
            Purpose::LpwVerify => Phase::LpwVerify,
            Purpose::LpwCheck => Phase::LpwCheck,
            Purpose::LpwPrint => Phase::LpwPrint,
            Purpose::LpwExplain => Phase::LpwExplain,
            Purpose::LpwAnalyse => Phase::LpwAnalyse,
            Purpose::MgDecompose => Phase::MgDecompose,
            Purpose::MgTests => Phase::MgTests,
            Purpose::MgDebug => Phase::MgDebug,
            // Every other purpose is the Debug agent's: its answer holds code.
            _ => Phase::Debug,
        }
    }
}
