//! The throw-away copies of a project that its tests run in (`testrun.rs`): the whole project,
//! and the program's copy (`isolate.rs`), which holds no test file at all.

use std::path::Path;

use anyhow::Context;

/// Copies the project (the files `python_files`' walk would read, every other file: data the
/// tests open, and the package metadata: see `copy_walk`) into `dest`, leaving out version
/// control, virtual environments and caches; returns the files copied, relative and
/// `/`-separated.
pub fn copy_project(root: &Path, dest: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    for entry in crate::repo::index::copy_walk(root) {
        let entry = entry.with_context(|| format!("reading {}", root.display()))?;
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let to = dest.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to)?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &to).with_context(|| format!("copying {}", entry.path().display()))?;
            files.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(files)
}

/// Files that decide how pytest runs or what it collects: a program must not write them, and
/// under bubblewrap they are mounted read-only.
pub fn decides_tests(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    (file.ends_with(".py") && crate::repo::index::chunks::is_test_file(file))
        || matches!(name, "pytest.ini" | "tox.ini" | "setup.cfg" | "pyproject.toml" | ".pytest.ini")
}

/// Whether a file of the project is no part of the program's copy: test files, conftests and
/// the files that configure pytest (`decides_tests`), and anything under a tests folder.
pub fn kept_from_the_program(file: &str) -> bool {
    crate::repo::index::chunks::is_test_file(file) || decides_tests(file)
}

/// A copy of `root` without a single test file, with `file` holding `text`; the Python files it
/// holds (relative, `/`-separated): the modules whose classes may cross as data.
pub fn program_copy(root: &Path, dest: &Path, file: &str, text: &str) -> anyhow::Result<Vec<String>> {
    let files = copy_project(root, dest)?;
    let mut modules = Vec::new();
    for f in files {
        if kept_from_the_program(&f) {
            std::fs::remove_file(dest.join(&f))?;
        } else if f.ends_with(".py") {
            modules.push(f);
        }
    }
    let path = dest.join(file);
    anyhow::ensure!(path.is_file(), "{file}: no such file in {}", root.display());
    std::fs::write(&path, text)?;
    Ok(modules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_and_pytest_configuration_are_protected() {
        for f in [
            "tests/test_a.py",
            "tests/conftest.py",
            "conftest.py",
            "pytest.ini",
            "pkg/setup.cfg",
            "pyproject.toml",
        ] {
            assert!(decides_tests(f), "{f}");
        }
        for f in ["pkg/core.py", "tests/data.json", "README.md"] {
            assert!(!decides_tests(f), "{f}");
        }
    }

    #[test]
    fn the_programs_copy_holds_no_test_and_no_pytest_configuration() {
        let root = tempfile::tempdir().unwrap();
        for f in [
            "pkg/__init__.py",
            "pkg/cart.py",
            "tests/test_cart.py",
            "tests/data/expected.json",
            "pkg/test_inline.py",
            "conftest.py",
            "pytest.ini",
            "README.md",
        ] {
            let p = root.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x = 1\n").unwrap();
        }
        let dest = tempfile::tempdir().unwrap();
        let mut modules = program_copy(root.path(), dest.path(), "pkg/cart.py", "def f():\n    pass\n").unwrap();
        modules.sort();
        assert_eq!(modules, ["pkg/__init__.py", "pkg/cart.py"]);
        for gone in [
            "tests/test_cart.py",
            "tests/data/expected.json",
            "pkg/test_inline.py",
            "conftest.py",
            "pytest.ini",
        ] {
            assert!(!dest.path().join(gone).exists(), "{gone}");
        }
        assert!(dest.path().join("README.md").is_file());
        assert_eq!(
            std::fs::read_to_string(dest.path().join("pkg/cart.py")).unwrap(),
            "def f():\n    pass\n"
        );
    }
}
