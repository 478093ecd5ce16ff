//! A recorded run judged again on a plus dataset's hidden tests (`rgd compare --plus`, `rgd
//! report --plus`): each task the run solved has its final program run against the plus tests.
//! No model is called; the programs are the ones the run recorded. Verdicts are kept in the run's
//! directory (`plus/<dataset sha256>.json`), so a second report does not run them again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use futures::StreamExt;

use crate::analysis::{PlusColumn, RunData};
use crate::dataset::{LoadedDataset, Task, load_dataset, resolve_dataset};
use crate::sandbox::{Executor, Limits};
use crate::store::Home;

/// The plus dataset a run's dataset has in the catalog (`humaneval` -> `humaneval-plus`).
pub fn plus_name_of(dataset: &str) -> String {
    format!("{dataset}-plus")
}

/// Judges `run`'s solved tasks on `plus` (which must extend the run's own dataset: the same
/// visible tests, and the run's hidden tests first among its hidden ones).
pub async fn rejudge(
    home: &Home,
    run: &RunData,
    plus: &LoadedDataset,
    executor: Arc<dyn Executor>,
    parallel: usize,
) -> anyhow::Result<PlusColumn> {
    let base = run_dataset(run)?;
    let plus_tasks: BTreeMap<&str, &Task> = plus.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let selected = &run.manifest.dataset.selected;
    for id in selected {
        let (Some(b), Some(p)) = (base.tasks.iter().find(|t| &t.id == id), plus_tasks.get(id.as_str())) else {
            bail!("{} has no task {id} of run {}'s dataset", plus.name, run.manifest.run_id);
        };
        if b.visible != p.visible || !p.hidden.starts_with(&b.hidden) {
            bail!(
                "{} does not extend run {}'s dataset ({}): task {id} has other visible tests or does not keep its hidden ones",
                plus.name,
                run.manifest.run_id,
                run.manifest.dataset.name
            );
        }
    }
    let cache_path = cache_path(home, &run.manifest.run_id, &plus.sha256);
    let mut verdicts: BTreeMap<String, bool> = std::fs::read_to_string(&cache_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let limits = Arc::new(Limits::default().with_measured(plus, selected.iter().map(String::as_str)));
    let to_judge: Vec<(String, Task, String)> = selected
        .iter()
        .filter(|id| !verdicts.contains_key(*id))
        .filter_map(|id| {
            let r = run.results.get(id).filter(|r| r.solved_by_method())?;
            Some((id.clone(), (*plus_tasks.get(id.as_str())?).clone(), r.completion.clone()))
        })
        .collect();
    let judged: Vec<(String, bool)> = futures::stream::iter(to_judge)
        .map(|(id, task, program)| {
            let (executor, limits) = (executor.clone(), limits.clone());
            tokio::spawn(async move {
                let limits = limits.for_task(&id);
                let passed = super::run_hidden(&*executor, &task, &program, &limits)
                    .await
                    .is_ok_and(|r| r.all_passed());
                (id, passed)
            })
        })
        .buffer_unordered(parallel.max(1))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .context("a program's judging stopped")?;
    if !judged.is_empty() {
        verdicts.extend(judged);
        let dir = cache_path.parent().context("no run directory")?;
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        crate::store::write_json_atomically(&cache_path, &verdicts)?;
    }
    Ok(PlusColumn {
        dataset: plus.name.clone(),
        sha256: plus.sha256.clone(),
        passed: selected
            .iter()
            .filter(|id| run.results.get(*id).is_some_and(|r| r.solved_by_method()) && verdicts.get(*id) == Some(&true))
            .cloned()
            .collect(),
    })
}

/// The run's own dataset, as it was: by its recorded path, else by its name (the same bytes).
fn run_dataset(run: &RunData) -> anyhow::Result<LoadedDataset> {
    let d = &run.manifest.dataset;
    let seed = d.split_seed.unwrap_or(crate::dataset::DEFAULT_SPLIT_SEED);
    let path = if Path::new(&d.path).is_file() {
        PathBuf::from(&d.path)
    } else {
        resolve_dataset(&d.name, None)?.1
    };
    let loaded = load_dataset(&d.name, &path, seed)?;
    if loaded.sha256 != d.sha256 {
        bail!(
            "run {}'s dataset {} is not the file it ran on any more (sha256 {}, then {})",
            run.manifest.run_id,
            path.display(),
            &loaded.sha256[..12],
            d.sha256.get(..12).unwrap_or(&d.sha256)
        );
    }
    Ok(loaded)
}

fn cache_path(home: &Home, run_id: &str, sha256: &str) -> PathBuf {
    home.run_dir(run_id)
        .join("plus")
        .join(format!("{}.json", &sha256[..sha256.len().min(16)]))
}

/// Adds the plus column to each of `runs`: judged on `named`, else on its dataset's plus version
/// (`humaneval` -> `humaneval-plus`); a run whose dataset has no plus version is said and left
/// without one. Each plus dataset is loaded once, however many runs are judged on it.
pub async fn judge_runs(home: &Home, data_dir: Option<&Path>, runs: &mut [RunData], named: Option<&str>) -> anyhow::Result<()> {
    let mut executor: Option<Arc<dyn Executor>> = None;
    let mut loaded: std::collections::HashMap<String, LoadedDataset> = std::collections::HashMap::new();
    for run in runs.iter_mut() {
        let name = match named {
            None => plus_name_of(&run.manifest.dataset.name),
            Some(named) => named.to_string(),
        };
        if !loaded.contains_key(&name) {
            match resolve_dataset(&name, data_dir).and_then(|(n, path)| load_dataset(&n, &path, crate::dataset::DEFAULT_SPLIT_SEED)) {
                Ok(plus) => {
                    loaded.insert(name.clone(), plus);
                }
                Err(e) if named.is_none() => {
                    eprintln!("run {}: no plus dataset ({e})", run.manifest.run_id);
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        }
        let plus = &loaded[&name];
        let executor = match &executor {
            Some(e) => Arc::clone(e),
            None => executor
                .insert(crate::sandbox::make_executor(crate::sandbox::SandboxKind::Wasm, &|line| {
                    eprintln!("{line}")
                })?)
                .clone(),
        };
        run.plus = Some(rejudge(home, run, plus, executor, crate::sandbox::cores()).await?);
    }
    Ok(())
}
