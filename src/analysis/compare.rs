//! Comparing runs on the same tasks: pass@1 with intervals, the tasks one solved and the other did
//! not, McNemar's exact test and a paired bootstrap interval of the difference, cost per solved
//! task and per agent, pass@1 after each iteration, and why the unsolved tasks failed.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::bail;
use serde::Serialize;

use super::stats::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, mcnemar_exact, paired_bootstrap, wilson};
use crate::record::{Manifest, RunState, RunStatus, RunSummary, TaskResult};
use crate::store::{Home, RunStore};
use crate::text::short_id as short;

/// A recorded run as a comparison reads it.
#[derive(Debug, Clone)]
pub struct RunData {
    pub manifest: Manifest,
    /// The finished result of each task, by task id.
    pub results: BTreeMap<String, TaskResult>,
    pub state: RunState,
    /// The run judged again on a plus dataset's tests (`--plus`), when asked.
    pub plus: Option<PlusColumn>,
}

/// A run's final programs judged on the hidden tests of a plus dataset (`crate::plus::rejudge`).
#[derive(Debug, Clone, Serialize)]
pub struct PlusColumn {
    pub dataset: String,
    pub sha256: String,
    /// The tasks the run solved whose final program passes the plus tests too.
    pub passed: BTreeSet<String>,
}

/// pass@1 on the plus tests over the compared tasks, and how much of the run's own survived.
#[derive(Debug, Clone, Serialize)]
pub struct PlusStats {
    pub dataset: String,
    pub solved: usize,
    pub pass_at_1: f64,
    pub interval: (f64, f64),
    /// Tasks the run solved that the plus tests reject.
    pub rejected: Vec<String>,
}

impl RunData {
    /// Loads a run by id or unique prefix. A run another process is writing cannot be read.
    pub fn load(home: &Home, prefix: &str) -> anyhow::Result<RunData> {
        let id = home.find_run(prefix)?;
        let store = RunStore::open(home, &id)?;
        let manifest = store.manifest()?;
        let results = store
            .results()?
            .into_iter()
            .filter(TaskResult::is_final)
            .map(|r| (r.task_id.clone(), r))
            .collect();
        let state = RunStatus::read(&store.dir).map(|s| s.state).unwrap_or(RunState::Interrupted);
        Ok(RunData {
            manifest,
            results,
            state,
            plus: None,
        })
    }

    /// The run's summary over `tasks` (its own selection, or the tasks a comparison shares):
    /// solved, tokens per agent, pass@1 after each iteration, as `runs export` computes them.
    pub fn summary(&self, tasks: &[String]) -> RunSummary {
        let m = &self.manifest;
        let results: Vec<TaskResult> = tasks.iter().filter_map(|t| self.results.get(t)).cloned().collect();
        RunSummary::compute(&m.run_id, &m.dataset.name, &m.model_label(), tasks, &results, m.max_iters)
    }

    /// Whether its last program on `task` passed every visible test of an impossible task.
    fn cheated(&self, task: &str) -> bool {
        self.results
            .get(task)
            .and_then(|r| r.impossible.filter(|_| !r.intervened))
            .is_some_and(|v| v.outcome == crate::record::Cheat::Cheated)
    }

    fn solved(&self, task: &str) -> bool {
        // A task a person helped (the debugger) is not the method's.
        self.results.get(task).is_some_and(|r| r.solved_by_method())
    }

    /// pass@1 on the plus tests over `tasks`, when the run was judged on them.
    pub fn plus_stats(&self, tasks: &[String]) -> Option<PlusStats> {
        let plus = self.plus.as_ref()?;
        let solved = tasks.iter().filter(|t| plus.passed.contains(*t)).count();
        Some(PlusStats {
            dataset: plus.dataset.clone(),
            solved,
            pass_at_1: solved as f64 / tasks.len().max(1) as f64,
            interval: wilson(solved, tasks.len()),
            rejected: tasks
                .iter()
                .filter(|t| self.solved(t) && !plus.passed.contains(*t))
                .cloned()
                .collect(),
        })
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentCost {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub calls: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Cost {
    pub per_agent: BTreeMap<String, AgentCost>,
    /// Over every agent, divided by the tasks solved (absent when none was).
    pub tokens_in_per_solved: Option<f64>,
    pub tokens_out_per_solved: Option<f64>,
    pub calls_per_solved: Option<f64>,
    pub seconds_per_task: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunStats {
    pub run_id: String,
    pub method: String,
    pub model: String,
    pub tasks: usize,
    pub solved: usize,
    /// Compared tasks with no final result (counted as not solved).
    pub unfinished: usize,
    pub pass_at_1: f64,
    /// 95% Wilson interval of pass@1.
    pub interval: (f64, f64),
    /// pass@1 minus the first run's.
    pub delta: f64,
    pub cost: Cost,
    /// pass@1 once iterations 1, 2, ... k had run.
    pub cumulative: Vec<f64>,
    /// Unsolved tasks by why they failed ("crash (ValueError)", "wrong on hidden only", ...).
    pub failures: BTreeMap<String, usize>,
    /// The same run judged on a plus dataset's tests, when asked (`--plus`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plus: Option<PlusStats>,
    /// On an impossible dataset: how often it cheated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cheating: Option<CheatingStats>,
}

/// A run on an impossible dataset (`rgd datasets impossible`): its tasks by how they ended.
#[derive(Debug, Clone, Serialize)]
pub struct CheatingStats {
    pub cheated: usize,
    pub flagged: usize,
    pub failed_honestly: usize,
    /// Last programs that pass the hidden tests (the specification's).
    pub hidden_passed: usize,
    /// cheated / judged, and its 95% Wilson interval.
    pub rate: f64,
    pub interval: (f64, f64),
}

impl CheatingStats {
    pub(super) fn of(c: &crate::record::ImpossibleCounts) -> CheatingStats {
        let judged = c.cheated + c.flagged + c.failed_honestly;
        CheatingStats {
            cheated: c.cheated,
            flagged: c.flagged,
            failed_honestly: c.failed_honestly,
            hidden_passed: c.hidden_passed,
            rate: c.cheating_rate(),
            interval: wilson(c.cheated, judged),
        }
    }
}

/// Two runs on an impossible dataset, task by task: which cheated where the other did not.
#[derive(Debug, Clone, Serialize)]
pub struct PairedCheating {
    pub only_first: Vec<String>,
    pub only_other: Vec<String>,
    /// McNemar's exact test on the discordant tasks (two-sided).
    pub mcnemar_p: f64,
}

/// One run against the first, task by task.
#[derive(Debug, Clone, Serialize)]
pub struct Paired {
    pub first: String,
    pub other: String,
    /// Solved by the first run and not the other, and the reverse.
    pub only_first: Vec<String>,
    pub only_other: Vec<String>,
    pub both: usize,
    pub neither: usize,
    /// McNemar's exact test on the discordant tasks (two-sided).
    pub mcnemar_p: f64,
    pub delta: f64,
    /// 95% paired bootstrap interval of the difference.
    pub bootstrap: (f64, f64),
    pub bootstrap_resamples: usize,
    pub bootstrap_seed: u64,
    /// Both runs on an impossible dataset: cheating, paired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cheating: Option<PairedCheating>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub dataset: String,
    pub dataset_sha256: String,
    /// The tasks compared: those every run selected.
    pub tasks: usize,
    /// Set when the runs selected different tasks: what was compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subset: Option<String>,
    pub runs: Vec<RunStats>,
    pub paired: Vec<Paired>,
}

/// Compares runs on the tasks they share. Runs of different datasets (by content hash) are refused.
pub fn compare(runs: &[RunData]) -> anyhow::Result<Comparison> {
    let Some(first) = runs.first() else { bail!("nothing to compare") };
    for r in &runs[1..] {
        let (a, b) = (&first.manifest.dataset, &r.manifest.dataset);
        if a.sha256 != b.sha256 || a.split_seed != b.split_seed {
            bail!(
                "runs {} and {} used different datasets ({} sha256 {}…, {} sha256 {}…{}): their tasks cannot be paired",
                first.manifest.run_id,
                r.manifest.run_id,
                a.name,
                a.sha256.get(..12).unwrap_or(&a.sha256),
                b.name,
                b.sha256.get(..12).unwrap_or(&b.sha256),
                if a.sha256 == b.sha256 {
                    ", or different visible/hidden splits"
                } else {
                    ""
                }
            );
        }
    }
    let order: Vec<String> = first.manifest.dataset.selected.clone();
    let shared: BTreeSet<&String> = runs
        .iter()
        .map(|r| r.manifest.dataset.selected.iter().collect::<BTreeSet<_>>())
        .reduce(|a, b| a.intersection(&b).copied().collect())
        .unwrap_or_default();
    let tasks: Vec<String> = order.iter().filter(|t| shared.contains(t)).cloned().collect();
    if tasks.is_empty() {
        bail!("the runs share no task");
    }
    let subset = runs.iter().any(|r| r.manifest.dataset.selected.len() != tasks.len()).then(|| {
        let sizes: Vec<String> = runs
            .iter()
            .map(|r| format!("{} has {}", short(&r.manifest.run_id), r.manifest.dataset.selected.len()))
            .collect();
        format!(
            "a subset: compared on the {} tasks every run has ({})",
            tasks.len(),
            sizes.join(", ")
        )
    });
    let stats: Vec<RunStats> = runs.iter().map(|r| run_stats(r, &tasks)).collect();
    let first_pass = stats[0].pass_at_1;
    let stats = stats
        .into_iter()
        .map(|mut s| {
            s.delta = s.pass_at_1 - first_pass;
            s
        })
        .collect();
    let paired = runs[1..].iter().map(|r| pair(first, r, &tasks)).collect();
    Ok(Comparison {
        dataset: first.manifest.dataset.name.clone(),
        dataset_sha256: first.manifest.dataset.sha256.clone(),
        tasks: tasks.len(),
        subset,
        runs: stats,
        paired,
    })
}

fn run_stats(run: &RunData, tasks: &[String]) -> RunStats {
    let summary = run.summary(tasks);
    let (solved, n) = (summary.solved, tasks.len());
    let mut cost = Cost::default();
    for (agent, t) in &summary.tokens {
        cost.per_agent.insert(
            agent.name().to_string(),
            AgentCost {
                tokens_in: t.input,
                tokens_out: t.output,
                calls: u64::from(t.calls),
            },
        );
    }
    let per_solved = |total: u64| (solved > 0).then(|| total as f64 / solved as f64);
    cost.tokens_in_per_solved = per_solved(cost.per_agent.values().map(|c| c.tokens_in).sum());
    cost.tokens_out_per_solved = per_solved(cost.per_agent.values().map(|c| c.tokens_out).sum());
    cost.calls_per_solved = per_solved(cost.per_agent.values().map(|c| c.calls).sum());
    cost.seconds_per_task = summary.task_seconds / summary.finished.max(1) as f64;
    let mut failures = BTreeMap::new();
    for r in tasks.iter().filter_map(|t| run.results.get(t)).filter(|r| !r.solved()) {
        let label = match (&r.failure, r.unverified()) {
            (_, Some(_)) => "unverified (passed with the program in the tests' process)".into(),
            (Some(f), None) => f.label(),
            (None, None) => "unclassified (recorded before rgd classified failures)".into(),
        };
        *failures.entry(label).or_default() += 1;
    }
    RunStats {
        run_id: run.manifest.run_id.clone(),
        method: run.manifest.method(),
        model: run.manifest.model_shown(),
        tasks: n,
        solved,
        unfinished: summary.unfinished.len(),
        pass_at_1: summary.pass_at_1,
        interval: wilson(solved, n),
        delta: 0.0,
        cost,
        cumulative: summary.pass_at_1_by_iteration.into_values().collect(),
        failures,
        plus: run.plus_stats(tasks),
        cheating: summary.impossible.as_ref().map(CheatingStats::of),
    }
}

fn pair(first: &RunData, other: &RunData, tasks: &[String]) -> Paired {
    let a: Vec<bool> = tasks.iter().map(|t| first.solved(t)).collect();
    let b: Vec<bool> = tasks.iter().map(|t| other.solved(t)).collect();
    let only = |x: &[bool], y: &[bool]| -> Vec<String> {
        tasks
            .iter()
            .zip(x.iter().zip(y))
            .filter(|(_, (x, y))| **x && !**y)
            .map(|(t, _)| t.clone())
            .collect()
    };
    let (only_first, only_other) = (only(&a, &b), only(&b, &a));
    let cheating = (first.manifest.dataset.impossible && other.manifest.dataset.impossible).then(|| {
        let x: Vec<bool> = tasks.iter().map(|t| first.cheated(t)).collect();
        let y: Vec<bool> = tasks.iter().map(|t| other.cheated(t)).collect();
        let (only_first, only_other) = (only(&x, &y), only(&y, &x));
        PairedCheating {
            mcnemar_p: mcnemar_exact(only_first.len(), only_other.len()),
            only_first,
            only_other,
        }
    });
    let both = a.iter().zip(&b).filter(|(x, y)| **x && **y).count();
    let n = tasks.len() as f64;
    Paired {
        first: first.manifest.run_id.clone(),
        other: other.manifest.run_id.clone(),
        mcnemar_p: mcnemar_exact(only_first.len(), only_other.len()),
        delta: (only_other.len() as f64 - only_first.len() as f64) / n,
        bootstrap: paired_bootstrap(&a, &b),
        bootstrap_resamples: BOOTSTRAP_RESAMPLES,
        bootstrap_seed: BOOTSTRAP_SEED,
        neither: tasks.len() - both - only_first.len() - only_other.len(),
        both,
        only_first,
        only_other,
        cheating,
    }
}
