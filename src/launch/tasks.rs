//! Which tasks a run works on.

use std::path::Path;

use anyhow::Context;

use crate::dataset::{LoadedDataset, Task, load_dataset, resolve_dataset};

/// The tasks a run works on, and the broken ones `--exclude-broken` left out of them.
pub struct Selected {
    pub tasks: Vec<Task>,
    /// Tasks listed as broken in the data that would otherwise have been selected (recorded in the
    /// manifest): not every broken task of the file, only those this selection dropped.
    pub excluded_broken: Vec<String>,
}

/// The tasks of a dataset named by id (all when none), at most `limit`; without those listed as
/// broken in the data when `exclude_broken` (before the limit: `--limit 10` still gives ten).
pub fn select_tasks(dataset: &LoadedDataset, ids: &[String], limit: Option<usize>, exclude_broken: bool) -> anyhow::Result<Selected> {
    let candidates: Vec<&Task> = if ids.is_empty() {
        dataset.tasks.iter().collect()
    } else {
        ids.iter()
            .map(|id| {
                dataset
                    .tasks
                    .iter()
                    .find(|t| &t.id == id)
                    .with_context(|| format!("no task {id:?} in {}", dataset.path.display()))
            })
            .collect::<anyhow::Result<_>>()?
    };
    let mut selected = Selected {
        tasks: Vec::new(),
        excluded_broken: Vec::new(),
    };
    for task in candidates {
        if limit.is_some_and(|n| selected.tasks.len() >= n) {
            break;
        }
        if exclude_broken && dataset.broken_reason(&task.id).is_some() {
            selected.excluded_broken.push(task.id.clone());
        } else {
            selected.tasks.push(task.clone());
        }
    }
    Ok(selected)
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
