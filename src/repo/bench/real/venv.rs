//! The interpreter a project's suite runs with when none is given (neither `--python` nor
//! `$RGD_PYTHON`): a venv rgd keeps per project and set of test requirements in
//! `HOME/bench/real/venv/PROJECT-HASH`, holding pytest
//! (pinned) and the test dependencies the release names: its `[project] dependencies`, the
//! optional dependencies and dependency groups called test, tests or testing in pyproject.toml
//! (and the project's own extras those name),
//! the usual requirements files for tests, tox's and setup.cfg's, and what the sdist's own metadata
//! requires (PKG-INFO, else the egg-info's `requires.txt`). Made once: what pip installed is written down
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

/// The first line of a venv's requirements, naming how it is made (pytest installed last, `py`
/// left to pytest): part of what names its directory, so a venv made another way is never used.
const VENV_KIND: &str = "# rgd venv 3: pytest installed last, py left to pytest";

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
        let extras: Extras = project_table
            .and_then(|p| p.get("optional-dependencies"))
            .and_then(|o| o.as_table())
            .into_iter()
            .flatten()
            .map(|(extra, reqs)| (extra.clone(), strings(Some(reqs))))
            .collect();
        out.extend(test_extras(&extras, &name_of(project)));
        for group in TEST_GROUPS {
            out.extend(strings(pyproject.get("dependency-groups").and_then(|g| g.get(*group))));
        }
    }
    for file in REQUIREMENTS_FILES {
        out.extend(requirements_file(tree, &tree.join(file), 0));
    }
    out.extend(ini_requirements(tree));
    out.extend(metadata_requirements(tree, &name_of(project)));
    let own = name_of(project);
    // `py` is pytest's too: pytest 7.2 and later provide it, and an older pin of the package (in
    // a requirements file compiled for pytest 6) shadows theirs, so pytest does not start
    // (`AttributeError: __spec__`).
    out.retain(|r| {
        let n = name_of(r);
        !n.is_empty() && n != own && n != "pytest" && n != "py"
    });
    out.sort();
    out.dedup();
    out
}

/// The requirements a requirements file names, following its `-r FILE` (relative to it) a few
/// levels deep; other options and URLs are not requirements pip can pin here and are left out.
fn requirements_file(tree: &Path, file: &Path, depth: usize) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let dir = file.parent().unwrap_or(tree);
    let mut out = Vec::new();
    for line in text.lines().map(|l| l.split(" #").next().unwrap_or(l).trim()) {
        if let Some(named) = included_file(line) {
            if depth < 3 {
                out.extend(requirements_file(tree, &dir.join(named), depth + 1));
            }
        } else if is_requirement(line) {
            out.push(line.to_string());
        }
    }
    out
}

/// A line that names a requirement pip can pin here: not empty, no comment, no option (`-r`, `-e`,
/// `-c`, `--hash`), no URL.
fn is_requirement(line: &str) -> bool {
    !line.is_empty() && !line.starts_with(['#', '-']) && !line.contains("://")
}

/// The file a `-r FILE` (`-rFILE`, `--requirement FILE`) line includes, tox's `{toxinidir}/`
/// taken off.
fn included_file(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("--requirement")
        .or_else(|| line.strip_prefix("-r"))?
        .trim_start_matches([' ', '='])
        .trim();
    let rest = rest.strip_prefix("{toxinidir}/").unwrap_or(rest);
    (!rest.is_empty() && !rest.contains(['{', '}'])).then_some(rest)
}

/// What an INI file of the tree names for its tests: tox's `deps` of `[testenv]` (tox.ini, or
/// setup.cfg's `[tox:tox]` twin, the requirements files its `-r FILE` names included), and
/// setup.cfg's `[options.extras_require]` test extras. A value goes on over the indented lines
/// after its key; `{[section]key}` substitutions, other options and URLs are not requirements pip
/// can pin here and are left out.
fn ini_requirements(tree: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (file, wanted) in [
        ("tox.ini", &[("testenv", "deps")][..]),
        (
            "setup.cfg",
            &[
                ("testenv", "deps"),
                ("options", "install_requires"),
                ("options", "tests_require"),
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
            if let Some(named) = included_file(value).filter(|_| wanted_here) {
                out.extend(requirements_file(tree, &tree.join(named), 1));
            } else if wanted_here && is_requirement(value) && !value.starts_with('{') {
                out.push(value.to_string());
            }
        }
    }
    out
}

/// What the sdist's own metadata names: PKG-INFO's `Requires-Dist` (those of no extra, and of a
/// test extra or an extra of the project a test extra names, with the rest of their marker), else the `requires.txt` setuptools writes into the sdist's
/// `*.egg-info` (its first section and its test sections). Older setuptools wrote a PKG-INFO
/// without `Requires-Dist` (Jinja2 3.0), whose runtime dependencies only the latter holds.
fn metadata_requirements(tree: &Path, own: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut extras = Extras::new();
    let pkg_info = std::fs::read_to_string(tree.join("PKG-INFO")).unwrap_or_default();
    for line in pkg_info.lines().take_while(|l| !l.is_empty()) {
        let Some(requirement) = line.strip_prefix("Requires-Dist:") else {
            continue;
        };
        match requirement.split_once(';') {
            None => out.push(requirement.trim().to_string()),
            Some((req, marker)) => match extra_of(marker) {
                Some(extra) => extras.entry(extra).or_default().push(without_extra(req, marker)),
                None => out.push(requirement.trim().to_string()),
            },
        }
    }
    out.extend(test_extras(&extras, own));
    if !out.is_empty() {
        return out;
    }
    let egg_infos = [tree.to_path_buf(), tree.join("src")]
        .into_iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "egg-info"));
    for egg_info in egg_infos {
        let Ok(text) = std::fs::read_to_string(egg_info.join("requires.txt")) else {
            continue;
        };
        let mut wanted = true;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if line.starts_with('[') {
                wanted = TEST_GROUPS.contains(&line.trim_matches(['[', ']']));
            } else if wanted {
                out.push(line.to_string());
            }
        }
    }
    out
}

/// A project's extras: each one's requirements.
type Extras = std::collections::BTreeMap<String, Vec<String>>;

/// The requirements of the test extras, and of the extras they name of the project itself
/// (attrs: `tests = ["attrs[tests-no-zope]", "zope.interface"]`), each extra followed once.
fn test_extras(extras: &Extras, own: &str) -> Vec<String> {
    let mut wanted: Vec<String> = TEST_GROUPS.iter().map(|g| g.to_string()).collect();
    let mut out = Vec::new();
    let mut next = 0;
    while let Some(extra) = wanted.get(next).cloned() {
        next += 1;
        for req in extras.get(&extra).into_iter().flatten() {
            if name_of(req) != own {
                out.push(req.clone());
                continue;
            }
            let named = req.split_once('[').and_then(|(_, rest)| rest.split_once(']')).map(|(e, _)| e);
            for more in named.into_iter().flat_map(|e| e.split(',')).map(str::trim) {
                if !more.is_empty() && !wanted.iter().any(|w| w == more) {
                    wanted.push(more.to_string());
                }
            }
        }
    }
    out
}

/// `req` with what its marker says besides the extra (`python_version < "3.11" and extra ==
/// "tests"` keeps `python_version < "3.11"`), for pip to judge.
fn without_extra(req: &str, marker: &str) -> String {
    let rest: Vec<&str> = marker.split(" and ").map(str::trim).filter(|c| !c.contains("extra")).collect();
    match rest.is_empty() {
        true => req.trim().to_string(),
        false => format!("{}; {}", req.trim(), rest.join(" and ")),
    }
}

/// The extra a marker names (`extra == "test"` -> `test`), if any.
fn extra_of(marker: &str) -> Option<String> {
    let after = marker.split_once("extra")?.1.trim_start().strip_prefix("==")?.trim_start();
    let quote = after.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    Some(after[1..].split(quote).next()?.to_string())
}

/// Where the venv for `project` with the requirements `asked` lives: one per set of requirements,
/// so a run never installs into a venv another run is using (two shards, or a harvest beside a
/// measurement, on releases that ask for different test dependencies reinstalled one venv under
/// each other when there was one per project).
fn venv_dir(cache: &Path, project: &str, asked: &str) -> PathBuf {
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(asked.as_bytes()));
    cache.join("venv").join(format!("{}-{}", name_of(project), &digest[..12]))
}

/// The venv's interpreter for `project`'s release at `tree`, made or brought up to date when it
/// does not have what the release asks for (progress and left-out dependencies to `report`).
pub fn project_python(cache: &Path, project: &str, tree: &Path, report: &dyn Fn(&str)) -> anyhow::Result<PathBuf> {
    let wanted = test_requirements(project, tree);
    let asked = std::iter::once(VENV_KIND.to_string())
        .chain(std::iter::once(PYTEST.to_string()))
        .chain(wanted.iter().cloned())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let dir = venv_dir(cache, project, &asked);
    let python = dir.join("bin").join("python");
    let ready = || python.is_file() && std::fs::read_to_string(dir.join(ASKED)).is_ok_and(|before| before == asked);
    if ready() {
        return Ok(python);
    }
    std::fs::create_dir_all(dir.parent().unwrap_or(&dir))?;
    let _lock = crate::assets::lock_dir(dir.parent().unwrap_or(&dir))?;
    // Another rgd (a shard on the same machine) may have made it while this one waited.
    if ready() {
        return Ok(python);
    }
    if python.is_file() {
        // Its requirements are written last: a venv without them was cut short while being made.
        report(&format!(
            "{project}: its venv in {} was not finished; making it anew",
            dir.display()
        ));
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
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
    let given = given.map(Path::to_path_buf).or_else(crate::assets::given_python);
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
    fn each_set_of_test_requirements_has_a_venv_of_its_own() {
        let cache = Path::new("/cache");
        let one = venv_dir(cache, "Python_Dateutil", "# kind\npytest\nsix\n");
        assert_eq!(one, venv_dir(cache, "Python_Dateutil", "# kind\npytest\nsix\n"));
        assert_ne!(one, venv_dir(cache, "Python_Dateutil", "# kind\npytest\nsix\nhypothesis\n"));
        assert_ne!(one, venv_dir(cache, "attrs", "# kind\npytest\nsix\n"));
        let name = one.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            one.starts_with("/cache/venv") && name.starts_with(&format!("{}-", name_of("Python_Dateutil"))),
            "{name}"
        );
    }

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

        // python-dateutil: tox's deps are a requirements file, which includes another.
        let included = tempfile::tempdir().unwrap();
        std::fs::write(
            included.path().join("tox.ini"),
            "[testenv]\ndeps = -r{toxinidir}/requirements-dev.txt\ncommands = pytest\n",
        )
        .unwrap();
        std::fs::write(
            included.path().join("requirements-dev.txt"),
            "pytest-cov >= 2.0.0\n-r requirements/base.txt\n-c constraints.txt\n",
        )
        .unwrap();
        std::fs::create_dir_all(included.path().join("requirements")).unwrap();
        std::fs::write(
            included.path().join("requirements/base.txt"),
            "freezegun ; python_version != '3.3'\n--requirement base.txt\n",
        )
        .unwrap();
        assert_eq!(
            test_requirements("python-dateutil", included.path()),
            ["freezegun ; python_version != '3.3'", "pytest-cov >= 2.0.0"],
            "-r followed (relative to the file naming it, a loop cut), -c left out"
        );
    }

    #[test]
    fn the_sdists_metadata_names_runtime_and_test_dependencies_and_an_old_py_is_left_to_pytest() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(
            tree.path().join("PKG-INFO"),
            "Metadata-Version: 2.1\nName: calc\nRequires-Dist: attrs>=19\n\
             Requires-Dist: tomli; python_version < \"3.11\"\nRequires-Dist: hypothesis; extra == \"tests\"\n\
             Requires-Dist: furo; extra == 'docs'\n\nRequires-Dist: not-a-header\n",
        )
        .unwrap();
        std::fs::create_dir_all(tree.path().join("requirements")).unwrap();
        std::fs::write(tree.path().join("requirements/tests.txt"), "py==1.10.0\npluggy==0.13.1\n").unwrap();
        assert_eq!(
            test_requirements("calc", tree.path()),
            ["attrs>=19", "hypothesis", "pluggy==0.13.1", "tomli; python_version < \"3.11\""],
            "a test extra's marker is dropped, another extra left out, a body line is not a header, py is pytest's"
        );

        // No Requires-Dist (older setuptools): the egg-info's requires.txt, and setup.cfg's options.
        let old = tempfile::tempdir().unwrap();
        std::fs::write(old.path().join("PKG-INFO"), "Metadata-Version: 2.1\nName: Jinja2\n").unwrap();
        std::fs::create_dir_all(old.path().join("src/Jinja2.egg-info")).unwrap();
        std::fs::write(
            old.path().join("src/Jinja2.egg-info/requires.txt"),
            "MarkupSafe>=2.0.0rc2\n\n[i18n]\nBabel>=2.7\n\n[testing]\nfreezegun\n",
        )
        .unwrap();
        std::fs::write(
            old.path().join("setup.cfg"),
            "[options]\npackages = find:\ninstall_requires =\n    six\n",
        )
        .unwrap();
        assert_eq!(
            test_requirements("jinja2", old.path()),
            ["MarkupSafe>=2.0.0rc2", "freezegun", "six"]
        );
    }

    #[test]
    fn a_test_extra_naming_the_projects_other_extras_brings_theirs_with_their_markers() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(
            tree.path().join("PKG-INFO"),
            "Metadata-Version: 2.1\nName: attrs\n\
             Requires-Dist: attrs[tests-no-zope]; extra == 'tests'\nRequires-Dist: zope-interface; extra == 'tests'\n\
             Requires-Dist: hypothesis; extra == 'tests-no-zope'\n\
             Requires-Dist: mypy-plugins; python_version < '3.11' and extra == 'tests-no-zope'\n\
             Requires-Dist: attrs[tests]; extra == 'tests-no-zope'\n\
             Requires-Dist: attrs[docs,tests]; extra == 'dev'\nRequires-Dist: furo; extra == 'docs'\n",
        )
        .unwrap();
        assert_eq!(
            test_requirements("attrs", tree.path()),
            ["hypothesis", "mypy-plugins; python_version < '3.11'", "zope-interface"],
            "followed from tests, each extra once; dev and docs are not test extras"
        );
        let toml = tempfile::tempdir().unwrap();
        std::fs::write(
            toml.path().join("pyproject.toml"),
            "[project]\nname = \"attrs\"\n[project.optional-dependencies]\n\
             tests = [\"attrs[tests-no-zope]\"]\n\"tests-no-zope\" = [\"hypothesis\"]\ndocs = [\"furo\"]\n",
        )
        .unwrap();
        assert_eq!(test_requirements("attrs", toml.path()), ["hypothesis"]);
    }

    #[test]
    fn names_are_normalised_as_pip_compares_them() {
        assert_eq!(name_of("Foo_Bar.baz[x]>=1"), "foo-bar-baz");
        assert_eq!(name_of("  more-itertools"), "more-itertools");
    }
}
