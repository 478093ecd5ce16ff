//! Fault localisation (`rgd locate`): which of a project's functions most likely holds the fault
//! that makes some tests fail, from the spectra of the failing and the passing tests
//! (`testrun::Spectrum`) and the failing tests' exception paths.
//!
//! - **Ochiai** (spectrum-based): for a function covered by `ef` failing and `ep` passing tests, of
//!   `F` failing tests in all, `ef / sqrt(F * (ef + ep))`: 1 for a function every failing test
//!   and no passing test entered.
//! - **Line Ochiai**: the same over each line the function ran, the function taking its most
//!   suspicious line's score. A caller and its callee are entered by the same tests (one function
//!   spectrum), but the faulty line is often in a branch only failing tests take.
//! - **Exception path**: a project frame the failing test's exception passed through, weighted
//!   `1 / (1 + d)` by its distance `d` from the innermost project frame (the one that raised),
//!   averaged over the failing tests. It breaks ties, which are the rule when a few tests fail.
//!
//! - **Retrieval**: the failing tests' source and messages against the functions' words
//!   (`lexical.rs`), 1 for the best match.
//!
//! The score is `line ochiai + 0.25 * path + 0.3 * retrieval` (function Ochiai where no lines were
//! recorded); candidates come best first, each with its numbers.

pub mod localise;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::repo::run::testrun::Spectrum;

/// Weight of the exception path beside line Ochiai: the best of 0, 0.25, 0.5 and 1 on the tuning
/// set of `rgd bench locate` (toolz, boltons, cachetools, inflection), with `RETRIEVAL_WEIGHT`.
pub const PATH_WEIGHT: f64 = 0.25;

/// Weight of the retrieval signal beside line Ochiai: the best of 0, 0.1, 0.2, 0.3 and 0.5 on the
/// same tuning set (the held-out projects were measured once, after).
pub const RETRIEVAL_WEIGHT: f64 = 0.3;

/// Which spectrum score a ranking uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spectral {
    None,
    /// Ochiai over the functions each test entered.
    Functions,
    /// Ochiai over the lines each test ran, a function taking its best line's.
    Lines,
}

/// Which signals a ranking uses, and how much each weighs (`rgd bench locate` compares them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signals {
    pub spectrum: Spectral,
    /// Weight of the exception path (0: not used).
    pub path: f64,
    /// Weight of the retrieval signal (0: not used).
    pub retrieval: f64,
}

impl Signals {
    /// What `rgd locate` uses.
    pub const COMBINED: Signals = Signals {
        spectrum: Spectral::Lines,
        path: PATH_WEIGHT,
        retrieval: RETRIEVAL_WEIGHT,
    };
    /// Function-level Ochiai alone, the classic baseline.
    pub const OCHIAI: Signals = Signals {
        spectrum: Spectral::Functions,
        path: 0.0,
        retrieval: 0.0,
    };
    /// Line Ochiai alone.
    pub const LINES: Signals = Signals {
        spectrum: Spectral::Lines,
        path: 0.0,
        retrieval: 0.0,
    };
    /// The failing call tree alone: the frames the failing tests' exceptions passed through.
    pub const CALL_TREE: Signals = Signals {
        spectrum: Spectral::None,
        path: 1.0,
        retrieval: 0.0,
    };
    /// Retrieval alone: the failing tests' source and messages against the functions' words.
    pub const RETRIEVAL: Signals = Signals {
        spectrum: Spectral::None,
        path: 0.0,
        retrieval: 1.0,
    };
}

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
    /// Function-level Ochiai.
    pub ochiai: f64,
    /// Its most suspicious line's Ochiai, and that line (0: no lines recorded).
    pub line_ochiai: f64,
    pub hot_line: u32,
    /// The exception-path signal (0 when no failing test's exception passed through it).
    pub path: f64,
    /// The retrieval signal: its BM25 match with the failing tests, 1 for the best match.
    pub retrieval: f64,
    /// Failing and passing tests that entered it.
    pub failing: usize,
    pub passing: usize,
    /// Where the Guide's model put it (`--rerank-suspects`), if it named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_rank: Option<usize>,
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
        if self.hot_line > 0 {
            why.push_str(&format!("; line {} {:.2}", self.hot_line, self.line_ochiai));
        }
        if self.path > 0.0 {
            why.push_str(&format!("; on the failing tests' exception path ({:.2})", self.path));
        }
        if self.retrieval > 0.0 {
            why.push_str(&format!("; words like the failing tests' ({:.2})", self.retrieval));
        }
        if let Some(k) = self.model_rank {
            why.push_str(&format!("; the model's choice #{k} (--rerank-suspects)"));
        }
        why
    }
}

/// The id of the collector's record of what collection ran.
pub const COLLECTION: &str = "<collection>";

/// One spectrum per test of `ids` that has one, from the collector's records: the test's own,
/// with what collection ran added (every test depends on the project's import-time code); a test
/// that never ran because its module failed to import gets collection's spectrum and that
/// error's path as its exception path.
pub fn per_test(records: &[Spectrum], ids: &[String]) -> Vec<Spectrum> {
    let collection = records.iter().find(|r| r.id == COLLECTION);
    let with_collection = |mut s: Spectrum| {
        if let Some(c) = collection {
            for f in &c.functions {
                if !s.functions.contains(f) {
                    s.functions.push(f.clone());
                }
            }
            for l in &c.lines {
                match s.lines.iter_mut().find(|m| (&m.0, &m.1) == (&l.0, &l.1)) {
                    Some(m) => {
                        m.3.extend(&l.3);
                        m.3.sort_unstable();
                        m.3.dedup();
                    }
                    None => s.lines.push(l.clone()),
                }
            }
        }
        s
    };
    ids.iter()
        .filter_map(|id| match records.iter().find(|r| &r.id == id) {
            Some(own) => Some(with_collection(own.clone())),
            None => {
                let c = collection?;
                let file = id.split("::").next().unwrap_or(id);
                // The module's own collector, or a directory or package holding it.
                let holds = |collector: &str| collector.is_empty() || collector == file || file.starts_with(&format!("{collector}/"));
                let (_, path) = c.errors.iter().find(|(collector, _)| holds(collector))?;
                Some(Spectrum {
                    id: id.clone(),
                    functions: c.functions.clone(),
                    lines: c.lines.clone(),
                    raised: path.clone(),
                    errors: Vec::new(),
                    mismatched: Vec::new(),
                    stopped: false,
                })
            }
        })
        .collect()
}

/// The function a call's arguments did not fit, as the TypeError names it (`f() takes 2
/// positional arguments but 3 were given`, `C.m() got an unexpected keyword argument 'x'`, `f()
/// missing 1 required positional argument: 'y'`). Such a call fails before the callee's frame
/// begins, so no spectrum has the callee entered, though the fault is at that boundary: often the
/// callee's own signature, as when a release changed both the caller and the callee.
pub fn mismatched_callee(message: &str) -> Option<&str> {
    const MISMATCHES: &[&str] = &[
        "() takes ",
        "() got an unexpected keyword argument",
        "() missing ",
        "() got multiple values for argument",
        "() got some positional-only arguments",
    ];
    message.lines().filter_map(|l| l.split("TypeError: ").nth(1)).find_map(|said| {
        MISMATCHES.iter().find_map(|m| {
            let name = &said[..said.find(m)?];
            let ok = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            ok.then_some(name)
        })
    })
}

/// The project's functions entered by a failing test, best suspect first.
pub fn rank(failing: &[&Spectrum], passing: &[&Spectrum], retrieval: &Retrieved) -> Vec<Candidate> {
    rank_with(failing, passing, retrieval, Signals::COMBINED)
}

/// The retrieval signal per (file, qualified name) (`lexical::Lexical::scores`).
pub type Retrieved = HashMap<(String, String), f64>;

fn ochiai(ef: usize, ep: usize, total: usize) -> f64 {
    if ef == 0 {
        return 0.0;
    }
    ef as f64 / (total as f64 * (ef + ep) as f64).sqrt()
}

/// `rank` with the signals `signals` (for comparison).
pub fn rank_with(failing: &[&Spectrum], passing: &[&Spectrum], retrieval: &Retrieved, signals: Signals) -> Vec<Candidate> {
    // By (file, name): a comprehension or inner function is reported under the function holding
    // it (line 0), which a test that entered the one also entered.
    type Key = (String, String);
    let key = |(file, name, _): &(String, String, u32)| (file.clone(), name.clone());
    let mut first: BTreeMap<Key, u32> = BTreeMap::new();
    #[derive(Default)]
    struct Counts {
        ef: usize,
        ep: usize,
        path: f64,
        /// Per line it ran: failing and passing tests that ran it.
        lines: BTreeMap<u32, (usize, usize)>,
    }
    let mut counts: BTreeMap<Key, Counts> = BTreeMap::new();
    for s in failing.iter().chain(passing) {
        for f in s.functions.iter().chain(&s.raised) {
            let line = first.entry(key(f)).or_default();
            *line = (*line).max(f.2);
        }
    }
    let lines_of = |s: &Spectrum| -> BTreeSet<(Key, u32)> {
        s.lines
            .iter()
            .flat_map(|(file, name, _, ran)| ran.iter().map(move |l| ((file.clone(), name.clone()), *l)))
            .collect()
    };
    for s in failing {
        // A frame the test's exception passed through was entered, traced or not (a `def` whose
        // annotation raised while its module was imported, `project_spectra._defining`).
        let entered: BTreeSet<Key> = s.functions.iter().chain(&s.raised).map(key).collect();
        for k in entered {
            counts.entry(k).or_default().ef += 1;
        }
        for (k, l) in lines_of(s) {
            counts.entry(k).or_default().lines.entry(l).or_default().0 += 1;
        }
        let depth = s.raised.len();
        for (i, f) in s.raised.iter().enumerate() {
            let distance = depth - 1 - i;
            counts.entry(key(f)).or_default().path += 1.0 / (1.0 + distance as f64) / failing.len() as f64;
        }
    }
    for s in passing {
        let entered: BTreeSet<Key> = s.functions.iter().map(key).collect();
        for k in entered {
            if let Some(c) = counts.get_mut(&k) {
                c.ep += 1;
            }
        }
        for (k, l) in lines_of(s) {
            if let Some(c) = counts.get_mut(&k).and_then(|c| c.lines.get_mut(&l)) {
                c.1 += 1;
            }
        }
    }
    let total = failing.len();
    let mut out: Vec<Candidate> = counts
        .into_iter()
        .filter(|(_, c)| c.ef > 0)
        .map(|((file, name), c)| {
            let line = first.get(&(file.clone(), name.clone())).copied().unwrap_or_default();
            let function = ochiai(c.ef, c.ep, total);
            // The most suspicious line, the earliest of equals.
            let (hot_line, line_ochiai) = c
                .lines
                .iter()
                .map(|(l, (ef, ep))| (*l, ochiai(*ef, *ep, total)))
                .fold((0, 0.0), |best, next| if next.1 > best.1 { next } else { best });
            let suspicion = match signals.spectrum {
                Spectral::None => 0.0,
                Spectral::Lines if hot_line > 0 => line_ochiai,
                Spectral::Lines | Spectral::Functions => function,
            };
            let words = retrieval.get(&(file.clone(), name.clone())).copied().unwrap_or_default();
            Candidate {
                score: suspicion + signals.path * c.path + signals.retrieval * words,
                retrieval: words,
                file,
                name,
                line,
                ochiai: function,
                line_ochiai,
                hot_line,
                path: c.path,
                failing: c.ef,
                passing: c.ep,
                model_rank: None,
            }
        })
        .collect();
    // Ties go to the better spectrum, unless the ranking is of a signal alone.
    let spectral = signals.spectrum != Spectral::None;
    out.sort_by(|a, b| {
        let by_spectrum = || {
            if spectral {
                b.ochiai.total_cmp(&a.ochiai).then(a.passing.cmp(&b.passing))
            } else {
                std::cmp::Ordering::Equal
            }
        };
        b.score
            .total_cmp(&a.score)
            .then_with(by_spectrum)
            .then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line)))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callee_an_argument_mismatch_names_is_read_from_the_typeerror() {
        let said = mismatched_callee;
        assert_eq!(
            said("E   TypeError: _sample_unweighted() takes from 2 to 3 positional arguments but 4 were given"),
            Some("_sample_unweighted")
        );
        assert_eq!(
            said("x\nTypeError: Token.__init__() got an unexpected keyword argument 'parent'"),
            Some("Token.__init__")
        );
        assert_eq!(said("TypeError: f() missing 1 required positional argument: 'y'"), Some("f"));
        assert_eq!(said("TypeError: unsupported operand type(s) for +: 'int' and 'str'"), None);
        assert_eq!(said("AssertionError: f() takes"), None, "only a TypeError says so");
    }

    fn f(name: &str) -> (String, String, u32) {
        ("pkg/m.py".into(), name.into(), 1)
    }

    fn spectrum(id: &str, functions: &[&str], raised: &[&str]) -> Spectrum {
        Spectrum {
            id: id.into(),
            functions: functions.iter().map(|n| f(n)).collect(),
            lines: Vec::new(),
            errors: Vec::new(),
            raised: raised.iter().map(|n| f(n)).collect(),
            mismatched: Vec::new(),
            stopped: false,
        }
    }

    #[test]
    fn ochiai_ranks_what_only_failing_tests_reach_and_the_exception_path_breaks_ties() {
        let failing = [spectrum("t::a", &["parse", "helper", "total"], &["total", "helper"])];
        let passing = [spectrum("t::b", &["parse"], &[]), spectrum("t::c", &["parse", "unrelated"], &[])];
        let ranked = rank(
            &failing.iter().collect::<Vec<_>>(),
            &passing.iter().collect::<Vec<_>>(),
            &Retrieved::new(),
        );
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

    #[test]
    fn the_line_only_failing_tests_ran_tells_a_callee_from_its_caller() {
        // `outer` always calls `inner`: one function spectrum. Only the failing test took
        // `inner`'s line 12, where the fault is.
        let lines = |outer: &[u32], inner: &[u32]| {
            vec![
                ("pkg/m.py".to_string(), "outer".to_string(), 1, outer.to_vec()),
                ("pkg/m.py".to_string(), "inner".to_string(), 10, inner.to_vec()),
            ]
        };
        let with = |id: &str, l| Spectrum {
            id: id.into(),
            functions: vec![f("outer"), f("inner")],
            lines: l,
            raised: Vec::new(),
            errors: Vec::new(),
            mismatched: Vec::new(),
            stopped: false,
        };
        let failing = [with("t::a", lines(&[2, 3], &[11, 12]))];
        let passing = [with("t::b", lines(&[2, 3], &[11, 13])), with("t::c", lines(&[2, 3], &[11, 13]))];
        let (f, p) = (failing.iter().collect::<Vec<_>>(), passing.iter().collect::<Vec<_>>());
        let ranked = rank(&f, &p, &Retrieved::new());
        assert_eq!(ranked[0].name, "inner", "{ranked:?}");
        assert_eq!((ranked[0].hot_line, ranked[0].line_ochiai), (12, 1.0));
        assert!((ranked[1].score - 1.0 / 3f64.sqrt()).abs() < 1e-9, "{ranked:?}");
        // Function Ochiai alone cannot tell them apart.
        let alone = rank_with(&f, &p, &Retrieved::new(), Signals::OCHIAI);
        assert_eq!(alone[0].ochiai, alone[1].ochiai);
    }

    #[test]
    fn collection_counts_for_every_test_and_an_import_error_for_the_tests_it_stopped() {
        let mut collection = spectrum(COLLECTION, &["build_table"], &[]);
        collection.lines = vec![("pkg/m.py".into(), "build_table".into(), 1, vec![2, 3])];
        collection.errors = vec![("tests/test_b.py".into(), vec![f("build_table")])];
        let own = spectrum("tests/test_a.py::t", &["parse"], &[]);
        let ids: Vec<String> = ["tests/test_a.py::t", "tests/test_b.py::u", "tests/test_c.py::v"]
            .map(String::from)
            .to_vec();
        let merged = per_test(&[collection, own], &ids);
        assert_eq!(merged.len(), 2, "test_c has no record and no collection error: {merged:?}");
        assert_eq!(merged[0].functions, [f("parse"), f("build_table")]);
        assert_eq!(merged[0].lines[0].3, [2, 3]);
        // test_b's module failed to import: collection's spectrum, the error's path.
        assert_eq!(merged[1].id, "tests/test_b.py::u");
        assert_eq!(merged[1].raised, [f("build_table")]);
    }
}
