//! One pair of releases, harvested: the newer release's suite run twice (the tests green both
//! times are the regression suite) with spectra (which tests enter which function); then, for
//! each function both releases define with other code, the newer release with it put back as
//! the older had it, its covering tests run twice. An instance is kept when the same tests go red
//! both times and they are few: a put-back that turns a large share of the suite red is an
//! interface change (an older body calling what the newer release renamed), not a bug. Nor is
//! one after which the suite no longer collects (a `def` whose default or annotation names what
//! the newer module no longer has, an older function a module calls as it is imported): its red
//! tests are the import error of their modules.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::bail;

use super::{Harvested, Instance};
use crate::code::align::{changed_functions, put_back};
use crate::repo::bench::{is_library_file, ships_tests};
use crate::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};

/// How long the newer release's whole suite may run (under the spectrum collector).
const BASELINE_SECONDS: u64 = 1800;

/// The largest share of the regression suite an instance's red tests may be.
pub const MAX_RED_SHARE: f64 = 0.1;

/// One side of a pair: its version, its sdist's sha256 (empty for a tree given by path), its
/// unpacked source.
pub struct Release<'a> {
    pub version: &'a str,
    pub sha256: &'a str,
    pub dir: &'a Path,
}

/// Why a changed function gave no instance (the keys of `Harvested::dropped`).
const NO_COVER: &str = "entered by no green test";
const NO_PARSE: &str = "not parsable put back";
const NO_RED: &str = "turned no test red";
const FLAKY: &str = "red tests differ between two runs";
const INTERFACE: &str = "interface changes (too many tests red)";
const CUT: &str = "runs cut at their time limit";
const NO_COLLECT: &str = "the suite no longer collects";

/// A project's task-runner scripts at its root (nox, invoke, fabric, doit): code no test runs,
/// so a release that edits its sessions has no function to harvest there (webcolors 24.11.1
/// changed seventeen, all in `noxfile.py`).
fn is_tool_script(file: &str) -> bool {
    matches!(file, "noxfile.py" | "tasks.py" | "fabfile.py" | "dodo.py")
}

pub fn harvest(
    project: &str,
    old: &Release<'_>,
    new: &Release<'_>,
    runner: &ProjectTests,
    report: &dyn Fn(&str),
) -> anyhow::Result<Harvested> {
    let started = Instant::now();
    let files = crate::repo::index::python_files(new.dir)?;
    if !ships_tests(&files) {
        bail!("{project} {}: its source ships no tests", new.version);
    }
    // What does not collect (a test module needing a package the interpreter lacks) is left out
    // and said; the rest is the suite.
    let crate::repo::run::testrun::Collected {
        ids: collected,
        errors: uncollected,
        output,
    } = runner.collect_with_errors(new.dir, &RunSpec::default())?;
    let errors = || uncollected.iter().map(|(_, m)| m.as_str());
    if collected.is_empty() {
        let why = uncollected
            .first()
            .map_or_else(|| crate::assets::last_lines(&output, 4), |(f, m)| format!("{f}: {m}"));
        // A conftest that cannot import stops all of collection: its error is in pytest's output.
        let missing = super::missing_note(&super::missing_packages(errors().chain([output.as_str()])));
        bail!("{project} {}: pytest collects no test ({why}){missing}", new.version);
    }
    let missing = super::missing_packages(errors());
    if !uncollected.is_empty() {
        report(&format!(
            "{project} {}: {} test modules left out, they do not collect (first: {}: {})",
            new.version,
            uncollected.len(),
            uncollected[0].0,
            uncollected[0].1.lines().next().unwrap_or_default()
        ));
    }
    // Each test bounded (a put-back that loops is stopped where it is), the whole run too: the
    // release's own suite within half an hour, each put-back's tests within four times that.
    let limits = TestLimits {
        per_test: Some(Duration::from_secs_f64(crate::repo::locate::localise::TEST_SECONDS)),
        timeout: Duration::from_secs(BASELINE_SECONDS),
        ..TestLimits::default()
    };
    let all = RunSpec {
        ids: &collected,
        ..RunSpec::default()
    };
    let (first, spectra) = runner.spectra(new.dir, &all, limits)?;
    let second = runner.run(new.dir, &all, limits)?;
    let green = |run: &crate::repo::run::testrun::TestRun| -> BTreeSet<String> {
        run.outcomes.iter().filter(|o| o.passed()).map(|o| o.id.clone()).collect()
    };
    if first.timed_out || second.timed_out {
        bail!("{project} {}: its suite ran past {BASELINE_SECONDS} s", new.version);
    }
    let suite: BTreeSet<String> = green(&first).intersection(&green(&second)).cloned().collect();
    report(&format!(
        "{project} {}: {} of {} collected tests green twice",
        new.version,
        suite.len(),
        collected.len()
    ));
    // Which green tests enter each function: (file, qualified name) -> test ids.
    let mut entered: HashMap<(String, String), BTreeSet<String>> = HashMap::new();
    for s in spectra.iter().filter(|s| suite.contains(&s.id)) {
        for (file, name, _) in &s.functions {
            entered.entry((file.clone(), name.clone())).or_default().insert(s.id.clone());
        }
    }
    let limits = TestLimits {
        timeout: Duration::from_secs_f64(first.seconds * 4.0 + 10.0),
        ..limits
    };
    let mut out = Harvested {
        project: project.to_string(),
        versions: [old.version.to_string(), new.version.to_string()],
        collected: collected.len(),
        uncollected: uncollected.len(),
        not_collecting: uncollected.iter().map(|(f, m)| (f.clone(), error_line(m))).collect(),
        missing,
        suite: suite.len(),
        ..Harvested::default()
    };
    for file in files.iter().filter(|f| is_library_file(f) && !is_tool_script(f)) {
        let Ok(before) = std::fs::read_to_string(old.dir.join(file)) else {
            continue; // a module the older release does not have: nothing to align
        };
        let after = std::fs::read_to_string(new.dir.join(file))?;
        for changed in changed_functions(&before, &after) {
            out.changed += 1;
            let covering: Vec<String> = entered
                .get(&(file.clone(), changed.qualname.clone()))
                .map(|ids| ids.iter().cloned().collect())
                .unwrap_or_default();
            match regression(runner, new.dir, file, &after, &changed, &covering, &suite, limits)? {
                Ok(red) => out.instances.push(Instance {
                    project: project.to_string(),
                    versions: out.versions.clone(),
                    sdists: [old.sha256.to_string(), new.sha256.to_string()],
                    file: file.clone(),
                    function: changed.qualname.clone(),
                    line: changed.line,
                    red_tests: red,
                    suite: suite.len(),
                    covering: covering.len(),
                    faulty: changed.old.clone(),
                    fixed: changed.new.clone(),
                }),
                Err(why) => *out.dropped.entry(why.to_string()).or_default() += 1,
            }
        }
    }
    out.seconds = started.elapsed().as_secs_f64();
    Ok(out)
}

/// The red tests of one put-back, or why it is no instance.
#[allow(clippy::too_many_arguments, reason = "one put-back's whole context, used once")]
fn regression(
    runner: &ProjectTests,
    root: &Path,
    file: &str,
    module: &str,
    changed: &crate::code::align::Changed,
    covering: &[String],
    suite: &BTreeSet<String>,
    limits: TestLimits,
) -> anyhow::Result<Result<Vec<String>, &'static str>> {
    if covering.is_empty() {
        return Ok(Err(NO_COVER));
    }
    let Some(text) = put_back(module, &changed.qualname, &changed.old) else {
        return Ok(Err(NO_PARSE));
    };
    let spec = RunSpec {
        replace: Some((file, &text)),
        ids: covering,
        ..RunSpec::default()
    };
    let red = |run: &crate::repo::run::testrun::TestRun| -> Vec<String> {
        let mut ids: Vec<String> = run.outcomes.iter().filter(|o| !o.passed()).map(|o| o.id.clone()).collect();
        ids.sort();
        ids
    };
    // The same runner ran the same suite green a moment ago, so a run that fails to report at all
    // was stopped by the put-back: a conftest or test module importing it at load time no longer
    // loads, and pytest ends before its session starts (marshmallow's tests build schemas as they
    // import). The suite no longer collects; the pair goes on.
    let Ok(first) = runner.run(root, &spec, limits) else {
        return Ok(Err(NO_COLLECT));
    };
    if first.timed_out {
        return Ok(Err(CUT));
    }
    let reds = red(&first);
    if reds.is_empty() {
        return Ok(Err(NO_RED));
    }
    let Ok(second) = runner.run(root, &spec, limits) else {
        return Ok(Err(NO_COLLECT));
    };
    if second.timed_out {
        return Ok(Err(CUT));
    }
    if red(&second) != reds {
        return Ok(Err(FLAKY));
    }
    if reds.len() as f64 > (suite.len() as f64 * MAX_RED_SHARE).max(1.0) {
        return Ok(Err(INTERFACE));
    }
    // Last, as it is asked only of what would be kept: does every test of the regression suite
    // still collect with the function put back? Only the covering tests ran above, so a module
    // that no longer imports shows there as a few red tests, not as the broken suite it is.
    let collected = runner.collect_with_errors(root, &RunSpec { ids: &[], ..spec })?;
    let collected: HashSet<&str> = collected.ids.iter().map(String::as_str).collect();
    if !suite.iter().all(|id| collected.contains(id.as_str())) {
        return Ok(Err(NO_COLLECT));
    }
    Ok(Ok(reds))
}

/// A collection error as one line: the last line that names an error (pytest's `E   ...
/// ModuleNotFoundError: No module named 'x'`), else the first that says anything.
fn error_line(message: &str) -> String {
    let lines = message.lines().map(|l| l.trim().trim_start_matches("E ").trim());
    let named = lines.clone().rfind(|l| l.contains("Error") || l.contains("Exception"));
    named
        .or_else(|| lines.clone().find(|l| !l.is_empty()))
        .unwrap_or_default()
        .to_string()
}
