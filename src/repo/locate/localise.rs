//! From some failing tests to ranked suspects (`rgd locate`, and the first step of `rgd fix`): the
//! failing tests and the other tests of the selection (default: the failing tests' files) run once
//! in a throw-away copy with the spectrum collector; every test that fails counts as failing,
//! named or not, and every one that passes as passing (`locate.rs` ranks what they entered).
//! Every reason there is nothing to locate is an error that says so, before any agent runs.

use std::path::Path;

use anyhow::{Context, bail};

use crate::repo::locate::{Candidate, per_test, rank};
use crate::repo::run::testrun::{ProjectTests, RunSpec, TestLimits, node_id, selection};

/// A failing test as a model may read it.
#[derive(Debug, Clone)]
pub struct FailingTest {
    pub id: String,
    pub source: String,
    pub message: String,
}

/// What running a failure's tests found.
#[derive(Debug, Clone)]
pub struct Localisation {
    /// The named failing tests, as collected (a parametrised test's instances each).
    pub failing: Vec<String>,
    /// The selection's tests that passed (the suite a repair must not break).
    pub passing: Vec<String>,
    /// The selection's other tests that failed (evidence, but not what a repair must fix).
    pub also_failing: Vec<String>,
    /// The selection's other tests that rgd's per-test timer stopped: no evidence either way.
    pub stopped: Vec<String>,
    /// The project's functions the failing tests entered, best suspect first.
    pub ranked: Vec<Candidate>,
    /// The named failing tests with their source and failure.
    pub failures: Vec<FailingTest>,
    /// Failing and passing spectra the ranking used.
    pub failing_spectra: usize,
    pub passing_spectra: usize,
}

/// How long one test may run while a fault is located (`--test-timeout`): a test over it is
/// stopped where it is, so a fault that loops forever still leaves spectra.
pub const TEST_SECONDS: f64 = 10.0;

/// What a traced run of `tests` tests may take, at most: the default run's time, or a fifth of a
/// second per test where that is longer. The failing tests run last, so a run cut short by its
/// time says nothing of the fault: a file of 1,400 tests (pyparsing's) ran past 120 s traced on
/// a busy machine and left its instances unlocated. Each test is still stopped at `per_test`,
/// so a fault that loops in Python costs that test alone; this bounds the rest (a loop in C).
fn run_limits(tests: usize, per_test: std::time::Duration) -> TestLimits {
    let default = TestLimits::default();
    TestLimits {
        timeout: default.timeout.max(std::time::Duration::from_secs_f64(tests as f64 * 0.2)),
        per_test: Some(per_test),
        ..default
    }
}

/// Runs the failing tests (`failing`, pytest node ids) and the selection `tests` (pytest's syntax;
/// default: the failing tests' files) of the project at `root`, and ranks its functions.
pub fn localise(
    runner: &ProjectTests,
    root: &Path,
    failing: &[String],
    tests: Option<&str>,
    test_timeout: std::time::Duration,
) -> anyhow::Result<Localisation> {
    let (named, others) = collected(runner, root, failing, tests)?;
    // The failing tests run last: what runs once per process (a cache filled on first use, a
    // default instance made lazily: sqlparse's `Lexer.get_default_instance`, mistune's trigger
    // tables) is charged to the first test that needs it, and a failing test that ran first
    // would be charged with what every test needs, as if it alone ran it. A failing test that
    // passes after the others (pathspec's link tests fail alone, or first, and pass after the
    // rest of their file) is run again first, as it failed.
    let rest: Vec<String> = others.into_iter().filter(|id| !named.contains(id)).collect();
    let spectra_of = |ids: &[String]| {
        let spec = RunSpec { ids, ..RunSpec::default() };
        runner.spectra(root, &spec, run_limits(ids.len(), test_timeout))
    };
    let passes = |run: &crate::repo::run::testrun::TestRun| named.iter().any(|id| run.outcomes.iter().any(|o| &o.id == id && o.passed()));
    let mut ids: Vec<String> = rest.iter().chain(&named).cloned().collect();
    let (mut run, mut records) = spectra_of(&ids)?;
    if passes(&run) {
        ids = named.iter().chain(&rest).cloned().collect();
        (run, records) = spectra_of(&ids)?;
    }
    let spectra = per_test(&records, &ids);
    let spectrum = |id: &str| spectra.iter().find(|s| s.id == id);
    if !run.tampered.is_empty() {
        bail!("the project's tests tampered with rgd's plugin: {}", run.tampered.join("; "));
    }
    let outcome = |id: &str| run.outcomes.iter().find(|o| o.id == id);
    if let Some(p) = named.iter().find(|id| outcome(id).is_some_and(|o| o.passed())) {
        let hint = match tests {
            None => " (it ran with its own file only: if it fails only after other tests, give them with --tests, e.g. --tests tests/)",
            Some(_) => "",
        };
        bail!("{p} passes here: there is no fault to locate for it{hint}");
    }
    ran_to_their_failure(&named, &outcome, &spectrum)?;
    // A test of the selection that rgd's own timer stopped (`project_spectra.py`) says nothing of
    // the fault: whether it would pass is unknown, and whether the timer fires at all depends on
    // the machine's load (markdown's `test_many_footnote_definitions` takes 7 s untraced, about
    // the 10 s limit traced), so counting it as failing made a ranking change from run to run. A
    // named failing test stays evidence when stopped (an endless loop is the fault's doing).
    // (One that caught the timer's exception and passed is passing evidence as before.)
    let named_test = |id: &str| named.iter().any(|n| n == id);
    let passed = |id: &str| outcome(id).is_some_and(|o| o.passed());
    let stopped = |id: &str| !named_test(id) && !passed(id) && spectrum(id).is_some_and(|s| s.stopped);
    let failed = |id: &str| named_test(id) || outcome(id).is_some_and(|o| o.status == "failed" && !stopped(id));
    // Every test of the selection that failed is evidence, named or not.
    let failing_spectra: Vec<_> = ids.iter().filter(|id| failed(id)).filter_map(|id| spectrum(id)).collect();
    let passing_spectra: Vec<_> = ids.iter().filter(|id| passed(id)).filter_map(|id| spectrum(id)).collect();
    let messages: Vec<(&str, &str)> = named
        .iter()
        .map(|id| (id.as_str(), outcome(id).map_or("", |o| o.message.as_str())))
        .collect();
    let lexical = crate::repo::index::lexical::Lexical::build(root)?;
    let retrieval = lexical.scores(&messages)?;
    let failures = messages
        .iter()
        .map(|(id, message)| FailingTest {
            id: id.to_string(),
            source: lexical.test_source(id).unwrap_or_default().to_string(),
            message: message.to_string(),
        })
        .collect();
    let failing_spectra = with_mismatched_callees(&failing_spectra, &passing_spectra, &outcome, &lexical);
    let failing_spectra: Vec<&crate::repo::run::testrun::Spectrum> = failing_spectra.iter().collect();
    let ranked = rank(&failing_spectra, &passing_spectra, &retrieval);
    if ranked.is_empty() {
        bail!(
            "the failing tests entered none of the project's own functions: the fault is in the tests themselves or in an installed package"
        );
    }
    Ok(Localisation {
        passing: ids.iter().filter(|id| passed(id)).cloned().collect(),
        also_failing: ids.iter().filter(|id| !named_test(id) && failed(id)).cloned().collect(),
        stopped: ids.iter().filter(|id| stopped(id)).cloned().collect(),
        failing: named,
        ranked,
        failures,
        failing_spectra: failing_spectra.len(),
        passing_spectra: passing_spectra.len(),
    })
}

/// The failing tests as pytest names them (a parametrised one: each of its cases), checked to
/// exist, and the other tests of the selection (`--tests`, else the failing tests' files).
fn collected(runner: &ProjectTests, root: &Path, failing: &[String], tests: Option<&str>) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    for id in failing {
        node_id("--failing", id, root)?;
    }
    // A module that cannot be imported cannot be collected: its tests are taken as named, and the
    // run says whether project code raised while importing it (a fault to locate) or not.
    let uncollectable = |e: &anyhow::Error| format!("{e:#}").contains("pytest cannot collect");
    let named = match runner.collect(root, failing) {
        Ok(named) => named,
        Err(e) if uncollectable(&e) => failing.to_vec(),
        Err(e) => return Err(e.context("the failing tests (--failing)")),
    };
    let missing: Vec<&String> = failing
        .iter()
        .filter(|id| !named.iter().any(|f| f == *id || f.starts_with(&format!("{id}["))))
        .collect();
    if !missing.is_empty() {
        bail!("--failing {}: no such test in {}", missing[0], root.display());
    }
    let others = match tests {
        Some(text) => runner.collect(root, &selection("--tests", text, root)?).context("--tests")?,
        None => {
            let mut files: Vec<String> = named.iter().map(|id| id.split("::").next().unwrap_or(id).to_string()).collect();
            files.dedup();
            match runner.collect(root, &files) {
                Err(e) if uncollectable(&e) => Vec::new(),
                found => found?,
            }
        }
    };
    Ok((named, others))
}

/// Each named failing test ran to its failure, and not for a package the interpreter lacks.
fn ran_to_their_failure<'a>(
    named: &[String],
    outcome: &dyn Fn(&str) -> Option<&'a crate::repo::run::testrun::Outcome>,
    spectrum: &dyn Fn(&str) -> Option<&'a crate::repo::run::testrun::Spectrum>,
) -> anyhow::Result<()> {
    // A test whose setup failed ran project code (fixtures), traced: evidence. One that did not
    // run at all is evidence only when project code raised while its module was imported (then
    // that error's path is its exception path).
    let unseen = |o: &&crate::repo::run::testrun::Outcome| match o.status.as_str() {
        "not run" => spectrum(&o.id).is_none_or(|s| s.raised.is_empty()),
        "error" => spectrum(&o.id).is_none(),
        _ => false,
    };
    if let Some(o) = named.iter().filter_map(|id| outcome(id)).find(unseen) {
        bail!(
            "{} did not run to its failure ({}: {}); if its module cannot be collected, the error is in the test file or a package, not in the project's code",
            o.id,
            o.status,
            if o.message.is_empty() {
                "pytest never reported it: it was not collected, or the run stopped before it"
            } else {
                &o.message
            }
        );
    }
    // A test that fails because the interpreter lacks a package says nothing about the project.
    if let Some(o) = named
        .iter()
        .filter_map(|id| outcome(id))
        .find(|o| o.message.contains("ModuleNotFoundError") || o.message.contains("No module named"))
    {
        bail!(
            "{} fails for a missing package ({}): install it for the interpreter that runs the tests (--python), then try again",
            o.id,
            o.message
                .lines()
                .find(|l| l.contains("No module named"))
                .unwrap_or(&o.message)
                .trim()
        );
    }
    Ok(())
}

fn with_mismatched_callees<'a>(
    failing_spectra: &[&crate::repo::run::testrun::Spectrum],
    passing_spectra: &[&crate::repo::run::testrun::Spectrum],
    outcome: &dyn Fn(&str) -> Option<&'a crate::repo::run::testrun::Outcome>,
    lexical: &crate::repo::index::lexical::Lexical,
) -> Vec<crate::repo::run::testrun::Spectrum> {
    // A callee a failing call's arguments did not fit is the innermost frame of that test's
    // exception path (`locate::mismatched_callee`), so it counts as entered (`locate::rank_with`).
    // The test's failure names it; else a mismatched call the project made and caught (click's
    // test runner catches everything), made by a larger share of the failing tests than of the
    // passing ones (code that tries one signature, then another, makes such calls in every test;
    // a passing test may make the faulty call and not look at what came of it).
    let share = |spectra: &[&crate::repo::run::testrun::Spectrum], m: &str| {
        spectra.iter().filter(|s| s.mismatched.iter().any(|n| n == m)).count() as f64 / spectra.len().max(1) as f64
    };
    let telling: std::collections::HashSet<&str> = failing_spectra
        .iter()
        .flat_map(|s| s.mismatched.iter().map(String::as_str))
        .filter(|m| share(failing_spectra, m) > share(passing_spectra, m))
        .collect();
    failing_spectra
        .iter()
        .map(|s| {
            let mut s = (*s).clone();
            let caught = || {
                s.mismatched
                    .iter()
                    .filter(|m| telling.contains(m.as_str()))
                    .find_map(|m| crate::repo::locate::mismatched_callee(m))
            };
            let Some(callee) = outcome(&s.id)
                .and_then(|o| crate::repo::locate::mismatched_callee(&o.message))
                .or_else(caught)
            else {
                return s;
            };
            let callee = callee.to_string();
            let callee = callee.as_str();
            let entered: std::collections::BTreeSet<&str> = s.functions.iter().map(|f| f.0.as_str()).collect();
            let found = lexical.defining(callee, &entered);
            if let Some((file, name)) = found.filter(|(file, name)| !s.functions.iter().any(|f| &f.0 == file && &f.1 == name)) {
                s.raised.push((file, name, 0));
            }
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_run_of_many_tests_may_take_longer_than_the_default_and_each_test_keeps_its_own_limit() {
        let few = run_limits(10, Duration::from_secs(10));
        assert_eq!(few.timeout, TestLimits::default().timeout);
        let many = run_limits(1_400, Duration::from_secs(10));
        assert_eq!(many.timeout, Duration::from_secs(280));
        assert_eq!(many.per_test, Some(Duration::from_secs(10)));
        assert_eq!(many.memory_mb, TestLimits::default().memory_mb);
    }
}
