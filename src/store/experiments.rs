//! Experiments: a matrix of runs (datasets x models x strategies, and RGD's ablations) kept as one
//! record in `$RGD_HOME/experiments/ID.json`, naming the run of each cell. A cell's run id is
//! written before its run starts, so an experiment killed at any point resumes each cell's run
//! instead of starting another.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::status::write_json_atomically;
use super::{Home, StoreError};

/// What an experiment runs: from flags, or from a TOML file of the same fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    #[serde(default)]
    pub name: String,
    pub datasets: Vec<String>,
    pub strategies: Vec<String>,
    /// Models to run every cell with (empty: the configured model).
    #[serde(default)]
    pub models: Vec<String>,
    /// Add RGD without memory, without the Guide and without the Feedback agent (Table II).
    #[serde(default)]
    pub ablations: bool,
    #[serde(default)]
    pub concurrency: Option<usize>,
    #[serde(default)]
    pub max_iters: Option<u32>,
    /// Only the first N tasks of each dataset.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Without the tasks each dataset lists as broken in the data.
    #[serde(default)]
    pub exclude_broken: bool,
    /// Every run lets its Feedback agent say a visible test contradicts the specification.
    #[serde(default)]
    pub allow_flag: bool,
}

/// One run of the matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    pub dataset: String,
    pub strategy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// "no-memory", "no-guide" or "no-feedback" (RGD only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablation: Option<String>,
    /// Its run, once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl Cell {
    /// "humaneval rgd no-guide (model m)".
    pub fn label(&self) -> String {
        let mut s = format!("{} {}", self.dataset, self.strategy);
        if let Some(a) = &self.ablation {
            s.push(' ');
            s.push_str(a);
        }
        if let Some(m) = &self.model {
            s.push_str(&format!(" ({m})"));
        }
        s
    }
}

pub const ABLATIONS: [&str; 3] = ["no-memory", "no-guide", "no-feedback"];

impl ExperimentSpec {
    /// Every cell: per dataset and model, each strategy, then RGD's ablations.
    pub fn cells(&self) -> Vec<Cell> {
        let models: Vec<Option<String>> = if self.models.is_empty() {
            vec![None]
        } else {
            self.models.iter().cloned().map(Some).collect()
        };
        let mut cells = Vec::new();
        for dataset in &self.datasets {
            for model in &models {
                let cell = |strategy: &str, ablation: Option<&str>| Cell {
                    dataset: dataset.clone(),
                    strategy: strategy.to_string(),
                    model: model.clone(),
                    ablation: ablation.map(str::to_string),
                    run_id: None,
                };
                cells.extend(self.strategies.iter().map(|s| cell(s, None)));
                if self.ablations {
                    cells.extend(ABLATIONS.iter().map(|a| cell("rgd", Some(a))));
                }
            }
        }
        cells
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExperimentRecord {
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub spec: ExperimentSpec,
    pub cells: Vec<Cell>,
}

impl Home {
    pub fn experiments_dir(&self) -> PathBuf {
        self.root.join("experiments")
    }

    /// Experiment ids, newest first.
    pub fn experiment_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.experiments_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_string_lossy().strip_suffix(".json").map(str::to_string))
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids
    }

    /// An experiment by id or unique prefix.
    pub fn load_experiment(&self, prefix: &str) -> Result<ExperimentRecord, StoreError> {
        let matches: Vec<String> = self.experiment_ids().into_iter().filter(|id| id.starts_with(prefix)).collect();
        let [id] = matches.as_slice() else {
            return Err(StoreError::NoSuchExperiment(
                prefix.into(),
                self.experiments_dir().display().to_string(),
            ));
        };
        let path = self.experiments_dir().join(format!("{id}.json"));
        let text = std::fs::read_to_string(&path).map_err(|source| StoreError::Io {
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))
    }

    pub fn save_experiment(&self, record: &ExperimentRecord) -> Result<(), StoreError> {
        let dir = self.experiments_dir();
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        write_json_atomically(&dir.join(format!("{}.json", record.id)), record)
    }
}

impl ExperimentSpec {
    /// The checks the command line's flags get, for a spec from a file too; `from` names where
    /// it came from in the error ("--" for flags, "FILE: " for a file).
    pub fn check(&self, from: &str) -> anyhow::Result<()> {
        let check = |name: &str, value: Option<usize>, max: usize| match value {
            Some(v) => crate::validate::count(v, 1, max)
                .map(|_| ())
                .map_err(|e| anyhow::anyhow!("{from}{name}: {e}")),
            None => Ok(()),
        };
        check("concurrency", self.concurrency, crate::validate::MAX_COUNT)?;
        check("limit", self.limit, usize::MAX)?;
        check("max_iters", self.max_iters.map(|n| n as usize), crate::validate::MAX_ITERS as usize)?;
        for s in &self.strategies {
            if crate::engine::Strategy::from_name(s).is_none() {
                let known: Vec<&str> = crate::engine::Strategy::ALL.iter().map(|s| s.name()).collect();
                anyhow::bail!("unknown strategy {s:?} (known: {})", known.join(", "));
            }
        }
        if self.datasets.is_empty() || self.strategies.is_empty() {
            anyhow::bail!("an experiment needs at least one dataset and one strategy");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_matrix_has_every_strategy_per_dataset_and_model_then_the_ablations() {
        let spec: super::ExperimentSpec = toml::from_str(
            "datasets = [\"humaneval\", \"mbpp\"]\nstrategies = [\"direct\", \"rgd\"]\nmodels = [\"a\", \"b\"]\nablations = true\n",
        )
        .unwrap();
        let cells = spec.cells();
        assert_eq!(cells.len(), 2 * 2 * (2 + 3));
        assert_eq!(cells[0].label(), "humaneval direct (a)");
        assert_eq!(cells[4].label(), "humaneval rgd no-feedback (a)");
        assert!(toml::from_str::<super::ExperimentSpec>("datasets = []\nstrategies = []\nmodel = \"x\"\n").is_err());
    }

    #[test]
    fn the_shipped_table1_describes_tables_one_and_two_on_both_ldb_datasets() {
        let spec: super::ExperimentSpec = toml::from_str(include_str!("../../assets/experiments/table1.toml")).unwrap();
        assert_eq!(spec.datasets, ["humaneval", "mbpp"]);
        for s in &spec.strategies {
            assert!(crate::engine::Strategy::from_name(s).is_some(), "{s}");
        }
        let cells = spec.cells();
        assert_eq!(cells.len(), 2 * (spec.strategies.len() + 3));
        assert_eq!(cells.iter().filter(|c| c.ablation.is_some()).count(), 6);
        for name in &spec.datasets {
            assert!(crate::dataset::resolve_dataset(name, None).is_ok(), "{name} is bundled");
        }
    }

    #[test]
    fn the_shipped_table_of_later_methods_names_known_strategies_and_bundled_datasets() {
        let spec: super::ExperimentSpec = toml::from_str(include_str!("../../assets/experiments/after_rgd.toml")).unwrap();
        for s in &spec.strategies {
            assert!(crate::engine::Strategy::from_name(s).is_some(), "{s}");
        }
        for method in ["rgd", "ldb", "codesim", "lpw", "mgdebugger"] {
            assert!(spec.strategies.iter().any(|s| s == method), "{method}");
        }
        for name in &spec.datasets {
            assert!(crate::dataset::resolve_dataset(name, None).is_ok(), "{name} is bundled");
        }
    }
}
