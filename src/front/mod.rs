//! The front ends of a run: what shows it while it works and what it leaves when it ends. The
//! headless printer (`print`), debugger commands from stdin (`control`), the TUI (`crate::tui`),
//! the exit status (`exit`); every command that runs a sweep (`run`, `sweep`, `solve`, `fix`,
//! experiments) hands its prepared run to `execute`.

pub mod attempt;
pub mod bench_fix;
pub mod control;
pub mod exit;
pub mod fix;
pub mod merged;
pub mod print;

use std::path::Path;
use std::process::ExitCode;

use crate::engine::RunSummary;
use crate::launch::Prepared;
use crate::store::{RunStore, export_run};
use print::{Printer, PrinterMode};

/// Where a run's progress and results go besides its record.
#[derive(Debug, Default)]
pub struct Front<'a> {
    /// Export samples, results and summary here when the run ends.
    pub out: Option<&'a Path>,
    /// Watch it in the TUI instead of printing.
    pub tui: bool,
}

/// Runs a prepared run with a front end: the headless printer, or the TUI.
pub async fn execute(prepared: Prepared, mode: PrinterMode, front: &Front<'_>) -> anyhow::Result<ExitCode> {
    let (out, tui) = (front.out, front.tui);
    let Prepared {
        store,
        bus,
        sweep,
        resumed,
    } = prepared;
    let run_id = store.run_id.clone();
    if tui {
        // The files are written when the run finishes, not when the view closes: a view left
        // open still leaves them behind.
        let exporter = out.map(|dir| {
            let (store, dir, mut events) = (store.clone(), dir.to_path_buf(), bus.subscribe());
            tokio::spawn(async move {
                while let Some(envelope) = events.recv().await {
                    if matches!(envelope.event, crate::engine::Event::RunFinished { .. }) {
                        return export_run(&store, &dir).is_ok();
                    }
                }
                false
            })
        });
        let outcome = crate::tui::watch_run(sweep, resumed).await;
        bus.close();
        if let Some(exporter) = exporter {
            exporter.abort();
        }
        return finish(&store, outcome?, mode, out);
    }
    let printer = Printer::spawn(mode, bus.subscribe(), sweep.tasks.len());
    if let Some(control) = &sweep.runner.control
        && mode != PrinterMode::Silent
    {
        control::spawn_stdin(control.clone(), bus.clone());
    }
    let summary = tokio::select! {
        summary = sweep.run(resumed) => summary?,
        _ = tokio::signal::ctrl_c() => {
            bus.close();
            printer.finish().await;
            eprintln!("\ninterrupted: finished tasks are recorded; continue with `rgd sweep --resume {run_id}`");
            return Ok(exit::code(exit::INTERRUPTED));
        }
    };
    bus.close();
    printer.finish().await;
    finish(&store, Some(summary), mode, out)
}

/// ", 1 unverified (in-process: why)": tasks that passed with the program in the tests' process,
/// which no count takes as solved; the reason is the first such task's.
fn unverified(store: &RunStore, summary: &RunSummary) -> String {
    if summary.unverified == 0 {
        return String::new();
    }
    let why = store
        .results()
        .ok()
        .and_then(|rs| rs.iter().find_map(|r| r.unverified().map(str::to_string)))
        .map(|why| format!(" (in-process: {why})"))
        .unwrap_or_default();
    format!(", {} unverified{why}", summary.unverified)
}

/// Exports and the closing lines, after any front end. `None`: the user stopped the run.
fn finish(store: &RunStore, summary: Option<RunSummary>, mode: PrinterMode, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let run_id = &store.run_id;
    let Some(summary) = summary else {
        eprintln!("stopped: finished tasks are recorded; continue with `rgd sweep --resume {run_id}`");
        return Ok(exit::code(exit::INTERRUPTED));
    };
    if let Some(dir) = out {
        export_run(store, dir)?;
        eprintln!("wrote samples.jsonl, results.jsonl and summary.json to {}", dir.display());
    }
    if !matches!(mode, PrinterMode::Json | PrinterMode::Silent) {
        eprintln!(
            "run {run_id}: {}/{} solved (pass@1 {:.1}%){}, {} failed, {} errors{}{}",
            summary.solved,
            summary.tasks,
            summary.pass_at_1 * 100.0,
            unverified(store, &summary),
            summary.failed,
            summary.errors,
            if summary.tampered > 0 {
                format!(", {} tampered with the judge", summary.tampered)
            } else {
                String::new()
            },
            if summary.unfinished.is_empty() {
                String::new()
            } else {
                format!(", {} unfinished (rgd sweep --resume {run_id})", summary.unfinished.len())
            }
        );
        if summary.flagged > 0 && summary.impossible.is_none() {
            eprintln!(
                "{} task(s) ended with an agent flagging a visible test as contradicting the specification (rgd runs show {run_id})",
                summary.flagged
            );
        }
        if let Some(c) = &summary.impossible {
            eprintln!("impossible tasks: {c}");
        }
        eprintln!("recorded in {}", store.dir.display());
    }
    if let Some(why) = &summary.halted {
        if mode != PrinterMode::Silent {
            eprintln!(
                "stopped early: {why}; {} task(s) left. When the endpoint is back: rgd sweep --resume {run_id}",
                summary.unfinished.len()
            );
        }
        return Ok(exit::code(exit::UNFINISHED));
    }
    // However few: a script must not take a sweep with tasks left for a finished one.
    if !summary.unfinished.is_empty() {
        return Ok(exit::code(exit::UNFINISHED));
    }
    Ok(ExitCode::SUCCESS)
}
