//! `rgd runs list | show | search | export | merge | verify | repair`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::cluster::MergeOptions;
use crate::store::{Home, RunStore, export_run};
use crate::text::fit;

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Recorded runs, newest first
    List {
        /// One JSON object per run (run_id, started, dataset, strategy, method, models,
        /// pass_at_1, solved, tasks, finished, state)
        #[arg(long)]
        json: bool,
    },
    /// A run's manifest and per-task results (--events: every event as JSON lines)
    Show {
        run_id: String,
        #[arg(long)]
        events: bool,
    },
    /// Check runs against themselves: manifest, status, journal and database (checksums, event
    /// counts, finished tasks). One line per run (ok, resumable, live, or damaged: what, where);
    /// exit 1 when any is damaged. Never changes a file.
    Verify {
        /// Runs (ids or unique prefixes)
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        runs: Vec<String>,
        /// Every recorded run
        #[arg(long)]
        all: bool,
        /// One JSON object per run
        #[arg(long)]
        json: bool,
    },
    /// Rebuild a damaged run: its database from its journal (or its journal from its database),
    /// the manifest from the run's first event, the status from the results. A task is kept only
    /// from a whole record of it; the damaged files stay beside the new ones (`*.damaged-<time>`)
    Repair { run_id: String },
    /// Search every recorded run: task ids, statuses, failures, strategies, models, errors and
    /// the text of every LLM message (the index updates itself first)
    Search {
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// One JSON object per hit
        #[arg(long)]
        json: bool,
    },
    /// Write samples.jsonl, results.jsonl and summary.json for a run
    Export {
        run_id: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// Make one run from the shards of a sweep (`sweep --shard K/N`): events, results and
    /// summary from the per-task records; refuses runs of different sweeps
    Merge {
        /// The shards (ids or unique prefixes)
        #[arg(required = true)]
        runs: Vec<String>,
        /// Also write samples.jsonl, results.jsonl and summary.json here
        #[arg(long)]
        out: Option<PathBuf>,
        /// The merged run's id (a new one otherwise)
        #[arg(long, value_parser = crate::validate::parse_run_id)]
        into: Option<String>,
        /// A task finished by two runs: keep the newer or the older result (refused otherwise)
        #[arg(long, value_enum)]
        prefer: Option<crate::cluster::Prefer>,
        /// Replace the --into run when an earlier merge made it (merging again after a shard
        /// was resubmitted)
        #[arg(long, requires = "into")]
        replace: bool,
        /// Print the merge report as JSON
        #[arg(long)]
        json: bool,
    },
}

pub fn execute(home: &Home, cmd: RunsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        RunsCommand::Merge {
            runs,
            out,
            into,
            prefer,
            replace,
            json,
        } => {
            let options = MergeOptions { into, prefer, replace };
            crate::front::merged::merge(home, &runs, &options, out.as_deref(), json)
        }
        RunsCommand::Verify { runs, all, json } => verify(home, &runs, all, json),
        RunsCommand::Repair { run_id } => {
            let id = home.find_run(&run_id)?;
            let done = crate::store::repair_run(home, &id)?;
            println!(
                "repaired run {id}: {} events, {}/{} tasks finished; rebuilt {}",
                done.events,
                done.finished,
                done.tasks,
                done.rebuilt.join(", ")
            );
            for aside in &done.kept_aside {
                println!("  the damaged file is kept as {}", aside.display());
            }
            let after = crate::store::verify_run(home, &id);
            super::print_check(false, &after, &after.line(), after.is_damaged())
        }
        RunsCommand::List { json: true } => list_json(home),
        RunsCommand::List { json: false } => list_table(home),
        RunsCommand::Show { run_id, events } => super::runs_show::show(home, &run_id, events),
        RunsCommand::Search { query, limit, json } => {
            let index = crate::store::RunIndex::open(home)?;
            index.update(home)?;
            for hit in index.search(&query, limit)? {
                if json {
                    println!("{}", serde_json::to_string(&hit)?);
                } else {
                    println!(
                        "{}  {:<14} {:<7} {}",
                        &hit.run_id[..hit.run_id.len().min(10)],
                        hit.task_id,
                        hit.kind,
                        hit.snippet
                    );
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

/// One JSON object per run.
fn list_json(home: &Home) -> anyhow::Result<ExitCode> {
    for id in home.run_ids() {
        let (m, status) = match crate::store::listing(home, &id) {
            Ok(read) => read,
            Err(what) => {
                println!("{}", serde_json::json!({"run_id": id, "state": "damaged", "damage": what}));
                continue;
            }
        };
        let (state, finished, solved) = progress(status.as_ref());
        let tasks = m.dataset.selected.len();
        let models: std::collections::BTreeSet<&str> = m.agents.values().map(|p| p.model.as_str()).collect();
        let line = serde_json::json!({
            "run_id": id,
            "started": m.created_at,
            "dataset": m.dataset.name,
            "dataset_sha256": m.dataset.sha256,
            "strategy": m.strategy,
            "method": m.method(),
            "models": models,
            "pass_at_1": solved as f64 / tasks.max(1) as f64,
            "solved": solved,
            "tasks": tasks,
            "finished": finished,
            "state": state,
        });
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A line per run, newest first, and what to do about a damaged one.
fn list_table(home: &Home) -> anyhow::Result<ExitCode> {
    let ids = home.run_ids();
    if ids.is_empty() {
        println!("no runs in {}", home.runs_dir().display());
    }
    println!(
        "{:<26}  {:<12} {:<16} {:<28} {:>7} {:>9}  {:<11} created",
        "run", "dataset", "method", "model", "tasks", "solved", "state"
    );
    let mut damaged = 0;
    for id in ids {
        let (m, status) = match crate::store::listing(home, &id) {
            Ok(read) => read,
            Err(what) => {
                damaged += 1;
                println!("{id:<26}  damaged: {}", fit(&what, 160));
                continue;
            }
        };
        let (state, finished, solved) = progress(status.as_ref());
        println!(
            "{:<26}  {:<12} {:<16} {:<28} {:>3}/{:<3} {:>9}  {:<11} {}",
            id,
            fit(&m.dataset.name, 12),
            fit(&m.method(), 16),
            fit(&m.model_shown(), 28),
            finished,
            m.dataset.selected.len(),
            solved,
            state,
            m.created_at.format("%Y-%m-%d %H:%M")
        );
    }
    if damaged > 0 {
        println!("{damaged} damaged run(s): `rgd runs verify RUN` says what is damaged, `rgd runs repair RUN` rebuilds one");
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(home: &Home, runs: &[String], all: bool, json: bool) -> anyhow::Result<ExitCode> {
    let ids = match all {
        true => home.run_ids(),
        false => runs.iter().map(|r| home.find_run(r)).collect::<Result<Vec<_>, _>>()?,
    };
    let mut damaged = 0;
    for id in &ids {
        let checked = crate::store::verify_run(home, id);
        damaged += usize::from(checked.is_damaged());
        match json {
            true => println!("{}", serde_json::to_string(&checked)?),
            false => println!("{}", checked.line()),
        }
    }
    if !json && ids.len() > 1 {
        println!("{} run(s) checked, {damaged} damaged", ids.len());
    }
    Ok(if damaged > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// A run's state, tasks finished and solved, as its status file says (unknown without one).
fn progress(status: Option<&crate::record::RunStatus>) -> (String, usize, usize) {
    match status {
        Some(s) => (format!("{:?}", s.state).to_lowercase(), s.finished, s.solved),
        None => ("unknown".into(), 0, 0),
    }
}
