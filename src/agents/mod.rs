//! The three agents (Guide, Debug, Feedback) as prompt templates plus what they are given.
//! Everything an agent sees is built here from `AgentView` and visible test results, so hidden
//! tests cannot reach a prompt.

mod answers;
pub mod budget;
mod context;
mod flag;
mod prompts;

pub use answers::{Recall, Recalled, SelfTests, parse_confidence, parse_keywords, parse_recall, parse_self_tests};
pub use context::{PromptTestResult, Retrieved, TurnContext};
pub use flag::{Flag, parse_flag};
pub use prompts::{PromptError, Prompts};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    Guide,
    Debug,
    Feedback,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::Guide, Agent::Debug, Agent::Feedback];

    pub fn name(self) -> &'static str {
        match self {
            Agent::Guide => "guide",
            Agent::Debug => "debug",
            Agent::Feedback => "feedback",
        }
    }
}

/// Which prompt an agent call uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    GuideInit,
    GuideRefine,
    DebugInit,
    DebugFix,
    Feedback,
    Keywords,
    /// The Direct baseline: code straight from the task, no guidance, one try.
    Direct,
    /// Zero-shot chain of thought: reasoning, then the code, in one answer.
    Cot,
    /// Self-planning's first call: a numbered plan.
    Plan,
    /// Self-planning's second call: the code, given the task and the plan.
    Implement,
    /// Self-debug's seed program.
    SelfDebugSeed,
    /// Self-debug's fix, after a feedback turn in the same conversation.
    SelfDebugFix,
    /// LDB's seed program.
    LdbSeed,
    /// LDB's per-block verdicts on a real execution trace.
    LdbVerdict,
    /// LDB's fix, after the verdicts, in the same conversation.
    LdbFix,
    /// Reflexion: the model writes its own unit tests from the task.
    SelfTests,
    /// Reflexion's first implementation, from the task alone.
    ReflexionImplement,
    /// Reflexion's self-reflection on why its code failed its own tests.
    Reflect,
    /// Reflexion's next implementation, given the last one, its test results and the reflection.
    ReflexionFix,
    /// MapCoder's retrieval agent: k similar problems recalled, with code and plans, as XML.
    Recall,
    /// MapCoder's planning agent: a plan for the task from one recalled problem.
    MapPlan,
    /// MapCoder's confidence in a plan (0-100, XML).
    Confidence,
    /// MapCoder's coding agent: code from the task and a plan.
    MapCode,
    /// MapCoder's debugging agent: the code repaired from the visible-test results.
    MapDebug,
    /// CodeSIM's planning agent: an example problem recalled by the model itself, then a plan.
    SimPlan,
    /// CodeSIM: the plan simulated by hand on a visible test; says whether it needs changing.
    Simulate,
    /// CodeSIM: the plan revised after a simulation found it wrong.
    SimRefine,
    /// CodeSIM's coding agent: code from the task and the (verified) plan.
    SimCode,
    /// CodeSIM's debugging agent: a failing visible test simulated on the code, then a fix.
    SimDebug,
    /// LPW: a solution plan in numbered steps, no code.
    LpwPlan,
    /// LPW: the plan verified by hand on each visible test, or revised where it goes wrong.
    LpwVerify,
    /// LPW: the verification checked for wrong reasoning, test by test.
    LpwCheck,
    /// LPW: code from the plan and its verification.
    LpwCode,
    /// LPW: the same code with print statements of its intermediate values.
    LpwPrint,
    /// LPW: the failing code explained line by line.
    LpwExplain,
    /// LPW: the printed run of a failing visible test compared with its verification.
    LpwAnalyse,
    /// LPW: the code rewritten from the explanation and the analysis.
    LpwFix,
    /// MGDebugger: the seed program rewritten as a tree of subfunctions.
    MgDecompose,
    /// MGDebugger: unit tests for one subfunction, derived from the visible tests.
    MgTests,
    /// MGDebugger: one subfunction's execution simulated (or its real trace read) and repaired.
    MgDebug,
}

impl Purpose {
    pub const ALL: [Purpose; 40] = [
        Purpose::GuideInit,
        Purpose::GuideRefine,
        Purpose::DebugInit,
        Purpose::DebugFix,
        Purpose::Feedback,
        Purpose::Keywords,
        Purpose::Direct,
        Purpose::Cot,
        Purpose::Plan,
        Purpose::Implement,
        Purpose::SelfDebugSeed,
        Purpose::SelfDebugFix,
        Purpose::LdbSeed,
        Purpose::LdbVerdict,
        Purpose::LdbFix,
        Purpose::SelfTests,
        Purpose::ReflexionImplement,
        Purpose::Reflect,
        Purpose::ReflexionFix,
        Purpose::Recall,
        Purpose::MapPlan,
        Purpose::Confidence,
        Purpose::MapCode,
        Purpose::MapDebug,
        Purpose::SimPlan,
        Purpose::Simulate,
        Purpose::SimRefine,
        Purpose::SimCode,
        Purpose::SimDebug,
        Purpose::LpwPlan,
        Purpose::LpwVerify,
        Purpose::LpwCheck,
        Purpose::LpwCode,
        Purpose::LpwPrint,
        Purpose::LpwExplain,
        Purpose::LpwAnalyse,
        Purpose::LpwFix,
        Purpose::MgDecompose,
        Purpose::MgTests,
        Purpose::MgDebug,
    ];

    pub fn agent(self) -> Agent {
        match self {
            Purpose::GuideInit
            | Purpose::GuideRefine
            | Purpose::Keywords
            | Purpose::Plan
            | Purpose::SelfTests
            | Purpose::Recall
            | Purpose::MapPlan
            | Purpose::SimPlan
            | Purpose::SimRefine
            | Purpose::LpwPlan
            | Purpose::MgTests => Agent::Guide,
            Purpose::DebugInit
            | Purpose::DebugFix
            | Purpose::Direct
            | Purpose::Cot
            | Purpose::Implement
            | Purpose::SelfDebugSeed
            | Purpose::SelfDebugFix
            | Purpose::LdbSeed
            | Purpose::LdbFix
            | Purpose::ReflexionImplement
            | Purpose::ReflexionFix
            | Purpose::MapCode
            | Purpose::MapDebug
            | Purpose::SimCode
            | Purpose::SimDebug
            | Purpose::LpwCode
            | Purpose::LpwPrint
            | Purpose::LpwFix
            | Purpose::MgDecompose
            | Purpose::MgDebug => Agent::Debug,
            Purpose::Feedback
            | Purpose::LdbVerdict
            | Purpose::Reflect
            | Purpose::Confidence
            | Purpose::Simulate
            | Purpose::LpwVerify
            | Purpose::LpwCheck
            | Purpose::LpwExplain
            | Purpose::LpwAnalyse => Agent::Feedback,
        }
    }

    /// The prompt file's path in `assets/prompts/`, without `.md`.
    /// Whether this call's prompt shows visible test results and, under `--allow-flag`, asks
    /// whether one of them contradicts the task (`shared/flag`, included by these prompts).
    /// Reflexion has none: it shows the model only its own tests' results.
    pub fn may_flag(self) -> bool {
        matches!(
            self,
            Purpose::Feedback
                | Purpose::SelfDebugFix
                | Purpose::LdbVerdict
                | Purpose::MapDebug
                | Purpose::SimDebug
                | Purpose::LpwAnalyse
                | Purpose::MgDebug
        )
    }

    pub fn prompt_name(self) -> &'static str {
        match self {
            Purpose::GuideInit => "rgd/guide_init",
            Purpose::GuideRefine => "rgd/guide_refine",
            Purpose::DebugInit => "rgd/debug_init",
            Purpose::DebugFix => "rgd/debug_fix",
            Purpose::Feedback => "rgd/feedback",
            Purpose::Keywords => "rgd/keywords",
            Purpose::Direct => "direct/answer",
            Purpose::Cot => "cot/answer",
            Purpose::Plan => "self_planning/plan",
            Purpose::Implement => "self_planning/implement",
            Purpose::SelfDebugSeed => "self_debug/seed",
            Purpose::SelfDebugFix => "self_debug/feedback",
            Purpose::LdbSeed => "ldb/seed",
            Purpose::LdbVerdict => "ldb/verdict",
            Purpose::LdbFix => "ldb/fix",
            Purpose::SelfTests => "reflexion/tests",
            Purpose::ReflexionImplement => "reflexion/implement",
            Purpose::Reflect => "reflexion/reflect",
            Purpose::ReflexionFix => "reflexion/fix",
            Purpose::Recall => "mapcoder/recall",
            Purpose::MapPlan => "mapcoder/plan",
            Purpose::Confidence => "mapcoder/confidence",
            Purpose::MapCode => "mapcoder/code",
            Purpose::MapDebug => "mapcoder/debug",
            Purpose::SimPlan => "codesim/plan",
            Purpose::Simulate => "codesim/simulate",
            Purpose::SimRefine => "codesim/refine",
            Purpose::SimCode => "codesim/code",
            Purpose::SimDebug => "codesim/debug",
            Purpose::LpwPlan => "lpw/plan",
            Purpose::LpwVerify => "lpw/verify",
            Purpose::LpwCheck => "lpw/check",
            Purpose::LpwCode => "lpw/code",
            Purpose::LpwPrint => "lpw/print",
            Purpose::LpwExplain => "lpw/explain",
            Purpose::LpwAnalyse => "lpw/analyse",
            Purpose::LpwFix => "lpw/fix",
            Purpose::MgDecompose => "mgdebugger/decompose",
            Purpose::MgTests => "mgdebugger/tests",
            Purpose::MgDebug => "mgdebugger/debug",
        }
    }
}
