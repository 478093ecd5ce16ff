//! The executor of project tasks (`rgd solve --repo`): the program is the target file's new text,
//! the tests are the project's own pytest node ids, run by `testrun.rs` in a throw-away copy of the
//! project, confined as `confine.rs` says (bubblewrap where installed: only the system's, the
//! interpreter's and the copy's files, no network), with rlimits and a process-group timeout.
//! Verdicts come from rgd's pytest plugin over its own channel, per test (`verdict.rs`), never
//! from pytest's output; a run the plugin found tampered with fails every test. A visible run's
//! copy holds no hidden test (`withhold.rs`). A failing test's report goes to the agents as its
//! output, capped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::dataset::{TaskKind, TestCase};
use crate::repo::run::testrun::{Outcome, ProjectTests, RunSpec, TestLimits};
use crate::sandbox::{Executor, Job, RunReport, SandboxError, SetupStatus, TestOutcome, TestStatus, Trace, TraceJob};

/// Time pytest takes to start and collect, on top of the tests' own budget.
const STARTUP: Duration = Duration::from_secs(15);

/// Runs project tasks; any other task is refused (it belongs to the wasm or native executor).
#[derive(Default)]
pub struct ProjectExecutor {
    /// One checked runner per interpreter (checking runs `python -m pytest --version`).
    runners: Mutex<HashMap<PathBuf, Arc<ProjectTests>>>,
}

/// Where a project task's program goes, and its interpreter.
struct Target<'a> {
    root: &'a Path,
    file: &'a str,
    python: &'a Path,
    /// The function's qualified name in `file`.
    name: &'a str,
    hidden: &'a [String],
}

impl Target<'_> {
    /// The hidden tests a run of `nodes` must not see: all of them, unless it is the hidden run.
    fn withhold(&self, nodes: &[String]) -> Vec<String> {
        if nodes.iter().any(|n| self.hidden.contains(n)) {
            Vec::new()
        } else {
            self.hidden.to_vec()
        }
    }
}

fn target(kind: &TaskKind) -> Result<Target<'_>, SandboxError> {
    match kind {
        TaskKind::Project {
            root,
            file,
            python,
            target,
            hidden,
        } => Ok(Target {
            root: Path::new(root),
            file,
            python: Path::new(python),
            name: target,
            hidden,
        }),
        other => Err(SandboxError::Build(format!(
            "the project executor runs a project's tests only, not {} tasks",
            other.runner_mode()
        ))),
    }
}

fn node(test: &TestCase) -> Result<String, SandboxError> {
    match test {
        TestCase::Pytest { node, .. } => Ok(node.clone()),
        other => Err(SandboxError::Build(format!("not a project test: {}", other.label()))),
    }
}

/// `AssertionError: assert 1 == 2` → (`AssertionError`, `assert 1 == 2`).
fn split_message(message: &str) -> (Option<String>, Option<String>) {
    match message.split_once(": ") {
        Some((kind, rest)) if !kind.contains(' ') => (Some(kind.to_string()), Some(rest.to_string())),
        _ if message.is_empty() => (None, None),
        _ => (None, Some(message.to_string())),
    }
}

fn outcome(index: usize, o: &Outcome, timed_out: bool, cap: usize) -> TestOutcome {
    let status = match o.status.as_str() {
        "passed" => TestStatus::Passed,
        "failed" => TestStatus::Failed,
        "error" => TestStatus::Error,
        "not run" if timed_out => TestStatus::Timeout,
        // Skipped is not passed: a test the project skips here cannot vouch for the code.
        _ => TestStatus::NotRun,
    };
    let mut t = TestOutcome::new(index, status);
    let message = match o.status.as_str() {
        "skipped" => format!("skipped by the project: {}", o.message),
        _ => o.message.clone(),
    };
    let (kind, msg) = split_message(&message);
    t.exc_type = kind.or_else(|| (status != TestStatus::Passed && !message.is_empty()).then(|| o.status.clone()));
    t.exc_msg = msg;
    if !o.detail.is_empty() {
        t.stdout = Some(o.detail.chars().take(cap).collect());
    }
    t
}

impl ProjectExecutor {
    fn runner(&self, python: &Path) -> Result<Arc<ProjectTests>, SandboxError> {
        let mut runners = self.runners.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = runners.get(python) {
            return Ok(r.clone());
        }
        let r = Arc::new(ProjectTests::new(python).map_err(|e| SandboxError::NoPython(format!("{e:#}")))?);
        runners.insert(python.to_path_buf(), r.clone());
        Ok(r)
    }
}

#[async_trait::async_trait]
impl Executor for ProjectExecutor {
    fn name(&self) -> &'static str {
        "project"
    }

    async fn run(&self, job: Job<'_>) -> Result<RunReport, SandboxError> {
        let t = target(job.kind)?;
        let nodes = job.tests.iter().map(node).collect::<Result<Vec<_>, _>>()?;
        if nodes.is_empty() {
            return Ok(RunReport {
                executor: self.name().into(),
                setup: SetupStatus::Ok,
                setup_error: None,
                tests: Vec::new(),
                abnormal_end: None,
                wall_ms: 0,
                best_effort: None,
            });
        }
        let runner = self.runner(t.python)?;
        let limits = TestLimits {
            timeout: job.limits.total_for(nodes.len()) + STARTUP,
            memory_mb: job.limits.memory_mb,
            per_test: None,
        };
        let withhold = t.withhold(&nodes);
        let (root, file, code, name) = (t.root.to_path_buf(), t.file.to_string(), job.code.to_string(), t.name.to_string());
        let cap = job.limits.output_cap;
        let run = tokio::task::spawn_blocking(move || {
            let spec = RunSpec {
                replace: Some((&file, &code)),
                target: (!name.is_empty()).then_some(name.as_str()),
                ids: &nodes,
                withhold: &withhold,
            };
            runner.run(&root, &spec, limits)
        })
        .await
        .map_err(|e| SandboxError::Build(format!("the project's test run panicked: {e}")))?
        .map_err(|e| SandboxError::Build(format!("{e:#}")))?;
        let mut report = RunReport {
            executor: self.name().into(),
            setup: SetupStatus::Ok,
            setup_error: None,
            tests: run
                .outcomes
                .iter()
                .enumerate()
                .map(|(i, o)| outcome(i, o, run.timed_out, cap))
                .collect(),
            abnormal_end: run
                .timed_out
                .then(|| format!("pytest ran past {:?} and was killed", limits.timeout)),
            wall_ms: (run.seconds * 1000.0) as u64,
            best_effort: run.isolation.best_effort().map(str::to_string),
        };
        if !run.tampered.is_empty() {
            report.mark_tampered(&run.tampered.join("; "));
        }
        Ok(report)
    }

    async fn trace(&self, job: TraceJob<'_>) -> Result<Trace, SandboxError> {
        let t = target(job.kind)?;
        let runner = self.runner(t.python)?;
        let limits = TestLimits {
            timeout: job.limits.per_test * 4 + STARTUP,
            memory_mb: job.limits.memory_mb,
            per_test: None,
        };
        let (root, file, code, id, max) = (
            t.root.to_path_buf(),
            t.file.to_string(),
            job.code.to_string(),
            job.call.to_string(),
            job.max_events,
        );
        let withhold = t.hidden.to_vec();
        tokio::task::spawn_blocking(move || {
            let ids = [id.clone()];
            let spec = RunSpec {
                replace: Some((&file, &code)),
                target: None,
                ids: &ids,
                withhold: &withhold,
            };
            runner.trace(&root, &spec, &id, max, limits)
        })
        .await
        .map_err(|e| SandboxError::Build(format!("the project's trace panicked: {e}")))?
        .map_err(|e| SandboxError::Build(format!("{e:#}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_messages_become_exception_type_and_message() {
        assert_eq!(
            split_message("AssertionError: assert 1 == 2"),
            (Some("AssertionError".into()), Some("assert 1 == 2".into()))
        );
        assert_eq!(split_message("assert x: y"), (None, Some("assert x: y".into())));
        let skipped = Outcome {
            id: "t.py::a".into(),
            status: "skipped".into(),
            message: "needs numpy".into(),
            detail: String::new(),
        };
        let o = outcome(0, &skipped, false, 100);
        assert_eq!(o.status, TestStatus::NotRun);
        assert!(o.exc_msg.unwrap_or_default().contains("needs numpy"));
    }
}
