//! `rgd slurm bench-real --shards N [...] -- BENCH REAL FLAGS`: `rgd bench real` as a job array,
//! element K measuring shard K/N of the chosen instances (resuming what a requeued element
//! measured), and a job after them that merges the shards' results, verified
//! (`rgd bench real merge`), into `STATE_DIR/merged.jsonl`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Parser};

use super::bench_real::{RealArgs, chosen, kind_of};
use super::slurm_jobs::{JobArgs, dry_run};
use crate::cluster::slurm::{self, Work};
use crate::engine::Shard;
use crate::repo::bench::real::shards::results_file;
use crate::store::Home;

#[derive(Debug, Args)]
pub struct BenchRealArgs {
    #[command(flatten)]
    pub job: JobArgs,
    /// `rgd bench real`'s flags, after `--` (the instances, set, --fix, --python, ...)
    #[arg(last = true, required = true)]
    pub real: Vec<String>,
}

/// `rgd bench real`'s flags, read as that command reads them.
#[derive(Debug, Parser)]
struct Real {
    #[command(flatten)]
    args: RealArgs,
}

pub fn submit(home: &Home, args: BenchRealArgs) -> anyhow::Result<ExitCode> {
    let real = Real::try_parse_from(std::iter::once("real".to_string()).chain(args.real.iter().cloned()))?.args;
    if real.action.is_some() || real.list || real.shard.is_some() {
        bail!(
            "rgd slurm bench-real measures: give it `rgd bench real`'s measuring flags, without --shard (each element gets its own), --list or a subcommand"
        );
    }
    let (chosen, list) = chosen(&real)?;
    let kind = kind_of(&real);
    let id = args.job.name.clone().unwrap_or_else(|| ulid::Ulid::generate().to_string());
    let state_dir = args.job.state_dir.clone().unwrap_or_else(|| home.root.join("slurm").join(&id));
    let state_dir = std::path::absolute(&state_dir).with_context(|| state_dir.display().to_string())?;
    let results_dir = std::path::absolute(super::bench_real::real_cache(&home.root))?;
    let shards = args.job.shards as u32;
    let results: Vec<PathBuf> = (0..shards)
        .map(|index| results_file(&results_dir, &kind, &list, Shard { index, count: shards }))
        .collect();
    // The flags before `slurm` are rgd's own (a configuration, a data directory) and go to every job.
    let relaunch = super::relaunch::relaunch(std::env::args().skip(1), &[], &[]);
    let at = relaunch
        .args
        .iter()
        .position(|w| w == "slurm")
        .context("cannot find `slurm` in the command line")?;
    let work = Work::BenchReal {
        args: args.real.clone(),
        results,
        merged: state_dir.join("merged.jsonl"),
    };
    let spec = args.job.spec(home, &id, &state_dir, relaunch.args[..at].to_vec(), work)?;
    let indexes: Vec<u32> = (0..shards).collect();
    if args.job.dry_run {
        return dry_run(&spec, &indexes);
    }
    let (array, merge) = spec.write()?;
    let env: Vec<(String, String)> = relaunch.env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let submission = slurm::submit(&array, &merge, &indexes, shards, &env)?;
    println!(
        "submitted bench {id} ({} instances, {kind}): shards job {} (array {}), merge job {} (after all shards)",
        chosen.len(),
        submission.array_job,
        slurm::array_range(&indexes, shards),
        submission.merge_job
    );
    println!(
        "the merged results will be {}; scripts and logs in {}",
        state_dir.join("merged.jsonl").display(),
        state_dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
