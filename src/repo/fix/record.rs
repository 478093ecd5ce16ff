//! What `rgd fix` keeps of its attempts: each repair tried, the files the fix changes, and the
//! record written to the state directory's `fix/` (and printed with `--json`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::event::FixEvent;
use crate::repo::locate::Candidate;
use crate::repo::locate::localise::Localisation;
use crate::repo::run::testrun::copy_project;

/// One repair the agents tried.
#[derive(Debug, Clone, Serialize)]
pub struct Tried {
    /// The function repaired, and the one staged under it (a pair's first).
    pub target: String,
    pub on_top_of: Option<String>,
    pub run_id: String,
    /// "fixed", or why not.
    pub outcome: String,
    /// It passed every test, proven and run again (with `in_process`: unverified, and taken only
    /// under --allow-in-process).
    #[serde(default)]
    pub fixed: bool,
    /// Why the verdict that fixed it was reached in the tests' process (`--allow-in-process`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<String>,
    /// The model calls the attempt made, and their tokens (prompt and answer).
    pub calls: u32,
    pub tokens: u64,
}

/// A file the fix changes.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub file: String,
    pub before: String,
    pub after: String,
}

impl Change {
    /// For `patch -p1`.
    pub fn diff(&self) -> String {
        crate::code::unified_diff_named(&self.before, &self.after, &format!("a/{}", self.file), &format!("b/{}", self.file))
    }
}

/// What `rgd fix` keeps in `fix/` (and prints with --json).
#[derive(Debug, Serialize)]
pub struct FixRecord {
    pub root: String,
    pub failing: Vec<String>,
    pub regression: Vec<String>,
    pub ranking: Vec<Candidate>,
    pub tried: Vec<Tried>,
    pub fixed_by: Option<Vec<String>>,
    /// A repair passed only with the program in the tests' process: which, and why it could not
    /// be isolated. Never counted as fixed; `fixed_by` names it only under --allow-in-process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
    pub changes: Vec<Change>,
    /// What the printer printed and the view showed, in order.
    pub events: Vec<FixEvent>,
}

/// What one attempt left.
#[derive(Debug, Clone)]
pub struct Repair {
    pub target: String,
    pub file: String,
    pub name: String,
    pub before: String,
    pub program: String,
    pub run_id: String,
    /// It passed every failing and every regression test, proven and run again.
    pub fixed: bool,
    /// Why that verdict was reached in the tests' process (best effort), when it was.
    pub in_process: Option<String>,
    pub outcome: String,
    pub calls: u32,
    pub tokens: u64,
}

impl Repair {
    pub fn tried(&self, on_top_of: Option<&String>) -> Tried {
        Tried {
            target: self.target.clone(),
            on_top_of: on_top_of.cloned(),
            run_id: self.run_id.clone(),
            outcome: self.outcome.clone(),
            fixed: self.fixed,
            in_process: self.in_process.clone(),
            calls: self.calls,
            tokens: self.tokens,
        }
    }
}

/// A suspect the agents could not be given (not a function that can be spliced back).
pub fn skipped(c: &Candidate, on_top_of: Option<&String>) -> Tried {
    Tried {
        target: c.target(),
        on_top_of: on_top_of.cloned(),
        run_id: String::new(),
        outcome: "skipped: not a function the agents can repair".into(),
        fixed: false,
        in_process: None,
        calls: 0,
        tokens: 0,
    }
}

/// The failing tests and their parametrised siblings that passed are shown to the agents (the
/// siblings' source is the failing test's); every other passing test is the regression suite.
pub fn split_tests(found: &Localisation) -> (Vec<String>, Vec<String>) {
    let function = |id: &str| id.split('[').next().unwrap_or(id).to_string();
    let failing: std::collections::HashSet<String> = found.failing.iter().map(|id| function(id)).collect();
    let (siblings, regression): (Vec<String>, Vec<String>) = found.passing.iter().cloned().partition(|id| failing.contains(&function(id)));
    let mut visible = found.failing.clone();
    visible.extend(siblings);
    (visible, regression)
}

/// The files a fix changes; a pair in one file is one change (the second's program holds both).
pub fn changes_of(fix: &[Repair]) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    for r in fix {
        match out.iter_mut().find(|c| c.file == r.file) {
            Some(c) => c.after = r.program.clone(),
            None => out.push(Change {
                file: r.file.clone(),
                before: r.before.clone(),
                after: r.program.clone(),
            }),
        }
    }
    out
}

/// A copy of the project with `r`'s repair in place, under `state`'s `fix/` (named by its content,
/// so a fork of the pair's run finds it again).
pub fn stage_dir(state: &Path, root: &Path, r: &Repair) -> anyhow::Result<PathBuf> {
    let mut hash = Sha256::new();
    hash.update(root.display().to_string());
    hash.update(&r.file);
    hash.update(&r.program);
    let dir = state.join("fix").join(format!("stage-{}", hex::encode(&hash.finalize()[..6])));
    if !dir.join(&r.file).exists() {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        copy_project(root, &dir)?;
        std::fs::write(dir.join(&r.file), &r.program)?;
    }
    Ok(dir)
}

/// Writes the record to `state`'s `fix/`, named by the time; returns where.
pub fn save_record(state: &Path, record: &FixRecord) -> anyhow::Result<PathBuf> {
    let dir = state.join("fix");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S%.3f");
    let path = dir.join(format!("{stamp}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(record)?)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_of_a_failing_test_are_visible_and_the_rest_is_the_regression_suite() {
        let found = Localisation {
            failing: vec!["t.py::test_a[1]".into()],
            passing: vec!["t.py::test_a[2]".into(), "t.py::test_b".into()],
            also_failing: vec![],
            stopped: vec![],
            ranked: vec![],
            failures: vec![],
            failing_spectra: 1,
            passing_spectra: 2,
        };
        let (visible, hidden) = split_tests(&found);
        assert_eq!(visible, ["t.py::test_a[1]", "t.py::test_a[2]"]);
        assert_eq!(hidden, ["t.py::test_b"]);
    }

    #[test]
    fn a_pair_in_one_file_is_one_change_holding_both_repairs() {
        let r = |target: &str, file: &str, before: &str, program: &str| Repair {
            target: target.into(),
            file: file.into(),
            name: "f".into(),
            before: before.into(),
            program: program.into(),
            run_id: String::new(),
            fixed: true,
            in_process: None,
            outcome: String::new(),
            calls: 0,
            tokens: 0,
        };
        let changes = changes_of(&[r("m.py::f", "m.py", "v0", "v1"), r("m.py::g", "m.py", "v1", "v2")]);
        assert_eq!(changes.len(), 1);
        assert_eq!((changes[0].before.as_str(), changes[0].after.as_str()), ("v0", "v2"));
        let changes = changes_of(&[r("a.py::f", "a.py", "a0", "a1"), r("b.py::g", "b.py", "b0", "b1")]);
        assert_eq!(changes.len(), 2);
    }
}
