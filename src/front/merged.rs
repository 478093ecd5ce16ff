//! What merging runs leaves and says (`rgd runs merge`, and a Slurm sweep's merge job).

use std::process::ExitCode;

use crate::cluster::MergeOptions;
use crate::store::Home;

/// Merges runs and says what came of it (`rgd runs merge`, and a Slurm sweep's merge job).
pub fn merge(home: &Home, runs: &[String], options: &MergeOptions, out: Option<&std::path::Path>, json: bool) -> anyhow::Result<ExitCode> {
    let report = crate::cluster::merge_runs(home, runs, options)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        let s = &report.summary;
        println!(
            "merged {} runs into {}: {} of {} tasks{}, {} solved (pass@1 {:.1}%)",
            runs.len(),
            report.run_id,
            report.merged,
            report.tasks,
            if report.is_partial() { " (partial)" } else { "" },
            s.solved,
            s.pass_at_1 * 100.0
        );
        if report.is_partial() {
            println!("partial: {} of {} tasks", report.merged, report.tasks);
        }
        if !report.missing_shards.is_empty() {
            let shards: Vec<String> = report.missing_shards.iter().map(u32::to_string).collect();
            println!("missing shards: {}", shards.join(", "));
        }
        if !report.missing_tasks.is_empty() {
            let shown: Vec<&str> = report.missing_tasks.iter().take(20).map(String::as_str).collect();
            let more = report.missing_tasks.len().saturating_sub(shown.len());
            println!(
                "missing tasks: {}{}",
                shown.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            );
        }
        if !report.duplicates.is_empty() {
            println!(
                "{} tasks finished by more than one run: kept the {:?} result",
                report.duplicates.len(),
                options.prefer
            );
        }
        if let Some(pool) = &report.pool {
            println!(
                "memory: the shards added {} entries; {} were new to the pool, which now holds {}",
                pool.staged, pool.added, pool.entries_now
            );
        }
    }
    if let Some(dir) = out {
        let store = crate::store::RunStore::open(home, &report.run_id)?;
        crate::store::export_run(&store, dir)?;
        eprintln!("wrote samples.jsonl, results.jsonl and summary.json to {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
