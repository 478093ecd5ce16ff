//! `rgd compare RUN_A RUN_B [...]`: the runs side by side, each against the first.

use std::process::ExitCode;

use clap::Args;

use crate::analysis::{RunData, compare, render};
use crate::dataset::{DEFAULT_SPLIT_SEED, LoadedDataset, load_dataset, resolve_dataset};
use crate::plus::rejudge::rejudge;
use crate::sandbox::{SandboxKind, make_executor};
use crate::store::Home;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more run ids (unique prefixes); each is compared with the first
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// One JSON object with every number, for scripts
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub plus: PlusArgs,
}

/// `--plus`: the runs judged again on a plus dataset's tests.
#[derive(Debug, clap::Args)]
pub struct PlusArgs {
    /// Also judge each run's final programs on the hidden tests of its dataset's plus version
    /// (`humaneval` -> `humaneval-plus`): no new model call, the verdicts are kept in the run
    #[arg(long)]
    pub plus: bool,
    /// The plus dataset to judge on, instead of `<the run's dataset>-plus` (implies --plus)
    #[arg(long, value_name = "DATASET")]
    pub plus_dataset: Option<String>,
}

impl PlusArgs {
    /// Adds the plus column to each run that has a plus dataset; a run that has none is said and
    /// left without one.
    pub async fn judge(&self, home: &Home, data_dir: Option<&std::path::Path>, runs: &mut [RunData]) -> anyhow::Result<()> {
        if !self.plus && self.plus_dataset.is_none() {
            return Ok(());
        }
        let mut executor = None;
        // Each plus dataset loaded once, however many runs are judged on it (an experiment's).
        let mut loaded: std::collections::HashMap<String, LoadedDataset> = std::collections::HashMap::new();
        for run in runs.iter_mut() {
            let name = match &self.plus_dataset {
                None => crate::plus::rejudge::plus_name_of(&run.manifest.dataset.name),
                Some(named) => named.clone(),
            };
            if !loaded.contains_key(&name) {
                match resolve_dataset(&name, data_dir).and_then(|(n, path)| load_dataset(&n, &path, DEFAULT_SPLIT_SEED)) {
                    Ok(plus) => {
                        loaded.insert(name.clone(), plus);
                    }
                    Err(e) if self.plus_dataset.is_none() => {
                        eprintln!("run {}: no plus dataset ({e})", run.manifest.run_id);
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            let plus = &loaded[&name];
            let executor = match &executor {
                Some(e) => std::sync::Arc::clone(e),
                None => executor
                    .insert(make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}"))?)
                    .clone(),
            };
            run.plus = Some(rejudge(home, run, plus, executor, crate::sandbox::cores()).await?);
        }
        Ok(())
    }
}

pub async fn execute(home: &Home, data_dir: Option<&std::path::Path>, args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut runs = args
        .runs
        .iter()
        .map(|r| RunData::load(home, r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    args.plus.judge(home, data_dir, &mut runs).await?;
    let comparison = compare(&runs)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", render(&comparison));
    }
    Ok(ExitCode::SUCCESS)
}
