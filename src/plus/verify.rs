//! `rgd datasets verify`: every canonical solution against its hidden and visible tests, in the
//! sandbox, each task with its measured time limit: the harness checking itself. Tasks the data
//! lists as broken are reported apart. (Here, not in `dataset/`: it runs code in the sandbox,
//! which sits above the datasets.)

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use futures::StreamExt;

use crate::dataset::{LoadedDataset, Task};
use crate::engine::{Suite, suite_tests};
use crate::sandbox::{Executor, Job, Limits, RunReport, TestStatus};

/// What the check found.
pub struct Verified {
    pub name: String,
    /// Tasks with a reference, checked; tasks without one.
    pub checked: usize,
    pub without: usize,
    pub seconds: f64,
    pub executor: String,
    /// Which limits the tests ran with.
    pub limits: String,
    /// Hidden and visible suites: passed, failed, errored (tasks not listed as broken).
    pub hidden: [usize; 3],
    pub visible: [usize; 3],
    pub impossible: bool,
    /// Listed as broken in the data: id, reason, whether its reference now passes; and the list's file.
    pub broken: Vec<(String, String, bool)>,
    pub broken_file: String,
    /// Tasks not listed as broken whose reference does not pass, each as a line (with its first
    /// problem when `verbose`).
    pub not_passing: Vec<String>,
}

/// Checks every reference of `ds` with `executor`, `parallel` at a time; `timeout` gives every
/// test that many seconds instead of each task's measured limit.
pub async fn verify(
    ds: &mut LoadedDataset,
    executor: Arc<dyn Executor>,
    timeout: Option<f64>,
    parallel: usize,
    verbose: bool,
) -> anyhow::Result<Verified> {
    let tasks: Vec<Arc<Task>> = std::mem::take(&mut ds.tasks).into_iter().map(Arc::new).collect();
    let with_solution: Vec<Arc<Task>> = tasks.iter().filter(|t| t.canonical.is_some()).cloned().collect();
    let limits = Arc::new(match timeout {
        Some(secs) => Limits {
            per_test: std::time::Duration::from_secs_f64(secs),
            ..Limits::default()
        },
        None => Limits::default().with_measured(ds, tasks.iter().map(|t| t.id.as_str())),
    });
    // An impossible variant's recorded test fails its reference by design: the visible suite
    // checks out when that test, and only that one, fails.
    let made_to_fail: Arc<HashMap<String, usize>> = Arc::new(if ds.impossible {
        super::impossible::read_contradictions(&ds.path)?
            .into_iter()
            .map(|(id, c)| (id, c.visible_index))
            .collect()
    } else {
        Default::default()
    });
    let started = Instant::now();
    let outcomes: Vec<Checked> = futures::stream::iter(with_solution)
        .map(|task| {
            let executor = executor.clone();
            let limits = limits.clone();
            let made_to_fail = made_to_fail.get(&task.id).copied();
            tokio::spawn(async move {
                let limits = limits.for_task(&task.id);
                let hidden = verify_suite(&*executor, &task, Suite::Hidden, &limits, None).await;
                let visible = verify_suite(&*executor, &task, Suite::Visible, &limits, made_to_fail).await;
                Checked { task, hidden, visible }
            })
        })
        .buffer_unordered(parallel)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        // A check that stopped is an error, not a task left out of the counts.
        .collect::<Result<_, _>>()
        .context("a reference's check stopped")?;
    let (broken, counted): (Vec<&Checked>, Vec<&Checked>) = outcomes.iter().partition(|o| ds.broken_reason(&o.task.id).is_some());
    let count = |pick: fn(&Checked) -> Verdict| {
        [Verdict::Passed, Verdict::Failed, Verdict::Errored].map(|v| counted.iter().filter(|o| pick(o) == v).count())
    };
    let passes = |o: &Checked| o.hidden.0 == Verdict::Passed && o.visible.0 == Verdict::Passed;
    let mut broken: Vec<(String, String, bool)> = broken
        .iter()
        .map(|o| {
            (
                o.task.id.clone(),
                ds.broken_reason(&o.task.id).unwrap_or_default().to_string(),
                passes(o),
            )
        })
        .collect();
    broken.sort();
    let mut not_passing: Vec<String> = counted
        .iter()
        .filter(|o| !passes(o))
        .map(|o| {
            let mut line = format!("{} (hidden {:?}, visible {:?})", o.task.id, o.hidden.0, o.visible.0);
            if verbose {
                let detail = if o.hidden.0 != Verdict::Passed { &o.hidden.1 } else { &o.visible.1 };
                line.push_str(&format!(": {detail}"));
            }
            line
        })
        .collect();
    not_passing.sort();
    Ok(Verified {
        name: ds.name.clone(),
        checked: outcomes.len(),
        without: tasks.len() - outcomes.len(),
        seconds: started.elapsed().as_secs_f64(),
        executor: executor.name().to_string(),
        limits: match (timeout, &limits.per_task_from) {
            (Some(secs), _) => format!("{secs} s per test"),
            (None, Some(source)) => format!("each task's measured limit, {source}"),
            (None, None) => format!("{} s per test: no measured limits", Limits::default().per_test.as_secs_f64()),
        },
        hidden: count(|o| o.hidden.0),
        visible: count(|o| o.visible.0),
        impossible: ds.impossible,
        broken,
        broken_file: crate::dataset::sidecar_path(&ds.path, crate::dataset::BROKEN_SUFFIX)
            .display()
            .to_string(),
        not_passing,
    })
}

impl Verified {
    /// The report as `rgd datasets verify` prints it (`verbose`: a line per task not passing).
    pub fn lines(&self, verbose: bool) -> Vec<String> {
        let mut out = vec![format!(
            "{}: {} tasks with a canonical solution ({} without) in {:.1}s ({} sandbox, {})",
            self.name, self.checked, self.without, self.seconds, self.executor, self.limits
        )];
        let [p, f, e] = self.hidden;
        out.push(format!("  hidden tests:  {p} passed, {f} failed, {e} errored"));
        let [p, f, e] = self.visible;
        let made = if self.impossible {
            " (an impossible dataset: passed = every visible test passes but the one made to contradict the task, which fails, as it was made to)"
        } else {
            ""
        };
        out.push(format!("  visible tests: {p} passed, {f} failed, {e} errored{made}"));
        if !self.broken.is_empty() {
            out.push(format!(
                "  excluded, broken in the data ({}; {}):",
                self.broken.len(),
                self.broken_file
            ));
            for (id, reason, passes) in &self.broken {
                let stale = if *passes {
                    " [its reference now passes: the list is out of date]"
                } else {
                    ""
                };
                out.push(format!("    {id}: {reason}{stale}"));
            }
        }
        if self.not_passing.is_empty() {
            out.push("  every reference not listed as broken passes".to_string());
        } else if verbose {
            out.extend(self.not_passing.iter().map(|b| format!("  not passing: {b}")));
        } else {
            out.push(format!("  not passing: {}", self.not_passing.join(", ")));
        }
        out
    }
}

/// One task's canonical solution against both suites: verdict and the first problem seen.
struct Checked {
    task: Arc<Task>,
    hidden: (Verdict, String),
    visible: (Verdict, String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Passed,
    Failed,
    Errored,
}

/// `made_to_fail`: the index of a visible test made to contradict the task (an impossible
/// dataset's), whose failure, alone, is the suite checking out.
async fn verify_suite(
    executor: &dyn Executor,
    task: &Task,
    suite: Suite,
    limits: &Limits,
    made_to_fail: Option<usize>,
) -> (Verdict, String) {
    let code = task.canonical.as_deref().unwrap_or_default();
    let tests = suite_tests(task, suite);
    let job = Job {
        code,
        kind: &task.kind,
        entry_point: &task.entry_point,
        tests,
        limits,
    };
    match executor.run(job).await {
        Ok(report) => match made_to_fail {
            Some(index) => as_made(&report, tests, index),
            None => (classify(&report), first_problem(&report, tests)),
        },
        Err(e) => (Verdict::Errored, e.to_string()),
    }
}

/// An impossible task's visible suite: passed when the test made to contradict the task fails
/// and every other one passes.
fn as_made(report: &RunReport, tests: &[crate::dataset::TestCase], index: usize) -> (Verdict, String) {
    let made = report.tests.iter().find(|t| t.index == index);
    let others_pass = report
        .tests
        .iter()
        .filter(|t| t.index != index)
        .all(|t| t.status == TestStatus::Passed);
    match made.map(|t| t.status) {
        Some(TestStatus::Failed) if others_pass => (Verdict::Passed, String::new()),
        Some(TestStatus::Passed) => (
            Verdict::Failed,
            format!(
                "the reference passes the test made to contradict the task (visible test {})",
                index + 1
            ),
        ),
        _ if made.is_none() => (Verdict::Errored, format!("no visible test {} to fail as made", index + 1)),
        _ => {
            let detail = first_problem(report, tests);
            (classify(report), detail)
        }
    }
}

/// The first test that did not pass, as one line.
fn first_problem(report: &RunReport, tests: &[crate::dataset::TestCase]) -> String {
    let Some(t) = report.tests.iter().find(|t| t.status != TestStatus::Passed) else {
        return String::new();
    };
    let label = tests.get(t.index).map(|c| c.label()).unwrap_or_default();
    let mut s = format!("{:?} `{}`", t.status, label.chars().take(120).collect::<String>());
    if let Some(g) = &t.got {
        s.push_str(&format!(" got {g}"));
    }
    if let Some(x) = &t.exc_type {
        s.push_str(&format!(" {x}: {}", t.exc_msg.as_deref().unwrap_or("")));
    }
    s
}

fn classify(report: &RunReport) -> Verdict {
    if report.all_passed() {
        Verdict::Passed
    } else if report.tests.iter().any(|t| t.status == TestStatus::Failed) {
        Verdict::Failed
    } else {
        Verdict::Errored
    }
}
