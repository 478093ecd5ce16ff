//! Verdicts: what happened to each test, parsed from the runner's nonce-tagged lines.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    /// The assertion was false (or the output differed); `got` holds the real value.
    Failed,
    /// The program raised; `exc_type`, `exc_msg`, `line` say what and where.
    Error,
    Timeout,
    Memory,
    /// Not reached: an earlier test used up the run's time or crashed the interpreter.
    NotRun,
    /// The program tried to fool the judge (rewrote the harness, exited early, faked verdict
    /// lines, returned an "always equal" object...): a failed test, whatever it returned.
    Tampered,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestOutcome {
    pub index: usize,
    pub status: TestStatus,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub got: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exc_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exc_msg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stdout: Option<String>,
    #[serde(default)]
    pub secs: f64,
}

impl TestOutcome {
    /// An outcome with no details yet.
    pub fn new(index: usize, status: TestStatus) -> Self {
        TestOutcome {
            index,
            status,
            got: None,
            expected: None,
            exc_type: None,
            exc_msg: None,
            line: None,
            stdout: None,
            secs: 0.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SetupStatus {
    Ok,
    Error,
    Timeout,
    Memory,
    /// The program's module code already tried to fool the judge: every test is `Tampered`.
    Tampered,
}

/// Everything one run produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub executor: String,
    /// Did the program's module-level code (definitions, imports) run?
    pub setup: SetupStatus,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub setup_error: Option<TestOutcome>,
    pub tests: Vec<TestOutcome>,
    /// Set when the interpreter itself died or was killed (deadline, signal, output flood).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub abnormal_end: Option<String>,
    pub wall_ms: u64,
    /// A repository run whose program ran inside the tests' process (why it could not be
    /// isolated): its verdict is only as good as the plugin's checks, "in-process (best effort)".
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub best_effort: Option<String>,
}

impl RunReport {
    pub fn passed(&self) -> usize {
        self.tests.iter().filter(|t| t.status == TestStatus::Passed).count()
    }

    pub fn all_passed(&self) -> bool {
        self.setup == SetupStatus::Ok && self.tests.iter().all(|t| t.status == TestStatus::Passed)
    }

    /// Marks every test not already marked `Tampered` with `reason`: evidence of tampering
    /// concerns the whole run.
    pub(crate) fn mark_tampered(&mut self, reason: &str) {
        for t in self.tests.iter_mut().filter(|t| t.status != TestStatus::Tampered) {
            t.status = TestStatus::Tampered;
            t.exc_type = Some("Tampered".into());
            t.exc_msg = Some(reason.to_string());
        }
    }

    /// Why the run counts as tampered with, if it does (the first test marked so).
    pub fn tampered(&self) -> Option<&str> {
        self.tests
            .iter()
            .find(|t| t.status == TestStatus::Tampered)
            .map(|t| t.exc_msg.as_deref().unwrap_or("the program tried to fool the judge"))
    }

    /// Builds a report from the runner's stdout. `killed` says why the host ended the process,
    /// if it did; tests without a verdict are then attributed to that cause.
    pub(crate) fn from_runner_output(
        executor: &str,
        stdout: &str,
        nonce: &str,
        n_tests: usize,
        killed: Option<Ended>,
        wall_ms: u64,
    ) -> RunReport {
        let prefix = format!("{nonce} ");
        let mut setup: Option<(SetupStatus, Option<TestOutcome>)> = None;
        let mut tests: Vec<Option<TestOutcome>> = vec![None; n_tests];
        let mut tampered = false;
        let mut run_tampered: Option<String> = None;
        for line in stdout.lines() {
            let Some(json) = line.strip_prefix(&prefix) else { continue };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else {
                tampered = true;
                continue;
            };
            if let Some(reason) = value.get("run_tampered").and_then(|s| s.as_str()) {
                // Evidence found after the last test: it concerns the whole run.
                run_tampered = Some(reason.to_string());
            } else if let Some(status) = value.get("setup").and_then(|s| s.as_str()) {
                if setup.is_some() {
                    tampered = true;
                    continue;
                }
                let status = match status {
                    "ok" => SetupStatus::Ok,
                    "timeout" => SetupStatus::Timeout,
                    "memory" => SetupStatus::Memory,
                    "tampered" => SetupStatus::Tampered,
                    _ => SetupStatus::Error,
                };
                let detail = (status != SetupStatus::Ok).then(|| outcome_from(&value, 0, TestStatus::Error));
                setup = Some((status, detail));
            } else if let Some(i) = value.get("i").and_then(|i| i.as_u64()).map(|i| i as usize) {
                match tests.get_mut(i) {
                    Some(slot @ None) => {
                        let status = value
                            .get("status")
                            .cloned()
                            .and_then(|s| serde_json::from_value(s).ok())
                            .unwrap_or(TestStatus::Error);
                        *slot = Some(outcome_from(&value, i, status));
                    }
                    // The checker writes one verdict per test; a second one means the stream is broken.
                    _ => tampered = true,
                }
            }
        }

        let mut abnormal_end = killed.map(|k| k.describe());
        if tampered {
            abnormal_end = Some("the verdict stream was malformed; every test counts as failed".into());
        }
        let (setup_status, setup_error) = setup.unwrap_or_else(|| {
            let mut detail = TestOutcome::new(0, TestStatus::Error);
            let status = match killed {
                Some(Ended::Deadline) => SetupStatus::Timeout,
                _ => SetupStatus::Error,
            };
            detail.exc_type = Some(killed.map(|k| k.exc_type()).unwrap_or("RunnerError").into());
            detail.exc_msg = Some(abnormal_end.clone().unwrap_or_else(|| "the runner produced no verdict".into()));
            (status, Some(detail))
        });

        let mut first_missing = true;
        let tests = tests
            .into_iter()
            .enumerate()
            .map(|(i, slot)| match slot {
                Some(mut t) => {
                    if tampered {
                        t.status = TestStatus::Error;
                        t.exc_type = Some("MalformedVerdicts".into());
                    }
                    t
                }
                None if setup_status != SetupStatus::Ok => {
                    let mut t = setup_error.clone().unwrap_or_else(|| TestOutcome::new(i, TestStatus::Error));
                    t.index = i;
                    t.status = match setup_status {
                        SetupStatus::Timeout => TestStatus::Timeout,
                        SetupStatus::Memory => TestStatus::Memory,
                        SetupStatus::Tampered => TestStatus::Tampered,
                        _ => TestStatus::Error,
                    };
                    t
                }
                None if first_missing => {
                    first_missing = false;
                    let mut t = TestOutcome::new(i, killed.map(|k| k.status()).unwrap_or(TestStatus::Error));
                    t.exc_type = Some(killed.map(|k| k.exc_type()).unwrap_or("RunnerError").into());
                    t.exc_msg = abnormal_end.clone().or_else(|| Some("the runner stopped before this test".into()));
                    t
                }
                None => TestOutcome::new(i, TestStatus::NotRun),
            })
            .collect();
        let mut report = RunReport {
            executor: executor.into(),
            setup: setup_status,
            setup_error,
            tests,
            abnormal_end,
            wall_ms,
            best_effort: None,
        };
        if let Some(reason) = run_tampered {
            report.mark_tampered(&reason);
        }
        report
    }
}

/// Why a run ended other than by the runner finishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// The whole-run deadline passed and the host killed the process group.
    Deadline,
    /// The program flooded stdout past the cap.
    OutputFlood,
    /// The interpreter died by this signal (segfault from C recursion, CPU limit...).
    Signal(i32),
    /// The interpreter exited with this status before reporting every test.
    Exit(i32),
    /// The WebAssembly instance trapped (stack exhausted, abort).
    Trapped,
}

impl Ended {
    pub(crate) fn describe(self) -> String {
        match self {
            Ended::Deadline => "the run exceeded its time limit and was killed".into(),
            Ended::OutputFlood => "the program flooded its output and was killed".into(),
            Ended::Signal(9) => "the interpreter was killed (SIGKILL: CPU or memory limit)".into(),
            Ended::Signal(11) => "the interpreter crashed (SIGSEGV, often C-level recursion)".into(),
            Ended::Signal(s) => format!("the interpreter died from signal {s}"),
            Ended::Exit(c) => format!("the interpreter exited with status {c} before finishing"),
            Ended::Trapped => "the interpreter trapped (stack exhausted or abort)".into(),
        }
    }
    fn status(self) -> TestStatus {
        match self {
            Ended::Deadline => TestStatus::Timeout,
            _ => TestStatus::Error,
        }
    }
    fn exc_type(self) -> &'static str {
        match self {
            Ended::Deadline => "Timeout",
            Ended::OutputFlood => "OutputLimitExceeded",
            Ended::Signal(_) => "Crashed",
            Ended::Exit(_) => "Exited",
            Ended::Trapped => "Crashed",
        }
    }
}

fn outcome_from(v: &serde_json::Value, index: usize, status: TestStatus) -> TestOutcome {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    TestOutcome {
        index,
        status,
        got: s("got"),
        expected: s("expected"),
        exc_type: s("exc_type"),
        exc_msg: s("exc_msg"),
        line: v.get("line").and_then(|x| x.as_u64()).map(|l| l as u32),
        stdout: s("stdout").filter(|o| !o.is_empty()),
        secs: v.get("secs").and_then(|x| x.as_f64()).unwrap_or(0.0),
    }
}
