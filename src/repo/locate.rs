//! Fault localisation (`rgd locate`): which of a project's functions most likely holds the fault
//! that makes some tests fail, from the spectra of the failing and the passing tests
//! (`testrun::Spectrum`) and the failing tests' exception paths.
//!
//! - **Ochiai** (spectrum-based): for a function covered by `ef` failing and `ep` passing tests, of
//!   `F` failing tests in all, `ef / sqrt(F * (ef + ep))`: 1 for a function every failing test
//!   and no passing test entered.
//! - **Exception path**: a project frame the failing test's exception passed through, weighted
//!   `1 / (1 + d)` by its distance `d` from the innermost project frame (the one that raised),
//!   averaged over the failing tests. It breaks Ochiai's ties, which are the rule when a few tests
//!   fail: every function only failing tests reach scores 1.
//!
//! The score is `ochiai + 0.5 * path`; candidates come best first, each with its numbers.

use std::collections::BTreeMap;

use serde::Serialize;

use super::testrun::Spectrum;

/// Weight of the exception path beside Ochiai.
pub const PATH_WEIGHT: f64 = 0.5;

/// A function that may hold the fault, with why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    /// The file, relative to the project's root.
    pub file: String,
    /// `name` or `Class.name`.
    pub name: String,
    /// Its first line.
    pub line: u32,
    pub score: f64,
    pub ochiai: f64,
    /// The exception-path signal (0 when no failing test's exception passed through it).
    pub path: f64,
    /// Failing and passing tests that entered it.
    pub failing: usize,
    pub passing: usize,
}

impl Candidate {
    /// `path/mod.py::Class.name`, as `rgd solve --repo --target` takes it.
    pub fn target(&self) -> String {
        format!("{}::{}", self.file, self.name)
    }

    /// Why it ranks where it does, in words.
    pub fn why(&self, failing_total: usize) -> String {
        let mut why = format!(
            "ochiai {:.2}: entered by {}/{} failing and {} passing tests",
            self.ochiai, self.failing, failing_total, self.passing
        );
        if self.path > 0.0 {
            why.push_str(&format!("; on the failing tests' exception path ({:.2})", self.path));
        }
        why
    }
}

/// The project's functions entered by a failing test, best suspect first.
pub fn rank(failing: &[&Spectrum], passing: &[&Spectrum]) -> Vec<Candidate> {
    rank_weighted(failing, passing, PATH_WEIGHT)
}

/// `rank` with the exception path weighted `path_weight` (0: Ochiai alone, for comparison).
pub fn rank_weighted(failing: &[&Spectrum], passing: &[&Spectrum], path_weight: f64) -> Vec<Candidate> {
    // By (file, name): a comprehension or inner function is reported under the function holding
    // it (line 0), which a test that entered the one also entered.
    type Key = (String, String);
    let key = |(file, name, _): &(String, String, u32)| (file.clone(), name.clone());
    let mut lines: BTreeMap<Key, u32> = BTreeMap::new();
    let mut counts: BTreeMap<Key, (usize, usize, f64)> = BTreeMap::new();
    for s in failing.iter().chain(passing) {
        for f in s.functions.iter().chain(&s.raised) {
            let line = lines.entry(key(f)).or_default();
            *line = (*line).max(f.2);
        }
    }
    for s in failing {
        let entered: std::collections::BTreeSet<Key> = s.functions.iter().map(key).collect();
        for k in entered {
            counts.entry(k).or_default().0 += 1;
        }
        let depth = s.raised.len();
        for (i, f) in s.raised.iter().enumerate() {
            let distance = depth - 1 - i;
            counts.entry(key(f)).or_default().2 += 1.0 / (1.0 + distance as f64) / failing.len() as f64;
        }
    }
    for s in passing {
        let entered: std::collections::BTreeSet<Key> = s.functions.iter().map(key).collect();
        for k in entered {
            if let Some(c) = counts.get_mut(&k) {
                c.1 += 1;
            }
        }
    }
    let total = failing.len() as f64;
    let mut out: Vec<Candidate> = counts
        .into_iter()
        .filter(|(_, (ef, _, _))| *ef > 0)
        .map(|((file, name), (ef, ep, path))| {
            let line = lines.get(&(file.clone(), name.clone())).copied().unwrap_or_default();
            let ochiai = ef as f64 / (total * (ef + ep) as f64).sqrt();
            Candidate {
                file,
                name,
                line,
                score: ochiai + path_weight * path,
                ochiai,
                path,
                failing: ef,
                passing: ep,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.passing.cmp(&b.passing))
            .then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line)))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str) -> (String, String, u32) {
        ("pkg/m.py".into(), name.into(), 1)
    }

    fn spectrum(id: &str, functions: &[&str], raised: &[&str]) -> Spectrum {
        Spectrum {
            id: id.into(),
            functions: functions.iter().map(|n| f(n)).collect(),
            raised: raised.iter().map(|n| f(n)).collect(),
        }
    }

    #[test]
    fn ochiai_ranks_what_only_failing_tests_reach_and_the_exception_path_breaks_ties() {
        let failing = [spectrum("t::a", &["parse", "helper", "total"], &["total", "helper"])];
        let passing = [spectrum("t::b", &["parse"], &[]), spectrum("t::c", &["parse", "unrelated"], &[])];
        let ranked = rank(&failing.iter().collect::<Vec<_>>(), &passing.iter().collect::<Vec<_>>());
        let names: Vec<&str> = ranked.iter().map(|c| c.name.as_str()).collect();
        // helper and total: Ochiai 1 both; helper raised (innermost), total called it.
        assert_eq!(names, ["helper", "total", "parse"]);
        assert_eq!(ranked[0].ochiai, 1.0);
        assert_eq!(ranked[0].path, 1.0);
        assert_eq!(ranked[1].path, 0.5);
        assert!((ranked[2].ochiai - 1.0 / 3f64.sqrt()).abs() < 1e-9, "{ranked:?}");
        // Functions no failing test entered are no candidates.
        assert!(!names.contains(&"unrelated"));
        assert!(ranked[0].why(1).contains("1/1 failing and 0 passing"));
        assert_eq!(ranked[0].target(), "pkg/m.py::helper");
    }
}
