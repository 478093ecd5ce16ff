//! How `rgd slurm` submits a job array (`submit` for a sweep, `bench-real` for a benchmark): the
//! Slurm flags both take, the scripts' description from them, and `--dry-run`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::cluster::slurm::{self, ScriptSpec, Work};
use crate::store::Home;

/// How a job array is submitted (`rgd slurm submit`, `rgd slurm bench-real`).
#[derive(Debug, Args)]
pub struct JobArgs {
    /// How many shards (array elements)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub shards: usize,
    /// Slurm partition
    #[arg(long, value_parser = crate::validate::parse_sbatch_word)]
    pub partition: Option<String>,
    /// Time limit of each shard (Slurm's format: MM, HH:MM:SS, D-HH)
    #[arg(long, value_parser = crate::validate::parse_sbatch_word)]
    pub time: Option<String>,
    /// CPUs each shard gets (Slurm's --cpus-per-task; --concurrency still sets tasks at once)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub cpus_per_task: Option<u32>,
    /// Another #SBATCH line for both jobs, e.g. --sbatch-arg=--mem=8G (repeatable)
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// Where the scripts, logs and the memory snapshot go ($RGD_HOME/slurm/ID by default); on a
    /// cluster, a directory every node sees
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// The sweep's id (the merged run's; shard K is ID-sK); a new one otherwise
    #[arg(long, value_parser = crate::validate::parse_run_id)]
    pub name: Option<String>,
    /// Print the scripts and the sbatch commands; submit nothing
    #[arg(long)]
    pub dry_run: bool,
}

impl JobArgs {
    /// The scripts' description for `work`, submitted as the job array `id`.
    pub fn spec(
        &self,
        home: &Home,
        id: &str,
        state_dir: &std::path::Path,
        global_args: Vec<String>,
        work: Work,
    ) -> anyhow::Result<ScriptSpec> {
        let absolute = |p: PathBuf| std::path::absolute(&p).with_context(|| p.display().to_string());
        Ok(ScriptSpec {
            id: id.to_string(),
            shards: self.shards as u32,
            partition: self.partition.clone(),
            time: self.time.clone(),
            cpus_per_task: self.cpus_per_task,
            sbatch_args: self.sbatch_args.clone(),
            state_dir: state_dir.to_path_buf(),
            rgd: std::env::current_exe().context("finding the rgd binary")?,
            rgd_home: absolute(home.root.clone())?,
            workdir: std::env::current_dir()?,
            global_args,
            work,
        })
    }
}

/// `--dry-run`: both scripts and the sbatch commands that would submit them.
pub fn dry_run(spec: &ScriptSpec, indexes: &[u32]) -> anyhow::Result<ExitCode> {
    let dir = &spec.state_dir;
    println!("# {}\n{}", dir.join("shards.sbatch").display(), spec.array_script()?);
    println!("# {}\n{}", dir.join("merge.sbatch").display(), spec.merge_script()?);
    println!(
        "# would run: sbatch --parsable --array={} {}",
        slurm::array_range(indexes, spec.shards),
        dir.join("shards.sbatch").display()
    );
    println!(
        "# then:      sbatch --parsable --dependency=afterany:<array job> {}",
        dir.join("merge.sbatch").display()
    );
    Ok(ExitCode::SUCCESS)
}
