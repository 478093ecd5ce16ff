//! Execution traces: one call of a program, traced in the sandbox by `sandbox/tracer.py` (block
//! trace or call tree), for debuggers that read real executions. One interpreter, in the
//! candidate's place (the job's data directory, its limits); the tracer's records stream out as
//! they complete, so a run that must be killed (an infinite loop past the time limit) still leaves
//! its partial trace. A trace is information for a model, never a verdict: a program could write
//! records of its own (it can find the run's nonce by walking frames), and nothing is judged on them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio_util::codec::{FramedRead, LinesCodec};

use super::judge::{Clock, Interpreters, Role, World, json_line, send};
use super::{Limits, SandboxError};

/// The tracer's source, sent with each job (so the native executor's `python3 -c runner` and the
/// wasm component run the same file without a module of their own).
pub const TRACER_PY: &str = include_str!("../../sandbox/tracer.py");
/// Longest record line read.
const LINE_CAP: usize = 1 << 20;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TraceMode {
    /// Basic blocks in execution order, with variables before and after each.
    #[default]
    Block,
    /// Every call of the program's functions, with arguments and return value or exception.
    Calls,
}

impl TraceMode {
    pub fn name(self) -> &'static str {
        match self {
            TraceMode::Block => "block",
            TraceMode::Calls => "calls",
        }
    }

    pub fn from_name(name: &str) -> Option<TraceMode> {
        [TraceMode::Block, TraceMode::Calls].into_iter().find(|m| m.name() == name)
    }
}

/// What to trace.
#[derive(Debug, Clone)]
pub struct TraceJob<'a> {
    pub code: &'a str,
    /// The task's kind: a project's test is traced by the project executor.
    pub kind: &'a crate::dataset::TaskKind,
    /// The expression to evaluate under the tracer, e.g. `f(1, 2)`.
    pub call: &'a str,
    pub mode: TraceMode,
    /// Trace events at most (each executed line and each call is one).
    pub max_events: usize,
    pub limits: &'a Limits,
}

/// One record of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TraceRecord {
    Block {
        function: String,
        first_line: u32,
        last_line: u32,
        lines: Vec<u32>,
        before: BTreeMap<String, String>,
        #[serde(default)]
        after: BTreeMap<String, String>,
        /// The exception that left the block, if one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raised: Option<String>,
    },
    Call {
        /// Order in which the calls started (records arrive as calls end).
        #[serde(default)]
        order: u32,
        depth: u32,
        function: String,
        line: u32,
        args: BTreeMap<String, String>,
        returned: Option<String>,
        raised: Option<String>,
    },
}

/// How the traced call ended, as the tracer saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceEnd {
    pub result: Option<String>,
    pub exception: Option<TracedException>,
    pub events: u64,
    /// Why the trace stopped early (its event cap or time budget), if it did.
    pub truncated: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedException {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    pub line: Option<u32>,
    /// Where it happened when not in the call ("the program's top level").
    #[serde(default)]
    pub where_: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub mode: String,
    pub records: Vec<TraceRecord>,
    /// `None` when the interpreter was stopped before the tracer could finish.
    pub end: Option<TraceEnd>,
    /// Why the interpreter was stopped, if it was (the time limit, memory...).
    pub stopped: Option<String>,
    /// The source of the functions the run entered, in order of first entry (a project's test:
    /// Kamiya's execution-trace context).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<TracedSource>,
}

/// One function a traced run entered, with its code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracedSource {
    pub function: String,
    pub line: u32,
    pub code: String,
}

impl Trace {
    /// Takes one tracer line (without its nonce): a record, the end, or a function's source.
    fn take_line(&mut self, line: &str) {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        if value["kind"] == "end" {
            self.end = serde_json::from_value(value).ok();
        } else if value["kind"] == "source" {
            if let Ok(s) = serde_json::from_value::<TracedSource>(value) {
                self.sources.push(s);
            }
        } else if let Ok(r) = serde_json::from_value::<TraceRecord>(value) {
            self.records.push(r);
        }
    }

    /// Call records in the order the calls started (they are written as calls end).
    fn order_calls(&mut self) {
        if let Some(TraceRecord::Call { .. }) = self.records.first() {
            self.records.sort_by_key(|r| match r {
                TraceRecord::Call { order, .. } => *order,
                TraceRecord::Block { .. } => 0,
            });
        }
    }

    /// A trace from a file of tracer lines (no nonce: a file only the tracer writes).
    pub fn from_records(mode: &str, text: &str) -> Trace {
        let mut trace = Trace {
            mode: mode.into(),
            ..Trace::default()
        };
        for line in text.lines() {
            trace.take_line(line);
        }
        trace.order_calls();
        trace
    }
}

/// Runs one traced call in an interpreter of `interpreters`.
pub(crate) async fn trace_with(interpreters: &dyn Interpreters, job: &TraceJob<'_>) -> Result<Trace, SandboxError> {
    job.limits.checked_data_dir()?;
    let nonce = ulid::Ulid::generate().to_string();
    let limit = job.limits.per_test;
    let clock = Arc::new(Clock::new(limit, limit));
    let World {
        mut stdin, stdout, ended, ..
    } = interpreters.start(Role::Candidate, job.limits, clock).await?;
    let mut request = serde_json::json!({
        "role": "tracer",
        "nonce": nonce,
        "code": job.code,
        "call": job.call,
        "mode": job.mode.name(),
        "max_events": job.max_events,
        // The tracer stops itself a little before the host would, to report how it ended.
        "max_seconds": (limit.as_secs_f64() * 0.9).max(0.05),
        "tracer_src": TRACER_PY,
    });
    if let Some(dir) = interpreters.guest_data_dir().filter(|_| job.limits.data_dir.is_some()) {
        request["chdir"] = dir.into();
    }
    send(&mut stdin, json_line(&request)).await;
    let prefix = format!("{nonce} ");
    let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(LINE_CAP));
    let mut trace = Trace {
        mode: job.mode.name().into(),
        ..Trace::default()
    };
    let read = async {
        while let Some(line) = lines.next().await {
            let Ok(line) = line else { continue };
            let Some(record) = line.strip_prefix(&prefix) else { continue };
            trace.take_line(record);
        }
    };
    // The interpreter's clock stops it at the limit; this is the host's backstop (dropping the
    // world kills the interpreter).
    let timed_out = tokio::time::timeout(limit + Duration::from_secs(2), read).await.is_err();
    if timed_out {
        trace.stopped = Some(format!("no end within {:.1}s", limit.as_secs_f64()));
    } else if trace.end.is_none()
        && let Some(why) = ended.await
    {
        trace.stopped = Some(why.describe());
    }
    trace.order_calls();
    Ok(trace)
}

/// The trace as text: `[BLOCK-k] function, lines a-b` with the variables before and after
/// (`name=value`), or the call tree indented by depth; then how the call ended.
pub fn render_trace(trace: &Trace) -> String {
    render_trace_window(trace, usize::MAX, usize::MAX)
}

/// As `render_trace`, showing only the first `head` and last `tail` records (an "N blocks
/// omitted" line between), for a model's prompt: LDB shows at most 10 blocks, first 5 and last 5.
pub fn render_trace_window(trace: &Trace, head: usize, tail: usize) -> String {
    let vars = |m: &BTreeMap<String, String>| {
        if m.is_empty() {
            "-".to_string()
        } else {
            m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
        }
    };
    let mut out = String::new();
    let n = trace.records.len();
    for (i, record) in trace.records.iter().enumerate() {
        if i >= head && i + tail < n {
            if i == head {
                out.push_str(&format!("... {} blocks omitted ...\n", n - head - tail));
            }
            continue;
        }
        match record {
            TraceRecord::Block {
                function,
                first_line,
                last_line,
                before,
                after,
                raised,
                ..
            } => {
                out.push_str(&format!("[BLOCK-{}] {function}, lines {first_line}-{last_line}\n", i + 1));
                out.push_str(&format!("  before: {}\n", vars(before)));
                out.push_str(&format!("  after:  {}\n", vars(after)));
                if let Some(e) = raised {
                    out.push_str(&format!("  raised {e}\n"));
                }
            }
            TraceRecord::Call {
                depth,
                function,
                args,
                returned,
                raised,
                ..
            } => {
                let args = args.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
                let outcome = match (returned, raised) {
                    (_, Some(e)) => format!("raised {e}"),
                    (Some(v), None) => format!("-> {v}"),
                    (None, None) => "(unfinished)".into(),
                };
                out.push_str(&format!("{}{function}({args}) {outcome}\n", "  ".repeat(*depth as usize)));
            }
        }
    }
    match (&trace.end, &trace.stopped) {
        (Some(end), _) => {
            if let Some(e) = &end.exception {
                let line = e.line.map(|l| format!(" at line {l}")).unwrap_or_default();
                out.push_str(&format!("raised {}{line}: {}\n", e.kind, e.message));
            } else if let Some(v) = &end.result {
                out.push_str(&format!("returned {v}\n"));
            }
            if let Some(why) = &end.truncated {
                out.push_str(&format!("(trace cut short: {why})\n"));
            }
        }
        (None, Some(why)) => out.push_str(&format!("(stopped: {why}; the trace above is what ran before)\n")),
        (None, None) => out.push_str("(the tracer reported no end)\n"),
    }
    if !trace.sources.is_empty() {
        out.push_str("\nSource of the functions the test entered:\n");
        for s in &trace.sources {
            out.push_str(&format!("\n# {} (line {})\n{}\n", s.function, s.line, s.code.trim_end()));
        }
    }
    out
}
