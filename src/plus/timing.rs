//! `rgd datasets limits NAME`: each task's time limits from its reference solution's measured
//! runtime in the sandbox, as EvalPlus sets them (limit = max(floor, factor x the reference's
//! time)). A correct program is then not judged wrong for being as slow in the sandbox as the
//! reference itself, and a looping one is stopped about as soon as a correct one would finish.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;

use crate::dataset::{MeasuredTask, Task, TaskLimit, TestCase};
use crate::sandbox::{Executor, Job, Limits, RunReport, TestStatus};

/// How limits are made from measurements.
#[derive(Debug, Clone, Copy)]
pub struct TimingOptions {
    pub factor: f64,
    pub floor_secs: f64,
    /// Seconds a reference's test may take while it is measured; one that takes longer gets no
    /// limit of its own.
    pub cap_secs: f64,
    /// Runs per task; the slowest counts (a limit too tight fails correct programs, one too
    /// loose only costs time on wrong ones).
    pub repeat: u32,
}

/// One task measured, or why it could not be.
pub type Timed = (String, Result<MeasuredTask, String>);

/// Each task's reference run `repeat` times against its visible and hidden tests, `parallel` at
/// once; `done` hears each finished task. In `tasks`' order.
pub async fn measure(
    executor: Arc<dyn Executor>,
    tasks: Vec<Task>,
    options: TimingOptions,
    parallel: usize,
    done: &(dyn Fn(usize) + Sync),
) -> Vec<Timed> {
    let mut out = Vec::with_capacity(tasks.len());
    let mut stream = futures::stream::iter(tasks.into_iter().filter(|t| t.canonical.is_some()))
        .map(|task| {
            let (executor, id) = (executor.clone(), task.id.clone());
            let measuring = tokio::spawn(async move { measure_task(&*executor, &task, options).await });
            // A measurement that stopped is recorded as unmeasured, under its task.
            async move { (id, measuring.await.unwrap_or_else(|e| Err(format!("the measurement stopped: {e}")))) }
        })
        .buffered(parallel.max(1));
    while let Some(timed) = stream.next().await {
        out.push(timed);
        done(out.len());
    }
    out
}

async fn measure_task(executor: &dyn Executor, task: &Task, options: TimingOptions) -> Result<MeasuredTask, String> {
    let tests: Vec<TestCase> = task.visible.iter().chain(&task.hidden).cloned().collect();
    let cap = Duration::from_secs_f64(options.cap_secs);
    let limits = Limits {
        per_test: cap,
        max_total: cap * (tests.len() as u32 + 2),
        ..Limits::default()
    };
    let (mut slowest, mut run) = (0.0f64, 0.0f64);
    for _ in 0..options.repeat.max(1) {
        let job = Job {
            code: task.canonical.as_deref().unwrap_or_default(),
            kind: &task.kind,
            entry_point: &task.entry_point,
            tests: &tests,
            limits: &limits,
        };
        let report = executor.run(job).await.map_err(|e| e.to_string())?;
        let (s, r) = times(&report, options.cap_secs)?;
        slowest = slowest.max(s);
        run = run.max(r);
    }
    let limit = TaskLimit {
        per_test: tenths((options.factor * slowest).max(options.floor_secs)),
        total: tenths((options.factor * run).max(options.floor_secs)),
    };
    Ok(MeasuredTask {
        slowest_test_secs: thousandths(slowest),
        run_secs: thousandths(run),
        limit,
    })
}

/// The slowest test of a run (the module's own code counted as one: what the run spent outside
/// the tests) and the whole run, in seconds. A test that passes or fails has a time, whatever its
/// verdict (a task broken in its data still gets a limit); one that did not finish has none.
fn times(report: &RunReport, cap: f64) -> Result<(f64, f64), String> {
    if let Some(t) = report.tests.iter().find(|t| {
        matches!(
            t.status,
            TestStatus::Timeout | TestStatus::NotRun | TestStatus::Memory | TestStatus::Tampered
        )
    }) {
        return Err(format!(
            "test {} ended {:?} (measured with {cap} s per test)",
            t.index + 1,
            t.status
        ));
    }
    if report.setup != crate::sandbox::SetupStatus::Ok {
        return Err(format!("the module code ended {:?}", report.setup));
    }
    let run = report.wall_ms as f64 / 1000.0;
    let in_tests: f64 = report.tests.iter().map(|t| t.secs).sum();
    let slowest = report.tests.iter().map(|t| t.secs).fold((run - in_tests).max(0.0), f64::max);
    Ok((slowest, run))
}

fn tenths(secs: f64) -> f64 {
    (secs * 10.0).ceil() / 10.0
}

fn thousandths(secs: f64) -> f64 {
    (secs * 1000.0).round() / 1000.0
}

/// The measured tasks and the unmeasured ones with why, in id order.
pub fn split(timed: Vec<Timed>) -> (BTreeMap<String, MeasuredTask>, BTreeMap<String, String>) {
    let mut measured = BTreeMap::new();
    let mut unmeasured = BTreeMap::new();
    for (id, t) in timed {
        match t {
            Ok(m) => {
                measured.insert(id, m);
            }
            Err(why) => {
                unmeasured.insert(id, why);
            }
        }
    }
    (measured, unmeasured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{SetupStatus, TestOutcome};

    fn report(secs: &[f64], wall_ms: u64, last: TestStatus) -> RunReport {
        let mut tests: Vec<TestOutcome> = secs
            .iter()
            .enumerate()
            .map(|(i, s)| TestOutcome {
                secs: *s,
                ..TestOutcome::new(i, TestStatus::Passed)
            })
            .collect();
        if let Some(t) = tests.last_mut() {
            t.status = last;
        }
        RunReport {
            executor: "wasm".into(),
            setup: SetupStatus::Ok,
            setup_error: None,
            tests,
            abnormal_end: None,
            wall_ms,
            best_effort: None,
        }
    }

    #[test]
    fn the_slowest_part_counts_and_a_test_that_did_not_finish_has_no_time() {
        // 0.2 + 0.5 in the tests, 1.0 s in all: 0.3 s outside them, the slowest is the 0.5 s test.
        assert_eq!(times(&report(&[0.2, 0.5], 1000, TestStatus::Failed), 5.0).unwrap(), (0.5, 1.0));
        // A slow module: 0.9 s outside the tests.
        assert_eq!(times(&report(&[0.05, 0.05], 1000, TestStatus::Passed), 5.0).unwrap().0, 0.9);
        let err = times(&report(&[0.1, 5.0], 5200, TestStatus::Timeout), 5.0).unwrap_err();
        assert!(err.contains("test 2 ended Timeout"), "{err}");
    }
}
