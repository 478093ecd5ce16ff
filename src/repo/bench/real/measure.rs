//! `rgd bench real`: each instance located as a user would locate it. The newer release's sdist
//! (fetched once, its sha256 checked against the instance's) is copied with the faulty function
//! put back, and `rgd locate`'s own localisation runs from the instance's red tests; the true
//! function's place is read from rgd's ranking and from function-level Ochiai on the same spectra.
//! Results are appended one line per instance, so a bench killed at any point resumes where it
//! was (`--resume`).

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::{Instance, pypi};
use crate::repo::bench::locate::Place;
use crate::repo::locate::localise::Localisation;
use crate::repo::run::testrun::ProjectTests;

/// Projects whose instances are held out: never looked at while localisation is tuned. The first
/// seven were written down when the first list was harvested, before any tuning on it; the rest
/// when the projects of the list's widening were chosen (issue 69), before any was harvested or
/// measured: the projects of `NEXT_TUNING` are the tuning half of that widening.
pub const HELD_OUT: &[&str] = &[
    "boltons",
    "click",
    "isodate",
    "markdown",
    "parso",
    "tomlkit",
    "xmltodict",
    // chosen for the widening, held out
    "idna",
    "itsdangerous",
    "natsort",
    "python-slugify",
    "soupsieve",
    "voluptuous",
    "wcwidth",
];

/// The widening's tuning half, written down with its held-out half above (a project in neither
/// list is in the tuning set, as every project was before).
pub const NEXT_TUNING: &[&str] = &[
    "arrow",
    "attrs",
    "bleach",
    "cerberus",
    "jinja2",
    "marshmallow",
    "packaging",
    "pyparsing",
    "python-dateutil",
    "unidecode",
];

/// Projects never in the list, here or later: outside checks keep their regressions to measure
/// rgd on projects it never saw.
pub const OUTSIDE_CHECKS: &[&str] = &[
    "semver",
    "parse",
    "tabulate",
    "pyflakes",
    "humanize",
    "termcolor",
    "tinydb",
    "toolz",
];

/// One instance's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    /// `project versions file::function`: what `--resume` knows an instance by.
    pub key: String,
    pub project: String,
    /// The true function's place in rgd's ranking and by Ochiai alone (None: not ranked, or the
    /// instance could not be located: `error`).
    pub combined: Option<Place>,
    pub ochiai: Option<Place>,
    /// How many functions the ranking holds (an unranked true function counts as one past them).
    pub ranked: usize,
    /// Why it could not be located (a sdist gone, a hash that differs, a red test that passes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub seconds: f64,
    /// What `rgd fix` made of it (`--fix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fixing>,
}

/// What `rgd fix` made of one instance.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Fixing {
    /// The model the agents ran on ("oracle" for the scripted one).
    pub model: String,
    /// rgd fix's verdict: a repair turned every red test green and broke none of the tests that
    /// passed in the red tests' files.
    pub fixed: bool,
    /// The faulty function alone was repaired, and its code (comments aside) is the released fix.
    pub as_released: bool,
    /// After the repair, the whole suite passes as often as it did on the release (`suite`
    /// tests). A repair as released is the release itself and is not run again.
    pub suite_green: bool,
    /// Why that suite verdict was reached with the repair in the tests' process (in-process, best
    /// effort), when it was: a repair of several functions, or one the tests hand what is not data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_in_process: Option<String>,
    /// Why rgd fix's verdict on the repair was reached in the tests' process (best effort), when
    /// it was: such a repair is counted apart (`FixSummary::in_process`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<String>,
    /// The functions the repair changed.
    pub fixed_by: Vec<String>,
    /// Attempts (one function each), each a recorded run (`rgd replay`, `rgd report`), model
    /// calls and tokens.
    pub attempts: usize,
    #[serde(default)]
    pub runs: Vec<String>,
    pub calls: u32,
    pub tokens: u64,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Fixing {
    /// Fixed: every red test and the release's regression suite green, both verdicts (rgd
    /// fix's and the suite's) reached with the function in a process of its own.
    pub fn counts(&self) -> bool {
        self.fixed && self.suite_green && self.in_process.is_none() && self.suite_in_process.is_none()
    }

    /// Green as `counts` says, but with a verdict reached in the tests' process: unverified,
    /// never counted as fixed.
    pub fn counts_in_process(&self) -> bool {
        self.fixed && self.suite_green && !self.counts()
    }

    /// One line, as the bench prints each instance's repair.
    pub fn line(&self) -> String {
        let what = match (&self.error, self.fixed, self.as_released, self.suite_green) {
            (Some(e), _, _, _) => format!("not repaired ({e})"),
            (None, false, _, _) => "not fixed".to_string(),
            (None, true, true, _) => "fixed as released".to_string(),
            (None, true, false, true) => format!("fixed otherwise ({})", self.fixed_by.join(", ")),
            (None, true, false, false) => format!("fixed the red tests but broke the suite ({})", self.fixed_by.join(", ")),
        };
        let judged = |what: &str, why: &Option<String>| match why {
            Some(why) => format!(" ({what} judged {}: {why})", crate::repo::run::isolate::Isolation::BEST_EFFORT),
            None => String::new(),
        };
        let best_effort = judged("verdict", &self.in_process) + &judged("suite", &self.suite_in_process);
        format!(
            "{what}{best_effort} after {} attempts, {} calls, {} tokens, {:.0}s",
            self.attempts, self.calls, self.tokens, self.seconds
        )
    }
}

/// The repairs of one set.
#[derive(Debug, Clone, Serialize)]
pub struct FixSummary {
    pub model: String,
    /// Instances a repair was tried on (located ones).
    pub instances: usize,
    /// Every red test and the suite green (`Fixing::counts`).
    pub fixed: usize,
    /// Unverified: the same, with a verdict reached in the tests' process
    /// (`Fixing::counts_in_process`); never in `fixed`.
    pub in_process: usize,
    pub as_released: usize,
    /// The red tests green but the suite broken.
    pub breaking: usize,
    pub seconds: f64,
    /// Per instance.
    pub calls: f64,
    pub tokens: f64,
}

fn fix_summary(results: &[Measured]) -> Option<FixSummary> {
    let fixes: Vec<&Fixing> = results.iter().filter_map(|m| m.fix.as_ref()).collect();
    let n = fixes.len();
    (n > 0).then(|| FixSummary {
        model: fixes[0].model.clone(),
        instances: n,
        fixed: fixes.iter().filter(|f| f.counts()).count(),
        in_process: fixes.iter().filter(|f| f.counts_in_process()).count(),
        as_released: fixes.iter().filter(|f| f.as_released).count(),
        breaking: fixes.iter().filter(|f| f.fixed && !f.suite_green && f.error.is_none()).count(),
        seconds: fixes.iter().map(|f| f.seconds).sum(),
        calls: fixes.iter().map(|f| f.calls as f64).sum::<f64>() / n as f64,
        tokens: fixes.iter().map(|f| f.tokens as f64).sum::<f64>() / n as f64,
    })
}

impl Measured {
    /// An instance that could not be measured, and why.
    pub fn failed(i: &Instance, error: String, seconds: f64) -> Measured {
        Measured {
            key: key(i),
            project: i.project.clone(),
            combined: None,
            ochiai: None,
            ranked: 0,
            error: Some(error),
            seconds,
            fix: None,
        }
    }
}

pub fn key(i: &Instance) -> String {
    format!("{} {}..{} {}::{}", i.project, i.versions[0], i.versions[1], i.file, i.function)
}

pub fn held_out(i: &Instance) -> bool {
    HELD_OUT.contains(&i.project.as_str())
}

/// Locates one instance in `copy` (`faulty_copy`); with `rankings` (an existing directory), its
/// whole ranking (every signal of every function, the true one named) is written there as `N.json`.
/// The localisation comes back too: `rgd fix` repairs from that very ranking (the one measured),
/// rather than running the spectra again.
pub fn locate(
    copy: &Path,
    runner: &ProjectTests,
    i: &Instance,
    started: Instant,
    rankings: Option<&Path>,
) -> (Measured, Option<Localisation>) {
    match located(copy, runner, i, rankings) {
        Ok(((combined, ochiai, ranked), found)) => (
            Measured {
                key: key(i),
                project: i.project.clone(),
                combined,
                ochiai,
                ranked,
                error: None,
                seconds: started.elapsed().as_secs_f64(),
                fix: None,
            },
            Some(found),
        ),
        Err(e) => (Measured::failed(i, format!("{e:#}"), started.elapsed().as_secs_f64()), None),
    }
}

/// The unpacked sdist of the instance's newer release (fetched once into `cache`), checked to be
/// the one it was harvested from.
pub fn newer_release(cache: &Path, i: &Instance) -> anyhow::Result<std::path::PathBuf> {
    let (tree, hash) = pypi::sdist(cache, &i.project, &i.versions[1])?;
    if !i.sdists[1].is_empty() && hash != i.sdists[1] {
        bail!(
            "{} {}: its sdist's sha256 is {hash}, not the {} the instance was harvested from",
            i.project,
            i.versions[1],
            i.sdists[1]
        );
    }
    Ok(tree)
}

/// A copy of the instance's newer release (its sdist fetched once and hash-checked) with the
/// faulty function put back, and the released definition of that function (at column 0).
pub fn faulty_copy(cache: &Path, i: &Instance) -> anyhow::Result<(tempfile::TempDir, String)> {
    let tree = newer_release(cache, i)?;
    let copy = tempfile::tempdir()?;
    crate::checked::copy_tree(&tree, copy.path()).context("copying the release")?;
    let module = std::fs::read_to_string(copy.path().join(&i.file)).with_context(|| i.file.clone())?;
    let released =
        crate::code::align::definition(&module, &i.function).with_context(|| format!("{}: the release has no {}", i.file, i.function))?;
    let faulty = crate::code::align::put_back(&module, &i.function, &i.faulty)
        .with_context(|| format!("{}: cannot put {} back", i.file, i.function))?;
    std::fs::write(copy.path().join(&i.file), faulty)?;
    Ok((copy, released))
}

type Places = (Option<Place>, Option<Place>, usize);

fn located(copy: &Path, runner: &ProjectTests, i: &Instance, rankings: Option<&Path>) -> anyhow::Result<(Places, Localisation)> {
    let seconds = std::time::Duration::from_secs_f64(crate::repo::locate::localise::TEST_SECONDS);
    let found = crate::repo::locate::localise::localise(runner, copy, &i.red_tests, None, seconds)?;
    if let Some(dir) = rankings {
        let n = std::fs::read_dir(dir)?.count();
        let record = serde_json::json!({"key": key(i), "file": i.file, "function": i.function, "ranked": found.ranked});
        std::fs::write(dir.join(format!("{n}.json")), record.to_string())?;
    }
    let places = (
        Place::of(&found.ranked, &i.file, &i.function),
        Place::by(&found.ranked, &i.file, &i.function, |c| c.ochiai),
        found.ranked.len(),
    );
    Ok((places, found))
}

/// Judges the repair `rgd fix` found for instance `i` in `copy` (None: it found none): the
/// functions it changed (`fixed_by`, `file::qualname`) and the files it changed, as (file, new
/// text). Fixed as released: the faulty function alone, its code (comments aside) the released
/// fix's; any other repair has the release's whole suite run on it.
pub fn judge_fix(
    copy: &Path,
    runner: &ProjectTests,
    i: &Instance,
    released: &str,
    fixed_by: Option<&[String]>,
    changes: &[(String, String)],
) -> Fixing {
    let Some(fixed_by) = fixed_by else {
        return Fixing::default();
    };
    let mut f = Fixing {
        fixed: true,
        fixed_by: fixed_by.to_vec(),
        ..Fixing::default()
    };
    let target = format!("{}::{}", i.file, i.function);
    let repaired = changes
        .iter()
        .find(|(file, _)| *file == i.file)
        .and_then(|(_, text)| crate::code::align::definition(text, &i.function));
    f.as_released = fixed_by == [target]
        && changes.len() == 1
        && repaired.is_some_and(|r| crate::code::align::tokens(&r) == crate::code::align::tokens(released));
    if f.as_released {
        f.suite_green = true;
        return f;
    }
    let suite = (|| -> anyhow::Result<(usize, Option<String>)> {
        // The suite as the release collects it, before any of the repair is in the copy: code the
        // repair wrote cannot add or hide a test.
        let ids = runner.collect_with_errors(copy, &Default::default())?.ids;
        let limits = crate::repo::run::testrun::TestLimits {
            timeout: std::time::Duration::from_secs(SUITE_SECONDS),
            ..Default::default()
        };
        let (run, in_process) = match (changes, fixed_by) {
            // One function in one file: its process apart from the tests' (`isolate.rs`).
            ([(file, text)], [target]) if target.starts_with(&format!("{file}::")) => {
                let spec = crate::repo::run::testrun::RunSpec {
                    replace: Some((file, text)),
                    target: Some(&target[file.len() + 2..]),
                    ids: &ids,
                    withhold: &[],
                };
                let run = runner.run(copy, &spec, limits)?;
                let why = run.isolation.best_effort().map(str::to_string);
                (run, why)
            }
            _ => {
                for (file, text) in changes {
                    std::fs::write(copy.join(file), text)?;
                }
                let spec = crate::repo::run::testrun::RunSpec {
                    ids: &ids,
                    ..Default::default()
                };
                let why = "a repair of several functions runs in the tests' process".to_string();
                (runner.run(copy, &spec, limits)?, Some(why))
            }
        };
        if run.timed_out {
            bail!("the suite ran past {SUITE_SECONDS} s with the repair");
        }
        let ids: std::collections::HashSet<&String> = ids.iter().collect();
        let passed = run.outcomes.iter().filter(|o| o.passed() && ids.contains(&o.id)).count();
        Ok((passed, in_process))
    })();
    match suite {
        Ok((passed, in_process)) => {
            f.suite_green = passed >= i.suite;
            f.suite_in_process = in_process;
        }
        Err(e) => f.error = Some(format!("{e:#}")),
    }
    f
}

/// How long the whole suite may run on a repair that is not the released one.
const SUITE_SECONDS: u64 = 600;

/// The results of one set: top-k of each ranking (ties broken at random) and the mean first rank.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub instances: usize,
    pub projects: usize,
    pub errors: usize,
    /// Located, but the faulty function is not among the suspects (a miss at every k).
    pub unranked: usize,
    pub rgd: [f64; 3],
    pub ochiai: [f64; 3],
    /// Expected rank of the true function (unranked: one past the last ranked).
    pub rgd_mean_rank: f64,
    pub ochiai_mean_rank: f64,
    /// Each project's rankings, by name.
    pub by_project: Vec<ProjectRanks>,
    pub seconds: f64,
    /// With `--fix`: what the repairs came to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixSummary>,
}

/// One project's rankings within a set (`rgd bench real` prints them, so a project where rgd
/// ranks badly is not hidden by the pooled figures).
#[derive(Debug, Clone, Serialize)]
pub struct ProjectRanks {
    pub project: String,
    pub instances: usize,
    pub rgd: [f64; 3],
    pub ochiai: [f64; 3],
    pub rgd_mean_rank: f64,
}

/// Top-1/3/5 of both rankings and their mean first ranks over `located`.
fn ranks(located: &[&Measured]) -> ([f64; 3], [f64; 3], f64, f64) {
    let n = located.len().max(1) as f64;
    let top = |pick: fn(&Measured) -> Option<Place>, k: usize| {
        located.iter().filter_map(|m| pick(m)).map(|p| p.within(k)).fold(0.0, |a, b| a + b) / n
    };
    let mean = |pick: fn(&Measured) -> Option<Place>| {
        located
            .iter()
            .map(|m| pick(m).map_or(m.ranked as f64 + 1.0, |p| p.better as f64 + (p.tied as f64 + 1.0) / 2.0))
            .sum::<f64>()
            / n
    };
    (
        [1, 3, 5].map(|k| top(|m| m.combined, k)),
        [1, 3, 5].map(|k| top(|m| m.ochiai, k)),
        mean(|m| m.combined),
        mean(|m| m.ochiai),
    )
}

pub fn summary(results: &[Measured]) -> Summary {
    let located: Vec<&Measured> = results.iter().filter(|m| m.error.is_none()).collect();
    let (rgd, ochiai, rgd_mean_rank, ochiai_mean_rank) = ranks(&located);
    let mut by_project: std::collections::BTreeMap<&str, Vec<&Measured>> = Default::default();
    for m in &located {
        by_project.entry(m.project.as_str()).or_default().push(m);
    }
    let projects: std::collections::BTreeSet<&str> = results.iter().map(|m| m.project.as_str()).collect();
    Summary {
        instances: located.len(),
        projects: projects.len(),
        errors: results.len() - located.len(),
        unranked: located.iter().filter(|m| m.combined.is_none()).count(),
        rgd,
        ochiai,
        rgd_mean_rank,
        ochiai_mean_rank,
        by_project: by_project
            .into_iter()
            .map(|(project, located)| {
                let (rgd, ochiai, rgd_mean_rank, _) = ranks(&located);
                ProjectRanks {
                    project: project.to_string(),
                    instances: located.len(),
                    rgd,
                    ochiai,
                    rgd_mean_rank,
                }
            })
            .collect(),
        seconds: results.iter().map(|m| m.seconds).sum(),
        fix: fix_summary(results),
    }
}

impl Summary {
    /// The summary as the bench prints it: how many located, the two rankings, the repairs.
    pub fn lines(&self, set: &str) -> Vec<String> {
        let mut out = vec![format!(
            "{set} set: {} instances from {} projects located ({} could not be; {} without the faulty function among the suspects) in {:.0}s",
            self.instances, self.projects, self.errors, self.unranked, self.seconds
        )];
        // With nothing located there is no ranking to show (an empty sum would print as -0.000).
        if self.instances > 0 {
            out.push(format!(
                "{:<16} {:>6} {:>6} {:>6} {:>10}",
                "ranking", "top-1", "top-3", "top-5", "mean rank"
            ));
            for (name, top, mean) in [
                ("rgd locate", self.rgd, self.rgd_mean_rank),
                ("Ochiai alone", self.ochiai, self.ochiai_mean_rank),
            ] {
                out.push(format!("{name:<16} {:>6.3} {:>6.3} {:>6.3} {mean:>10.2}", top[0], top[1], top[2]));
            }
        }
        if self.by_project.len() > 1 {
            out.push(format!(
                "{:<22} {:>6} {:>6} {:>6} {:>10} {:>13}",
                "by project", "top-1", "top-3", "top-5", "mean rank", "Ochiai top-1"
            ));
            for p in &self.by_project {
                out.push(format!(
                    "{:<22} {:>6.3} {:>6.3} {:>6.3} {:>10.2} {:>13.3}",
                    format!("{} ({})", p.project, p.instances),
                    p.rgd[0],
                    p.rgd[1],
                    p.rgd[2],
                    p.rgd_mean_rank,
                    p.ochiai[0]
                ));
            }
        }
        let Some(f) = &self.fix else { return out };
        let share = |n: usize| n as f64 / f.instances.max(1) as f64;
        out.push(format!(
            "rgd fix ({}): {} of {} fixed ({:.3}; {} as released, {} fixed but breaking the suite), {:.0}s, {:.1} calls and {:.0} tokens per instance",
            f.model,
            f.fixed,
            f.instances,
            share(f.fixed),
            f.as_released,
            f.breaking,
            f.seconds,
            f.calls,
            f.tokens
        ));
        if f.in_process > 0 {
            out.push(format!(
                "  {} unverified ({:.3}): green with the function judged in the tests' process, which rgd cannot vouch for; not counted as fixed",
                f.in_process,
                share(f.in_process),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    /// The widening's halves are fixed apart, and leave out what outside checks keep for
    /// themselves (regressions of these measure rgd on projects it never saw).
    #[test]
    fn the_widenings_halves_are_apart_and_leave_the_outside_checks_projects_alone() {
        for p in NEXT_TUNING {
            assert!(!HELD_OUT.contains(p), "{p} is in both halves");
        }
        for kept in OUTSIDE_CHECKS {
            assert!(
                !HELD_OUT.contains(kept) && !NEXT_TUNING.contains(kept),
                "{kept} is the outside checks'"
            );
        }
    }

    use super::*;

    fn measured(fix: Fixing) -> Measured {
        Measured {
            key: "k".into(),
            project: "p".into(),
            combined: None,
            ochiai: None,
            ranked: 0,
            error: None,
            seconds: 0.0,
            fix: Some(fix),
        }
    }

    /// Each project's rankings stand beside the pooled ones, so a project ranked badly shows
    /// (the pooled figures lean toward the project with most instances).
    #[test]
    fn each_projects_rankings_are_shown_beside_the_pooled_ones() {
        let at = |project: &str, better: usize, ochiai: Option<usize>| Measured {
            key: format!("{project} {better}"),
            project: project.into(),
            combined: Some(Place { better, tied: 0 }),
            ochiai: ochiai.map(|better| Place { better, tied: 0 }),
            ranked: 10,
            error: None,
            seconds: 1.0,
            fix: None,
        };
        let results = [
            at("big", 0, Some(0)),
            at("big", 0, Some(4)),
            at("big", 0, None),
            at("small", 6, Some(0)),
        ];
        let s = summary(&results);
        assert_eq!((s.rgd[0], s.rgd[2]), (0.75, 0.75));
        let big = &s.by_project[0];
        let small = &s.by_project[1];
        assert_eq!((big.project.as_str(), big.instances, big.rgd), ("big", 3, [1.0, 1.0, 1.0]));
        assert!((big.ochiai[2] - 2.0 / 3.0).abs() < 1e-9, "{:?}", big.ochiai);
        assert_eq!(
            (small.project.as_str(), small.rgd, small.rgd_mean_rank),
            ("small", [0.0, 0.0, 0.0], 6.5)
        );
        let lines = s.lines("held-out");
        assert!(lines.iter().any(|l| l.starts_with("by project")), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("small (1)") && l.contains("0.000") && l.contains("6.50")),
            "{lines:?}"
        );
    }

    /// A repair whose verdict was reached in the tests' process is counted apart from the
    /// isolated ones, and said in its line; one that broke the suite counts in neither.
    #[test]
    fn repairs_judged_in_process_are_counted_apart() {
        let isolated = Fixing {
            fixed: true,
            as_released: true,
            suite_green: true,
            ..Fixing::default()
        };
        let in_process = Fixing {
            in_process: Some("the tests hold a weak reference".into()),
            ..isolated.clone()
        };
        let suite_in_process = Fixing {
            suite_in_process: Some("a mock".into()),
            ..isolated.clone()
        };
        let breaking = Fixing {
            suite_green: false,
            as_released: false,
            ..isolated.clone()
        };
        assert!(
            in_process
                .line()
                .contains("verdict judged in-process, unverified: the tests hold a weak reference")
        );
        let results = [isolated, in_process, suite_in_process, breaking, Fixing::default()].map(measured);
        let f = fix_summary(&results).unwrap();
        assert_eq!((f.instances, f.fixed, f.in_process, f.breaking), (5, 1, 2, 1));
    }

    /// A located instance whose ranking lacks the faulty function is counted as such, and is a
    /// miss at every k; one that could not be located is neither.
    #[test]
    fn a_ranking_without_the_faulty_function_is_counted_apart() {
        let mut first = measured(Fixing::default());
        first.combined = Some(Place { better: 0, tied: 1 });
        first.ranked = 4;
        let mut unranked = measured(Fixing::default());
        unranked.ranked = 3;
        let failed = Measured {
            error: Some("a red test passes".into()),
            ..measured(Fixing::default())
        };
        let s = summary(&[first, unranked, failed]);
        assert_eq!((s.instances, s.errors, s.unranked), (2, 1, 1));
        assert_eq!(s.rgd, [0.5, 0.5, 0.5]);
        assert_eq!(s.rgd_mean_rank, (1.0 + 4.0) / 2.0);
        // No ranking holds it: 0, printed as 0.000 (an empty f64 sum is -0.0).
        let alone = summary(&[measured(Fixing::default())]);
        assert!(alone.rgd.iter().all(|t| *t == 0.0 && t.is_sign_positive()), "{:?}", alone.rgd);
    }
}
