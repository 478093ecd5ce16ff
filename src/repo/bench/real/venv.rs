//! The interpreter a project's suite runs with when none is given (neither `--python` nor
//! `$RGD_PYTHON`): a venv rgd keeps per project in `HOME/bench/real/venv/PROJECT`, holding pytest
//! (pinned) and the test dependencies the release names: its `[project] dependencies`, the
//! optional dependencies and dependency groups called test, tests or testing in pyproject.toml,
//! and the usual requirements files for tests. Made once: what pip installed is written down
//! (`pip freeze`, the venv's lock), and a later run asking for the same requirements uses the venv
//! as it is, with no network. A dependency that does not install is named and left out; pytest
//! not installing is an error.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The pytest every venv gets (the one `.ci/test` installs).
pub const PYTEST: &str = "pytest==8.3.4";

/// Where the requirements a venv was made for are written (its lock is beside it).
const ASKED: &str = "rgd-requirements.txt";
const LOCK: &str = "rgd-lock.txt";

/// Requirements files a project's tests commonly name.
const REQUIREMENTS_FILES: &[&str] = &[
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "tests/requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/testing.txt",
];

/// The extras and dependency groups read as test dependencies.
const TEST_GROUPS: &[&str] = &["test", "tests", "testing"];

/// A requirement's project name, normalised (PEP 503): `Foo_Bar[x]>=1` -> `foo-bar`.
fn name_of(requirement: &str) -> String {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// What the release at `tree` names for its tests (see the module's note), `project` itself and
/// pytest left out, sorted and without repeats.
pub fn test_requirements(project: &str, tree: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(pyproject) = std::fs::read_to_string(tree.join("pyproject.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
    {
        let strings = |v: Option<&toml::Value>| -> Vec<String> {
            v.and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect()
        };
        let project_table = pyproject.get("project");
        out.extend(strings(project_table.and_then(|p| p.get("dependencies"))));
        for group in TEST_GROUPS {
            out.extend(strings(
                project_table
                    .and_then(|p| p.get("optional-dependencies"))
                    .and_then(|o| o.get(*group)),
            ));
            out.extend(strings(pyproject.get("dependency-groups").and_then(|g| g.get(*group))));
        }
    }
    for file in REQUIREMENTS_FILES {
        let Ok(text) = std::fs::read_to_string(tree.join(file)) else {
            continue;
        };
        out.extend(
            text.lines()
                .map(|l| l.split(" #").next().unwrap_or(l).trim())
                // Options (-r, -e, -c, --hash) and URLs are not requirements pip can pin here.
                .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('-') && !l.contains("://"))
                .map(str::to_string),
        );
    }
    out.extend(ini_requirements(tree));
    let own = name_of(project);
    out.retain(|r| {
        let n = name_of(r);
        !n.is_empty() && n != own && n != "pytest"
    });
    out.sort();
    out.dedup();
    out
}

/// What an INI file of the tree names for its tests: tox's `deps` of `[testenv]` (tox.ini, or
/// setup.cfg's `[tox:tox]` twin), and setup.cfg's `[options.extras_require]` test extras. A value
/// goes on over the indented lines after its key; `{[section]key}` substitutions, options and
/// URLs are not requirements pip can pin here and are left out.
fn ini_requirements(tree: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (file, wanted) in [
        ("tox.ini", &[("testenv", "deps")][..]),
        (
            "setup.cfg",
            &[
                ("testenv", "deps"),
                ("options.extras_require", "test"),
                ("options.extras_require", "tests"),
                ("options.extras_require", "testing"),
            ][..],
        ),
    ] {
        let Ok(text) = std::fs::read_to_string(tree.join(file)) else {
            continue;
        };
        let (mut section, mut key) = (String::new(), String::new());
        for line in text.lines() {
            let trimmed = line.trim();
            if trimmed.starts_with('[') && trimmed.ends_with(']') {
                section = trimmed[1..trimmed.len() - 1].trim_start_matches("testenv:").to_string();
                if section.starts_with("testenv") {
                    section = "testenv".into();
                }
                key.clear();
                continue;
            }
            let value = if line.starts_with([' ', '\t']) {
                trimmed
            } else {
                let Some((k, v)) = trimmed.split_once(['=', ':']) else {
                    key.clear();
                    continue;
                };
                key = k.trim().to_string();
                v.trim()
            };
            let wanted_here = wanted.iter().any(|(s, k)| *s == section && *k == key);
            if wanted_here && !value.is_empty() && !value.starts_with(['#', '-', '{']) && !value.contains("://") {
                out.push(value.to_string());
            }
        }
    }
    out
}

/// The venv's interpreter for `project`'s release at `tree`, made or brought up to date when it
/// does not have what the release asks for (progress and left-out dependencies to `report`).
pub fn project_python(cache: &Path, project: &str, tree: &Path, report: &dyn Fn(&str)) -> anyhow::Result<PathBuf> {
    let dir = cache.join("venv").join(name_of(project));
    let python = dir.join("bin").join("python");
    let wanted = test_requirements(project, tree);
    // The first line names how the venv is made: a venv made the older way (pytest before the
    // release's pins) is made again.
    let asked = std::iter::once("# rgd venv 2: pytest installed last".to_string())
        .chain(std::iter::once(PYTEST.to_string()))
        .chain(wanted.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    if python.is_file() && std::fs::read_to_string(dir.join(ASKED)).is_ok_and(|t| t == asked) {
        return Ok(python);
    }
    std::fs::create_dir_all(dir.parent().unwrap_or(&dir))?;
    let _lock = crate::assets::lock_dir(dir.parent().unwrap_or(&dir))?;
    if !python.is_file() {
        report(&format!("{project}: making its venv in {}", dir.display()));
        let base = crate::assets::python();
        let made = Command::new(&base)
            .args(["-m", "venv"])
            .arg(&dir)
            .output()
            .with_context(|| format!("cannot run {base} -m venv"))?;
        if !made.status.success() {
            bail!("{project}: {base} -m venv failed: {}", crate::assets::tail(&made.stderr));
        }
    }
    install(&python, &[PYTEST.to_string()]).map_err(|why| anyhow::anyhow!("{project}: pytest does not install into its venv: {why}"))?;
    if !wanted.is_empty() && install(&python, &wanted).is_err() {
        // One at a time, to name what does not install and keep the rest.
        for r in &wanted {
            if let Err(why) = install(&python, std::slice::from_ref(r)) {
                report(&format!("{project}: test dependency {r} left out: it does not install ({why})"));
            }
        }
    }
    // A release's pins may hold back what pytest needs (itsdangerous 2.0's `pluggy==1.4.0` breaks
    // pytest 8): pytest's own requirements win, installed again last.
    install(&python, &[PYTEST.to_string()]).map_err(|why| anyhow::anyhow!("{project}: pytest does not install into its venv: {why}"))?;
    let frozen = Command::new(&python)
        .args(["-m", "pip", "freeze", "--disable-pip-version-check"])
        .output()
        .context("pip freeze")?;
    std::fs::write(dir.join(LOCK), &frozen.stdout)?;
    std::fs::write(dir.join(ASKED), asked)?;
    report(&format!(
        "{project}: venv ready with {PYTEST} and {} test dependencies (installed versions in {})",
        wanted.len(),
        dir.join(LOCK).display()
    ));
    Ok(python)
}

fn install(python: &Path, requirements: &[String]) -> Result<(), String> {
    let out = Command::new(python)
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(requirements)
        .output()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(crate::assets::last_lines(&String::from_utf8_lossy(&out.stderr), 2))
    }
}

/// The suites' interpreter: the one given (`--python`, else `$RGD_PYTHON`) as it is, else the
/// project's venv with what the release at `tree` names for its tests.
pub fn suite_runner(
    cache: &Path,
    given: Option<&Path>,
    project: &str,
    tree: &Path,
    say: &dyn Fn(&str),
) -> anyhow::Result<crate::repo::run::testrun::ProjectTests> {
    let given = given
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("RGD_PYTHON").filter(|p| !p.is_empty()).map(PathBuf::from));
    let python = match given {
        Some(p) => p,
        None => project_python(cache, project, tree, say)?,
    };
    crate::repo::run::testrun::ProjectTests::new(&python)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_dependencies_come_from_pyproject_and_requirements_files_without_the_project_or_pytest() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(
            tree.path().join("pyproject.toml"),
            "[project]\nname = \"Click\"\ndependencies = [\"colorama; platform_system == 'Windows'\"]\n\
             [project.optional-dependencies]\ntests = [\"pytest>=7\", \"click[extra]\", \"PyYAML\"]\ndocs = [\"sphinx\"]\n\
             [dependency-groups]\ntesting = [\"freezegun\", {include-group = \"docs\"}]\n",
        )
        .unwrap();
        std::fs::create_dir_all(tree.path().join("requirements")).unwrap();
        std::fs::write(
            tree.path().join("requirements/tests.txt"),
            "# pinned\n-r base.txt\nattrs==23.1.0  # for the fixtures\n\ngit+https://example.org/x.git\n",
        )
        .unwrap();
        assert_eq!(
            test_requirements("click", tree.path()),
            ["PyYAML", "attrs==23.1.0", "colorama; platform_system == 'Windows'", "freezegun"],
            "docs extras, options, URLs, the project and pytest are not test dependencies"
        );
        assert!(test_requirements("x", tempfile::tempdir().unwrap().path()).is_empty());
    }

    #[test]
    fn tox_deps_and_setup_cfg_test_extras_are_test_dependencies_too() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(
            tree.path().join("tox.ini"),
            "[tox]\nenvlist = py3\n\n[testenv]\ndeps =\n    hypothesis>=6\n    -rrequirements.txt\n    {[base]deps}\n    pytest\ncommands = pytest\n\n[testenv:docs]\ndeps = sphinx\n",
        )
        .unwrap();
        std::fs::write(
            tree.path().join("setup.cfg"),
            "[metadata]\nname = calc\n\n[options.extras_require]\ntesting =\n    freezegun\n    calc[extra]\ndocs = furo\n",
        )
        .unwrap();
        assert_eq!(
            test_requirements("calc", tree.path()),
            ["freezegun", "hypothesis>=6"],
            "a docs env's deps (tox runs `testenv:docs` as its own), options, substitutions, the project and pytest are left out"
        );
    }

    #[test]
    fn names_are_normalised_as_pip_compares_them() {
        assert_eq!(name_of("Foo_Bar.baz[x]>=1"), "foo-bar-baz");
        assert_eq!(name_of("  more-itertools"), "more-itertools");
    }
}
