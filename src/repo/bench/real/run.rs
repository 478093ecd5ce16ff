//! `rgd bench real`'s measurement as a library: the instances of a set chosen, each located in a
//! copy of its release with the faulty function put back and, given a repairer, repaired there;
//! each result appended to the results file as it comes, so a bench killed at any point resumes
//! from it losing at most the instance it was on.

use anyhow::Context;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::measure::{Fixing, Measured, faulty_copy, judge_fix, key, locate};
use super::{Instance, from_jsonl, pypi};
use crate::repo::fix::record::FixRecord;
use crate::repo::locate::localise::Localisation;
use crate::repo::run::testrun::ProjectTests;

/// The list compiled into rgd (`assets/real/instances.jsonl`).
const SHIPPED: &str = include_str!("../../../../assets/real/instances.jsonl");

/// The shipped instances, or those of `file`.
pub fn instances(file: Option<&Path>) -> anyhow::Result<Vec<Instance>> {
    match file {
        None => from_jsonl(SHIPPED, "assets/real/instances.jsonl"),
        Some(f) => from_jsonl(
            &std::fs::read_to_string(f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?,
            &f.display().to_string(),
        ),
    }
}

/// `n` instances spread evenly over `chosen` (all of them when `n` is none or not fewer).
pub fn spread(chosen: Vec<Instance>, n: Option<usize>) -> Vec<Instance> {
    match n {
        Some(n) if n < chosen.len() => {
            let step = chosen.len() as f64 / n as f64;
            (0..n).map(|k| chosen[(k as f64 * step) as usize].clone()).collect()
        }
        _ => chosen,
    }
}

/// The instances of `all` in the tuning or the held-out set, of `projects` (all when none), at most
/// `limit` of them spread evenly over the rest.
pub fn choose(all: Vec<Instance>, held_out: bool, projects: &[String], limit: Option<usize>) -> Vec<Instance> {
    let chosen: Vec<Instance> = all
        .into_iter()
        .filter(|i| super::measure::held_out(i) == held_out)
        .filter(|i| projects.is_empty() || projects.contains(&i.project))
        .collect();
    spread(chosen, limit)
}

/// One instance of each project of `chosen`, the one from its newest release (the newer of a
/// pair, by release number): where `rgd bench verdicts --isolation --real-bugs` runs the
/// project's suite. By project name.
pub fn newest_releases(chosen: &[Instance]) -> Vec<&Instance> {
    let mut newest: std::collections::BTreeMap<&str, &Instance> = std::collections::BTreeMap::new();
    for i in chosen {
        let kept = newest.entry(&i.project).or_insert(i);
        if release_number(&i.versions[1]) > release_number(&kept.versions[1]) {
            *kept = i;
        }
    }
    newest.into_values().collect()
}

/// A release's parts in order, each its leading number and the rest (`3.10.1` after `3.9`).
fn release_number(version: &str) -> Vec<(u64, &str)> {
    version
        .split(['.', '-', '+'])
        .map(|part| {
            let digits = part.len() - part.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (part[..digits].parse().unwrap_or(0), &part[digits..])
        })
        .collect()
}

/// What repairs a located instance (`rgd fix` on the oracle or a model, from the command).
#[allow(async_fn_in_trait)]
pub trait Repairer {
    /// The model named in the results.
    fn model(&self) -> &str;
    /// Repairs the faulty `copy` of `i`'s release, its suite run by `python`, from `found`: the
    /// localisation just measured, so it is not run twice. `released` is the fix as released.
    async fn repair(&self, copy: &Path, i: &Instance, released: &str, python: &Path, found: Localisation) -> anyhow::Result<FixRecord>;
}

/// Where a measurement tells how it goes (a progress bar, or nothing).
pub trait Progress {
    /// Starts with `total` instances, `done` of them measured before (resumed).
    fn start(&self, total: usize, done: usize);
    /// The instance now measured.
    fn at(&self, what: &str);
    /// A line for the user.
    fn say(&self, line: &str);
    /// One more instance measured.
    fn advanced(&self);
}

/// One measurement of a chosen list.
pub struct Bench<'a> {
    /// The cache of releases and venvs (`HOME/bench/real`).
    pub cache: &'a Path,
    /// The interpreter given for the suites (`--python`, else `$RGD_PYTHON`), else each release's
    /// venv.
    pub python: Option<&'a Path>,
    /// Where each instance's whole ranking is written, if anywhere.
    pub rankings: Option<&'a Path>,
    /// The results file; with `resume` its results stand and their instances are not measured
    /// again, else it is started anew.
    pub results: PathBuf,
    pub resume: bool,
}

/// Where a results file goes when a run starts anew: `FILE.previous` (one generation kept).
fn previous(results: &Path) -> PathBuf {
    let mut name = results.as_os_str().to_owned();
    name.push(".previous");
    PathBuf::from(name)
}

impl Bench<'_> {
    /// Measures `chosen` (repairing with `repairer`, if any): every result, old and new.
    pub async fn run<R: Repairer>(
        &self,
        chosen: &[Instance],
        repairer: Option<&R>,
        progress: &dyn Progress,
    ) -> anyhow::Result<Vec<Measured>> {
        let mut results: Vec<Measured> = Vec::new();
        if self.resume {
            if let Ok(text) = std::fs::read_to_string(&self.results) {
                // A line cut by a kill is the one instance measured again.
                results = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            }
        } else if std::fs::metadata(&self.results).is_ok_and(|m| m.len() > 0) {
            // Started anew, but what an earlier run measured (hours, perhaps) is kept aside, not
            // lost to a forgotten `--resume`.
            let kept = previous(&self.results);
            std::fs::rename(&self.results, &kept).with_context(|| format!("cannot move {} aside", self.results.display()))?;
            progress.say(&format!(
                "started anew (no --resume): the earlier results are in {}",
                kept.display()
            ));
        }
        let keys: HashSet<String> = chosen.iter().map(key).collect();
        results.retain(|m| keys.contains(&m.key));
        let done: HashSet<String> = results.iter().map(|m| m.key.clone()).collect();
        let todo: Vec<&Instance> = chosen.iter().filter(|i| !done.contains(&key(i))).collect();
        let mut runners: HashMap<String, ProjectTests> = HashMap::new();
        progress.start(chosen.len(), results.len());
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.results)?;
        for i in todo {
            progress.at(&format!("{} {}", i.project, i.function));
            // One interpreter per release: the venv holds what that release names for its tests
            // (reused as it is while the requirements stay the same, as the harvest does per pair).
            let release = format!("{} {}", i.project, i.versions[1]);
            if !runners.contains_key(&release) {
                let runner = tokio::task::block_in_place(|| -> anyhow::Result<_> {
                    let (tree, _) = pypi::sdist(self.cache, &i.project, &i.versions[1])?;
                    super::venv::suite_runner(self.cache, self.python, &i.project, &tree, &|l| progress.say(l))
                });
                match runner {
                    Ok(r) => {
                        runners.insert(release.clone(), r);
                    }
                    Err(e) => progress.say(&format!("{release}: no interpreter for its suite: {e:#}")),
                }
            }
            let m = match runners.get(&release) {
                Some(runner) => self.one(runner, repairer, i).await,
                None => Measured::failed(i, "no interpreter for its suite (said above)".into(), 0.0),
            };
            if let Some(f) = &m.fix {
                progress.say(&format!("{}: {}", m.key, f.line()));
            }
            std::io::Write::write_all(&mut file, format!("{}\n", serde_json::to_string(&m)?).as_bytes())?;
            file.sync_data()?;
            results.push(m);
            progress.advanced();
        }
        Ok(results)
    }

    /// One instance: located in a copy of its release with the faulty function put back, then
    /// (with a repairer) repaired in that same copy and judged on the release's whole suite.
    async fn one<R: Repairer>(&self, runner: &ProjectTests, repairer: Option<&R>, i: &Instance) -> Measured {
        let started = std::time::Instant::now();
        let (copy, released) = match tokio::task::block_in_place(|| faulty_copy(self.cache, i)) {
            Ok(made) => made,
            Err(e) => return Measured::failed(i, format!("{e:#}"), started.elapsed().as_secs_f64()),
        };
        let (mut m, found) = tokio::task::block_in_place(|| locate(copy.path(), runner, i, started, self.rankings));
        let (Some(repairer), Some(found)) = (repairer, found) else {
            return m;
        };
        let fixing = std::time::Instant::now();
        let mut f = match repairer.repair(copy.path(), i, &released, runner.python(), found).await {
            Ok(record) => tokio::task::block_in_place(|| judged(copy.path(), runner, i, &released, &record)),
            Err(e) => Fixing {
                error: Some(format!("{e:#}")),
                ..Fixing::default()
            },
        };
        f.model = repairer.model().to_string();
        f.seconds = fixing.elapsed().as_secs_f64();
        m.fix = Some(f);
        m
    }
}

/// A repair's record judged on the release's whole suite, with what it cost.
fn judged(copy: &Path, runner: &ProjectTests, i: &Instance, released: &str, record: &FixRecord) -> Fixing {
    let changes: Vec<(String, String)> = record.changes.iter().map(|c| (c.file.clone(), c.after.clone())).collect();
    let mut f = judge_fix(copy, runner, i, released, record.fixed_by.as_deref(), &changes);
    f.attempts = record.tried.len();
    f.runs = record
        .tried
        .iter()
        .filter(|t| !t.run_id.is_empty())
        .map(|t| t.run_id.clone())
        .collect();
    let fixed_by = record.fixed_by.as_deref().unwrap_or_default();
    f.in_process = record
        .tried
        .iter()
        .filter(|t| fixed_by.contains(&t.target))
        .find_map(|t| t.in_process.clone());
    f.calls = record.tried.iter().map(|t| t.calls).sum();
    f.tokens = record.tried.iter().map(|t| t.tokens).sum();
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(project: &str, older: &str, newer: &str) -> Instance {
        Instance {
            project: project.to_string(),
            versions: [older.to_string(), newer.to_string()],
            sdists: [String::new(), String::new()],
            file: "m.py".to_string(),
            function: "f".to_string(),
            line: 1,
            red_tests: Vec::new(),
            suite: 1,
            covering: 1,
            faulty: String::new(),
            fixed: String::new(),
        }
    }

    #[test]
    fn each_project_is_taken_at_its_newest_release_by_number_not_by_text_or_list_order() {
        let list = [
            of("markdown", "3.10", "3.10.1"),
            of("markdown", "3.8", "3.9"),
            of("idna", "3.11", "3.12"),
            of("idna", "3.9", "3.10"),
            of("click", "8.2.0", "8.2.1"),
        ];
        let newest: Vec<(&str, &str)> = newest_releases(&list)
            .into_iter()
            .map(|i| (i.project.as_str(), i.versions[1].as_str()))
            .collect();
        assert_eq!(newest, [("click", "8.2.1"), ("idna", "3.12"), ("markdown", "3.10.1")]);
    }
}
