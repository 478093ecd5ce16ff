//! `rgd runs list | show | export`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::engine::RunSummary;
use crate::record::{RunState, RunStatus};
use crate::store::{Home, RunStore, StoreError, export_run};

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Recorded runs, newest first
    List,
    /// A run's manifest and per-task results (--events: every event as JSON lines)
    Show {
        run_id: String,
        #[arg(long)]
        events: bool,
    },
    /// Write samples.jsonl, results.jsonl and summary.json for a run
    Export {
        run_id: String,
        #[arg(long)]
        out: PathBuf,
    },
}

pub fn execute(home: &Home, cmd: RunsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        RunsCommand::List => {
            let ids = home.run_ids();
            if ids.is_empty() {
                println!("no runs in {}", home.runs_dir().display());
            }
            println!(
                "{:<26}  {:<12} {:<24} {:>7} {:>9}  {:<11} created",
                "run", "dataset", "model", "tasks", "solved", "state"
            );
            for id in ids {
                let Ok(m) = home.read_manifest(&id) else { continue };
                let status = RunStatus::read(&home.run_dir(&id));
                let (state, finished, solved) = match &status {
                    Some(s) => (format!("{:?}", s.state).to_lowercase(), s.finished, s.solved),
                    None => ("unknown".into(), 0, 0),
                };
                println!(
                    "{:<26}  {:<12} {:<24} {:>3}/{:<3} {:>9}  {:<11} {}",
                    id,
                    m.dataset.name,
                    m.model_label(),
                    finished,
                    m.dataset.selected.len(),
                    solved,
                    state,
                    m.created_at.format("%Y-%m-%d %H:%M")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Show { run_id, events } => {
            let id = home.find_run(&run_id)?;
            let store = match RunStore::open(home, &id) {
                Ok(s) => s,
                Err(StoreError::Locked(_)) => {
                    let status = RunStatus::read(&home.run_dir(&id));
                    println!("run {id} is live in another process: {status:?}");
                    return Ok(ExitCode::SUCCESS);
                }
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
                "dataset    {} ({}, sha256 {}…, split seed {:?})",
                m.dataset.name,
                m.dataset.path,
                &m.dataset.sha256[..12],
                m.dataset.split_seed
            );
            println!("endpoint   {}", m.endpoint);
            for (agent, p) in &m.agents {
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
                "state      {state:?} · {}/{} finished · pass@1 {:.1}%",
                summary.finished,
                summary.tasks,
                summary.pass_at_1 * 100.0
            );
            println!();
            for id in &m.dataset.selected {
                match results.iter().find(|r| &r.task_id == id) {
                    Some(r) => println!(
                        "  {:<14} {:<7} iterations {:<2} first pass {:<4} {:.1}s{}",
                        r.task_id,
                        format!("{:?}", r.status).to_lowercase(),
                        r.iterations,
                        r.first_pass_iteration.map(|k| k.to_string()).unwrap_or("-".into()),
                        r.seconds,
                        r.error.as_deref().map(|e| format!("  {e}")).unwrap_or_default()
                    ),
                    None => println!("  {id:<14} unfinished"),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        RunsCommand::Export { run_id, out } => {
            let id = home.find_run(&run_id)?;
            let store = RunStore::open(home, &id)?;
            let summary = export_run(&store, &out)?;
            println!(
                "wrote {} tasks to {} (pass@1 {:.1}%)",
                summary.finished,
                out.display(),
                summary.pass_at_1 * 100.0
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
