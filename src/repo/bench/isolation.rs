//! `rgd bench verdicts --isolation`: whether isolating a repository target (`isolate.rs`) changes
//! any verdict. For each project of `rgd bench repo` (pinned sdists, their own test suites), or
//! with `--real-bugs` of the real-bug list (each at its newest release there, in its own venv),
//! the functions the most tests enter (by rgd's spectrum collector over the whole suite) are taken as
//! the target in turn, with their original code: the tests entering one run once with the
//! function in the tests' process, once isolated. Reported: how many functions could be isolated
//! (and why the others could not), every test whose outcome differs, and the isolated run's time
//! against the in-process one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::repo::index::chunks::is_test_file;
use crate::repo::run::testrun::{ProjectTests, RunSpec, TestLimits, TestRun};

/// One function taken as the target.
#[derive(Debug, Clone, Serialize)]
pub struct FunctionParity {
    /// `file::qualname`.
    pub target: String,
    /// The tests that enter it (and ran both ways).
    pub tests: usize,
    /// Why it could not be isolated (the isolated run fell back to in-process), when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_isolated: Option<String>,
    /// That reason's cause (`Isolation::cause`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Tests whose outcome differs: id, in-process status, isolated status, and the message of
    /// the run that did not pass.
    pub differ: Vec<(String, String, String, String)>,
    pub seconds_in_process: f64,
    pub seconds_isolated: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectParity {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub functions: Vec<FunctionParity>,
}

/// The `per_project` functions of the project's own (no test file) that the most tests of
/// `ids` enter, each with those tests, most tested first.
fn most_tested(
    runner: &ProjectTests,
    root: &Path,
    ids: &[String],
    per_project: usize,
) -> anyhow::Result<Vec<(String, String, Vec<String>)>> {
    let limits = TestLimits {
        timeout: std::time::Duration::from_secs(1800),
        per_test: Some(std::time::Duration::from_secs(20)),
        ..TestLimits::default()
    };
    let spec = RunSpec { ids, ..RunSpec::default() };
    let (_, spectra) = runner.spectra(root, &spec, limits)?;
    let mut entered: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for s in spectra.iter().filter(|s| ids.contains(&s.id)) {
        for (file, qualname, _) in &s.functions {
            if !is_test_file(file) && !qualname.contains('<') {
                entered.entry((file.clone(), qualname.clone())).or_default().push(s.id.clone());
            }
        }
    }
    let mut ranked: Vec<((String, String), Vec<String>)> = entered
        .into_iter()
        .filter(|((file, name), _)| {
            std::fs::read_to_string(root.join(file)).is_ok_and(|text| crate::code::find_function(&text, name).is_ok())
        })
        .collect();
    ranked.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    Ok(ranked
        .into_iter()
        .take(per_project)
        .map(|((file, name), mut tests)| {
            tests.dedup();
            (file, name, tests)
        })
        .collect())
}

fn statuses(run: &TestRun) -> BTreeMap<&str, (&str, &str)> {
    run.outcomes
        .iter()
        .map(|o| (o.id.as_str(), (o.status.as_str(), o.message.as_str())))
        .collect()
}

/// One function both ways.
fn parity(runner: &ProjectTests, root: &Path, file: &str, name: &str, tests: &[String]) -> anyhow::Result<FunctionParity> {
    let text = std::fs::read_to_string(root.join(file))?;
    let spec = RunSpec {
        replace: Some((file, &text)),
        target: Some(name),
        ids: tests,
        withhold: &[],
    };
    // Two minutes: a run that needs more (a call past half of it) is an outcome to compare too.
    let limits = TestLimits {
        timeout: std::time::Duration::from_secs(120),
        ..TestLimits::default()
    };
    let in_process = runner.run_in_process(root, &spec, limits)?;
    let isolated = runner.run(root, &spec, limits)?;
    let (a, b) = (statuses(&in_process), statuses(&isolated));
    let differ = a
        .iter()
        .filter_map(|(id, (sa, ma))| {
            let (sb, mb) = b.get(id).copied().unwrap_or(("missing", ""));
            // The message of the run that did not pass (the in-process one's where only it failed).
            let message = if sb == "passed" { ma } else { mb };
            (sa != &sb).then(|| (id.to_string(), sa.to_string(), sb.to_string(), message.chars().take(200).collect()))
        })
        .collect();
    Ok(FunctionParity {
        target: format!("{file}::{name}"),
        tests: tests.len(),
        not_isolated: isolated.isolation.best_effort().map(str::to_string),
        cause: isolated.isolation.cause().map(str::to_string),
        differ,
        seconds_in_process: in_process.seconds,
        seconds_isolated: isolated.seconds,
    })
}

/// Runs every project of `projects` as described above: each named as it is reported ("toolz
/// 1.2.0"), with its folder and the runner of its suite, or why it has none (reported, not
/// measured). Taken one at a time, so a runner made on demand (a venv) is made when its turn comes.
pub fn run<R: std::borrow::Borrow<ProjectTests>>(
    projects: impl IntoIterator<Item = (String, anyhow::Result<(PathBuf, R)>)>,
    per_project: usize,
    report: &dyn Fn(&str),
) -> anyhow::Result<Vec<ProjectParity>> {
    let mut out = Vec::new();
    for (name, project) in projects {
        let skip = |e: anyhow::Error| {
            report(&format!("{name}: {e:#}"));
            ProjectParity {
                name: name.clone(),
                skipped: Some(first_line(&e)),
                functions: Vec::new(),
            }
        };
        let (dir, runner) = match project {
            Ok(p) => p,
            Err(e) => {
                out.push(skip(e));
                continue;
            }
        };
        let runner = runner.borrow();
        // What collects is measured, as a harvest takes it; each module that does not is named.
        let ids = match runner.collect_with_errors(&dir, &RunSpec::default()) {
            Ok(c) if !c.ids.is_empty() => {
                for (file, message) in &c.errors {
                    report(&format!("{name}: left out, as pytest cannot collect {file}: {message}"));
                }
                c.ids
            }
            Ok(c) => {
                let why = c.errors.first().map_or("pytest collects no test".to_string(), |(file, message)| {
                    format!("pytest cannot collect {file}: {message}")
                });
                out.push(skip(anyhow::anyhow!(why)));
                continue;
            }
            Err(e) => {
                out.push(skip(e));
                continue;
            }
        };
        let targets = most_tested(runner, &dir, &ids, per_project)?;
        report(&format!("{name}: {} tests, {} functions", ids.len(), targets.len()));
        let mut functions = Vec::new();
        for (file, function, tests) in &targets {
            report(&format!("  {file}::{function} ({} tests) ...", tests.len()));
            // A run that breaks (pytest ends without the plugin's report) is this function's
            // row, not the end of the bench.
            let p = parity(runner, &dir, file, function, tests).unwrap_or_else(|e| FunctionParity {
                target: format!("{file}::{function}"),
                tests: tests.len(),
                not_isolated: Some(format!("the run failed: {}", first_line(&e))),
                cause: Some("run failed".to_string()),
                differ: Vec::new(),
                seconds_in_process: 0.0,
                seconds_isolated: 0.0,
            });
            report(&format!(
                "  {} ({} tests): {}{}, {:.2}s in-process, {:.2}s isolated",
                p.target,
                p.tests,
                p.not_isolated
                    .as_deref()
                    .map_or("isolated".to_string(), |w| format!("in-process ({w})")),
                match p.differ.len() {
                    0 => String::new(),
                    n => format!(", {n} outcome(s) differ"),
                },
                p.seconds_in_process,
                p.seconds_isolated
            ));
            functions.push(p);
        }
        out.push(ProjectParity {
            name,
            skipped: None,
            functions,
        });
    }
    Ok(out)
}

/// An error's first line, with its causes (a row of the report says it in one line).
fn first_line(e: &anyhow::Error) -> String {
    format!("{e:#}").lines().next().unwrap_or_default().to_string()
}

/// The median of `values` (0 when empty).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The bench's report: a row per project (functions isolated, outcomes that differ, the median
/// time ratio), the fallback causes, then every function not isolated and every outcome that
/// differs.
pub fn table(projects: &[ProjectParity], confinement: &str) -> Vec<String> {
    let mut out = Vec::new();
    let all: Vec<_> = projects.iter().flat_map(|p| &p.functions).collect();
    let isolated: Vec<_> = all.iter().filter(|f| f.not_isolated.is_none()).collect();
    let differ: usize = isolated.iter().map(|f| f.differ.len()).sum();
    let ratio = |fs: &[&&FunctionParity]| median(fs.iter().map(|f| f.seconds_isolated / f.seconds_in_process.max(1e-3)).collect());
    out.push(format!("confinement: {}", confinement));
    out.push("| project | functions | isolated | tests (isolated) | outcomes differ | isolated / in-process time (median) |".to_string());
    out.push("| --- | --- | --- | --- | --- | --- |".to_string());
    for p in projects {
        if let Some(why) = &p.skipped {
            out.push(format!("| {} | - | - | - | - | not measured: {why} |", p.name));
            continue;
        }
        let iso: Vec<_> = p.functions.iter().filter(|f| f.not_isolated.is_none()).collect();
        out.push(format!(
            "| {} | {} | {} | {} | {} | {:.2}x |",
            p.name,
            p.functions.len(),
            iso.len(),
            iso.iter().map(|f| f.tests).sum::<usize>(),
            iso.iter().map(|f| f.differ.len()).sum::<usize>(),
            ratio(&iso.iter().collect::<Vec<_>>())
        ));
    }
    out.push(format!(
        "| all | {} | {} ({:.0}%) | {} | {differ} | {:.2}x |",
        all.len(),
        isolated.len(),
        100.0 * isolated.len() as f64 / all.len().max(1) as f64,
        isolated.iter().map(|f| f.tests).sum::<usize>(),
        ratio(&isolated)
    ));
    // What each remaining cause of the tests' process cost, in functions.
    let mut causes: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in all.iter().filter(|f| f.not_isolated.is_some()) {
        *causes.entry(f.cause.as_deref().unwrap_or("unknown")).or_default() += 1;
    }
    if !causes.is_empty() {
        out.push(String::new());
        out.push("| fallback cause | functions |".to_string());
        out.push("| --- | --- |".to_string());
        for (cause, n) in &causes {
            out.push(format!("| {cause} | {n} |"));
        }
    }
    for f in &all {
        if let Some(why) = &f.not_isolated {
            out.push(format!(
                "in-process ({}): {}: {why}",
                f.cause.as_deref().unwrap_or("unknown"),
                f.target
            ));
        }
        for (id, a, b, message) in &f.differ {
            out.push(format!("differs: {} {id}: in-process {a}, isolated {b}: {message}", f.target));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
    }
}
