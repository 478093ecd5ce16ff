//! Which tasks a run works on.

use std::path::Path;

use anyhow::Context;

use crate::dataset::{LoadedDataset, Task, load_dataset, resolve_dataset};

/// The tasks of a dataset named by id (all when none), at most `limit`; without those listed as
/// broken in the data when `exclude_broken` (before the limit: `--limit 10` still gives ten).
pub fn select_tasks(dataset: &LoadedDataset, ids: &[String], limit: Option<usize>, exclude_broken: bool) -> anyhow::Result<Vec<Task>> {
    let mut tasks: Vec<Task> = if ids.is_empty() {
        dataset.tasks.clone()
    } else {
        ids.iter()
            .map(|id| {
                dataset
                    .tasks
                    .iter()
                    .find(|t| &t.id == id)
                    .cloned()
                    .with_context(|| format!("no task {id:?} in {}", dataset.path.display()))
            })
            .collect::<anyhow::Result<_>>()?
    };
    if exclude_broken {
        tasks.retain(|t| dataset.broken_reason(&t.id).is_none());
    }
    if let Some(n) = limit {
        tasks.truncate(n);
    }
    Ok(tasks)
}

/// A dataset by catalog name or path; its loader's notes go to `report`.
pub fn load_dataset_named(name: &str, data_dir: Option<&Path>, seed: u64, report: &dyn Fn(&str)) -> anyhow::Result<LoadedDataset> {
    let (name, path) = resolve_dataset(name, data_dir)?;
    let dataset = load_dataset(&name, &path, seed)?;
    for note in &dataset.notes {
        report(&format!("note: {note}"));
    }
    Ok(dataset)
}
