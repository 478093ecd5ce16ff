//! Sweeps beyond one machine: a sweep's shards (each an ordinary run, `rgd sweep --shard K/N`),
//! their merge into one run, the memory pool across shards, and Slurm (sbatch scripts for a job
//! array and its merge job, and the status of a submitted sweep). Slurm schedules; rgd only writes
//! scripts that call `rgd sweep --shard` and reads what the shards recorded.

mod merge;
pub mod pool;
pub mod slurm;

pub use merge::{MergeOptions, MergeReport, Prefer, merge_runs};
