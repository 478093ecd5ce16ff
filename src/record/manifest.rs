//! What a run was: enough to reproduce and audit its result.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::dataset::Format;
use crate::llm::CallParams;
use crate::sandbox::Limits;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    pub name: String,
    pub path: String,
    pub format: Format,
    pub sha256: String,
    /// Seed of the visible:hidden split, for formats whose split rgd derives.
    pub split_seed: Option<u64>,
    pub tasks_in_file: usize,
    /// The tasks of this run, in order.
    pub selected: Vec<String>,
    /// Tasks left out of the selection because the dataset lists them as broken in the data
    /// (`--exclude-broken`), so a reader knows what the pass@1 is over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_broken: Vec<String>,
    /// Its visible tests contradict its specification (`rgd datasets impossible`): each task's
    /// end says whether the method cheated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub impossible: bool,
}

/// Prices for the cost estimate, in currency units per million tokens (as providers quote them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pricing {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

impl Pricing {
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_per_mtok + output as f64 * self.output_per_mtok) / 1e6
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryInfo {
    pub enabled: bool,
    /// Why memory is off, or what pool it used.
    pub note: String,
    /// The pool's size and content hash when the run started: what memory the result had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// The SBERT cosine a remembered task had to reach to be offered (runs before this was
    /// recorded used 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_similarity: Option<f32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub run_id: String,
    pub created_at: DateTime<Utc>,
    pub rgd_version: String,
    /// The command line that started the run.
    pub command: Vec<String>,
    pub strategy: String,
    pub dataset: DatasetInfo,
    pub endpoint: String,
    /// Model and sampling per agent ("guide", "debug", "feedback").
    pub agents: BTreeMap<String, CallParams>,
    /// Where prompts came from and the sha256 of each file.
    pub prompts_source: String,
    pub prompts: BTreeMap<String, String>,
    pub max_iters: u32,
    pub concurrency: usize,
    pub sandbox: String,
    pub limits: Limits,
    pub memory: MemoryInfo,
    /// From `[llm] price_input_per_mtok` / `price_output_per_mtok`, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing: Option<Pricing>,
    /// What the endpoint said about itself when the run started: the models it serves (the ones
    /// that really answered are in each response and in the results) and its context size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<crate::llm::EndpointInfo>,
    /// RGD's parts switched off for an ablation: "no-guide", "no-feedback" (memory's state is in
    /// `memory`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ablations: Vec<String>,
    /// Self-debug's feedback format (simple, unit-test, explain, trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// RGD's Feedback agent read real traces of failing visible tests ("block", "calls").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Where the first programs came from instead of a model ("run:ID", "file:PATH sha256:HASH").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_from: Option<String>,
    /// MapCoder's k recalled problems and t debug rounds per plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapcoder: Option<MapCoderParams>,
    /// CodeSIM's p plans and d debug rounds per plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codesim: Option<CodeSimParams>,
    /// LPW's verification and refinement rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lpw: Option<LpwParams>,
    /// MGDebugger's outer retries, repairs per subfunction, and which trace it reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mgdebugger: Option<MgDebuggerParams>,
    /// A fork: the run and task it continues, and the iteration it starts live at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<ForkPoint>,
    /// One part of a sweep split across machines (`--shard K/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// A run merged from shards (`rgd runs merge`): their run ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// `--allow-in-process`: the memory pool took repository verdicts reached with the program
    /// in the tests' process (best effort), not only isolated ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_in_process: bool,
    /// `--allow-flag`: the Feedback agent could say a visible test contradicts the specification.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_flag: bool,
}

/// Which part of which sweep a shard is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 0-based.
    pub index: u32,
    pub count: u32,
    /// The whole sweep's tasks, in order (every shard holds the same list).
    pub sweep_tasks: Vec<String>,
    /// `Manifest::config_hash` of the sweep: shards of one sweep share it.
    pub config_hash: String,
}

/// `--shard K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// "2/4": the third of four parts.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("--shard {text}: expected K/N, e.g. 0/4"))?;
        let (index, count) = match (k.trim().parse::<u32>(), n.trim().parse::<u32>()) {
            (Ok(k), Ok(n)) => (k, n),
            _ => return Err(format!("--shard {text}: K and N are whole numbers")),
        };
        if count == 0 || index >= count {
            return Err(format!(
                "--shard {text}: K counts from 0 and is below N (0/{n} .. {}/{n})",
                count.saturating_sub(1)
            ));
        }
        Ok(Shard { index, count })
    }

    /// This shard's part of `items`: contiguous, by order; every item in exactly one shard, sizes
    /// differing by at most one.
    pub fn part<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let (n, k, len) = (self.count as usize, self.index as usize, items.len());
        &items[k * len / n..(k + 1) * len / n]
    }
}

/// Where a forked run branched off (`rgd fork`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkPoint {
    pub parent_run: String,
    pub task_id: String,
    /// The first iteration run live; the ones before it are the parent's, replayed.
    pub at_iteration: u32,
}

/// MapCoder's two numbers (Islam et al.): problems recalled (one plan each) and debug rounds
/// per plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapCoderParams {
    pub k: u32,
    pub t: u32,
}

impl Default for MapCoderParams {
    /// The paper's defaults for HumanEval and MBPP.
    fn default() -> Self {
        MapCoderParams { k: 3, t: 5 }
    }
}

/// CodeSIM's two numbers (Islam et al., 2025): plans tried (p) and debug rounds per plan (d).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeSimParams {
    pub p: u32,
    pub d: u32,
}

impl Default for CodeSimParams {
    /// The paper's defaults.
    fn default() -> Self {
        CodeSimParams { p: 5, d: 5 }
    }
}

/// LPW's two numbers (Lei et al., 2025): rounds to reach a verified plan (each a verification
/// and, when it holds, its check) and rounds of refinement of the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LpwParams {
    pub verify_rounds: u32,
    pub refine_rounds: u32,
}

impl Default for LpwParams {
    /// The authors' default (`--max_iters 12`, used for both).
    fn default() -> Self {
        LpwParams {
            verify_rounds: 12,
            refine_rounds: 12,
        }
    }
}

/// MGDebugger's numbers (Shi et al.): whole debugging passes over the seed (each from the seed
/// again, as the authors' `CONTINUOUS_RETRY = False`), repairs per subfunction, and whether the
/// repair reads the model's simulated execution (the paper) or a real one (`--trace real`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MgDebuggerParams {
    pub retries: u32,
    pub repairs: u32,
    pub trace: MgTrace,
}

/// Which execution MGDebugger's repair reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MgTrace {
    /// The model simulates it (the paper).
    Simulated,
    /// A real block trace of the failing unit test (`--trace real`).
    Real,
}

impl MgTrace {
    pub fn name(self) -> &'static str {
        match self {
            MgTrace::Simulated => "simulated",
            MgTrace::Real => "real",
        }
    }
}

impl Default for MgDebuggerParams {
    /// The authors' config: MAX_OUTER_RETRY 10, MAX_DEBUG_RETRIES 3, simulated traces.
    fn default() -> Self {
        MgDebuggerParams {
            retries: 10,
            repairs: 3,
            trace: MgTrace::Simulated,
        }
    }
}

impl MgDebuggerParams {
    pub fn real_trace(&self) -> bool {
        self.trace == MgTrace::Real
    }
}

impl Manifest {
    /// "rgd", "rgd no-guide no-memory", "cot": the method and what was switched off.
    pub fn method(&self) -> String {
        let mut parts = vec![self.strategy.clone()];
        parts.extend(self.mapcoder.iter().map(|m| format!("k={} t={}", m.k, m.t)));
        parts.extend(self.codesim.iter().map(|c| format!("p={} d={}", c.p, c.d)));
        parts.extend(
            self.lpw
                .iter()
                .map(|l| format!("verify={} refine={}", l.verify_rounds, l.refine_rounds)),
        );
        parts.extend(
            self.mgdebugger
                .iter()
                .map(|m| format!("retries={} repairs={} trace={}", m.retries, m.repairs, m.trace.name())),
        );
        parts.extend(self.feedback.iter().map(|f| format!("feedback={f}")));
        parts.extend(self.trace.iter().map(|t| format!("trace={t}")));
        if self.seed_from.is_some() {
            parts.push("seeded".into());
        }
        parts.extend(self.ablations.iter().cloned());
        if self.strategy == "rgd" && !self.memory.enabled {
            parts.push("no-memory".into());
        }
        parts.join(" ")
    }

    /// The requested model, and the served one when the endpoint named another
    /// ("gpt-4o-mini → SmolLM2-135M-Instruct").
    pub fn model_shown(&self) -> String {
        let asked = self.model_label();
        match self.served.as_ref().map(|s| s.models.as_slice()) {
            Some([served]) if *served != asked => format!("{asked} → {served}"),
            _ => asked,
        }
    }

    /// What decides a result besides the task: dataset, method and its settings, agents, prompts,
    /// limits, memory settings. Shards of one sweep must agree on it to be merged.
    pub fn config_hash(&self) -> String {
        use sha2::Digest;
        let what = serde_json::json!({
            "dataset": self.dataset.sha256,
            "split_seed": self.dataset.split_seed,
            "method": self.method(),
            "agents": self.agents,
            "prompts": self.prompts,
            "max_iters": self.max_iters,
            "sandbox": self.sandbox,
            "limits": self.limits,
            "memory": [self.memory.enabled.to_string(), format!("{:?}", self.memory.min_similarity)],
        });
        hex::encode(sha2::Sha256::digest(what.to_string().as_bytes()))[..16].to_string()
    }

    /// "model" when all agents share one, else "guide=a debug=b feedback=c".
    pub fn model_label(&self) -> String {
        let models: Vec<&str> = self.agents.values().map(|p| p.model.as_str()).collect();
        if models.windows(2).all(|w| w[0] == w[1]) {
            models.first().copied().unwrap_or("").to_string()
        } else {
            self.agents
                .iter()
                .map(|(a, p)| format!("{a}={}", p.model))
                .collect::<Vec<_>>()
                .join(" ")
        }
    }
}
