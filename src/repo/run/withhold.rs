//! What the copy for a visible run leaves out, so the program under test cannot read the hidden
//! tests while the visible ones run (and print them into the Feedback agent's prompt):
//! - every file that only hidden tests live in;
//! - in a file shared with visible tests, the hidden tests' functions (blanked line for line, so
//!   line numbers in the visible tests' reports stay the project's);
//! - every file of a test directory that holds hidden tests and no visible one (its conftest.py,
//!   helpers and data serve only hidden tests).
//!
//! A hidden and a visible test that are one function (two parameters of it) cannot be told apart
//! in the file: that split is refused.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::repo::index::chunks::is_test_file;

/// The plan for one project and one visible/hidden split.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Withheld {
    /// Files (relative to the root) left out of the copy.
    pub files: BTreeSet<String>,
    /// Files kept with these test functions blanked (`name` or `Class.name`).
    pub blanked: BTreeMap<String, Vec<String>>,
}

/// `tests/t.py::TestC::test_m[1]` → (`tests/t.py`, `TestC.test_m`).
fn split_id(id: &str) -> (&str, String) {
    let bare = id.split('[').next().unwrap_or(id);
    match bare.split_once("::") {
        Some((file, rest)) => (file, rest.replace("::", ".")),
        None => (bare, String::new()),
    }
}

/// The directories of `file`, innermost first (`a/b/c.py` → `a/b`, `a`).
fn dirs(file: &str) -> impl Iterator<Item = &str> {
    let mut at = file.len();
    std::iter::from_fn(move || {
        let cut = file[..at].rfind('/')?;
        at = cut;
        Some(&file[..cut])
    })
}

impl Withheld {
    /// The plan for `hidden` tests while `visible` ones run, over the project's `files`.
    pub fn plan(files: &[String], visible: &[String], hidden: &[String]) -> anyhow::Result<Withheld> {
        let mut plan = Withheld::default();
        if hidden.is_empty() {
            return Ok(plan);
        }
        let visible_files: BTreeSet<&str> = visible.iter().map(|v| split_id(v).0).collect();
        let visible_functions: BTreeSet<(&str, String)> = visible.iter().map(|v| split_id(v)).collect();
        for h in hidden {
            let (file, function) = split_id(h);
            if !visible_files.contains(file) {
                plan.files.insert(file.to_string());
                continue;
            }
            if function.is_empty() || visible_functions.contains(&(file, function.clone())) {
                anyhow::bail!(
                    "the hidden test {h} is the same test function as a visible one: the program could read it while the visible tests run (split by function or file)"
                );
            }
            let list = plan.blanked.entry(file.to_string()).or_default();
            if !list.contains(&function) {
                list.push(function);
            }
        }
        // Test directories that hold hidden tests and no visible one.
        let visible_dirs: BTreeSet<&str> = visible_files.iter().flat_map(|f| dirs(f)).collect();
        let hidden_dirs: BTreeSet<String> = plan
            .files
            .iter()
            .flat_map(|f| dirs(f))
            .filter(|d| !visible_dirs.contains(d) && is_test_file(&format!("{d}/x")))
            .map(str::to_string)
            .collect();
        for f in files {
            if is_test_file(f) && dirs(f).any(|d| hidden_dirs.contains(d)) {
                plan.files.insert(f.clone());
            }
        }
        Ok(plan)
    }

    /// Applies the plan to a copy at `dest`.
    pub fn apply(&self, dest: &Path) -> anyhow::Result<()> {
        for f in &self.files {
            let path = dest.join(f);
            if path.is_file() {
                std::fs::remove_file(&path)?;
            }
        }
        for (file, functions) in &self.blanked {
            let path = dest.join(file);
            let text = std::fs::read_to_string(&path)?;
            std::fs::write(&path, blank_functions(&text, functions))?;
        }
        Ok(())
    }
}

/// `source` with the definitions of `functions` (`name`, `Class.name`) replaced by `pass`, or, for
/// a name the rest of the file uses, by a function of that name that does nothing; then empty
/// lines.
pub fn blank_functions(source: &str, functions: &[String]) -> String {
    let mut ranges = Vec::new();
    for (f, range) in functions.iter().zip(crate::code::definition_ranges(source, functions)) {
        if let Some(range) = range {
            let name = f.rsplit('.').next().unwrap_or(f);
            ranges.push((range.start, range.end, name));
        }
    }
    ranges.sort();
    // A definition inside one already blanked (a hidden test class's method) goes with it.
    let mut outer_end = 0;
    ranges.retain(|&(start, end, _)| {
        let outer = start >= outer_end;
        if outer {
            outer_end = end;
        }
        outer
    });
    // The text that stays: before, between and after the blanked definitions.
    let mut kept = Vec::with_capacity(ranges.len() + 1);
    let mut at = 0;
    for &(start, end, _) in &ranges {
        kept.push(&source[at..start]);
        at = end;
    }
    kept.push(&source[at..]);
    let mut out = String::with_capacity(source.len());
    for (&(start, end, name), before) in ranges.iter().zip(&kept) {
        out.push_str(before);
        // A statement stays where the definition was (an emptied class body would not parse).
        // A name the visible rest of the file uses stays defined (boltons' test_listutils.py
        // calls `test_barrel_list()` at import); any other hidden test's name is not written,
        // so it cannot reach a prompt through what the program reads while visible tests run.
        if kept.iter().any(|text| uses_name(text, name)) {
            out.push_str(&format!("def {name}(*args, **kwargs): pass"));
        } else {
            out.push_str("pass");
        }
        out.push_str(&"\n".repeat(source[start..end].matches('\n').count()));
    }
    out.push_str(kept[ranges.len()]);
    out
}

/// Whether `text` holds `name` as a whole word (not inside a longer identifier).
fn uses_name(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name)
        .any(|(i, _)| !text[..i].chars().next_back().is_some_and(word) && !text[i + name.len()..].chars().next().is_some_and(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn hidden_files_and_hidden_only_test_directories_are_left_out() {
        let files = s(&[
            "pkg/core.py",
            "tests/conftest.py",
            "tests/test_a.py",
            "tests/secret/conftest.py",
            "tests/secret/test_s.py",
            "tests/secret/data.json",
            "test_hidden_top.py",
        ]);
        let plan = Withheld::plan(
            &files,
            &s(&["tests/test_a.py::test_one"]),
            &s(&["tests/secret/test_s.py::test_x", "test_hidden_top.py::test_y"]),
        )
        .unwrap();
        assert_eq!(
            plan.files,
            BTreeSet::from(
                [
                    "tests/secret/conftest.py",
                    "tests/secret/test_s.py",
                    "tests/secret/data.json",
                    "test_hidden_top.py"
                ]
                .map(String::from)
            )
        );
        assert!(plan.blanked.is_empty());
    }

    #[test]
    fn a_shared_file_keeps_its_visible_tests_and_loses_the_hidden_ones_line_for_line() {
        let files = s(&["tests/test_a.py"]);
        let plan = Withheld::plan(
            &files,
            &s(&["tests/test_a.py::test_one", "tests/test_a.py::TestC::test_m"]),
            &s(&["tests/test_a.py::test_two", "tests/test_a.py::TestC::test_secret"]),
        )
        .unwrap();
        assert!(plan.files.is_empty());
        let src = "import pytest\n\ndef test_one():\n    assert 1\n\n@pytest.mark.slow\ndef test_two():\n    assert f(2.675) == 2.68\n\nclass TestC:\n    def test_m(self):\n        assert 1\n\n    def test_secret(self):\n        assert g() == 41\n";
        let blanked = blank_functions(src, &plan.blanked["tests/test_a.py"]);
        assert!(!blanked.contains("2.675") && !blanked.contains("41"), "{blanked}");
        assert!(
            !blanked.contains("test_two") && !blanked.contains("test_secret"),
            "a hidden test's name nothing visible uses is not written: {blanked}"
        );
        assert!(blanked.contains("def test_one") && blanked.contains("def test_m"), "{blanked}");
        assert_eq!(blanked.lines().count(), src.lines().count(), "{blanked}");
        assert!(crate::code::parses_cleanly(&blanked), "{blanked}");
        // A hidden test a visible line calls at import keeps its name, not its body.
        let called = "def test_one():\n    assert 1\n\ndef test_two():\n    assert f(2.675) == 2.68\n\ntest_two()\n";
        let blanked = blank_functions(called, &s(&["test_two"]));
        assert!(
            !blanked.contains("2.675") && blanked.contains("def test_two(*args, **kwargs): pass\n"),
            "{blanked}"
        );
        assert_eq!(blanked.lines().count(), called.lines().count(), "{blanked}");
    }

    #[test]
    fn one_function_both_visible_and_hidden_is_refused() {
        let err = Withheld::plan(&[], &s(&["t.py::test_p[1]"]), &s(&["t.py::test_p[2]"])).unwrap_err();
        assert!(err.to_string().contains("same test function"), "{err}");
    }
}
