//! `rgd bench real`: real regressions from consecutive releases of a project. For a function the
//! newer release changed, the newer release with only that function put back as the older release
//! had it is a real bug whose fix is known (the newer body): the newer release's tests that go red
//! are its report. Harvested from sdists on PyPI (`pypi.rs`) or from two source trees, with the
//! project's own suite run by rgd's plugin and confinement (`harvest.rs`).

pub mod git;
pub mod harvest;
pub mod measure;
pub mod oracle;
pub mod pypi;
pub mod releases;
pub mod run;
pub mod shards;
pub mod venv;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One real regression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub project: String,
    /// The older release (the faulty function's) and the newer (the fix's).
    pub versions: [String; 2],
    /// sha256 of each release's sdist (empty for a source tree given by path).
    pub sdists: [String; 2],
    /// The module, relative to the project's root, and the function (`name`, `Class.name`).
    pub file: String,
    pub function: String,
    /// 1-based line of the newer release's `def`.
    pub line: usize,
    /// Tests green on the newer release (twice) that the older function turns red (twice alike).
    pub red_tests: Vec<String>,
    /// Tests green on the newer release twice: the regression suite.
    pub suite: usize,
    /// Of those, the tests that enter the function: the ones run for it.
    pub covering: usize,
    /// The whole definition as the older release has it (the bug) and as the newer has it (the fix).
    pub faulty: String,
    pub fixed: String,
}

/// What one pair of releases gave: the instances, and every changed function left out, counted
/// by why.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Harvested {
    pub project: String,
    pub versions: [String; 2],
    /// Functions both releases define whose code differs.
    pub changed: usize,
    pub instances: Vec<Instance>,
    pub dropped: BTreeMap<String, usize>,
    /// Tests the newer release collects, and those green twice; its test modules that do not
    /// collect (left out).
    pub collected: usize,
    #[serde(default)]
    pub uncollected: usize,
    /// Each test module that did not collect, with its error's first line.
    #[serde(default)]
    pub not_collecting: Vec<(String, String)>,
    /// The packages those modules could not import (`No module named ...`): the test
    /// dependencies the interpreter lacks, by name.
    #[serde(default)]
    pub missing: Vec<String>,
    pub suite: usize,
    pub seconds: f64,
}

impl Harvested {
    /// One line: what the pair gave and why the rest was left out.
    pub fn line(&self) -> String {
        let dropped: Vec<String> = self.dropped.iter().map(|(why, n)| format!("{n} {why}")).collect();
        format!(
            "{} {} -> {}: {} changed functions, {} instances ({} tests green twice of {} collected{}) in {:.0}s{}",
            self.project,
            self.versions[0],
            self.versions[1],
            self.changed,
            self.instances.len(),
            self.suite,
            self.collected,
            if self.uncollected > 0 {
                format!(", {} test modules not collecting", self.uncollected)
            } else {
                String::new()
            },
            self.seconds,
            if dropped.is_empty() {
                String::new()
            } else {
                format!("; left out: {}", dropped.join(", "))
            }
        ) + &self.collection_note()
    }

    /// What did not collect and why, when anything did not: the modules and the missing packages.
    fn collection_note(&self) -> String {
        let Some((module, first)) = self.not_collecting.first() else {
            return String::new();
        };
        format!(
            "; not collecting: {module} ({first}){}{}",
            match self.not_collecting.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            },
            missing_note(&self.missing)
        )
    }
}

/// Instances as JSON lines (one per line), in a stable order: harvesting again writes the same.
pub fn to_jsonl(instances: &[Instance]) -> anyhow::Result<String> {
    let mut sorted: Vec<&Instance> = instances.iter().collect();
    sorted.sort_by(|a, b| (&a.project, &a.versions, &a.file, &a.function).cmp(&(&b.project, &b.versions, &b.file, &b.function)));
    let mut out = String::new();
    for i in sorted {
        out.push_str(&serde_json::to_string(i)?);
        out.push('\n');
    }
    Ok(out)
}

/// Instances from JSON lines; a line that is not one is named by `origin` and line.
pub fn from_jsonl(text: &str, origin: &str) -> anyhow::Result<Vec<Instance>> {
    use anyhow::Context;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("{origin}:{}: not an instance", i + 1)))
        .collect()
}

/// `; missing test dependencies: a, b`, or nothing when none is missing.
pub fn missing_note(missing: &[String]) -> String {
    match missing.is_empty() {
        true => String::new(),
        false => format!("; missing test dependencies: {}", missing.join(", ")),
    }
}

/// The packages collection errors name as missing (`No module named 'yaml'` -> `yaml`), sorted,
/// each once.
pub fn missing_packages<'a>(errors: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = errors
        .into_iter()
        .flat_map(|e| {
            e.split("No module named ").skip(1).map(|rest| {
                rest.trim_start_matches(['\'', '"'])
                    .split(['\'', '"'])
                    .next()
                    .unwrap_or("")
                    .split('.')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
        })
        .filter(|n| !n.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}
