//! Running untrusted Python against tests. Every run is two interpreters started by an executor:
//! one holds the program, the other the tests (`judge.rs` relays between them). Both run one
//! runner script (`sandbox/runner.py`), so verdicts do not depend on where code ran.

mod judge;
mod native;
mod trace;
mod verdict;
pub mod wasm;

pub use native::NativeExecutor;
pub use trace::{
    TRACER_PY, Trace, TraceEnd, TraceJob, TraceMode, TraceRecord, TracedException, TracedSource, render_trace, render_trace_window,
};
pub use verdict::{RunReport, SetupStatus, TestOutcome, TestStatus};
pub use wasm::WasmExecutor;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::dataset::{LoadedDataset, TaskKind, TaskLimit, TestCase};

/// The runner, compiled into the binary so an installed rgd needs no source tree.
pub const RUNNER_PY: &str = include_str!("../../sandbox/runner.py");

/// Resource limits for one program run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Deadline for each test (and for the program's module-level code).
    #[serde(with = "secs_f64")]
    pub per_test: Duration,
    /// Ceiling on the whole run, however many tests there are.
    #[serde(with = "secs_f64")]
    pub max_total: Duration,
    pub memory_mb: u64,
    /// Characters of captured output kept per test.
    pub output_cap: usize,
    /// A host directory of data files the program may read (never write): the working directory of
    /// the program (`/data` inside the wasm guest).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub data_dir: Option<std::path::PathBuf>,
    /// Python trace events (lines, calls, returns) one call of the program may take, counted the
    /// same on every machine and under any load (`rgd datasets plus` decides by it which inputs
    /// the reference answers; a deadline would decide differently from run to run). None: only
    /// the deadlines.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line_budget: Option<u64>,
    /// Limits of the tasks whose dataset measured them from its reference solutions (`rgd
    /// datasets limits`): `per_test` and `max_total` for that task instead of the ones above.
    /// Kept in the run's manifest, so a resumed or forked run judges with the same limits.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub per_task: BTreeMap<String, TaskLimit>,
    /// Where `per_task` came from (the limits file and its measuring settings).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub per_task_from: Option<String>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_test: Duration::from_secs(5),
            max_total: Duration::from_secs(120),
            memory_mb: 1024,
            output_cap: 8192,
            data_dir: None,
            line_budget: None,
            per_task: BTreeMap::new(),
            per_task_from: None,
        }
    }
}

impl Limits {
    /// These limits with the ones `dataset` measured for the tasks `ids` (none when it measured
    /// none), and where they came from.
    pub fn with_measured<'a>(mut self, dataset: &LoadedDataset, ids: impl IntoIterator<Item = &'a str>) -> Limits {
        self.per_task = dataset.limits_of(ids);
        self.per_task_from = dataset.limits_source();
        self
    }

    /// The limits a task's tests run under: its own measured ones where it has them (the run
    /// limit never below the general one), these otherwise.
    pub fn for_task(&self, task_id: &str) -> Cow<'_, Limits> {
        match self.per_task.get(task_id) {
            None => Cow::Borrowed(self),
            // Not a clone of the whole table for every run: only what one run reads.
            Some(own) => Cow::Owned(Limits {
                per_test: Duration::try_from_secs_f64(own.per_test).unwrap_or(self.per_test),
                max_total: Duration::try_from_secs_f64(own.total).unwrap_or(self.max_total).max(self.max_total),
                memory_mb: self.memory_mb,
                output_cap: self.output_cap,
                data_dir: self.data_dir.clone(),
                line_budget: self.line_budget,
                per_task: BTreeMap::new(),
                per_task_from: None,
            }),
        }
    }

    /// Whole-run deadline: one per-test budget for the module code, one per test, a little slack
    /// for interpreter start-up, capped by `max_total`.
    pub fn total_for(&self, tests: usize) -> Duration {
        (self.per_test * (tests as u32 + 1) + Duration::from_secs(2)).min(self.max_total)
    }
}

mod secs_f64 {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    /// A negative, NaN or infinite number (a corrupt manifest) is an error, not a panic.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(|e| serde::de::Error::custom(format!("{secs} seconds: {e}")))
    }
}

impl Limits {
    /// The data directory, checked: a missing one is the caller's mistake, not the program's.
    pub(crate) fn checked_data_dir(&self) -> Result<Option<&std::path::Path>, SandboxError> {
        match &self.data_dir {
            Some(dir) if !dir.is_dir() => Err(SandboxError::DataDir(dir.clone())),
            other => Ok(other.as_deref()),
        }
    }
}

/// One program and the tests to run against it.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    pub code: &'a str,
    pub kind: &'a TaskKind,
    pub entry_point: &'a str,
    pub tests: &'a [TestCase],
    pub limits: &'a Limits,
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("python3 not found or not working ({0}); install Python 3 or set RGD_PYTHON to an interpreter")]
    NoPython(String),
    #[error("sandbox I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot build the wasm sandbox: {0}")]
    Build(String),
    #[error("wasm sandbox: {0}")]
    Wasm(String),
    #[error("the data directory {0} does not exist or is not a directory")]
    DataDir(std::path::PathBuf),
}

/// Something that runs a program against tests. Implementations must never let the program
/// affect the host beyond their own isolation, and must report a verdict for every test.
#[async_trait::async_trait]
pub trait Executor: Send + Sync {
    /// A short name recorded in run manifests ("native", "wasm").
    fn name(&self) -> &'static str;
    async fn run(&self, job: Job<'_>) -> Result<RunReport, SandboxError>;
    /// One call of a program, traced (block trace or call tree); information, never a verdict.
    async fn trace(&self, job: TraceJob<'_>) -> Result<Trace, SandboxError>;
}

/// The job of the interpreter that holds the program: no test and no expected value is in it.
pub(crate) fn candidate_job(job: &Job<'_>) -> serde_json::Value {
    serde_json::json!({
        "role": "candidate",
        "code": job.code,
        "mode": job.kind.runner_mode(),
        "entry_point": job.entry_point,
        "per_test_timeout": job.limits.per_test.as_secs_f64(),
        "output_cap": job.limits.output_cap,
        "line_budget": job.limits.line_budget,
    })
}

/// The job of the interpreter that holds the tests and writes the verdicts.
pub(crate) fn checker_job(job: &Job<'_>, nonce: &str) -> serde_json::Value {
    serde_json::json!({
        "role": "checker",
        "nonce": nonce,
        "mode": job.kind.runner_mode(),
        "entry_point": job.entry_point,
        "tests": job.tests,
    })
}

/// Programs run at once by default: one per core; more only makes each slower and deadlines noisier.
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}

/// Which executor runs programs. `wasm` is the default; `native` is weaker (see docs/how-it-works.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxKind {
    /// CPython compiled to WebAssembly under wasmtime (built once into the cache)
    Wasm,
    /// A python3 subprocess with rlimits: no isolation from the user's files
    Native,
}

/// Creates the chosen executor. Never falls back silently: if wasm cannot be built, the error
/// says why and how to fix it, and names `--sandbox native`.
pub fn make_executor(kind: SandboxKind, report: &dyn Fn(&str)) -> Result<std::sync::Arc<dyn Executor>, SandboxError> {
    Ok(match kind {
        SandboxKind::Wasm => std::sync::Arc::new(WasmExecutor::new(report)?),
        SandboxKind::Native => std::sync::Arc::new(NativeExecutor::discover()?),
    })
}
