//! `rgd runs show RUN`: a run's manifest (dataset, strategy, endpoint and served model, agents,
//! limits), its state and pass@1, and a line per task; `--events` its recorded events.

use std::process::ExitCode;

use crate::engine::RunSummary;
use crate::record::{RunState, RunStatus};
use crate::store::{Home, RunStore, StoreError};

pub fn show(home: &Home, run_id: &str, events: bool) -> anyhow::Result<ExitCode> {
    let id = home.find_run(run_id)?;
    let store = match RunStore::open(home, &id) {
        Ok(s) => s,
        Err(StoreError::Locked(_)) => return show_live(home, &id, events),
        Err(e) => return Err(e.into()),
    };
    if events {
        for e in store.events() {
            println!("{}", serde_json::to_string(&e?)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let m = store.manifest()?;
    println!("run        {id}");
    println!(
        "dataset    {} ({}, sha256 {}…, split seed {})",
        m.dataset.name,
        m.dataset.path,
        m.dataset.sha256.get(..12).unwrap_or(&m.dataset.sha256),
        m.dataset.split_seed.map_or("-".to_string(), |s| s.to_string())
    );
    println!("strategy   {}", m.method());
    println!("endpoint   {}", m.endpoint);
    if let Some(served) = &m.served {
        println!(
            "served     {}{}",
            if served.models.is_empty() {
                "-".to_string()
            } else {
                served.models.join(", ")
            },
            served.context_size.map(|n| format!(" (context {n} tokens)")).unwrap_or_default()
        );
    }
    // Only the agents the strategy calls (Direct asks the Debug agent alone).
    let used = |agent: &str| m.strategy != "direct" || agent == "debug";
    for (agent, p) in m.agents.iter().filter(|(a, _)| used(a)) {
        println!(
            "{agent:<10} {} (temperature {}, max {} tokens)",
            p.model, p.temperature, p.max_tokens
        );
    }
    println!(
        "iterations {} · concurrency {} · sandbox {} · memory {}",
        m.max_iters,
        m.concurrency,
        m.sandbox,
        if m.memory.enabled { "on" } else { "off" }
    );
    let state = RunStatus::read(&store.dir).map(|s| s.state).unwrap_or(RunState::Interrupted);
    let results = store.results()?;
    let summary = RunSummary::compute(
        &m.run_id,
        &m.dataset.name,
        &m.model_label(),
        &m.dataset.selected,
        &results,
        m.max_iters,
    );
    println!(
        "state      {state:?} · {}/{} finished · pass@1 {:.1}%{}{}",
        summary.finished,
        summary.tasks,
        summary.pass_at_1 * 100.0,
        match summary.unverified {
            0 => String::new(),
            n => format!(" · {n} unverified (passed in the tests' process, not counted)"),
        },
        if summary.intervened > 0 {
            format!(
                " · {} intervened by hand ({} solved with help, not counted)",
                summary.intervened, summary.solved_with_help
            )
        } else {
            String::new()
        }
    );
    if let Some(c) = &summary.impossible {
        println!("impossible {c}");
    }
    if let Some(fork) = &m.fork {
        println!(
            "fork of    {} · {} from iteration {}",
            fork.parent_run, fork.task_id, fork.at_iteration
        );
    }
    println!();
    for id in &m.dataset.selected {
        match results.iter().find(|r| &r.task_id == id) {
            Some(r) => println!("{}", task_line(r)),
            None => println!("  {id:<14} unfinished"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A run another process is running holds its database: its status, and its events from the
/// journal when it keeps one (`--detach` does).
fn show_live(home: &Home, id: &str, events: bool) -> anyhow::Result<ExitCode> {
    let dir = home.run_dir(id);
    let journal = crate::store::journal_path(&dir);
    if events {
        let text = std::fs::read_to_string(&journal).map_err(|_| {
            anyhow::anyhow!(
                "run {id} is live in another process and keeps no journal; its events can be read when it ends (or watch it: rgd replay {id} --follow)"
            )
        })?;
        // The last line may be half written.
        for line in text.lines().filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()) {
            println!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    match RunStatus::read(&dir) {
        Some(s) => println!(
            "run {id} is live in process {}: {}/{} tasks finished, {} solved (updated {})",
            s.pid,
            s.finished,
            s.tasks,
            s.solved,
            s.updated_at.format("%H:%M:%S")
        ),
        None => println!("run {id} is live in another process"),
    }
    Ok(ExitCode::SUCCESS)
}

/// A finished task's line: its status (unverified apart), iterations, first pass, time, and how
/// an impossible task ended or what error it ended with.
fn task_line(r: &crate::record::TaskResult) -> String {
    format!(
        "  {:<14} {:<15} iterations {:<2} first pass {:<4} {:.1}s{}{}",
        r.task_id,
        match r.unverified() {
            Some(_) => "unverified".to_string(),
            None => serde_json::to_value(r.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        },
        r.iterations,
        r.first_pass_iteration.map(|k| k.to_string()).unwrap_or("-".into()),
        r.seconds,
        match r.impossible {
            Some(v) => format!(
                "  [{}, hidden {}]",
                serde_json::to_value(v.outcome)
                    .ok()
                    .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
                    .unwrap_or_default(),
                if v.hidden_passed { "passed" } else { "failed" }
            ),
            None => r.error.as_deref().map(|e| format!("  {e}")).unwrap_or_default(),
        },
        if r.intervened { "  [intervened]" } else { "" }
    )
}
