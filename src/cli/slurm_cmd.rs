//! `rgd slurm`: submit a sweep as a job array of shards and a merge job, see how far it got,
//! resubmit the shards that ended unfinished, and (inside the merge job) merge the shards.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use super::run::SweepArgs;
use super::slurm_jobs::{JobArgs, dry_run};
use crate::cluster::slurm::{self, ShardState, SlurmSweep, SweepStatus, Work};
use crate::cluster::{MergeOptions, pool};
use crate::store::Home;

#[derive(Debug, Subcommand)]
pub enum SlurmCommand {
    /// Submit a sweep (the flags of `rgd sweep`) as a job array of N shards and a merge job that
    /// runs when they have all ended
    Submit(Box<SubmitArgs>),
    /// Submit `rgd bench real` (its flags after `--`) as a job array of N shards, each measuring
    /// its part of the chosen instances, and a job that merges their results when all have ended
    BenchReal(Box<super::slurm_bench::BenchRealArgs>),
    /// Shards queued, running, done and failed, tasks done and pass@1 so far (every sweep when no
    /// id is given)
    Status {
        id: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Submit again the shards that ended unfinished (cancelled, timed out, failed), each going on
    /// where it stopped, and a merge job after them
    Resubmit {
        id: String,
        /// Print what would be submitted
        #[arg(long)]
        dry_run: bool,
    },
    /// Merge the sweep's shards into the run ID (what the merge job runs; again after a resubmit)
    Merge {
        id: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub job: JobArgs,
    #[command(flatten)]
    pub sweep: SweepArgs,
}

/// Flags of `rgd slurm submit` that the shards do not get.
const SUBMIT_VALUED: [&str; 7] = [
    "--shards",
    "--partition",
    "--time",
    "--cpus-per-task",
    "--sbatch-arg",
    "--state-dir",
    "--name",
];

pub fn execute(home: &Home, cmd: SlurmCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SlurmCommand::Submit(args) => submit(home, *args),
        SlurmCommand::BenchReal(args) => super::slurm_bench::submit(home, *args),
        SlurmCommand::Status { id: Some(id), json } => {
            let sweep = SlurmSweep::load(home, &id)?;
            let status = slurm::status(home, &sweep);
            if json {
                println!("{}", serde_json::to_string(&status)?);
            } else {
                print_status(&status, true);
            }
            Ok(ExitCode::SUCCESS)
        }
        SlurmCommand::Status { id: None, json } => {
            let sweeps = SlurmSweep::list(home);
            if sweeps.is_empty() && !json {
                println!(
                    "no Slurm sweeps in {} (rgd slurm submit starts one)",
                    SlurmSweep::dir(home).display()
                );
            }
            for sweep in sweeps {
                let status = slurm::status(home, &sweep);
                if json {
                    println!("{}", serde_json::to_string(&status)?);
                } else {
                    print_status(&status, false);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        SlurmCommand::Resubmit { id, dry_run } => resubmit(home, &id, dry_run),
        SlurmCommand::Merge { id, json } => {
            let sweep = SlurmSweep::load(home, &id)?;
            let runs: Vec<String> = (0..sweep.shards)
                .map(|k| sweep.shard_run_id(k))
                .filter(|r| home.has_run(r))
                .collect();
            anyhow::ensure!(
                !runs.is_empty(),
                "no shard of sweep {id} has started; see its logs in {}",
                sweep.state_dir.join("logs").display()
            );
            let options = MergeOptions {
                into: Some(id.clone()),
                prefer: None,
                replace: true,
            };
            crate::front::merged::merge(home, &runs, &options, None, json)
        }
    }
}

fn submit(home: &Home, args: SubmitArgs) -> anyhow::Result<ExitCode> {
    let s = &args.sweep;
    let unfit = [
        (s.resume.is_some(), "--resume (resubmit with rgd slurm resubmit ID)"),
        (s.shard.is_some(), "--shard (each array element gets its own)"),
        (s.common.run_id.is_some(), "--run-id (use --name)"),
        (s.memory_snapshot.is_some(), "--memory-snapshot (submit writes one)"),
        (s.detach, "--detach (the jobs are detached already)"),
        (s.common.tui, "--tui (watch it with rgd, whose home screen shows the sweep)"),
        (
            s.common.out.is_some(),
            "--out (export the merged run: rgd runs export ID --out DIR)",
        ),
        (
            s.common.breakpoints.is_some() || s.common.control.is_some(),
            "--break/--control (no one answers a batch job)",
        ),
    ];
    if let Some((_, what)) = unfit.iter().find(|(given, _)| *given) {
        bail!("rgd slurm submit does not take {what}");
    }
    let id = args.job.name.clone().unwrap_or_else(|| ulid::Ulid::generate().to_string());
    anyhow::ensure!(
        !SlurmSweep::path(home, &id).exists() && !home.run_dir(&id).exists(),
        "a sweep or run {id} exists already; choose another --name"
    );
    let state_dir = args.job.state_dir.clone().unwrap_or_else(|| SlurmSweep::dir(home).join(&id));
    let absolute = |p: PathBuf| std::path::absolute(&p).with_context(|| p.display().to_string());
    let state_dir = absolute(state_dir)?;

    // The command line of `rgd slurm submit`, split at the subcommand: the flags before it
    // (global ones) and the sweep's flags after it, minus submit's own.
    let relaunch = super::relaunch::relaunch(std::env::args().skip(1), &["--dry-run"], &SUBMIT_VALUED);
    let words = relaunch.args;
    let at = words
        .windows(2)
        .position(|w| w[0] == "slurm" && w[1] == "submit")
        .context("cannot find `slurm submit` in the command line")?;
    let memory = !s.common.no_memory;
    let snapshot = memory.then(|| state_dir.join(pool::SNAPSHOT_FILE));
    let spec = args.job.spec(
        home,
        &id,
        &state_dir,
        words[..at].to_vec(),
        Work::Sweep {
            args: words[at + 2..].to_vec(),
            snapshot: snapshot.clone(),
        },
    )?;
    let indexes: Vec<u32> = (0..spec.shards).collect();
    if args.job.dry_run {
        return dry_run(&spec, &indexes);
    }
    let (array, merge) = spec.write()?;
    if let Some(file) = &snapshot {
        let n = pool::write_snapshot(home, file, &super::stderr_line)?;
        eprintln!("memory: every shard starts from a snapshot of the pool ({n} entries)");
    }
    let env: Vec<(String, String)> = relaunch.env.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let submission = slurm::submit(&array, &merge, &indexes, spec.shards, &env)?;
    let record = SlurmSweep {
        id: id.clone(),
        shards: spec.shards,
        created_at: chrono::Utc::now(),
        state_dir: state_dir.clone(),
        sweep_args: crate::secrets::redact_args(&words[at + 2..]),
        submissions: vec![submission.clone()],
    };
    record.save(home)?;
    println!(
        "submitted sweep {id}: shards job {} (array {}), merge job {} (after all shards)",
        submission.array_job,
        slurm::array_range(&indexes, spec.shards),
        submission.merge_job
    );
    println!(
        "shard runs {}..{}, merged run {id}; scripts and logs in {}",
        record.shard_run_id(0),
        record.shard_run_id(spec.shards - 1),
        state_dir.display()
    );
    println!("follow it with `rgd slurm status {id}` (or in rgd's home screen)");
    Ok(ExitCode::SUCCESS)
}

fn resubmit(home: &Home, id: &str, dry_run: bool) -> anyhow::Result<ExitCode> {
    let mut sweep = SlurmSweep::load(home, id)?;
    let status = slurm::status(home, &sweep);
    if let Some(e) = &status.queue_error {
        bail!("cannot tell which shards are still queued or running ({e})");
    }
    let failed: Vec<u32> = status
        .shards
        .iter()
        .filter(|s| s.state == ShardState::Failed)
        .map(|s| s.index)
        .collect();
    if failed.is_empty() {
        println!("nothing to resubmit: every shard of {id} is queued, running or done");
        return Ok(ExitCode::SUCCESS);
    }
    let range = slurm::array_range(&failed, sweep.shards);
    let (array, merge) = (sweep.state_dir.join("shards.sbatch"), sweep.state_dir.join("merge.sbatch"));
    if dry_run {
        println!("would run: sbatch --parsable --array={range} {}", array.display());
        println!("then:      sbatch --parsable --dependency=afterany:<array job> {}", merge.display());
        return Ok(ExitCode::SUCCESS);
    }
    let submission = slurm::submit(&array, &merge, &failed, sweep.shards, &[])?;
    println!(
        "resubmitted shards {range} of {id}: job {}, merge job {}",
        submission.array_job, submission.merge_job
    );
    sweep.submissions.push(submission);
    sweep.save(home)?;
    Ok(ExitCode::SUCCESS)
}

fn print_status(status: &SweepStatus, detailed: bool) {
    super::print_lines(status.lines(detailed));
}
