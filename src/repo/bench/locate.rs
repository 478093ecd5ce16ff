//! `rgd bench locate`: fault localisation on faults no one here wrote. For each project of `rgd
//! bench repo` whose sdist ships tests, single-fault mutants (`code::mutate`) of its modules are
//! planted one at a time, spread evenly over all the mutants it has; a mutant counts when it makes
//! at least one test fail that passes on the original. `rgd locate`'s ranking then runs on the
//! spectra of that mutant's suite, and the mutated function's place is noted (ties counted as
//! broken at random), for Ochiai alone and
//! for line Ochiai alone and for rgd's ranking (line Ochiai and the exception path).

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::repo::bench::{Project, chosen, ships_tests};
use crate::repo::locate::{Signals, rank_with};
use crate::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};

/// One mutant's result.
#[derive(Debug, Clone, Serialize)]
pub struct Located {
    pub file: String,
    pub function: String,
    pub line: usize,
    pub operator: String,
    /// The tests the mutant made fail (that pass on the original) and that ran to their failure:
    /// a test the run never reached (cut at its time limit) is not given to `rgd fix`, which
    /// would rightly say it passes.
    pub failing: Vec<String>,
    /// Where the mutated function ranks by function Ochiai alone, line Ochiai alone and rgd's
    /// ranking (None: not ranked).
    pub ochiai: Option<Place>,
    pub lines: Option<Place>,
    /// ... by the failing call tree alone (exception paths) and by retrieval alone.
    pub call_tree: Option<Place>,
    pub retrieval: Option<Place>,
    pub combined: Option<Place>,
    pub seconds: f64,
    /// rgd's ranking with every signal's value (to weigh them anew
    /// without running the tests again).
    pub candidates: Vec<crate::repo::locate::Candidate>,
    /// The mutated module (for an end-to-end run: `cargo bench --bench fix`).
    #[serde(skip)]
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectLocated {
    pub name: String,
    /// Mutants tried, and those no test noticed.
    pub tried: usize,
    pub survived: usize,
    pub located: Vec<Located>,
}

/// A candidate's place among equals: how many scored higher, and how many scored the same (itself
/// included). Ties are the rule for a signal alone (every function no exception passed through
/// has path 0), and the order among equals says nothing: it counts as random.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize, PartialEq)]
pub struct Place {
    pub better: usize,
    pub tied: usize,
}

impl Place {
    /// Where `file::name` stands in `ranked` (best first, by `score`).
    pub fn of(ranked: &[crate::repo::locate::Candidate], file: &str, name: &str) -> Option<Place> {
        Self::by(ranked, file, name, |c| c.score)
    }

    /// Where `file::name` stands in `ranked` by one of its signals (`|c| c.ochiai`).
    pub fn by(
        ranked: &[crate::repo::locate::Candidate],
        file: &str,
        name: &str,
        score: fn(&crate::repo::locate::Candidate) -> f64,
    ) -> Option<Place> {
        let me = score(ranked.iter().find(|c| c.file == file && c.name == name)?);
        let close = |c: &crate::repo::locate::Candidate| (score(c) - me).abs() <= 1e-12;
        Some(Place {
            better: ranked.iter().filter(|c| score(c) > me && !close(c)).count(),
            tied: ranked.iter().filter(|c| close(c)).count(),
        })
    }

    /// The chance it is among the first `k` when ties are broken at random.
    pub fn within(self, k: usize) -> f64 {
        ((k as f64 - self.better as f64) / self.tied as f64).clamp(0.0, 1.0)
    }
}

/// Expected share of `located` among the first `k` by `place` (ties broken at random).
pub fn top(located: &[&Located], k: usize, place: fn(&Located) -> Option<Place>) -> f64 {
    if located.is_empty() {
        return 0.0;
    }
    // A fold from 0, not `sum`: an empty f64 sum is -0.0, which prints as -0.000.
    located.iter().filter_map(|l| place(l)).map(|p| p.within(k)).fold(0.0, |a, b| a + b) / located.len() as f64
}

pub fn run(
    cache: &Path,
    set: &'static [Project],
    only: &[String],
    runner: &ProjectTests,
    per_project: usize,
    report: &dyn Fn(&str),
) -> anyhow::Result<Vec<ProjectLocated>> {
    let limits = TestLimits::default();
    let mut out = Vec::new();
    for (name, dir) in chosen(cache, set, only, report)? {
        let files = crate::repo::index::python_files(&dir)?;
        if !ships_tests(&files) {
            report(&format!("{name}: its source distribution ships no tests"));
            continue;
        }
        let all = runner.collect(&dir, &[])?;
        let baseline = runner.run(
            &dir,
            &RunSpec {
                ids: &all,
                ..RunSpec::default()
            },
            limits,
        )?;
        let ids: Vec<String> = baseline.outcomes.iter().filter(|o| o.passed()).map(|o| o.id.clone()).collect();
        // A mutant that loops forever would take the whole default timeout: four times the
        // original's run (the collector slows a run down) and ten seconds are plenty; each test
        // is stopped as `rgd locate` stops it.
        let limits = TestLimits {
            timeout: std::time::Duration::from_secs_f64(baseline.seconds * 4.0 + 10.0),
            per_test: Some(std::time::Duration::from_secs_f64(crate::repo::locate::localise::TEST_SECONDS)),
            ..limits
        };
        let mut candidates = Vec::new();
        for file in files.iter().filter(|f| crate::repo::bench::is_library_file(f)) {
            let text = std::fs::read_to_string(dir.join(file))?;
            candidates.extend(crate::code::mutate::mutants(&text).into_iter().map(|m| (file.clone(), m)));
        }
        let stride = (candidates.len() / per_project.max(1)).max(1);
        let chosen: Vec<_> = candidates.into_iter().step_by(stride).take(per_project).collect();
        report(&format!(
            "{name}: {} tests pass on the original; {} mutants",
            ids.len(),
            chosen.len()
        ));
        let lexical = crate::repo::index::lexical::Lexical::build(&dir)?;
        let mut located = Vec::new();
        let mut survived = 0;
        for (file, m) in &chosen {
            let started = Instant::now();
            let spec = RunSpec {
                replace: Some((file, &m.text)),
                ids: &ids,
                ..RunSpec::default()
            };
            let (run, records) = runner.spectra(&dir, &spec, limits)?;
            let spectra = crate::repo::locate::per_test(&records, &ids);
            let failed: Vec<&String> = run.outcomes.iter().filter(|o| !o.passed()).map(|o| &o.id).collect();
            if failed.is_empty() {
                survived += 1;
                continue;
            }
            let of = |wanted: &dyn Fn(&str) -> bool| spectra.iter().filter(|s| wanted(&s.id)).collect::<Vec<_>>();
            let failing = of(&|id| failed.iter().any(|f| *f == id));
            let passing = of(&|id| !failed.iter().any(|f| *f == id));
            let messages: Vec<(&str, &str)> = run
                .outcomes
                .iter()
                .filter(|o| !o.passed())
                .map(|o| (o.id.as_str(), o.message.as_str()))
                .collect();
            let retrieval = lexical.scores(&messages)?;
            // rgd's ranking once: its place, and every candidate's signals for the JSON.
            let combined = rank_with(&failing, &passing, &retrieval, Signals::COMBINED);
            let place = |signals: Signals| Place::of(&rank_with(&failing, &passing, &retrieval, signals), file, &m.function);
            located.push(Located {
                file: file.clone(),
                function: m.function.clone(),
                line: m.line,
                operator: m.operator.to_string(),
                failing: run
                    .outcomes
                    .iter()
                    .filter(|o| o.status == "failed" || o.status == "error")
                    .map(|o| o.id.clone())
                    .collect(),
                ochiai: place(Signals::OCHIAI),
                lines: place(Signals::LINES),
                combined: Place::of(&combined, file, &m.function),
                call_tree: place(Signals::CALL_TREE),
                retrieval: place(Signals::RETRIEVAL),
                candidates: combined,
                seconds: started.elapsed().as_secs_f64(),
                text: m.text.clone(),
            });
        }
        report(&format!("{name}: {} located, {survived} survived", located.len()));
        out.push(ProjectLocated {
            name,
            tried: chosen.len(),
            survived,
            located,
        });
    }
    Ok(out)
}

/// The bench's report: per project and overall, top-1/3/5 of the mutated function by each signal.
pub fn table(projects: &[ProjectLocated]) -> Vec<String> {
    let mut out = Vec::new();
    out.push("| project | mutants | survived | located | ochiai top-1 | top-5 | call tree top-1 | top-5 | retrieval top-1 | top-5 | line ochiai top-1 | top-5 | rgd top-1 | top-3 | top-5 | s per mutant |".to_string());
    out.push(format!("|{}", " --- |".repeat(16)));
    let mut row = |name: &str, tried: usize, survived: usize, l: &[&Located]| {
        let secs = l.iter().map(|x| x.seconds).sum::<f64>() / l.len().max(1) as f64;
        out.push(format!(
            "| {name} | {tried} | {survived} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {secs:.1} |",
            l.len(),
            top(l, 1, |x| x.ochiai),
            top(l, 5, |x| x.ochiai),
            top(l, 1, |x| x.call_tree),
            top(l, 5, |x| x.call_tree),
            top(l, 1, |x| x.retrieval),
            top(l, 5, |x| x.retrieval),
            top(l, 1, |x| x.lines),
            top(l, 5, |x| x.lines),
            top(l, 1, |x| x.combined),
            top(l, 3, |x| x.combined),
            top(l, 5, |x| x.combined),
        ));
    };
    for p in projects {
        row(&p.name, p.tried, p.survived, &p.located.iter().collect::<Vec<_>>());
    }
    let all: Vec<&Located> = projects.iter().flat_map(|p| &p.located).collect();
    row(
        "all",
        projects.iter().map(|p| p.tried).sum(),
        projects.iter().map(|p| p.survived).sum(),
        &all,
    );
    out
}
