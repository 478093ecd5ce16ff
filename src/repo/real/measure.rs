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
use crate::repo::locate_bench::Place;
use crate::repo::testrun::ProjectTests;

/// Projects whose instances are held out: never looked at while localisation is tuned. Written
/// down when the first list was harvested, before any tuning on it.
pub const HELD_OUT: &[&str] = &["boltons", "click", "isodate", "markdown", "parso", "tomlkit", "xmltodict"];

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
}

pub fn key(i: &Instance) -> String {
    format!("{} {}..{} {}::{}", i.project, i.versions[0], i.versions[1], i.file, i.function)
}

pub fn held_out(i: &Instance) -> bool {
    HELD_OUT.contains(&i.project.as_str())
}

/// Locates one instance in a copy of its newer release with the faulty function put back.
pub fn locate(cache: &Path, runner: &ProjectTests, i: &Instance) -> Measured {
    let started = Instant::now();
    let (combined, ochiai, ranked, error) = match located(cache, runner, i) {
        Ok((c, o, n)) => (c, o, n, None),
        Err(e) => (None, None, 0, Some(format!("{e:#}"))),
    };
    Measured {
        key: key(i),
        project: i.project.clone(),
        combined,
        ochiai,
        ranked,
        error,
        seconds: started.elapsed().as_secs_f64(),
    }
}

fn located(cache: &Path, runner: &ProjectTests, i: &Instance) -> anyhow::Result<(Option<Place>, Option<Place>, usize)> {
    let (tree, hash) = pypi::sdist(cache, &i.project, &i.versions[1])?;
    if !i.sdists[1].is_empty() && hash != i.sdists[1] {
        bail!(
            "{} {}: its sdist's sha256 is {hash}, not the {} the instance was harvested from",
            i.project,
            i.versions[1],
            i.sdists[1]
        );
    }
    let copy = tempfile::tempdir()?;
    crate::checked::copy_tree(&tree, copy.path()).context("copying the release")?;
    let module = std::fs::read_to_string(copy.path().join(&i.file)).with_context(|| i.file.clone())?;
    let faulty = crate::code::align::put_back(&module, &i.function, &i.faulty)
        .with_context(|| format!("{}: cannot put {} back", i.file, i.function))?;
    std::fs::write(copy.path().join(&i.file), faulty)?;
    let seconds = std::time::Duration::from_secs_f64(crate::repo::localise::TEST_SECONDS);
    let found = crate::repo::localise::localise(runner, copy.path(), &i.red_tests, None, seconds)?;
    Ok((
        Place::of(&found.ranked, &i.file, &i.function),
        Place::by(&found.ranked, &i.file, &i.function, |c| c.ochiai),
        found.ranked.len(),
    ))
}

/// The results of one set: top-k of each ranking (ties broken at random) and the mean first rank.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub instances: usize,
    pub projects: usize,
    pub errors: usize,
    pub rgd: [f64; 3],
    pub ochiai: [f64; 3],
    /// Expected rank of the true function (unranked: one past the last ranked).
    pub rgd_mean_rank: f64,
    pub ochiai_mean_rank: f64,
    pub seconds: f64,
}

pub fn summary(results: &[Measured]) -> Summary {
    let located: Vec<&Measured> = results.iter().filter(|m| m.error.is_none()).collect();
    let n = located.len().max(1) as f64;
    let top = |pick: fn(&Measured) -> Option<Place>, k: usize| located.iter().filter_map(|m| pick(m)).map(|p| p.within(k)).sum::<f64>() / n;
    let mean = |pick: fn(&Measured) -> Option<Place>| {
        located
            .iter()
            .map(|m| pick(m).map_or(m.ranked as f64 + 1.0, |p| p.better as f64 + (p.tied as f64 + 1.0) / 2.0))
            .sum::<f64>()
            / n
    };
    let projects: std::collections::BTreeSet<&str> = results.iter().map(|m| m.project.as_str()).collect();
    Summary {
        instances: located.len(),
        projects: projects.len(),
        errors: results.len() - located.len(),
        rgd: [1, 3, 5].map(|k| top(|m| m.combined, k)),
        ochiai: [1, 3, 5].map(|k| top(|m| m.ochiai, k)),
        rgd_mean_rank: mean(|m| m.combined),
        ochiai_mean_rank: mean(|m| m.ochiai),
        seconds: results.iter().map(|m| m.seconds).sum(),
    }
}
