//! Flags the dataset commands share (`rgd datasets verify`, `rgd datasets plus`).

use crate::dataset::DEFAULT_SPLIT_SEED;

/// Which tasks of which dataset a command works on, and how many at once.
#[derive(Debug, clap::Args)]
pub struct Tasks {
    /// Dataset name or JSONL path
    pub name: String,
    /// Only the first N tasks
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub limit: Option<usize>,
    /// Tasks worked on at once (default: one per core)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub concurrency: Option<usize>,
    #[arg(long, default_value_t = DEFAULT_SPLIT_SEED)]
    pub split_seed: u64,
}
