//! Flags the dataset commands share (`rgd datasets verify`, `plus`, `limits`).

use std::path::Path;

use crate::dataset::{DEFAULT_SPLIT_SEED, LoadedDataset, load_dataset, resolve_dataset};

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

impl Tasks {
    /// The dataset, its tasks cut to `--limit`.
    pub fn load(&self, data_dir: Option<&Path>) -> anyhow::Result<LoadedDataset> {
        let (name, path) = resolve_dataset(&self.name, data_dir)?;
        let mut ds = load_dataset(&name, &path, self.split_seed)?;
        if let Some(n) = self.limit {
            ds.tasks.truncate(n);
        }
        Ok(ds)
    }
}
