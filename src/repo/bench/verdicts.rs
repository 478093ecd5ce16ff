//! `rgd bench verdicts`: how often rgd's pytest plugin takes an honest program for a forgery. The
//! projects of `rgd bench repo` (pinned sdists from PyPI) are run with their own test suites and
//! their original code, exactly as `rgd solve --repo` runs an agents' program: the tests split
//! into a visible and a hidden half (test files alternately; a project with one test file, its
//! test functions alternately), the visible half in a copy without the hidden one, the hidden half
//! in a full copy, and one module of the project (its largest) handed to the plugin as the
//! target file, so that all of that module's code counts as the program's for the audit hook and
//! one of its functions has what it returns probed. Every run should come back untampered; a test
//! that does not pass is listed with its reason (the project's own skips and failures here).

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::repo::bench::{Project, chosen, ships_tests};
use crate::repo::index::chunks::is_test_file;
use crate::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};

/// One half of one project's suite.
#[derive(Debug, Clone, Serialize)]
pub struct Half {
    pub tests: usize,
    pub passed: usize,
    pub seconds: f64,
    /// What the plugin or the channel saw (a false alarm, since the code is the project's own).
    pub tampered: Vec<String>,
    /// Tests that did not pass: id, status, message.
    pub not_passed: Vec<(String, String, String)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectVerdicts {
    pub name: String,
    /// Why the project could not be measured (its sdist ships no tests), when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// The module given as the program, and the function whose results were probed.
    pub target: String,
    pub visible: Option<Half>,
    pub hidden: Option<Half>,
}

/// The largest module that is not a test, a setup script or documentation, and its first
/// top-level function (its first method when it has none).
fn pick_target(root: &Path) -> anyhow::Result<(String, String)> {
    let mut best: Option<(usize, String, String)> = None;
    for file in crate::repo::index::python_files(root)? {
        let name = file.rsplit('/').next().unwrap_or(&file);
        if is_test_file(&file) || name == "setup.py" || name == "conftest.py" || file.starts_with("doc") {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&file))?;
        let Some(function) = crate::code::defined_functions(&text)
            .into_iter()
            .rev()
            .find(|f| crate::code::find_function(&text, f).is_ok())
        else {
            continue;
        };
        if best.as_ref().is_none_or(|(lines, _, _)| text.lines().count() > *lines) {
            best = Some((text.lines().count(), file, function));
        }
    }
    best.map(|(_, f, n)| (f, n))
        .ok_or_else(|| anyhow::anyhow!("{}: no module to take as the program", root.display()))
}

/// Visible and hidden halves of `ids`: by test file alternately, or by test function when there is
/// only one file.
fn split(ids: &[String]) -> (Vec<String>, Vec<String>) {
    let file = |id: &str| id.split("::").next().unwrap_or(id).to_string();
    let function = |id: &str| id.split('[').next().unwrap_or(id).to_string();
    let files: BTreeSet<String> = ids.iter().map(|i| file(i)).collect();
    let key: Box<dyn Fn(&str) -> String> = if files.len() > 1 { Box::new(file) } else { Box::new(function) };
    let keys: Vec<String> = ids.iter().map(|i| key(i)).collect::<BTreeSet<_>>().into_iter().collect();
    let hidden_keys: BTreeSet<&String> = keys.iter().skip(1).step_by(2).collect();
    ids.iter().cloned().partition(|i| !hidden_keys.contains(&key(i)))
}

fn half(runner: &ProjectTests, root: &Path, target: (&str, &str), ids: &[String], withhold: &[String]) -> anyhow::Result<Half> {
    let text = std::fs::read_to_string(root.join(target.0))?;
    let spec = RunSpec {
        replace: Some((target.0, &text)),
        target: Some(target.1),
        ids,
        withhold,
    };
    let limits = TestLimits {
        timeout: std::time::Duration::from_secs(900),
        ..TestLimits::default()
    };
    let run = runner.run(root, &spec, limits)?;
    Ok(Half {
        tests: ids.len(),
        passed: run.outcomes.iter().filter(|o| o.passed()).count(),
        seconds: run.seconds,
        tampered: run.tampered,
        not_passed: run
            .outcomes
            .iter()
            .filter(|o| !o.passed())
            .map(|o| (o.id.clone(), o.status.clone(), o.message.chars().take(160).collect()))
            .collect(),
    })
}

/// Runs every project of `set` (fetched into `cache`) as described above.
pub fn run(cache: &Path, set: &'static [Project], runner: &ProjectTests, report: &dyn Fn(&str)) -> anyhow::Result<Vec<ProjectVerdicts>> {
    let mut out = Vec::new();
    for (name, dir) in chosen(cache, set, &[], report)? {
        if !ships_tests(&crate::repo::index::python_files(&dir)?) {
            report(&format!("{name}: its source distribution ships no tests"));
            out.push(ProjectVerdicts {
                name,
                skipped: Some("its source distribution ships no tests".into()),
                target: String::new(),
                visible: None,
                hidden: None,
            });
            continue;
        }
        let target = pick_target(&dir)?;
        let ids = runner.collect(&dir, &[])?;
        let (visible, hidden) = split(&ids);
        report(&format!(
            "{name}: {} tests ({} visible, {} hidden), the program {}::{}",
            ids.len(),
            visible.len(),
            hidden.len(),
            target.0,
            target.1
        ));
        let t = (target.0.as_str(), target.1.as_str());
        out.push(ProjectVerdicts {
            name,
            skipped: None,
            target: format!("{}::{}", target.0, target.1),
            visible: Some(half(runner, &dir, t, &visible, &hidden)?),
            hidden: Some(half(runner, &dir, t, &hidden, &[])?),
        });
    }
    Ok(out)
}

/// The bench's report: a row per project and half, then every test that did not pass, with why.
pub fn table(projects: &[ProjectVerdicts], confinement: &str) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!("confinement: {}", confinement));
    out.push("| project | the program (target) | half | tests | passed | tampered | seconds |".to_string());
    out.push("| --- | --- | --- | --- | --- | --- | --- |".to_string());
    for p in projects {
        if let Some(why) = &p.skipped {
            out.push(format!("| {} | - | - | - | - | not measured: {why} | - |", p.name));
        }
        for (name, h) in [("visible", &p.visible), ("hidden", &p.hidden)] {
            let Some(h) = h else { continue };
            out.push(format!(
                "| {} | {} | {name} | {} | {} | {} | {:.1} |",
                p.name,
                p.target,
                h.tests,
                h.passed,
                match h.tampered.len() {
                    0 => "no".to_string(),
                    1..=3 => h.tampered.join("; "),
                    n => format!("{} (and {} more)", h.tampered[..3].join("; "), n - 3),
                },
                h.seconds
            ));
        }
    }
    for p in projects {
        for h in [&p.visible, &p.hidden].into_iter().flatten() {
            for (id, status, message) in &h.not_passed {
                out.push(format!("not passed: {} {id}: {status} {message}", p.name));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_alternate_by_file_or_by_function() {
        let ids: Vec<String> = ["t/a.py::x", "t/a.py::y", "t/b.py::z", "t/c.py::w"].map(String::from).to_vec();
        let (v, h) = split(&ids);
        assert_eq!(v, ["t/a.py::x", "t/a.py::y", "t/c.py::w"]);
        assert_eq!(h, ["t/b.py::z"]);
        let one: Vec<String> = ["t.py::a[1]", "t.py::a[2]", "t.py::b", "t.py::c"].map(String::from).to_vec();
        let (v, h) = split(&one);
        assert_eq!(v, ["t.py::a[1]", "t.py::a[2]", "t.py::c"]);
        assert_eq!(h, ["t.py::b"]);
    }
}
