//! The three agents (Guide, Debug, Feedback) as prompt templates plus what they are given.
//! Everything an agent sees is built here from `AgentView` and visible test results, so hidden
//! tests cannot reach a prompt.

mod answers;
pub mod budget;
mod context;
mod prompts;

pub use answers::parse_keywords;
pub use context::{PromptTestResult, Retrieved, TurnContext};
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
}

impl Purpose {
    pub const ALL: [Purpose; 7] = [
        Purpose::GuideInit,
        Purpose::GuideRefine,
        Purpose::DebugInit,
        Purpose::DebugFix,
        Purpose::Feedback,
        Purpose::Keywords,
        Purpose::Direct,
    ];

    pub fn agent(self) -> Agent {
        match self {
            Purpose::GuideInit | Purpose::GuideRefine | Purpose::Keywords => Agent::Guide,
            Purpose::DebugInit | Purpose::DebugFix | Purpose::Direct => Agent::Debug,
            Purpose::Feedback => Agent::Feedback,
        }
    }

    /// The prompt file's stem in `assets/prompts/`.
    pub fn prompt_name(self) -> &'static str {
        match self {
            Purpose::GuideInit => "guide_init",
            Purpose::GuideRefine => "guide_refine",
            Purpose::DebugInit => "debug_init",
            Purpose::DebugFix => "debug_fix",
            Purpose::Feedback => "feedback",
            Purpose::Keywords => "keywords",
            Purpose::Direct => "direct",
        }
    }
}
