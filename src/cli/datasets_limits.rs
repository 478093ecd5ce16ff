//! `rgd datasets limits NAME`: measures each task's time limits from its reference solution in
//! the wasm sandbox (`crate::plus::timing`) and writes them beside the dataset file
//! (`<stem>.limits.json`), where sweeps, experiments, `eval` and `datasets verify` find them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;

use super::args::Tasks;
use crate::dataset::{LIMITS_SUFFIX, LIMITS_VERSION, TimeLimits, sidecar_path};
use crate::plus::timing::{TimingOptions, measure, split};
use crate::sandbox::{SandboxKind, make_executor};

#[derive(Debug, clap::Args)]
pub struct MeasureLimits {
    #[command(flatten)]
    pub tasks: Tasks,
    /// A task's limit is this many times its reference's time ...
    #[arg(long, default_value_t = 4.0, value_parser = crate::validate::parse_seconds)]
    pub factor: f64,
    /// ... and never less than this many seconds (EvalPlus's defaults: 4 and 4)
    #[arg(long, default_value_t = 4.0, value_parser = crate::validate::parse_seconds)]
    pub floor: f64,
    /// Seconds a reference's test may take while measured; a slower one gets no limit of its own
    #[arg(long, default_value_t = 120.0, value_parser = crate::validate::parse_seconds)]
    pub cap: f64,
    /// Runs per task; the slowest counts
    #[arg(long, default_value_t = 3, value_parser = crate::validate::parse_count)]
    pub repeat: usize,
    /// Where to write them [default: beside the dataset file, <stem>.limits.json, where rgd
    /// looks for them]
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub async fn execute(data_dir: Option<&Path>, how: MeasureLimits) -> anyhow::Result<ExitCode> {
    let mut ds = how.tasks.load(data_dir)?;
    let tasks = std::mem::take(&mut ds.tasks);
    let (name, path) = (ds.name.clone(), ds.path.clone());
    let with_reference = tasks.iter().filter(|t| t.canonical.is_some()).count();
    if with_reference == 0 {
        println!("{name}: no task has a reference solution; nothing to measure (its tasks keep the general limits)");
        return Ok(ExitCode::SUCCESS);
    }
    let out = how.out.clone().unwrap_or_else(|| sidecar_path(&path, LIMITS_SUFFIX));
    // The references are code from a dataset: only ever run in the wasm sandbox.
    let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}"))?;
    let options = TimingOptions {
        factor: how.factor,
        floor_secs: how.floor,
        cap_secs: how.cap,
        repeat: how.repeat as u32,
    };
    let started = Instant::now();
    let bar = crate::launch::project::Progress::new();
    let parallel = how.tasks.concurrency.unwrap_or_else(crate::sandbox::cores);
    let timed = measure(executor.clone(), tasks, options, parallel, &|done| {
        bar.set("timing references", done, with_reference)
    })
    .await;
    bar.finish();
    let (measured, unmeasured) = split(timed);
    let limits = TimeLimits {
        rgd_limits: LIMITS_VERSION,
        dataset_sha256: ds.sha256.clone(),
        command: format!(
            "rgd datasets limits {name} --factor {} --floor {} --cap {} --repeat {}{}",
            how.factor,
            how.floor,
            how.cap,
            how.repeat,
            how.tasks.limit.map(|n| format!(" --limit {n}")).unwrap_or_default()
        ),
        sandbox: executor.name().into(),
        factor: how.factor,
        floor_secs: how.floor,
        repeat: how.repeat as u32,
        tasks: measured,
        unmeasured,
    };
    let json = serde_json::to_string_pretty(&limits)?;
    std::fs::write(&out, json + "\n").with_context(|| format!("writing {}", out.display()))?;
    println!(
        "{name}: {} tasks timed in {:.1}s, written to {}",
        limits.tasks.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    print!("{}", summary(&limits));
    Ok(ExitCode::SUCCESS)
}

/// How the limits spread, and what was left unmeasured.
fn summary(limits: &TimeLimits) -> String {
    let mut per_test: Vec<f64> = limits.tasks.values().map(|m| m.limit.per_test).collect();
    per_test.sort_by(f64::total_cmp);
    let at_floor = per_test.iter().filter(|s| **s <= limits.floor_secs).count();
    let mut s = String::new();
    if let (Some(median), Some(max)) = (per_test.get(per_test.len() / 2), per_test.last()) {
        s.push_str(&format!(
            "  seconds per test: {at_floor} tasks at the {} s floor, median {median}, largest {max}",
            limits.floor_secs
        ));
        let above: Vec<String> = limits
            .tasks
            .iter()
            .filter(|(_, m)| m.limit.per_test > limits.floor_secs)
            .map(|(id, m)| format!("{id} {} s (reference {} s)", m.limit.per_test, m.slowest_test_secs))
            .collect();
        if !above.is_empty() {
            s.push_str(&format!("; above it: {}", above.join(", ")));
        }
        s.push('\n');
    }
    for (id, why) in &limits.unmeasured {
        s.push_str(&format!("  not measured, the general limits apply: {id}: {why}\n"));
    }
    s
}
