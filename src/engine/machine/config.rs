//! What a run sets for every task's machine: the method (`Strategy`) and its settings.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::agents::Agent;
use crate::llm::CallParams;

use super::SelfDebugFeedback;

/// Per-run settings the loop needs.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    pub strategy: Strategy,
    pub max_iters: u32,
    pub params: BTreeMap<Agent, CallParams>,
    pub memory: bool,
    /// What self-debug's feedback turns say.
    pub self_debug: SelfDebugFeedback,
    /// Programs to start from instead of generating (`--seed-from`), by task id: rgd, self-debug
    /// and ldb take them as their first iteration's code.
    pub seeds: Option<Arc<std::collections::HashMap<String, String>>>,
    /// RGD's Feedback agent reads a real execution of a failing visible test (`--trace`).
    pub trace: Option<crate::sandbox::TraceMode>,
    /// RGD's Guide agent (`--no-guide`: the Debug agent writes and repairs without guidance).
    pub guide: bool,
    /// RGD's Feedback agent (`--no-feedback`: refinement sees the raw visible-test results).
    pub feedback: bool,
    /// The endpoint's context in tokens, when known: every call is fitted to it
    /// (`agents::budget`).
    pub context_size: Option<u32>,
    /// MapCoder's recalled problems (k) and debug rounds per plan (t).
    pub mapcoder: crate::record::MapCoderParams,
    /// CodeSIM's plans (p) and debug rounds per plan (d).
    pub codesim: crate::record::CodeSimParams,
    /// LPW's verification and refinement rounds.
    pub lpw: crate::record::LpwParams,
    /// MGDebugger's passes, repairs per subfunction, and trace.
    pub mgdebugger: crate::record::MgDebuggerParams,
    /// A repository verdict reached in-process (best effort) may be remembered.
    pub allow_in_process: bool,
    /// The dataset's visible tests contradict its specification (`rgd datasets impossible`):
    /// each task's end is classified (`ImpossibleVerdict`), its last program judged on the
    /// hidden tests whatever its visible result.
    pub impossible: bool,
    /// RGD's Feedback agent may say a visible test contradicts the specification, which ends
    /// the task as flagged (`--allow-flag`; on in `rgd fix`).
    pub allow_flag: bool,
}

/// RGD, or a method the paper compares it with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Guide, Debug and Feedback agents, memory, up to max-iters rounds.
    #[default]
    Rgd,
    /// One answer from the task alone, tested once.
    Direct,
    /// One answer after zero-shot chain-of-thought reasoning ("let's think step by step"), tested once.
    Cot,
    /// Self-planning (Jiang et al.): a numbered plan (few-shot, rgd's own examples), then the code
    /// from task and plan; tested once, no repair.
    SelfPlanning,
    /// Self-debugging (Chen et al.): a seed program, then feedback and fixes in one growing
    /// conversation until the visible tests pass (`--feedback`).
    SelfDebug,
    /// LDB (Zhong et al.): a seed program, then per round one failing visible test run traced in
    /// the sandbox, the model's verdict on each basic block of the real execution, and a fix.
    Ldb,
    /// Reflexion (Shinn et al.): the model's own unit tests (visible tests are never shown), then
    /// implement, self-test, reflect in words, re-implement.
    Reflexion,
    /// MapCoder (Islam et al.): k recalled problems, a plan from each with a confidence, code
    /// from the most confident plan, t debug rounds on the visible tests, then the next plan.
    #[value(name = "mapcoder")]
    #[serde(rename = "mapcoder")]
    MapCoder,
    /// CodeSIM (Islam et al., 2025): a plan from an example problem the model recalls itself,
    /// verified by simulating it by hand on a visible test (and revised when the simulation
    /// finds it wrong), code, then up to d debug rounds that simulate the code on a failing
    /// visible test; up to p plans.
    #[value(name = "codesim")]
    #[serde(rename = "codesim")]
    CodeSim,
    /// LPW (Lei et al., 2025): a plan verified by hand on each visible test (and checked) before
    /// any code; code from plan and verification; on failure, the printed intermediate values of
    /// a failing test compared with its verification, and the code rewritten.
    Lpw,
    /// MGDebugger (Shi et al.): a seed program (Direct's, or `--seed-from`) rewritten as a tree of
    /// subfunctions, each bottom up given unit tests from the visible ones and repaired from a
    /// simulated (or, with `--trace real`, a real) execution.
    #[value(name = "mgdebugger")]
    #[serde(rename = "mgdebugger")]
    MgDebugger,
}

impl Strategy {
    pub const ALL: [Strategy; 11] = [
        Strategy::Rgd,
        Strategy::Direct,
        Strategy::Cot,
        Strategy::SelfPlanning,
        Strategy::SelfDebug,
        Strategy::Ldb,
        Strategy::Reflexion,
        Strategy::MapCoder,
        Strategy::CodeSim,
        Strategy::Lpw,
        Strategy::MgDebugger,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Rgd => "rgd",
            Strategy::Direct => "direct",
            Strategy::Cot => "cot",
            Strategy::SelfPlanning => "self-planning",
            Strategy::SelfDebug => "self-debug",
            Strategy::Ldb => "ldb",
            Strategy::Reflexion => "reflexion",
            Strategy::MapCoder => "mapcoder",
            Strategy::CodeSim => "codesim",
            Strategy::Lpw => "lpw",
            Strategy::MgDebugger => "mgdebugger",
        }
    }

    /// The strategy a manifest names.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether it repairs code over iterations (MapCoder's are bounded by k and t, the others'
    /// by max-iters).
    pub fn iterates(self) -> bool {
        matches!(
            self,
            Strategy::Rgd
                | Strategy::SelfDebug
                | Strategy::Ldb
                | Strategy::Reflexion
                | Strategy::MapCoder
                | Strategy::CodeSim
                | Strategy::Lpw
                | Strategy::MgDebugger
        )
    }
}
