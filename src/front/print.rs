//! The headless printer: a subscriber of the event stream, like the recorder and the TUI.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;

use crate::engine::{Envelope, Event, EventPart, Suite, TaskStatus};
use crate::sandbox::TestStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrinterMode {
    /// Every event as one JSON line on stdout.
    Json,
    /// Every step as text, answers streamed as they arrive (one task).
    Detailed,
    /// A progress bar and one line per finished task (sweeps).
    Progress,
    /// Only the final line.
    Quiet,
    /// Nothing: a view elsewhere follows the run's journal (`rgd fix --tui`).
    Silent,
}

pub struct Printer {
    handle: JoinHandle<()>,
}

impl Printer {
    pub fn spawn(mode: PrinterMode, mut events: UnboundedReceiver<Arc<Envelope>>, tasks: usize) -> Printer {
        let handle = tokio::spawn(async move {
            let bar = (mode == PrinterMode::Progress).then(|| {
                let bar = ProgressBar::new(tasks as u64);
                bar.set_style(
                    ProgressStyle::with_template("{bar:30} {pos}/{len} tasks  {msg}  [{elapsed_precise}, eta {eta}]")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar
            });
            let mut solved = 0usize;
            let mut done = 0usize;
            // Visible (and own) test labels per task, so result tables can show the tests themselves.
            let mut labels: HashMap<String, Labels> = HashMap::new();
            while let Some(envelope) = events.recv().await {
                match mode {
                    PrinterMode::Json => {
                        // JSON escapes C0 controls itself; C1 controls it leaves as they are.
                        if let Ok(line) = serde_json::to_string(&*envelope) {
                            println!("{}", crate::terminal::clean(&line));
                        }
                    }
                    PrinterMode::Detailed => {
                        match &envelope.event {
                            Event::TaskStarted {
                                task_id, visible_tests, ..
                            } => labels.entry(task_id.clone()).or_default().visible = visible_tests.clone(),
                            Event::SelfTests { task_id, kept, .. } => labels.entry(task_id.clone()).or_default().own = kept.clone(),
                            _ => {}
                        }
                        let none = Labels::default();
                        let tests = envelope.event.task_id().and_then(|id| labels.get(id)).unwrap_or(&none);
                        detailed(&envelope.event, tests)
                    }
                    PrinterMode::Quiet | PrinterMode::Silent => {}
                    PrinterMode::Progress => {
                        let Some(bar) = bar.as_ref() else { continue };
                        match &envelope.event {
                            // Piped output has no bar: a line per start shows the sweep at work
                            // from its first second, not from its first finished task.
                            Event::TaskStarted { task_id, attempt, .. } if bar.is_hidden() => {
                                let again = if *attempt > 1 {
                                    format!(" (attempt {attempt})")
                                } else {
                                    String::new()
                                };
                                say(bar, format!("{task_id:<14} started{again}"));
                            }
                            Event::RunResumed { finished } => {
                                done = finished.len();
                                bar.set_position(done as u64);
                                say(bar, format!("resumed: {} tasks already finished", finished.len()));
                            }
                            Event::TaskFinished { result } => {
                                done += 1;
                                solved += usize::from(result.solved());
                                bar.set_position(done as u64);
                                bar.set_message(format!("solved {solved} ({:.1}%)", 100.0 * solved as f64 / done.max(1) as f64));
                                say(bar, task_line(result));
                            }
                            _ => {}
                        }
                    }
                }
            }
            if let Some(bar) = bar {
                bar.finish();
            }
        });
        Printer { handle }
    }

    /// Waits until every event sent before the bus closed has been printed.
    pub async fn finish(self) {
        let _ = self.handle.await;
    }
}

/// Above the bar on a terminal; as plain lines when output is piped (the bar then hides itself).
fn say(bar: &ProgressBar, line: String) {
    let line = crate::terminal::clean(&line).into_owned();
    if bar.is_hidden() {
        println!("{line}");
    } else {
        bar.println(line);
    }
}

/// " · in-process (best effort): why" for a repository run whose program ran in the tests' process.
fn best_effort_label(report: &crate::sandbox::RunReport) -> String {
    report
        .best_effort
        .as_deref()
        .map(|why| format!(" · {}: {why}", crate::repo::run::isolate::Isolation::BEST_EFFORT))
        .unwrap_or_default()
}

fn task_line(r: &crate::engine::TaskResult) -> String {
    let what = match (r.status, r.first_pass_iteration) {
        (TaskStatus::Solved, Some(k)) => format!("solved at iteration {k}"),
        (TaskStatus::Solved, None) => "solved".into(),
        (TaskStatus::Unverified, _) => "unverified: passed with the program in the tests' process, not counted as solved".into(),
        (TaskStatus::Failed, _) => format!("failed after {}", plural(r.iterations as usize, "iteration")),
        (TaskStatus::Error, _) => format!("error: {}", r.error.as_deref().unwrap_or("?")),
        (TaskStatus::EndpointFailed, _) => format!(
            "unfinished, the endpoint failed (a resume runs it again): {}",
            r.error.as_deref().unwrap_or("?")
        ),
    };
    let tampered = r.tampered.as_deref().map(|why| format!(" [tampered: {why}]")).unwrap_or_default()
        + &r.best_effort
            .as_deref()
            .map(|why| format!(" [{}: {why}]", crate::repo::run::isolate::Isolation::BEST_EFFORT))
            .unwrap_or_default();
    let by_hand = if r.intervened {
        " [intervened: edited by hand, not counted for the method]"
    } else {
        ""
    };
    format!("{:<14} {what} ({:.1}s){tampered}{by_hand}", r.task_id, r.seconds)
}

/// "1 iteration", "3 iterations".
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// A task's test labels: the visible tests, and the model's own (Reflexion).
#[derive(Default)]
struct Labels {
    visible: Vec<String>,
    own: Vec<String>,
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

fn detailed(event: &Event, labels: &Labels) {
    // Answers, code and program output are shown as text, never as terminal commands.
    let mut out = crate::terminal::CleanWriter(std::io::stdout().lock());
    let _ = match event.part() {
        EventPart::Call => agent_lines(event, &mut out),
        EventPart::Task | EventPart::Debugger => task_lines(event, labels, &mut out),
        EventPart::Run => run_lines(event, &mut out),
    };
    let _ = out.flush();
}

/// The run's own events as lines: its start, and nothing for its resumption or end (the summary
/// says those).
fn run_lines(event: &Event, out: &mut impl Write) -> std::io::Result<()> {
    match event {
        Event::RunStarted { manifest } => writeln!(
            out,
            "run {} · {} · {} · max {} iterations",
            manifest.run_id,
            manifest.dataset.name,
            manifest.model_label(),
            manifest.max_iters
        ),
        Event::ControlError { message } => writeln!(out, "  ✗ debugger: {message}"),
        Event::RunResumed { .. } | Event::RunFinished { .. } => Ok(()),
        _ => Ok(()),
    }
}

/// An agent's call as lines: its request, streamed answer, retries, trace, fitting and failure.
fn agent_lines(event: &Event, out: &mut impl Write) -> std::io::Result<()> {
    match event {
        Event::AgentRequest {
            agent, purpose, params, ..
        } => write!(out, "\n[{agent} · {} · {}]\n", purpose.prompt_name(), params.model),
        Event::AgentTokens { text, .. } => write!(out, "{text}"),
        Event::AgentRetry {
            attempt, error, wait_ms, ..
        } => writeln!(out, "\n  ↻ attempt {attempt} failed: {error}; retrying in {wait_ms} ms"),
        Event::TestTraced { test, trace, .. } => writeln!(
            out,
            "\n  ⌁ traced `{test}` ({} records):\n{}",
            trace.records.len(),
            indent(&crate::sandbox::render_trace_window(trace, 5, 5))
        ),
        Event::PromptFitted {
            context,
            prompt_tokens,
            max_tokens,
            asked_max_tokens,
            trimmed,
            ..
        } => writeln!(
            out,
            "  ✂ {}",
            crate::agents::budget::describe(*context, *prompt_tokens, *max_tokens, *asked_max_tokens, trimmed)
        ),
        Event::AgentResponse {
            usage,
            latency_ms,
            attempts,
            finish_reason,
            ..
        } => writeln!(
            out,
            "\n  {}({} tokens in, {} out{}, {:.1}s{})",
            if finish_reason.as_deref() == Some("length") {
                format!("⚠ {} ", crate::agents::budget::CUT_OFF)
            } else {
                String::new()
            },
            usage.prompt_tokens,
            usage.completion_tokens,
            if usage.reported { "" } else { " estimated" },
            *latency_ms as f64 / 1000.0,
            if *attempts > 1 {
                format!(", {attempts} attempts")
            } else {
                String::new()
            }
        ),
        Event::AgentFailed { agent, error, .. } => writeln!(out, "\n  ✗ {agent} agent failed: {error}"),
        Event::SelfTests { kept, dropped, .. } => {
            let _ = writeln!(
                out,
                "  own tests written: {} kept{}",
                kept.len(),
                if dropped.is_empty() {
                    String::new()
                } else {
                    format!(", {} dropped", dropped.len())
                }
            );
            for d in dropped {
                let _ = writeln!(out, "    dropped: {d}");
            }
            Ok(())
        }
        Event::AnswerMalformed {
            purpose, error, handled, ..
        } => writeln!(
            out,
            "  ⚠ the {} answer could not be read ({error}): {handled}",
            purpose.prompt_name()
        ),
        Event::StrategyNote { text, .. } => writeln!(out, "  · {text}"),
        Event::PlansRanked { plans, .. } => {
            let order: Vec<String> = plans.iter().map(|(n, c)| format!("plan {n} ({c})")).collect();
            writeln!(out, "  plans by confidence: {}", order.join(", "))
        }
        _ => Ok(()),
    }
}

/// A task's progress as lines: its code, tests, memory, end, and the debugger's doings.
fn task_lines(event: &Event, labels: &Labels, out: &mut impl Write) -> std::io::Result<()> {
    match event {
        Event::TaskStarted {
            task_id,
            visible_tests,
            hidden_tests,
            ..
        } => {
            writeln!(out, "\n▶ {task_id}: {} visible tests, {hidden_tests} hidden", visible_tests.len())
        }
        Event::IterationStarted { iteration, .. } => writeln!(out, "\n── iteration {iteration}"),
        Event::CodeExtracted { problem, diff, .. } => {
            if let Some(p) = problem {
                let _ = writeln!(out, "  code problem: {p:?}");
            }
            match diff {
                Some(d) => writeln!(out, "  change from the previous iteration:\n{}", indent(d)),
                None => Ok(()),
            }
        }
        Event::TestsStarted { .. } => Ok(()),
        Event::TestsRun {
            suite: Suite::Hidden,
            passed,
            total,
            report,
            ..
        } => {
            let label = best_effort_label(report);
            match report.tampered() {
                Some(why) => writeln!(out, "  hidden tests: {passed}/{total} passed{label} · tampered: {why}"),
                None => writeln!(out, "  hidden tests: {passed}/{total} passed{label}"),
            }
        }
        Event::TestsRun {
            suite,
            passed,
            total,
            report,
            ..
        } => {
            let (name, labels) = match suite {
                Suite::Own => ("own tests", &labels.own),
                Suite::Printed => ("printed run", &labels.visible),
                _ => ("visible tests", &labels.visible),
            };
            let _ = writeln!(out, "  {name}: {passed}/{total} passed{}", best_effort_label(report));
            for t in &report.tests {
                let mark = if t.status == TestStatus::Passed { "✓" } else { "✗" };
                let label = labels.get(t.index).map(String::as_str).unwrap_or("?");
                let mut line = format!("    {mark} {label}");
                if !matches!(t.status, TestStatus::Passed | TestStatus::Failed) {
                    line.push_str(&format!(" [{}]", format!("{:?}", t.status).to_lowercase()));
                }
                if let Some(g) = &t.got {
                    line.push_str(&format!("  → got {g}"));
                }
                if let Some(x) = t.exc_type.as_ref().filter(|_| t.status != TestStatus::Passed) {
                    line.push_str(&format!("  → {x}: {}", t.exc_msg.as_deref().unwrap_or("")));
                    if let Some(l) = t.line {
                        line.push_str(&format!(" (line {l})"));
                    }
                }
                let _ = writeln!(out, "{line}");
            }
            Ok(())
        }
        Event::MemoryQuery { .. } => Ok(()),
        Event::MemoryHit { hit: Some(h), .. } => writeln!(
            out,
            "  memory: past guidance of {} (score {:.3}: sbert {:.3}, bm25 {:.2})",
            h.task_id, h.score, h.sbert, h.bm25
        ),
        Event::MemoryHit { hit: None, .. } => writeln!(out, "  memory: nothing similar enough"),
        Event::MemoryStored { entry_id: Some(id), .. } => writeln!(out, "  remembered as {id}"),
        Event::MemoryStored { error: Some(e), .. } => writeln!(out, "  not remembered: {e}"),
        Event::MemoryStored { .. } => Ok(()),
        Event::TaskFinished { result } => writeln!(out, "\n■ {}", task_line(result)),
        Event::Paused {
            iteration,
            reason,
            pending,
            ..
        } => writeln!(
            out,
            "\n  ⏸ paused ({reason}) at iteration {iteration} before the {}\n    type: c(ontinue), s(tep), skip, abort, p(ause), b(reak) SPEC, edit code|messages|guidance|query FILE",
            pending.label()
        ),
        Event::Resumed { how, .. } => writeln!(out, "  ▶ {how}"),
        Event::Intervened { field, diff, .. } => writeln!(out, "  ✎ edited by hand: {field}\n{}", indent(diff)),
        Event::TestFlagged { test, reason, .. } => {
            writeln!(out, "  ⚑ flagged as contradicting the specification: {test}\n    because: {reason}")
        }
        _ => Ok(()),
    }
}
