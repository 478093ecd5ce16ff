//! A project's own pytest suite run in a throw-away copy, one file replaced: outcomes per test,
//! the project untouched, a selection of nothing and a missing package named, the timeout. Needs
//! an interpreter with pytest: $RGD_TEST_PYTHON (`.ci/test` installs pytest into its venv), else
//! python3 if it has pytest; without one the test says so loudly and checks nothing.

use crate::support;

use std::path::Path;
use std::time::Duration;

use rgd::repo::run::confine::Confinement;
use rgd::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};
use support::one_module::{OneModule, PROGRAMS, on_target, passes_in_process_because, passes_isolated_as_in_one_process};

const FILES: [(&str, &str); 4] = [
    ("pkg/__init__.py", "from .core import *\n"),
    ("pkg/core.py", "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return 2 * x\n"),
    (
        "tests/test_core.py",
        "from pkg import double\n\ndef test_two():\n    assert double(1) == 2\n\ndef test_zero():\n    assert double(0) == 0\n",
    ),
    ("tests/test_slow.py", "import time\n\ndef test_sleeps():\n    time.sleep(30)\n"),
];

fn project() -> tempfile::TempDir {
    support::project_with(&FILES)
}

/// The tests `ids` of the project at `root`, run as they are.
fn run_ids(runner: &ProjectTests, root: &Path, ids: &[&str]) -> rgd::repo::run::testrun::TestRun {
    let ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    let spec = RunSpec {
        ids: &ids,
        ..RunSpec::default()
    };
    runner.run(root, &spec, TestLimits::default()).unwrap()
}

#[test]
fn the_suite_runs_in_a_copy_with_one_file_replaced_and_reports_each_test() {
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = project();
    let before = support::snapshot(project.path());

    let ids = runner.collect(project.path(), &["tests/test_core.py".into()]).unwrap();
    assert_eq!(ids, ["tests/test_core.py::test_two", "tests/test_core.py::test_zero"]);

    let limits = TestLimits::default();
    let run = |replace: Option<(&str, &str)>| {
        let spec = RunSpec {
            replace,
            ids: &ids,
            ..RunSpec::default()
        };
        runner.run(project.path(), &spec, limits).unwrap()
    };
    let good = run(None);
    assert!(good.outcomes.iter().all(|o| o.passed()), "{good:?}");

    // A wrong candidate: one test fails, with pytest's message; the other still passes.
    let wrong = "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return x + 2\n";
    let bad = run(Some(("pkg/core.py", wrong)));
    assert_eq!(bad.outcomes[0].status, "failed", "{bad:?}");
    assert!(bad.outcomes[0].message.contains("assert 3 == 2"), "{bad:?}");
    assert_eq!(bad.outcomes[1].status, "failed", "double(0) is 2 here: {bad:?}");
    // pytest's report of the failure comes with it, with the copy's paths as the project's.
    assert!(bad.outcomes[0].detail.contains("assert 3 == 2"), "{bad:?}");
    assert!(!bad.outcomes[0].detail.contains("/tmp/"), "{bad:?}");
    // A candidate that does not even import: every test is an error saying why.
    let broken = run(Some(("pkg/core.py", "def double(x):\n    return (x\n")));
    for o in &broken.outcomes {
        assert_eq!(o.status, "error", "{broken:?}");
        assert!(o.message.contains("SyntaxError"), "{broken:?}");
    }
    // The project itself never changes.
    assert_eq!(support::snapshot(project.path()), before);
    assert_eq!(good.confinement, runner.confinement());
}

/// What a test can reach is what the run says its confinement is: under bubblewrap, no file of
/// the user's (a secret beside the build, the project itself) and no network but loopback; under
/// Landlock (no package needed), no such file can be opened; with `unshare` only, no network but
/// the files; with neither, both. `.ci/test` installs bubblewrap, so CI must get the strongest
/// level, and its kernel has Landlock, which is checked on its own.
#[test]
fn a_test_that_no_longer_collects_is_not_run_and_the_others_still_run() {
    // A parameter made from the clock (marshmallow's `test_invalid_datetime[15:49:14 ...]`): the id
    // collected a second ago is gone. pytest refuses a command line naming it ("not found"); the
    // run must instead say that one test did not run and run the rest.
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = project();
    let run = run_ids(
        &runner,
        project.path(),
        &[
            "tests/test_core.py::test_two",
            "tests/test_core.py::test_gone[15:49:14 2026-11-29]",
            "tests/test_core.py::test_zero",
        ],
    );
    let status: Vec<(&str, &str)> = run.outcomes.iter().map(|o| (o.id.as_str(), o.status.as_str())).collect();
    assert_eq!(
        status,
        [
            ("tests/test_core.py::test_two", "passed"),
            ("tests/test_core.py::test_gone[15:49:14 2026-11-29]", "not run"),
            ("tests/test_core.py::test_zero", "passed"),
        ],
        "{run:?}"
    );
    // Only the ids asked for run, not the rest of their file's module (the slow test is in
    // another file; a test the file holds and nobody asked for is not collected).
    let run = run_ids(&runner, project.path(), &["tests/test_core.py::test_zero"]);
    assert_eq!(run.outcomes.len(), 1, "{run:?}");
    assert!(run.outcomes[0].passed(), "{run:?}");
    assert!(
        run.output_tail.contains("1 passed") && !run.output_tail.contains("2 passed"),
        "test_two was not run: {}",
        run.output_tail
    );
}

/// Asked for some tests of a file, the run collects only what those ids name, as pytest does
/// for ids on its command line: markdown's test_legacy.py turns warnings into errors when
/// imported, and another module of the run imports unittest's `TestSuite`, a class pytest warns it
/// cannot collect; collected, that warning failed the whole collection and no test ran.
#[test]
fn what_no_asked_id_names_is_not_collected_so_it_cannot_fail_the_run() {
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = support::project_with(&[
        ("pkg/__init__.py", ""),
        (
            "tests/test_legacy.py",
            "import warnings\nwarnings.simplefilter('error')\n\ndef test_legacy():\n    assert True\n",
        ),
        (
            "tests/test_more.py",
            "from unittest import TestSuite\n\nclass TestCase:\n    def test_asked(self):\n        assert True\n\n    def test_other(self):\n        assert True\n",
        ),
    ]);
    let run = run_ids(
        &runner,
        project.path(),
        &["tests/test_legacy.py::test_legacy", "tests/test_more.py::TestCase::test_asked"],
    );
    assert!(run.outcomes.iter().all(|o| o.passed()), "{run:?}");
    assert!(
        run.output_tail.contains("2 passed") && !run.output_tail.contains("error"),
        "test_other is not collected either: {}",
        run.output_tail
    );
}

#[test]
fn the_tests_reach_only_what_the_reported_confinement_allows() {
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let level = runner.confinement();
    if std::env::var_os("CI").is_some() {
        assert_eq!(level, Confinement::Bubblewrap, "CI installs bubblewrap: {}", level.describe());
    }
    let mut levels = vec![runner];
    match levels[0].confined(Confinement::Landlock) {
        Ok(landlock) if level != Confinement::Landlock => levels.push(landlock),
        Ok(_) => {}
        Err(e) if std::env::var_os("CI").is_some() => panic!("CI's kernel has Landlock: {e:#}"),
        Err(e) => eprintln!("Landlock is not checked here: {e:#}"),
    }
    for runner in &levels {
        reaches_only_what_it_says(runner);
    }
}

fn reaches_only_what_it_says(runner: &ProjectTests) {
    let level = runner.confinement();
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "private").unwrap();
    let project = project();
    // Readable, not merely there: Landlock lets a path be looked up, never opened.
    let probe = format!(
        "import json, os, socket\n\ndef readable(p):\n    try:\n        open(p).read()\n        return True\n    except OSError:\n        return False\n\n\
         def test_probe():\n    seen = {{'secret': readable({secret:?}), \
         'project': readable({project:?}), 'interfaces': sorted(n for _, n in socket.if_nameindex())}}\n    \
         assert False, 'SEEN' + json.dumps(seen)\n",
        secret = secret.display().to_string(),
        project = project.path().join("pkg/core.py").display().to_string(),
    );
    std::fs::write(project.path().join("tests/test_probe.py"), probe).unwrap();
    let ids = vec!["tests/test_probe.py::test_probe".to_string()];
    let spec = RunSpec {
        ids: &ids,
        ..RunSpec::default()
    };
    let run = runner.run(project.path(), &spec, TestLimits::default()).unwrap();
    assert_eq!(run.confinement, level);
    let message = &run.outcomes[0].message;
    let seen: serde_json::Value =
        serde_json::from_str(message.split_once("SEEN").expect("the probe's report").1).unwrap_or_else(|e| panic!("{e}: {message}"));
    let only_loopback = seen["interfaces"] == serde_json::json!(["lo"]);
    match level {
        Confinement::Bubblewrap => {
            assert_eq!(seen["secret"], false, "{message}");
            assert_eq!(seen["project"], false, "{message}");
            assert!(only_loopback, "{message}");
        }
        Confinement::Landlock => {
            assert_eq!(seen["secret"], false, "{level:?}: {message}");
            assert_eq!(seen["project"], false, "{level:?}: {message}");
        }
        Confinement::Unshare => {
            assert_eq!(seen["secret"], true, "{message}");
            assert!(only_loopback, "{message}");
        }
        Confinement::None => assert_eq!(seen["secret"], true, "{message}"),
    }
    // Both ways: the file is there for anyone outside the jail.
    assert!(secret.is_file());
}

#[test]
fn bad_selections_missing_packages_and_slow_tests_are_named() {
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = project();
    let err = runner
        .collect(
            project.path(),
            &["tests/test_core.py".into(), "-k".into(), "nothing_like_this".into()],
        )
        .unwrap_err();
    assert!(format!("{err:#}").contains("selects no test"), "{err:#}");

    std::fs::write(
        project.path().join("tests/test_np.py"),
        "import numpy_is_not_here\n\ndef test_x():\n    pass\n",
    )
    .unwrap();
    let err = runner.collect(project.path(), &["tests/test_np.py".into()]).unwrap_err();
    assert!(
        format!("{err:#}").contains("the project's tests need packages that are missing here: numpy_is_not_here"),
        "{err:#}"
    );
    // A project with no test at all says so, not that a selection selected none.
    let bare = support::project_with(&[("pkg/__init__.py", "")]);
    let err = runner.collect(bare.path(), &[]).unwrap_err();
    assert!(format!("{err:#}").contains("the project has none there"), "{err:#}");

    let slow = vec!["tests/test_slow.py::test_sleeps".to_string()];
    let limits = TestLimits {
        timeout: Duration::from_secs(2),
        memory_mb: 1024,
        per_test: None,
    };
    let spec = RunSpec {
        ids: &slow,
        ..RunSpec::default()
    };
    let run = runner.run(project.path(), &spec, limits).unwrap();
    assert!(run.timed_out && run.seconds < 10.0, "{run:?}");
    assert_eq!(run.outcomes[0].status, "not run");
    assert!(run.outcomes[0].message.contains("timed out"), "{run:?}");

    let err = ProjectTests::new(Path::new("/bin/true")).err().map(|e| format!("{e:#}"));
    assert!(err.is_some_and(|e| e.contains("does not have") || e.contains("pytest")));
}

/// An interpreter whose pytest is installed but does not start (a release pinned a dependency too
/// old for it) is said to be that, with pytest's own last line, not to lack pytest.
#[test]
fn a_pytest_that_does_not_start_is_named_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("python");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '  File \"/venv/lib/site-packages/pytest/__main__.py\", line 9' >&2\necho \"TypeError: HookspecMarker.__call__() got an unexpected keyword argument 'warn_on_impl_args'\" >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let err = ProjectTests::new(&fake).err().map(|e| format!("{e:#}")).unwrap_or_default();
    assert!(err.contains("pytest does not start with"), "{err}");
    assert!(err.contains("unexpected keyword argument 'warn_on_impl_args'"), "{err}");
}

/// An honest program is never taken for a forgery where a real project's tests are ordinary:
/// unittest classes (whose test methods are bound anew at every read), a test handing its own file
/// to a project helper that reads it, an expected failure (xfail), all with the target module
/// handed to the plugin as the program. And with a `src/` layout the copy's package is the one
/// imported (a wrong program fails), not one installed elsewhere.
#[test]
fn ordinary_tests_of_an_honest_program_are_not_tampering_and_src_layouts_import_the_copy() {
    let _one = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = support::project_with(&[
        ("src/pkg/__init__.py", ""),
        ("src/pkg/core.py", "import warnings\n\n\ndef double(x):\n    return 2 * x\n"),
        (
            "src/pkg/files.py",
            "def first_line(path):\n    with open(path) as f:\n        return f.readline()\n",
        ),
        (
            "tests/test_core.py",
            "import unittest\n\nimport pytest\n\nfrom pkg.core import double\nfrom pkg.files import first_line\n\n\nclass DoubleTest(unittest.TestCase):\n    def test_two(self):\n        self.assertEqual(double(1), 2)\n\n\ndef test_reads_itself():\n    assert first_line(__file__).startswith('import unittest')\n\n\n@pytest.mark.xfail(reason='known')\ndef test_known_bug():\n    assert double(1) == 3\n",
        ),
    ]);
    let ids = runner.collect(project.path(), &[]).unwrap();
    assert_eq!(ids.len(), 3, "{ids:?}");
    let original = std::fs::read_to_string(project.path().join("src/pkg/core.py")).unwrap();
    let run = |text: &str| {
        let spec = on_target("src/pkg/core.py", text, "double", &ids);
        runner.run(project.path(), &spec, TestLimits::default()).unwrap()
    };
    let honest = run(&original);
    assert!(honest.tampered.is_empty(), "{honest:?}");
    let status = |r: &rgd::repo::run::testrun::TestRun, id: &str| r.outcomes.iter().find(|o| o.id.ends_with(id)).unwrap().clone();
    assert!(status(&honest, "test_two").passed(), "{honest:?}");
    assert!(status(&honest, "test_reads_itself").passed(), "{honest:?}");
    let xfail = status(&honest, "test_known_bug");
    assert_eq!(xfail.status, "skipped", "{honest:?}");
    assert!(xfail.message.contains("expected to fail (xfail)"), "{honest:?}");
    // The copy's module is the one the tests import: a wrong program fails.
    let wrong = run("def double(x):\n    return x + 2\n");
    assert!(!status(&wrong, "test_two").passed(), "{wrong:?}");
}

/// markdown finds its extensions by name through the entry points of the `Markdown.egg-info` its
/// sdist holds: a copy without the package metadata failed five tests the project passes, and
/// `rgd locate` took them for evidence. The copy the tests run in and the program's copy keep it.
#[test]
fn a_project_installed_in_place_finds_its_entry_points_in_both_copies() {
    let _one = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let plugins = "from importlib.metadata import entry_points\n\n\ndef plugins():\n    return sorted(e.name for e in entry_points(group='pkg.plugins'))\n";
    let project = support::project_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/found.py", plugins),
        ("pkg.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"),
        ("pkg.egg-info/entry_points.txt", "[pkg.plugins]\nshout = pkg.found:plugins\n"),
        (
            "tests/test_found.py",
            "from pkg.found import plugins\n\n\ndef test_finds_its_plugin():\n    assert plugins() == ['shout']\n",
        ),
    ]);
    let ids = runner.collect(project.path(), &[]).unwrap();
    let in_process = runner
        .run(
            project.path(),
            &RunSpec {
                ids: &ids,
                ..RunSpec::default()
            },
            TestLimits::default(),
        )
        .unwrap();
    assert!(
        in_process.outcomes.iter().all(|o| o.passed()) && in_process.outcomes.len() == 1,
        "{in_process:?}"
    );
    let isolated = runner
        .run(
            project.path(),
            &on_target("pkg/found.py", plugins, "plugins", &ids),
            TestLimits::default(),
        )
        .unwrap();
    assert!(
        isolated.outcomes.iter().all(|o| o.passed()) && isolated.outcomes.len() == 1,
        "{isolated:?}"
    );
}

/// unittest cases do not raise their failures out of pytest's call: they record them on the item.
/// Each outcome must still be the test's own: a failure, an error in setUp, a skip, an expected
/// failure, an unexpected success, a pass.
#[test]
fn unittest_cases_are_judged_by_what_they_recorded() {
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = support::project_with(&[(
        "tests/test_cases.py",
        "import unittest\n\n\nclass Cases(unittest.TestCase):\n    def test_fails(self):\n        self.assertEqual(1, 2)\n\n    def test_raises(self):\n        raise ValueError('boom')\n\n    @unittest.skip('not here')\n    def test_skipped(self):\n        pass\n\n    @unittest.expectedFailure\n    def test_expected(self):\n        self.assertEqual(1, 2)\n\n    @unittest.expectedFailure\n    def test_unexpected_success(self):\n        pass\n\n    def test_passes(self):\n        self.assertEqual(1, 1)\n\n\nclass BrokenSetUp(unittest.TestCase):\n    def setUp(self):\n        raise RuntimeError('no fixture')\n\n    def test_x(self):\n        pass\n",
    )]);
    let ids = runner.collect(project.path(), &[]).unwrap();
    let spec = RunSpec {
        ids: &ids,
        ..RunSpec::default()
    };
    let run = runner.run(project.path(), &spec, TestLimits::default()).unwrap();
    let status = |name: &str| {
        run.outcomes
            .iter()
            .find(|o| o.id.ends_with(name))
            .map(|o| o.status.clone())
            .unwrap()
    };
    assert_eq!(status("test_fails"), "failed", "{run:?}");
    assert_eq!(status("test_raises"), "failed", "{run:?}");
    assert_eq!(status("test_skipped"), "skipped", "{run:?}");
    assert_eq!(status("test_expected"), "skipped", "{run:?}");
    assert_eq!(status("test_unexpected_success"), "failed", "{run:?}");
    assert_eq!(status("test_passes"), "passed", "{run:?}");
    assert_eq!(status("BrokenSetUp::test_x"), "failed", "{run:?}");
    assert!(run.tampered.is_empty(), "{run:?}");
}

/// This test process's programs' processes still alive: their command line names rgd's server
/// and this process is among their ancestors (another rgd on the machine has its own).
fn program_processes() -> usize {
    let me = std::process::id().to_string();
    let parent = |pid: &str| -> Option<String> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status.lines().find_map(|l| l.strip_prefix("PPid:")).map(|p| p.trim().to_string())
    };
    let ours = |pid: &str| {
        let mut at = pid.to_string();
        for _ in 0..8 {
            match parent(&at) {
                Some(p) if p == me => return true,
                Some(p) if p != "0" => at = p,
                _ => return false,
            }
        }
        false
    };
    let serves = |dir: &std::path::Path| {
        std::fs::read(dir.join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains("rgd_isolate.serve()"))
    };
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| serves(&e.path()) && ours(&e.file_name().to_string_lossy()))
                .count()
        })
        .unwrap_or(0)
}

/// An isolated call that runs past its budget, and a program whose process dies, are failed tests
/// saying why, never a hang, and leave no process behind; data crosses both ways (an argument
/// the program mutates, a callback, a generator, the module's state, a warning).
#[test]
fn isolated_calls_past_their_budget_or_crashing_fail_and_what_crosses_comes_back() {
    let _one = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = support::project_with(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/core.py",
            "import collections\n\nP = collections.namedtuple('P', 'x y', defaults=(0,))\nSEEN = []\n\n\ndef work(xs, key=None):\n    ...\n",
        ),
        (
            "tests/test_core.py",
            "import warnings\n\nimport pytest\n\nimport pkg.core as core\n\n\ndef test_sorts_in_place_and_remembers():\n    xs = [3, 1, 2]\n    out = core.work(xs, key=lambda v: -v)\n    assert xs == [3, 2, 1]\n    assert list(out) == [core.P(3), core.P(2), core.P(1)]\n    assert core.SEEN == [3]\n\n\ndef test_warns():\n    with pytest.warns(DeprecationWarning):\n        core.work([1])\n",
        ),
    ]);
    let ids = runner.collect(project.path(), &["tests/test_core.py".into()]).unwrap();
    let limits = TestLimits {
        timeout: Duration::from_secs(8),
        memory_mb: 1024,
        per_test: None,
    };
    let run = |program: &str| {
        let text = std::fs::read_to_string(project.path().join("pkg/core.py"))
            .unwrap()
            .replace("    ...\n", program);
        let spec = on_target("pkg/core.py", &text, "work", &ids);
        runner.run(project.path(), &spec, limits).unwrap()
    };
    let before = program_processes();
    let honest = run(
        "    import warnings\n    warnings.warn('old', DeprecationWarning)\n    xs.sort(key=key)\n    SEEN.append(xs[0])\n    return (P(x) for x in xs)\n",
    );
    assert_eq!(honest.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{honest:?}");
    assert!(honest.outcomes.iter().all(|o| o.passed()), "{honest:?}");
    let looping = run("    while True:\n        pass\n");
    assert!(looping.outcomes[0].message.contains("did not answer within"), "{looping:?}");
    assert!(!looping.timed_out, "one call's budget is half the run's: {looping:?}");
    let crash = run("    import os\n    os.kill(os.getpid(), 9)\n");
    assert!(crash.outcomes.iter().all(|o| o.status == "failed"), "{crash:?}");
    assert!(crash.outcomes[0].message.contains("the program's process ended"), "{crash:?}");
    // (Under bubblewrap the process rgd started is bwrap, which exits 128 + the signal.)
    let said = crash.output_tail.contains("SIGKILL") || crash.output_tail.contains("exit status: 137");
    assert!(said, "how it ended is said: {crash:?}");
    let after = program_processes();
    assert!(
        after <= before,
        "a program's process was left behind: {before} before, {after} after"
    );
}

/// Every kind of target is isolated and judged as in one process: a method that changes `self`, a
/// class method, a static method, a decorated function (the decorator stays with the tests), an
/// `async` function, a function raising the project's own exception, one with a sentinel default.
#[test]
fn methods_class_static_decorated_and_async_targets_are_isolated() {
    let module = "import asyncio\nimport functools\n\n\nclass Empty(ValueError):\n    pass\n\n\ndef twice(fn):\n    @functools.wraps(fn)\n    def wrapper(*a, **k):\n        return 2 * fn(*a, **k)\n    return wrapper\n\n\nclass Acc:\n    def __init__(self, start=0):\n        self.total = start\n\n    def add(self, n):\n        self.total += n\n        return self\n\n    @classmethod\n    def make(cls, n):\n        return cls(n)\n\n    @staticmethod\n    def half(n):\n        return n / 2\n\n\n@twice\ndef three():\n    return 3\n\n\nasync def fetch(x):\n    await asyncio.sleep(0)\n    return x + 1\n\n\ndef first(xs):\n    if not xs:\n        raise Empty('nothing')\n    return xs[0]\n\n\n_marker = object()\n\n\ndef pick(xs, fill=_marker):\n    return 'none' if fill is _marker else fill\n\n\nclass Log:\n    def __init__(self):\n        import io\n        self.buf = io.StringIO()\n\n    def write(self, s):\n        self.buf.write(s)\n        return self\n\n\nOTHER = object()\n\n\ndef is_other(x):\n    return x is OTHER\n";
    let tests = "import asyncio\n\nimport pytest\n\nfrom pkg.m import OTHER, Acc, Empty, Log, fetch, first, is_other, pick, three\n\n\ndef test_add():\n    a = Acc(1)\n    assert a.add(2) is a and a.total == 3\n\n\ndef test_make():\n    a = Acc.make(5)\n    assert type(a) is Acc and a.total == 5\n\n\ndef test_half():\n    assert Acc.half(3) == 1.5\n\n\ndef test_three():\n    assert three() == 6\n\n\ndef test_fetch():\n    assert asyncio.run(fetch(1)) == 2\n\n\ndef test_first():\n    with pytest.raises(Empty):\n        first([])\n    assert first([4]) == 4\n\n\ndef test_pick():\n    assert pick([]) == 'none' and pick([], 3) == 3\n\n\ndef test_log():\n    log = Log().write('a').write('b')\n    assert log.buf.getvalue() == 'ab'\n\n\ndef test_is_other():\n    assert is_other(OTHER) and not is_other(1)\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    // (`pick`'s default is a sentinel `object()`: it crosses as the program's own default;
    // `Log.__init__` gives `self` a stream, which stays in the program's process as a handle;
    // `Log.write` is handed a `self` holding the tests' own stream, which the tests lend it;
    // `is_other` is handed the module's own sentinel, which crosses by its name.)
    for target in [
        "Acc.add",
        "Acc.make",
        "Acc.half",
        "three",
        "fetch",
        "first",
        "pick",
        "Log.__init__",
        "Log.write",
        "is_other",
    ] {
        let run = project.run(module, target);
        assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{target}: {run:?}");
        assert!(run.outcomes.iter().all(|o| o.passed()), "{target}: {run:?}");
    }
}

/// What a parser's tests do is judged as in one process: tests calling the target from several
/// threads at once (one conversation at a time on the socket), an object handed over at every call
/// whose parts the tests change between calls (a token inside an unchanged list), the object the
/// program returns being the tests' own, and an `OrderedDict` keeping the order the program gave it
/// (`move_to_end`) both ways.
#[test]
fn threads_objects_changed_between_calls_and_ordered_dicts_cross_as_in_one_process() {
    let module = "class Cursor:\n    def __init__(self, tokens):\n        self.tokens = tokens\n        self.index = -1\n\n    def advance(self, into=None):\n        self.index += 1\n        token = self.tokens[self.index]\n        if into is not None:\n            into[token['k']] = token['v']\n            into.move_to_end(token['k'], last=False)\n        return token\n";
    let tests = "import collections\nimport threading\n\nfrom pkg.m import Cursor\n\n\ndef tokens(n):\n    return [{'k': 'k%d' % i, 'v': i} for i in range(n)]\n\n\ndef test_threads():\n    errors = []\n\n    def worker():\n        c = Cursor(tokens(40))\n        for i in range(40):\n            if c.advance()['v'] != i:\n                errors.append(i)\n\n    threads = [threading.Thread(target=worker) for _ in range(6)]\n    for t in threads:\n        t.start()\n    for t in threads:\n        t.join()\n    assert errors == []\n\n\ndef test_changed_between_calls():\n    c = Cursor(tokens(3))\n    assert c.advance()['v'] == 0\n    c.tokens[1]['v'] = 'changed'\n    token = c.advance()\n    assert token['v'] == 'changed' and token is c.tokens[1] and c.index == 1\n    c.index = -1\n    assert c.advance() is c.tokens[0]\n\n\ndef test_ordered():\n    into = collections.OrderedDict(z=0)\n    c = Cursor(tokens(2))\n    c.advance(into)\n    c.advance(into)\n    assert list(into) == ['k1', 'k0', 'z']\n";
    passes_isolated_as_in_one_process(module, tests, "Cursor.advance", 3);
}

/// A project function a test replaces (`monkeypatch.setattr`), and a standard module's, are called
/// back in the tests' process while the patch lasts and are the program's own again after; a
/// module's singleton, a
/// token type made on first use (a `tuple` subclass, compared with `is`) and a thread-local cross
/// by name and come back as the tests' own, and so does a sentinel of a class made in a function
/// that the module defines after calling the target at import (the first call came mid-import).
#[test]
fn patched_project_functions_are_called_back_and_singletons_cross_by_name() {
    let _one = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let util = "def strip(s):\n    return s.strip()\n";
    let module = "import threading\n\nfrom pkg import util\n\n\nclass Kind:\n    def __init__(self, name):\n        self.name = name\n\n\nINT = Kind('int')\n_local = threading.local()\n\n\nclass Tok(tuple):\n    def __getattr__(self, name):\n        if name.startswith('_'):\n            raise AttributeError(name)\n        new = Tok(self + (name,))\n        setattr(self, name, new)\n        return new\n\n\nToken = Tok()\nKeyword = Token.Keyword\n\n\ndef work(x, kind=None, local=None):\n    import sys\n    return (util.strip(x), kind, Token.Keyword.DML, local, sys.getfilesystemencoding())\n\n\nDEFAULT = work(' d ')\n\n\ndef make():\n    class Sentinel:\n        pass\n    return Sentinel()\n\n\nLATE = make()\n";
    let tests = "import sys\n\nfrom pkg import m, util\n\n\ndef test_patched(monkeypatch):\n    monkeypatch.setattr(util, 'strip', lambda s: 'patched' + s)\n    monkeypatch.setattr(sys, 'getfilesystemencoding', lambda: 'x-test')\n    out = m.work(' a ')\n    assert out[0] == 'patched a ' and out[4] == 'x-test'\n\n\ndef test_restored():\n    out = m.work(' a ')\n    assert out[0] == 'a' and out[4] == sys.getfilesystemencoding() != 'x-test'\n\n\ndef test_identity():\n    out = m.work('x', m.INT, m._local)\n    assert out[1] is m.INT and out[2] is m.Token.Keyword.DML and out[3] is m._local\n    assert m.work('x', m.LATE)[1] is m.LATE and m.DEFAULT[0] == 'd'\n";
    let project = support::project_with(&[
        ("pkg/__init__.py", ""),
        ("pkg/util.py", util),
        ("pkg/m.py", module),
        ("tests/test_m.py", tests),
    ]);
    let ids = runner.collect(project.path(), &["tests/test_m.py".into()]).unwrap();
    let spec = on_target("pkg/m.py", module, "work", &ids);
    let run = runner.run(project.path(), &spec, TestLimits::default()).unwrap();
    assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{run:?}");
    assert_eq!(run.outcomes.len(), 3, "{run:?}");
    assert!(run.outcomes.iter().all(|o| o.passed()), "{run:?}");
}

/// A callable the tests hand the program can be called, never looked into: its `__globals__` (the
/// test module's, expected values and all) stay in the tests' process; a plain name is looked up
/// on the function there, as in one process (a function has no `func_globals`).
#[test]
fn a_callback_can_be_called_not_looked_into() {
    let module = "def apply(fn, x):\n    ...\n";
    let tests =
        "from pkg.m import apply\n\nEXPECTED = 'the secret 42'\n\n\ndef test_apply():\n    assert apply(lambda v: v + 1, 1) == EXPECTED\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    // (`__globals__` is not even asked for; any other name is asked and refused.)
    let program = "def apply(fn, x):\n    fn(x)\n    for name in ('__globals__', 'func_globals'):\n        try:\n            return getattr(fn, name)['EXPECTED']\n        except AttributeError as e:\n            last = e\n    raise last\n";
    let run = project.run(program, "apply");
    assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{run:?}");
    assert_eq!(run.outcomes[0].status, "failed", "{run:?}");
    assert!(run.outcomes[0].message.contains("func_globals"), "{run:?}");
    assert!(!format!("{run:?}").contains("the secret"), "{run:?}");
}

/// What the tests lend the program (an instance of a test's subclass of the project's class, a
/// stream, a lock, an object of a test's class with `__contains__`, a bare `object()`) stays in
/// the tests' process and is used through a handle as in one process: a method the target calls
/// on the test's subclass sees what the target changed in the shared dict so far, and the target
/// sees what the method changed; `isinstance(self, Store)` holds; a `sys.stdin` the test set is
/// lent too. The program cannot look into
/// it: its class, a method's `__globals__` or `__func__`, `__dict__`, asked of the tests' process
/// by hand, are refused, so the test module's secret stays there.
#[test]
fn objects_the_tests_lend_are_used_by_their_names_and_never_looked_into() {
    let module = "class Store:\n    def __init__(self):\n        self.data = {}\n        self.size = 0\n\n    def evict(self):\n        del self.data[next(iter(self.data))]\n        self.size -= 1\n\n    def put(self, key, value, log=None, lock=None, allowed=None, marker=None):\n        ...\n";
    let honest = "    def put(self, key, value, log=None, lock=None, allowed=None, marker=None):\n        assert isinstance(self, Store)\n        if value == 'ask':\n            import sys\n            value = sys.stdin.readline().strip()\n        if allowed is not None and key not in allowed:\n            raise KeyError(key)\n        with lock:\n            if self.size >= 2:\n                self.evict()\n            self.data[key] = value\n            self.size += 1\n        import io\n        assert isinstance(log, io.TextIOBase)\n        log.write('put %s\\n' % key)\n        return marker\n";
    let tests = "import io\nimport threading\n\nfrom pkg.m import Store\n\nSECRET = 'the secret 42'\n\n\nclass Small(Store):\n    def evict(self):\n        key = next(iter(self.data))\n        del self.data[key]\n        self.size -= 1\n        self.evicted.append(key)\n\n\nclass Allowed:\n    def __init__(self, keys):\n        self.keys = keys\n\n    def __contains__(self, key):\n        return key in self.keys and SECRET is not None\n\n\ndef test_lent():\n    s = Small()\n    s.evicted = []\n    log, lock, marker = io.StringIO(), threading.Lock(), object()\n    for k in 'abc':\n        assert s.put(k, k.upper(), log, lock, Allowed('abc'), marker) is marker\n    assert s.data == {'b': 'B', 'c': 'C'} and s.size == 2 and s.evicted == ['a']\n    assert log.getvalue() == 'put a\\nput b\\nput c\\n'\n\n\ndef test_stdin(monkeypatch):\n    monkeypatch.setattr('sys.stdin', io.StringIO('typed\\n'))\n    s = Store()\n    s.put('k', 'ask', io.StringIO(), threading.Lock())\n    assert s.data == {'k': 'typed'}\n\n\ndef test_secret():\n    assert Store().put('k', 1, io.StringIO(), threading.Lock(), Allowed('k')) == SECRET\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    let run = |program: &str| {
        let text = module.replace(
            "    def put(self, key, value, log=None, lock=None, allowed=None, marker=None):\n        ...\n",
            program,
        );
        project.run(&text, "Store.put")
    };
    let honest_run = run(honest);
    assert_eq!(honest_run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{honest_run:?}");
    assert_eq!(honest_run.outcomes.len(), 3, "{honest_run:?}");
    assert!(honest_run.outcomes[..2].iter().all(|o| o.passed()), "{honest_run:?}");
    // Every way into the lent object it can think of, through the handle and around it.
    let prying = "    def put(self, key, value, log=None, lock=None, allowed=None, marker=None):\n        ask = object.__getattribute__(allowed, '_ask')\n        found = []\n        tries = [\n            lambda: allowed.__contains__.__func__.__globals__,\n            lambda: type(allowed).__module__,\n            lambda: ask(allowed, 'get', '__dict__'),\n            lambda: ask(allowed, 'get', '__class__'),\n            lambda: ask(allowed, 'get', '__init__'),\n            lambda: ask(allowed, 'get', '__contains__').__globals__,\n            lambda: object.__getattribute__(allowed.__contains__, '_ask')(allowed.__contains__, 'get', '__globals__'),\n            lambda: object.__getattribute__(allowed.__contains__, '_ask')(allowed.__contains__, 'get', '__func__'),\n            lambda: ask(log, 'get', '__class__'),\n        ]\n        for t in tries:\n            try:\n                found.append(repr(t()))\n            except Exception as e:\n                found.append(type(e).__name__)\n        for f in found:\n            if 'the secret' in f:\n                return 'the secret 42'\n        return repr(found)\n";
    let pried = run(prying);
    assert_eq!(pried.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{pried:?}");
    let secret = pried.outcomes.iter().find(|o| o.id.ends_with("test_secret")).unwrap();
    assert_eq!(secret.status, "failed", "{pried:?}");
    assert!(!secret.message.contains("rgd_isolate"), "{pried:?}");
}

/// A function the target returns, called by a test, changes what it is handed as in one
/// process (a TTL cache's `cache_info` expiring the tests' cache): the change comes back with
/// its answer, and what it prints reaches the test's output (click's help, printed by the
/// callback of the help option the target made). And an object deep down a chain (slotted links more than a hundred levels down)
/// arrives with its attributes, made empty first and filled from the top level.
#[test]
fn a_returned_function_changes_what_it_is_handed_and_deep_links_arrive_whole() {
    let module = "class Link:\n    __slots__ = ('key', 'next')\n\n    def __init__(self, key, next=None):\n        self.key = key\n        self.next = next\n\n\nclass Chain:\n    def __init__(self, n):\n        self.head = None\n        for k in range(n):\n            self.head = Link(k, self.head)\n        self.size = n\n\n\ndef keys(chain):\n    out, link = [], chain.head\n    while link is not None:\n        out.append(link.key)\n        link = link.next\n    return out\n\n\ndef pruner(limit):\n    def prune(chain):\n        if isinstance(chain, list):\n            return [prune(c) for c in chain]\n        link = chain.head\n        for _ in range(limit - 1):\n            link = link.next\n        link.next = None\n        chain.size = limit\n        print('pruned to', limit)\n        return len(keys(chain))\n\n    return prune\n";
    let tests = "from pkg.m import Chain, keys, pruner\n\n\ndef test_prune(capsys):\n    chain = Chain(300)\n    prune = pruner(120)\n    assert prune(chain) == 120\n    assert capsys.readouterr().out == 'pruned to 120\\n'\n    assert chain.size == 120 and keys(chain) == list(range(299, 179, -1))\n    assert prune(chain) == 120 and chain.size == 120\n    # One level further down: the links the chain's other half is made of.\n    assert prune([Chain(300)]) == [120]\n";
    passes_isolated_as_in_one_process(module, tests, "pruner", 1);
}

/// The tests' mocks are lent as any object of theirs: a spec'd `Mock` handed to the target says
/// it is of the project's class and records the target's calls where the test asserts them; a
/// mock a test puts in place of a project function, of a project class's method (bound to no
/// `self`, as the mock itself) or of a standard function (`time.sleep`) is what the program
/// calls while the patch lasts.
#[test]
fn the_tests_mocks_are_lent_and_record_the_programs_calls() {
    let module = "import time\n\n\nclass Sender:\n    def send(self, message):\n        return False\n\n\ndef log(text):\n    pass\n\n\ndef notify(sender, message, retries=1):\n    assert isinstance(sender, Sender)\n    for i in range(retries):\n        if i:\n            time.sleep(30)\n        if sender.send(message):\n            log('sent %s' % message)\n            return True\n    return False\n";
    let tests = "from unittest import mock\n\nfrom pkg import m\n\n\ndef test_mock_sender():\n    sender = mock.Mock(spec=m.Sender)\n    sender.send.side_effect = [False, True]\n    with mock.patch('time.sleep') as sleep, mock.patch.object(m, 'log') as log:\n        assert m.notify(sender, 'hi', retries=3) is True\n    assert sender.send.call_args_list == [mock.call('hi'), mock.call('hi')]\n    sleep.assert_called_once_with(30)\n    log.assert_called_once_with('sent hi')\n\n\ndef test_patched_method():\n    with mock.patch.object(m.Sender, 'send', return_value=True) as send:\n        assert m.notify(m.Sender(), 'x') is True\n    send.assert_called_once_with('x')\n    assert m.notify(m.Sender(), 'y') is False\n";
    passes_isolated_as_in_one_process(module, tests, "notify", 2);
}

/// What click's suite hands its functions crosses as in one process: a test object's bound
/// method put in place of `time.time` is called back (binding no `self`), a stream of a
/// project's subclass of `TextIOWrapper` made in the tests' process is lent and says it is
/// of that class, and `NoneType` (a type guessed from a default of None) comes back by name.
#[test]
fn a_tests_clock_a_project_stream_and_none_type_cross_as_in_one_process() {
    let module = "import io\nimport time\n\n\nclass Named(io.TextIOWrapper):\n    name = 'named'\n\n\ndef kinds(values):\n    return [type(v) for v in values]\n\n\ndef stamp(out, values):\n    out.write('%s %s\\n' % (time.time(), [t.__name__ for t in kinds(values)]))\n    return isinstance(out, Named), out.name, kinds(values)\n";
    let tests = "import io\nimport time\n\nfrom pkg.m import Named, stamp\n\n\nclass Clock:\n    def __init__(self):\n        self.now = 100.0\n\n    def time(self):\n        self.now += 1\n        return self.now\n\n\ndef test_clock(monkeypatch):\n    clock = Clock()\n    monkeypatch.setattr(time, 'time', clock.time)\n    out = Named(io.BytesIO(), encoding='utf-8')\n    ok, name, ks = stamp(out, [None, 1])\n    assert ok and name == 'named' and ks == [type(None), int]\n    out.flush()\n    assert out.buffer.getvalue() == b\"101.0 ['NoneType', 'int']\\n\"\n    assert clock.now == 101.0\n";
    passes_isolated_as_in_one_process(module, tests, "stamp", 1);
}

/// A generator the target returns, driven by `contextlib.contextmanager` in the tests' process:
/// an exception in the `with` block is thrown into it (its traceback stays with the tests), and
/// what it appends to the list its call was handed comes back when it is resumed; a test's lambda
/// it is handed prints as a function and says it is one. A target that replaces `sys.stdout` (a
/// test runner's `isolation`) replaces the tests' own, as in one process: what the test prints
/// meanwhile goes to the program's stream, and the tests' stream is back once the program puts
/// its own back. Both isolated.
#[test]
fn generators_resumed_by_the_tests_and_replaced_streams_are_as_in_one_process() {
    let module = "import contextlib\nimport inspect\nimport io\nimport sys\n\n\n@contextlib.contextmanager\ndef guarded(log, fn=None):\n    log.append('enter %s %s' % (str(fn)[:1], inspect.isfunction(fn)))\n    try:\n        yield len(log)\n    except ValueError as e:\n        log.append('caught %s' % e)\n    finally:\n        log.append('exit')\n\n\n@contextlib.contextmanager\ndef captured():\n    old, sys.stdout = sys.stdout, io.StringIO()\n    try:\n        yield sys.stdout\n    finally:\n        sys.stdout = old\n";
    let tests = "from pkg.m import guarded\n\n\ndef test_throw():\n    log = []\n    with guarded(log, lambda: 0) as n:\n        raise ValueError('boom')\n    assert log == ['enter < True', 'caught boom', 'exit'] and n == 1\n";
    passes_isolated_as_in_one_process(module, tests, "guarded", 1);

    let tests = "from pkg.m import captured\n\n\ndef test_captured():\n    with captured() as out:\n        print('inside')\n    assert out.getvalue() == 'inside\\n'\n";
    passes_isolated_as_in_one_process(module, tests, "captured", 1);
    // Left replaced, the tests' print goes to the program's stream until the test puts its own
    // back; a stdin the program replaces is the tests' too.
    let module = "import io\nimport sys\n\n\ndef swap(text):\n    sys.stdout = io.StringIO()\n    sys.stdin = io.StringIO(text)\n    return sys.stdout\n";
    let tests = "import sys\n\nfrom pkg.m import swap\n\n\ndef test_swap():\n    saved = sys.stdout, sys.stdin\n    try:\n        out = swap('typed\\n')\n        print('into the program')\n        assert input() == 'typed'\n        assert out.getvalue() == 'into the program\\n'\n    finally:\n        sys.stdout, sys.stdin = saved\n";
    passes_isolated_as_in_one_process(module, tests, "swap", 1);
    // The process's own stream put in place (click's debugger streams) is the tests' own.
    let module = "import sys\n\n\ndef to_terminal():\n    sys.stdout = sys.__stdout__\n";
    let tests = "import sys\n\nfrom pkg.m import to_terminal\n\n\ndef test_terminal():\n    saved = sys.stdout\n    try:\n        to_terminal()\n        assert sys.stdout is sys.__stdout__\n    finally:\n        sys.stdout = saved\n";
    passes_isolated_as_in_one_process(module, tests, "to_terminal", 1);
}

/// What the tests lend is theirs to judge with: a program handed a mock cannot rewrite its record
/// of calls or the assertions that read it, and one handed a test's object cannot put its own
/// function in place of the method the test checks the result with. Each wrong program fails,
/// isolated; the honest one passes.
#[test]
fn the_program_cannot_rewrite_what_a_lent_object_will_tell_the_test() {
    let module = "def notify(sender, checker, message):\n    ...\n";
    let tests = "from unittest import mock\n\nfrom pkg.m import notify\n\n\nclass Checker:\n    def __init__(self):\n        self.seen = []\n\n    def record(self, message):\n        self.seen.append(message)\n\n    def ok(self):\n        return self.seen == ['HI']\n\n\ndef test_assertion():\n    sender = mock.Mock()\n    notify(sender, Checker(), 'hi')\n    sender.send.assert_called_once_with('HI')\n\n\ndef test_count():\n    sender = mock.Mock()\n    notify(sender, Checker(), 'hi')\n    assert sender.send.call_count == 1 and sender.send.call_args == mock.call('HI')\n\n\ndef test_checker():\n    checker = Checker()\n    notify(mock.Mock(), checker, 'hi')\n    assert checker.ok()\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    let run = |program: &str| project.run(program, "notify");
    let honest = run("def notify(sender, checker, message):\n    sender.send(message.upper())\n    checker.record(message.upper())\n");
    assert_eq!(honest.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{honest:?}");
    assert!(honest.outcomes.iter().all(|o| o.passed()), "{honest:?}");
    let forging = "def notify(sender, checker, message):\n    import unittest.mock as mock\n    for how in (\n        lambda: setattr(sender.send, 'assert_called_once_with', lambda *a, **k: None),\n        lambda: setattr(sender.send, 'call_count', 1),\n        lambda: setattr(sender.send, 'call_args', mock.call('HI')),\n        lambda: sender.send.configure_mock(call_count=1),\n        lambda: setattr(checker, 'ok', lambda: True),\n        lambda: setattr(sender, '_mock_children', {}),\n    ):\n        try:\n            how()\n        except Exception:\n            pass\n";
    let forged = run(forging);
    assert_eq!(forged.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{forged:?}");
    assert_eq!(forged.outcomes.len(), 3, "{forged:?}");
    assert!(forged.outcomes.iter().all(|o| o.status == "failed"), "{forged:?}");
}

/// A target that copies the tests' instance of a subclass of its class (`type(self).__new__(
/// type(self))`, then `__dict__`, as cachetools' `Cache.__copy__` does) makes the object in the
/// tests' process, of the tests' class, and fills it there: isolated, as in one process. So do
/// `copy.copy` and `copy.deepcopy` of what the tests lent, and `type(obj)(...)`.
#[test]
fn copying_a_lent_object_is_done_where_it_lives_isolated() {
    let module = "class Box:\n    def __init__(self):\n        self.items = {}\n\n    def __copy__(self):\n        cls = type(self)\n        new = cls.__new__(cls)\n        new.__dict__.update(self.__dict__)\n        new.items = dict(self.items)\n        return new\n";
    let tests = "import copy\n\nfrom pkg.m import Box\n\n\nclass Mine(Box):\n    pass\n\n\ndef test_copy():\n    b = Mine()\n    b.items['a'] = 1\n    b.tag = 't'\n    c = copy.copy(b)\n    assert type(c) is Mine and c.tag == 't' and c.items == {'a': 1} and c.items is not b.items\n";
    passes_isolated_as_in_one_process(module, tests, "Box.__copy__", 1);
    let module = "import copy\n\n\ndef copies(obj):\n    made = type(obj)(5)\n    return copy.copy(obj), copy.deepcopy(obj), made, sorted(vars(obj))\n";
    let tests = "from pkg.m import copies\n\n\nclass Mine:\n    def __init__(self, n):\n        self.n, self.items = n, [n]\n\n\ndef test_copies():\n    a = Mine(1)\n    shallow, deep, made, names = copies(a)\n    assert type(shallow) is Mine and shallow.items is a.items\n    assert type(deep) is Mine and deep.items == [1] and deep.items is not a.items\n    assert type(made) is Mine and made.n == 5 and names == ['items', 'n']\n";
    passes_isolated_as_in_one_process(module, tests, "copies", 1);
}

/// A program's function the tests copy (or pickle) cannot be copied in the tests' process: the
/// run is judged in-process and says why, not failed.
#[test]
fn copying_what_the_program_keeps_is_judged_in_process_not_failed() {
    let module = "def adder(n):\n    def add(x):\n        return x + n\n\n    return add\n";
    let tests = "import copy\n\nfrom pkg.m import adder\n\n\ndef test_copy():\n    f = adder(2)\n    assert copy.copy(f)(1) == 3\n";
    passes_in_process_because(module, tests, "adder", "copied or pickled");
}

/// A class the tests define, handed to the program, is lent: the program calls it (the object
/// is made, and stays, in the tests' process), asks `isinstance` against it, reads its name,
/// its signature and its attributes; a classmethod's `cls` is one too.
#[test]
fn a_class_the_tests_define_is_lent_to_be_called_and_compared_against() {
    let module = "import inspect\n\n\ndef build(factory, *args):\n    obj = factory(*args)\n    return (isinstance(obj, factory), isinstance(3, factory), len(inspect.signature(factory).parameters), factory.__name__, factory.SCALE, obj.total())\n\n\nclass Base:\n    @classmethod\n    def make(cls, *args):\n        return build(cls, *args)\n";
    let tests = "from pkg.m import Base, build\n\n\nclass Point:\n    SCALE = 10\n\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n    def total(self):\n        return (self.x + self.y) * self.SCALE\n\n\nclass Sub(Base, Point):\n    pass\n\n\ndef test_build():\n    assert build(Point, 2, 3) == (True, False, 2, 'Point', 10, 50)\n    assert Sub.make(1, 1) == (True, False, 2, 'Sub', 10, 20)\n";
    passes_isolated_as_in_one_process(module, tests, "build", 1);
    // A change to the class itself by a plain name is made there, as in one process.
    let module = "def tag(cls):\n    cls.TAG = 'x'\n    return cls.TAG\n";
    let tests = "from pkg.m import tag\n\n\nclass A:\n    pass\n\n\ndef test_tag():\n    assert tag(A) == 'x' and A.TAG == 'x'\n";
    passes_isolated_as_in_one_process(module, tests, "tag", 1);
}

/// A deque popped from the left at every call (an iterator's look-ahead buffer) crosses as what
/// changed, so thousands of calls on one stay isolated and agree with one process.
#[test]
fn a_buffer_popped_at_every_call_stays_isolated() {
    let module = "import collections\n\n\nclass Peek:\n    def __init__(self, it):\n        self.it = iter(it)\n        self.cache = collections.deque()\n\n    def prepend(self, *items):\n        self.cache.extendleft(reversed(items))\n\n    def __next__(self):\n        if self.cache:\n            return self.cache.popleft()\n        return next(self.it)\n";
    let tests = "from pkg.m import Peek\n\n\ndef test_many():\n    p = Peek(range(5))\n    p.prepend(*range(100, 3100))\n    got = [next(p) for _ in range(1500)]\n    p.prepend('a', 'b')\n    got += [next(p) for _ in range(1507)]\n    assert got == list(range(100, 1600)) + ['a', 'b'] + list(range(1600, 3100)) + list(range(5))\n";
    passes_isolated_as_in_one_process(module, tests, "Peek.__next__", 1);
}

/// A table grown one entry a call (the state of `self` written back after each) crosses as what
/// changed, with LRU moves, evictions, inserts at the front and the tests' own edits between
/// calls; and what the tests hand as a mapping is one: a view of a dict a callback answers, a
/// test's `Mapping` (`isinstance(m, Mapping)`, its `items()` view) and a test's dict subclass.
#[test]
fn tables_changed_a_little_at_every_call_and_the_tests_mappings_are_as_in_one_process() {
    let module = "import collections\nfrom collections.abc import Mapping\n\n\nclass Table:\n    def __init__(self):\n        self.rows = {}\n        self.order = collections.OrderedDict()\n        self.log = []\n\n    def put(self, key, value):\n        ...\n\n\ndef merged(*maps):\n    ...\n";
    let honest = "    def put(self, key, value):\n        if key in self.order:\n            self.order.move_to_end(key)\n        self.rows[key] = value\n        self.order[key] = value\n        if len(self.rows) > 40:\n            old = next(iter(self.order))\n            del self.order[old]\n            del self.rows[old]\n            self.log.insert(0, old)\n        self.log.append(key)\n        return len(self.rows)\n\n\ndef merged(*maps):\n    out = {}\n    for m in maps:\n        if callable(m):\n            m = dict(m())\n        if not isinstance(m, Mapping):\n            raise TypeError(type(m).__name__)\n        for k, v in m.items():\n            out[k] = out.get(k, 0) + v\n    return out\n";
    let program = module.replace(
        "    def put(self, key, value):\n        ...\n\n\ndef merged(*maps):\n    ...\n",
        honest,
    );
    let tests = "import collections\nfrom collections.abc import Mapping\n\nfrom pkg.m import Table, merged\n\n\ndef test_table():\n    t, rows, order, log = Table(), {}, collections.OrderedDict(), []\n    for i in range(600):\n        key = (i * 7) % 53\n        if key in order:\n            order.move_to_end(key)\n        rows[key] = order[key] = i\n        if len(rows) > 40:\n            old = next(iter(order))\n            del order[old], rows[old]\n            log.insert(0, old)\n        log.append(key)\n        assert t.put(key, i) == len(rows)\n        if i % 97 == 0:\n            t.rows[key] = rows[key] = -i\n            t.log[:3] = log[:3] = ['edited']\n    assert t.rows == rows and list(t.order.items()) == list(order.items()) and t.log == log\n\n\nclass Foo(Mapping):\n    def __init__(self, d):\n        self.d = d\n\n    def __iter__(self):\n        return iter(self.d)\n\n    def __getitem__(self, key):\n        return self.d[key]\n\n    def __len__(self):\n        return len(self.d)\n\n\nclass Counts(dict):\n    pass\n\n\ndef test_mappings():\n    assert merged(Foo({1: 1}), Counts({1: 2, 2: 5}), lambda: {2: 1}.items()) == {1: 3, 2: 6}\n";
    let Some(project) = OneModule::new(&program, tests) else { return };
    let in_process = project.run_in_process(&program, "Table.put");
    assert!(in_process.outcomes.iter().all(|o| o.passed()), "{in_process:?}");
    for target in ["Table.put", "merged"] {
        let run = project.run(&program, target);
        assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{target}: {run:?}");
        assert_eq!(run.outcomes.len(), 2, "{run:?}");
        assert!(run.outcomes.iter().all(|o| o.passed()), "{target}: {run:?}");
    }
}

/// A project method that calls a protocol method by name on `self` (`self.__missing__(key)` in a
/// `__getitem__`, as cachetools' `Cache` does) reaches the test's subclass that defines it.
#[test]
fn a_protocol_method_called_by_name_on_a_tests_subclass_is_the_subclass_s() {
    let module = "class Box:\n    def __init__(self):\n        self.data = {}\n\n    def get(self, key):\n        try:\n            return self.data[key]\n        except KeyError:\n            return self.__missing__(key)\n\n    def __missing__(self, key):\n        raise KeyError(key)\n";
    let tests = "import pytest\n\nfrom pkg.m import Box\n\n\nclass Default(Box):\n    def __missing__(self, key):\n        self.data[key] = key * 2\n        return key * 2\n\n\ndef test_missing():\n    b = Default()\n    assert b.get(3) == 6 and b.data == {3: 6} and b.get(3) == 6\n    with pytest.raises(KeyError):\n        Box().get(1)\n";
    passes_isolated_as_in_one_process(module, tests, "Box.get", 1);
}

/// What a test could tell apart from one process is judged in-process, said, never failed: an
/// object the tests hold a weak reference to, set on an object the target returned (no call ends
/// there to say whether the program still holds it), and calls from several threads while one of
/// them runs the tests' own code and waits for the others (the processes take one call at a
/// time).
#[test]
fn weak_references_and_threads_waiting_on_each_other_are_judged_in_process() {
    let module = "def make():\n    class Holder:\n        def size(self):\n            return self.box.value\n\n    return Holder()\n\n\ndef run(fn):\n    return fn()\n";
    let weak = "import weakref\n\nfrom pkg.m import make\n\n\nclass Box:\n    def __init__(self, v):\n        self.value = v\n\n\ndef test_weak():\n    cache = weakref.WeakValueDictionary()\n    b = Box(3)\n    cache['b'] = b\n    h = make()\n    h.box = b\n    assert h.size() == 3\n";
    passes_in_process_because(module, weak, "make", "weak reference");
    let threads = "import threading\n\nfrom pkg.m import run\n\n\ndef test_threads():\n    barrier = threading.Barrier(3, timeout=3)\n    out = []\n\n    def work():\n        out.append(run(lambda: barrier.wait() is not None))\n\n    threads = [threading.Thread(target=work) for _ in range(3)]\n    for t in threads:\n        t.start()\n    for t in threads:\n        t.join()\n    assert out == [True] * 3\n";
    passes_in_process_because(module, threads, "run", "several threads");
}

/// A shared object lives as long as either process holds it, as in one process: a test's object
/// the program read and let go of dies with the test's last reference (its `WeakValueDictionary`
/// entry goes, as dateutil's zone cache's do), so does a project object whose method the program
/// ran, and one the program keeps stays alive. A program that keeps what it should let go of
/// fails isolated, as it would in one process. (Before, the channel kept all of them for the run,
/// and every such run was judged in-process.)
#[test]
fn a_shared_object_lives_as_long_as_either_process_holds_it() {
    let module = "_kept = []\n\n\ndef peek(box):\n    return box.value\n\n\ndef keep(box):\n    _kept.append(box)\n    return box.value\n\n\nclass Tz:\n    def __init__(self, v):\n        self.v = v\n\n    def off(self):\n        return self.v * 2\n";
    let tests = "import gc\nimport weakref\n\nfrom pkg.m import Tz, keep, peek\n\n\nclass Box:\n    def __init__(self, v):\n        self.value = v\n\n\ndef test_lent_dies():\n    cache = weakref.WeakValueDictionary()\n    b = Box(3)\n    cache['b'] = b\n    assert peek(b) == 3 and peek(b) == 3\n    del b\n    gc.collect()\n    assert 'b' not in cache\n\n\ndef test_copied_dies():\n    t = Tz(3)\n    r = weakref.ref(t)\n    assert t.off() == 6 and t.off() == 6\n    del t\n    gc.collect()\n    assert r() is None\n\n\ndef test_kept_lives():\n    b = Box(4)\n    r = weakref.ref(b)\n    assert keep(b) == 4\n    del b\n    gc.collect()\n    assert r() is not None and r().value == 4\n";
    for target in ["peek", "Tz.off", "keep"] {
        passes_isolated_as_in_one_process(module, tests, target, 3);
    }
    // `peek` that keeps what it reads: the test that expects the object to go fails.
    let leaky = module.replace(
        "def peek(box):\n    return box.value",
        "def peek(box):\n    _kept.append(box)\n    return box.value",
    );
    if let Some(project) = OneModule::new(module, tests) {
        project.fails_isolated(&leaky, "peek", 2);
    }
}

/// A test's input function that raises `KeyboardInterrupt`, which the program turns into its
/// own exception (click's `prompt` makes it `Abort`), reaches the program as itself; the
/// program's own `KeyboardInterrupt` still never reaches pytest.
#[test]
fn a_tests_keyboard_interrupt_reaches_the_program_as_itself() {
    let module = "class Abort(Exception):\n    pass\n\n\ndef ask(read):\n    try:\n        return read()\n    except KeyboardInterrupt:\n        raise Abort() from None\n";
    let tests = "import pytest\n\nfrom pkg.m import Abort, ask\n\n\ndef test_interrupted():\n    def read():\n        raise KeyboardInterrupt()\n\n    with pytest.raises(Abort):\n        ask(read)\n    assert ask(lambda: 'y') == 'y'\n";
    passes_isolated_as_in_one_process(module, tests, "ask", 1);
}

/// A test's class handed over as a value is shown as Python shows a class (`str(Class1)` is
/// `type.__str__` bound to it, not `object.__str__` unbound), and a target that is a
/// `contextlib.contextmanager` is entered by the tests as in one process.
#[test]
fn a_tests_class_prints_as_a_class_and_a_context_manager_target_is_entered() {
    let module = "import contextlib\n\n\ndef show(value):\n    return '%s|%r' % (str(value), value)\n\n\n@contextlib.contextmanager\ndef opened(stream, color=None):\n    yield stream, 'utf-8', bool(color)\n\n\ndef use(stream):\n    with opened(stream) as (s, enc, color):\n        s.write('hi')\n        return enc, color\n";
    let tests = "import io\n\nfrom pkg.m import show, use\n\n\nclass Class1:\n    pass\n\n\ndef test_show():\n    assert show(Class1) == '%s|%r' % (Class1, Class1)\n\n\ndef test_use():\n    s = io.StringIO()\n    assert use(s) == ('utf-8', False)\n    assert s.getvalue() == 'hi'\n";
    passes_isolated_as_in_one_process(module, tests, "show", 2);
    passes_isolated_as_in_one_process(module, tests, "opened", 2);
}

/// A method its class deletes once a descriptor holds it (boltons' statsutils: `_calc_x` kept
/// only as a `_StatsProperty`'s `.func`) is still the target the program's process runs.
#[test]
fn a_method_its_class_deletes_once_a_descriptor_holds_it_is_isolated() {
    let module = "class Lazy:\n    def __init__(self, func):\n        self.func = func\n\n    def __get__(self, obj, objtype=None):\n        return self if obj is None else self.func(obj)\n\n\nclass Stats:\n    def __init__(self, data):\n        self.data = data\n\n    def _calc_total(self):\n        return sum(self.data)\n\n    total = Lazy(_calc_total)\n\n\ndel Stats._calc_total\n";
    let tests = "from pkg.m import Stats\n\n\ndef test_total():\n    assert Stats([1, 2, 3]).total == 6\n";
    passes_isolated_as_in_one_process(module, tests, "Stats._calc_total", 1);
}

/// Members of an enum the tests define are enum members to the program (`isinstance(c,
/// enum.Enum)`, `c.name`), as click's `Choice` shows them.
#[test]
fn members_of_a_tests_enum_are_enum_members_to_the_program() {
    let module = "import enum\n\n\ndef metavar(choices):\n    return '{%s}' % '|'.join(c.name if isinstance(c, enum.Enum) else str(c) for c in choices)\n";
    let tests = "import enum\n\nfrom pkg.m import metavar\n\n\nclass MyEnum(enum.Enum):\n    foo = 1\n    bar = 2\n\n\ndef test_metavar():\n    class Mixed(str, enum.Enum):\n        FOO = 'foo-value'\n\n    assert metavar(list(MyEnum)) == '{foo|bar}'\n    assert metavar(list(Mixed)) == '{FOO}'\n    assert metavar(['a', 'b']) == '{a|b}'\n";
    passes_isolated_as_in_one_process(module, tests, "metavar", 1);
}

/// The general rule: an object of the standard library's or an installed package's whose own
/// reduction says it is a bare object and its attributes crosses as those, both ways, rebuilt
/// with the receiver's own class, and what the program changes in it is written back (pyflakes'
/// checker marks the `ast` nodes it is handed; `argparse` parsers gain arguments); one of the
/// program's with a pickling of its own comes back through it (`packaging`'s versions compare).
/// Before, each was "not data" and judged in the tests' process.
#[test]
fn objects_that_pickle_as_their_attributes_cross_as_them() {
    let module = "import ast\n\nfrom packaging.version import Version\n\n\ndef visit(node, parent):\n    node._parent = parent\n    node.seen = [n.__class__.__name__ for n in ast.walk(node)]\n    return node.name, isinstance(node, ast.FunctionDef), ast.unparse(node)\n\n\ndef add(parser):\n    parser.add_argument('--x', type=int, default=1)\n    return parser.prog\n\n\ndef newer(a, b):\n    a, b = Version(a), Version(b)\n    return max(a, b), a < b, a.release\n";
    let tests = "import argparse\nimport ast\n\nfrom packaging.version import Version\n\nfrom pkg.m import add, newer, visit\n\n\ndef test_ast():\n    tree = ast.parse('def f(a):\\n    return a')\n    fn = tree.body[0]\n    assert visit(fn, tree) == ('f', True, 'def f(a):\\n    return a')\n    assert fn._parent is tree and fn.seen[:2] == ['FunctionDef', 'arguments']\n\n\ndef test_parser():\n    p = argparse.ArgumentParser(prog='tool')\n    assert add(p) == 'tool'\n    assert p.parse_args(['--x', '3']).x == 3 and p.parse_args([]).x == 1\n\n\ndef test_version():\n    a, b = Version('1.2'), Version('1.10')\n    assert newer('1.2', '1.10') == (b, True, (1, 2))\n";
    passes_isolated_as_in_one_process(module, tests, "visit", 3);
    passes_isolated_as_in_one_process(module, tests, "add", 3);
    passes_isolated_as_in_one_process(module, tests, "newer", 3);
}

/// A tests' class whose `__signature__` is a property (toolz's tests): `inspect.signature` of it
/// raises in the program as in one process, and the attribute itself still has a `__get__`
/// (toolz's `_check_sigspec` asks both).
#[test]
fn a_tests_class_whose_signature_is_a_property_is_seen_as_in_one_process() {
    let module = "import inspect\n\n\ndef check(func):\n    try:\n        inspect.signature(func)\n        said = 'a signature'\n    except (TypeError, ValueError) as e:\n        said = type(e).__name__\n    return said, hasattr(func, '__signature__') and hasattr(func.__signature__, '__get__')\n";
    let tests = "from pkg.m import check\n\n\nclass Odd:\n    @property\n    def __signature__(self):\n        raise AttributeError('none')\n\n\nclass Plain:\n    def __init__(self, a):\n        self.a = a\n\n\ndef test_check():\n    assert check(Odd) == ('TypeError', True)\n    assert check(Plain) == ('a signature', False)\n";
    passes_isolated_as_in_one_process(module, tests, "check", 1);
}

/// An object of the program's that cannot be called, set on a test's object (click's
/// `Context.__init__` gives a test's subclass the `ExitStack` it made), is set there, used by
/// its names; one that can be called never is (it would be the program's code in the test's
/// object: `repo_fallbacks`).
#[test]
fn an_object_of_the_programs_is_set_on_a_tests_object() {
    let module = "import contextlib\n\n\nclass Base:\n    def __init__(self):\n        self._stack = contextlib.ExitStack()\n        self._stack.callback(print, 'closed')\n\n    def close(self):\n        self._stack.close()\n";
    let tests = "from pkg.m import Base\n\n\nclass Mine(Base):\n    pass\n\n\ndef test_stack(capsys):\n    m = Mine()\n    assert not callable(m._stack)\n    m.close()\n    assert capsys.readouterr().out == 'closed\\n'\n";
    passes_isolated_as_in_one_process(module, tests, "Base.__init__", 1);
}

/// A combination of flags (`re.I | re.S`, parse's compile flags) is no member of its own name:
/// it crosses as its value, both ways, and comes back equal.
#[test]
fn combined_flags_cross_as_their_value() {
    let module = "import enum\nimport re\n\n\nclass Mode(enum.Flag):\n    R = 1\n    W = 2\n\n\ndef more(flags, mode):\n    return flags | re.M, mode | Mode.W, re.compile('a', flags).flags & flags == flags\n";
    let tests = "import re\n\nfrom pkg.m import Mode, more\n\n\ndef test_more():\n    assert more(re.I | re.S, Mode.R) == (re.I | re.S | re.M, Mode.R | Mode.W, True)\n    assert more(re.I, Mode.R | Mode.W) == (re.I | re.M, Mode.R | Mode.W, True)\n";
    passes_isolated_as_in_one_process(module, tests, "more", 1);
}

/// A decorator of the project's that keeps what it adds on the test's own function (click's
/// `option` sets `f.__click_params__`) writes it there, as in one process: isolated.
#[test]
fn a_decorator_that_writes_into_a_tests_function_writes_it_there() {
    let module = "class Opt:\n    def __init__(self, v):\n        self.v = v\n\n\ndef memo(f, value):\n    if not hasattr(f, 'memo'):\n        f.memo = []\n    f.memo.append(value)\n\n\ndef deco(value):\n    def decorator(f):\n        memo(f, Opt(value))\n        return f\n    return decorator\n";
    let tests =
        "from pkg.m import deco\n\n\ndef test_deco():\n    @deco(3)\n    def cli():\n        pass\n\n    assert cli.memo[0].v == 3\n";
    passes_isolated_as_in_one_process(module, tests, "deco", 1);
    let module = module.replace("'memo'", "'__memo__'").replace("f.memo", "f.__memo__");
    let tests = tests.replace("cli.memo", "cli.__memo__");
    passes_isolated_as_in_one_process(&module, &tests, "deco", 1);
}

/// An object of a project class over `functools.partial` (a C heap type whose function lives
/// outside `__dict__`, as boltons' `CachedInstancePartial`) is no data: the run is judged
/// in-process and says so, not failed because the program's process could not rebuild it.
#[test]
fn a_project_class_over_functools_partial_is_judged_in_process() {
    let module = "import functools\n\n\nclass Bound(functools.partial):\n    def __get__(self, obj, objtype=None):\n        return self if obj is None else functools.partial(self.func, obj)\n\n\ndef greet(self, who):\n    return 'hello ' + who\n\n\nclass Greeter:\n    say = Bound(greet)\n";
    let tests = "from pkg.m import Greeter\n\n\ndef test_say():\n    assert Greeter().say('you') == 'hello you'\n";
    passes_in_process_because(module, tests, "Bound.__get__", "the tests passed a value of type pkg.m.Bound");
}

/// A write the tests' side refuses (a special name on an object the tests lent) still has its
/// value read, so what the program sent with it is known there when the program names it again.
#[test]
fn a_refused_write_still_has_its_value_read() {
    let module = "def tag(box):\n    marker = []\n    try:\n        box.__weird__ = marker\n    except AttributeError:\n        pass\n    return marker\n";
    let tests = "from pkg.m import tag\n\n\nclass Box:\n    pass\n\n\ndef test_tag():\n    assert tag(Box()) == []\n";
    passes_isolated_as_in_one_process(module, tests, "tag", 1);
}

/// A named tuple the tests define is of its own class to the program, not a plain tuple:
/// `value.__class__()` needs its fields (boltons' `remap` expects the TypeError).
#[test]
fn a_tests_named_tuple_is_of_its_own_class_to_the_program() {
    let module = "from collections.abc import Mapping, Sequence\n\n\ndef enter(value):\n    if isinstance(value, (Mapping, Sequence)):\n        return value.__class__()\n    return value\n\n\ndef fields(value):\n    return value._fields, value.x, value.__class__.__name__, len(value), value[1]\n\n\ndef klass(value):\n    return value.__class__\n";
    let tests = "import collections\n\nimport pytest\n\nfrom pkg.m import enter, fields, klass\n\n\ndef test_enter():\n    Point = collections.namedtuple('Point', 'x y')\n    with pytest.raises(TypeError):\n        enter(Point(0, 0))\n    assert enter([1]) == []\n\n\ndef test_fields():\n    Point = collections.namedtuple('Point', 'x y')\n    assert fields(Point(3, 4)) == (('x', 'y'), 3, 'Point', 2, 4)\n\n\nclass Box(dict):\n    pass\n\n\ndef test_klass():\n    Point = collections.namedtuple('Point', 'x y')\n    assert klass(Point(1, 2)) is Point\n    made = enter(Box(a=1))\n    assert type(made) is Box and made == {}\n";
    passes_isolated_as_in_one_process(module, tests, "enter", 3);
    passes_isolated_as_in_one_process(module, tests, "fields", 3);
    passes_isolated_as_in_one_process(module, tests, "klass", 3);
}

/// A string, tuple or frozenset the tests hand the function and get back is the same object, as
/// in one process (boltons' `remap` test asks `value is target_str` and `old_parent is
/// target_set` of what went through `default_enter`'s iterator); one equal but of other types
/// (`(1.0, 2.0)` for `(1, 2)`) is not.
#[test]
fn an_immutable_value_that_goes_through_the_function_comes_back_as_itself() {
    let module = "def enter(value):\n    if isinstance(value, str):\n        return value, False\n    return value, enumerate(value)\n\n\ndef widen(value):\n    return tuple(float(x) for x in value)\n";
    let tests = "from pkg.m import enter, widen\n\n\ndef test_enter():\n    target = ''.join(['te', 'st'])\n    out, deeper = enter(target)\n    assert out is target and not deeper\n    _, items = enter([[target]])\n    (_, inner), = items\n    _, items = enter(inner)\n    assert next(items)[1] is target\n    kept = frozenset([1, 7]), (3, 'a')\n    _, items = enter(list(kept))\n    assert all(got is sent for (_, got), sent in zip(items, kept))\n\n\ndef test_widen():\n    assert enter((1, 2))[0] == (1, 2)\n    got = widen((1, 2))\n    assert got == (1, 2) and type(got[0]) is float\n";
    passes_isolated_as_in_one_process(module, tests, "enter", 2);
    passes_isolated_as_in_one_process(module, tests, "widen", 2);
}

/// Two keys of a dict hold one tuple. A walk with an identity cache (boltons' `remap`, which
/// `research` 25.0.0 called with its cache on) enters it once in one process. Here the tests
/// hand the walk a generator of their own that yields the dict's values, so each value reaches
/// the program in a message of its own: the tuple (or frozenset) must still be one object there.
/// Before, the program saw two and counted 7, so boltons' faulty `research` passed its red test
/// isolated: a wrong program judged right.
#[test]
fn a_tuple_the_tests_hold_twice_is_one_object_to_the_program_across_messages() {
    passes_isolated_as_in_one_process(
        "def walk(root, values):\n    seen = set()\n    out = []\n    stack = [root]\n    while stack:\n        v = stack.pop()\n        out.append(v)\n        if id(v) in seen:\n            continue\n        seen.add(id(v))\n        if isinstance(v, dict):\n            stack.extend(values(v))\n        elif isinstance(v, (tuple, frozenset)):\n            stack.extend(v)\n    return len(out)\n",
        "from pkg.m import walk\n\n\ndef each(d):\n    for k in d:\n        yield d[k]\n\n\ndef test_walk():\n    for shared in (('hello', 1), frozenset({'hello', 1})):\n        tree = {'a': shared, 'b': shared}\n        assert walk(tree, each) == 5\n",
        "walk",
        1,
    );
}

/// A tuple the tests send again, one object to the program, still shows what the tests changed
/// in a list inside it since they last sent it.
#[test]
fn a_tuple_sent_again_shows_its_list_as_the_tests_changed_it() {
    passes_isolated_as_in_one_process(
        "def first(pair):\n    return pair[1][0]\n",
        "from pkg.m import first\n\n\ndef test_first():\n    items = [1]\n    pair = ('a', items)\n    assert first(pair) == 1\n    items[0] = 2\n    assert first(pair) == 2\n",
        "first",
        1,
    );
}

/// click's `CompletionItem` has slots and answers any attribute it lacks from its `_info` slot: a
/// blank one (made without `__init__`, to be filled) recurses on any lookup that misses, even
/// `__dict__`. Returned by the program, it crossed as "a value nested deeper than the
/// interpreter's stack", and click's released `Command.shell_complete` failed isolated.
#[test]
fn an_object_that_answers_every_missing_attribute_from_its_state_crosses_back() {
    passes_isolated_as_in_one_process(
        "class Item:\n    __slots__ = ('value', '_info')\n\n    def __init__(self, value, **info):\n        self.value = value\n        self._info = info\n\n    def __getattr__(self, name):\n        return self._info.get(name)\n\n\ndef complete(words, prefix):\n    return [Item(w, help=w.upper()) for w in words if w.startswith(prefix)]\n",
        "from pkg.m import complete\n\n\ndef test_complete():\n    items = complete(['get', 'set', 'go'], 'g')\n    assert [(i.value, i.help, i.type) for i in items] == [('get', 'GET', None), ('go', 'GO', None)]\n",
        "complete",
        1,
    );
}

/// click's `prompt` echoes its text, then calls the input function the test runner put in place,
/// which writes the answer: what the program printed before it called back is written first.
#[test]
fn what_the_program_prints_before_it_calls_the_tests_back_comes_first() {
    passes_isolated_as_in_one_process(
        "def ask(read):\n    print('Name: ', end='')\n    return read()\n",
        "import sys\n\nfrom pkg.m import ask\n\n\ndef test_prompt_then_answer(capsys):\n    def read():\n        sys.stdout.write('typed\\n')\n        return 'typed'\n\n    assert ask(read) == 'typed'\n    assert capsys.readouterr().out == 'Name: typed\\n'\n",
        "ask",
        1,
    );
}

/// boltons' `make_sentinel` returns an object of a class it makes in its body: the tests' side has
/// no class of that name to make it from, so the object stays in the program's process and the
/// tests use it through a handle (it was "a class the project does not define", a failure).
#[test]
fn an_object_of_a_class_the_program_made_in_a_function_is_used_through_a_handle() {
    passes_isolated_as_in_one_process(
        "def make_sentinel(name):\n    class Sentinel:\n        def __init__(self):\n            self.name = name\n\n        def __bool__(self):\n            return False\n\n    return Sentinel()\n",
        "from pkg.m import make_sentinel\n\n\ndef test_sentinel():\n    missing = make_sentinel('missing')\n    assert not missing\n    assert missing.name == 'missing'\n    assert missing is not make_sentinel('missing')\n",
        "make_sentinel",
        1,
    );
}

/// click's prompt tests give an `Option` their own file as its default, and `prompt_for_value`
/// opens it: a path inside an object of the project's that crosses as data is the tests' path as
/// much as one passed alone, and the program's copy has no test file to open. The run is judged
/// in-process, decided on the tests' side when the path is handed over.
#[test]
fn the_tests_own_path_inside_a_project_object_is_judged_in_process() {
    passes_in_process_because(
        "class Opt:\n    def __init__(self, default):\n        self.default = default\n\n\ndef first_line(opt):\n    with open(opt.default) as f:\n        return f.readline()\n",
        "from pkg.m import Opt, first_line\n\n\ndef test_reads_the_default():\n    assert first_line(Opt(__file__)).startswith('from pkg.m')\n",
        "first_line",
        "the path of their own file",
    );
}

/// click's prompt, unable to open the default file, asks again: isolated, where the file is
/// missing, it would ask until the call timed out. The path was handed over, so the run is
/// judged in-process before the program runs at all.
#[test]
fn a_program_that_retries_opening_the_tests_own_path_is_judged_in_process_at_once() {
    passes_in_process_because(
        "class Opt:\n    def __init__(self, default):\n        self.default = default\n\n\ndef first_line(opt):\n    while True:\n        try:\n            with open(opt.default) as f:\n                return f.readline()\n        except OSError:\n            continue\n",
        "from pkg.m import Opt, first_line\n\n\ndef test_reads_the_default():\n    assert first_line(Opt(__file__)).startswith('from pkg.m')\n",
        "first_line",
        "the path of their own file",
    );
}

/// Once a call cannot be isolated, rgd judges the whole run again in-process: the isolated run
/// stops there rather than running the rest of the suite for nothing (here a test that would wait
/// for the run's timeout while isolated).
#[test]
fn a_run_refused_isolation_stops_at_once_and_is_judged_in_process() {
    let module = "def first(frame):\n    return frame.f_code.co_name\n";
    let tests = "import sys\nimport time\n\nfrom pkg.m import first\n\n\ndef test_a_frame():\n    assert first(sys._getframe()) == 'test_a_frame'\n\n\ndef test_waits_while_isolated():\n    while 'rgd_isolate' in sys.modules:\n        time.sleep(0.1)\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    let spec = on_target("pkg/m.py", module, "first", &project.ids);
    let limits = TestLimits {
        timeout: std::time::Duration::from_secs(60),
        ..TestLimits::default()
    };
    let started = std::time::Instant::now();
    let run = project.runner.run(project.project.path(), &spec, limits).unwrap();
    match &run.isolation {
        rgd::repo::run::isolate::Isolation::InProcess { why, .. } => assert!(why.contains("frame"), "{run:?}"),
        other => panic!("{other:?}: {run:?}"),
    }
    assert_eq!(run.outcomes.len(), 2, "{run:?}");
    assert!(run.outcomes.iter().all(|o| o.passed()), "{run:?}");
    // Far below the 60 s the isolated run would wait for (a few seconds either way otherwise).
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
}

/// A call that hands over two of the tests' paths (a folder, then a file in it): judged
/// in-process at once, not left to loop until the call times out.
#[test]
fn a_program_opening_the_second_of_two_handed_paths_is_judged_in_process_at_once() {
    passes_in_process_because(
        "class Opt:\n    def __init__(self, where, default):\n        self.where = where\n        self.default = default\n\n\ndef first_line(opt):\n    while True:\n        try:\n            with open(opt.default) as f:\n                return f.readline()\n        except OSError:\n            continue\n",
        "import os\n\nfrom pkg.m import Opt, first_line\n\n\ndef test_reads_the_default():\n    assert first_line(Opt(os.path.dirname(__file__), __file__)).startswith('import os')\n",
        "first_line",
        "the path of their own file",
    );
}

/// The same `Option`, asked only for what it says of its default (click's `get_help_extra`),
/// never opening it: the tests handed their own path, so the run is in-process whatever the
/// program does with it. A right and a wrong program are judged the same way: how the program
/// behaves (opening the path, failing the test) cannot choose the tests' process.
#[test]
fn the_tests_own_path_is_judged_in_process_whatever_the_program_does_with_it() {
    let module = "import os\n\n\nclass Opt:\n    def __init__(self, default):\n        self.default = default\n\n\ndef shown(opt):\n    return '[default: %s]' % os.path.basename(opt.default)\n";
    let tests = "import os\n\nfrom pkg.m import Opt, shown\n\n\ndef test_shows_the_default():\n    assert shown(Opt(__file__)) == '[default: %s]' % os.path.basename(__file__)\n\n\ndef test_shows_a_path_alone():\n    assert shown(Opt(os.path.dirname(__file__) + '/test_m.py')).endswith('test_m.py]')\n";
    passes_in_process_because(module, tests, "shown", "the path of their own file");
    let Some(project) = OneModule::new(module, tests) else { return };
    let wrong = project.run(&module.replace("basename", "dirname"), "shown");
    match &wrong.isolation {
        rgd::repo::run::isolate::Isolation::InProcess { why, .. } => assert!(why.contains("the path of their own file"), "{wrong:?}"),
        other => panic!("{other:?}: {wrong:?}"),
    }
    assert!(wrong.outcomes.iter().all(|o| !o.passed()), "{wrong:?}");
}

/// click's parameter callbacks get the context with unset values hidden and may change other
/// parameters' values; `process_value` then restores only what the callback left alone. The
/// program must see what the test's function changed in the objects it was handed.
#[test]
fn what_a_tests_callback_changes_in_a_project_object_the_program_sees() {
    passes_isolated_as_in_one_process(
        "class Ctx:\n    def __init__(self):\n        self.params = {'a': 'UNSET', 'b': 'UNSET'}\n\n\ndef process(ctx, callback):\n    hidden = [k for k, v in ctx.params.items() if v == 'UNSET']\n    for k in hidden:\n        ctx.params[k] = None\n    value = callback(ctx)\n    for k in hidden:\n        if ctx.params[k] is None:\n            ctx.params[k] = 'UNSET'\n    return value\n",
        "from pkg.m import Ctx, process\n\n\ndef test_the_callbacks_change_stays():\n    def change(ctx):\n        assert ctx.params == {'a': None, 'b': None}\n        ctx.params['a'] = 'changed'\n        return 1\n\n    ctx = Ctx()\n    assert process(ctx, change) == 1\n    assert ctx.params == {'a': 'changed', 'b': 'UNSET'}\n",
        "process",
        1,
    );
}

/// click's `Option.get_default` hands back the `flag_value` of the option it is given, and the
/// test compares it with `is` to its literal; an equal string the run sent before (another test's,
/// made at run time) must not come back in its place.
#[test]
fn a_string_passed_through_comes_back_as_the_one_just_sent() {
    passes_isolated_as_in_one_process(
        "class Opt:\n    def __init__(self, flag_value):\n        self.flag_value = flag_value\n\n\ndef get_default(opt):\n    return opt.flag_value\n",
        "from pkg.m import Opt, get_default\n\n\ndef test_an_equal_string_made_at_run_time():\n    made = ''.join(['up', 'per'])\n    assert get_default(Opt(made)) == 'upper'\n\n\ndef test_the_literal_comes_back_itself():\n    assert get_default(Opt('upper')) is 'upper'\n",
        "get_default",
        2,
    );
}

/// click's `echo` of bytes (a shell completion script) writes to `sys.stdout.buffer`: what the
/// program writes as bytes reaches the tests' output too, in order with its text.
#[test]
fn what_the_program_writes_as_bytes_reaches_the_tests_output() {
    passes_isolated_as_in_one_process(
        "import sys\n\n\ndef shout(word):\n    sys.stdout.write('say: ')\n    sys.stdout.flush()\n    sys.stdout.buffer.write(word.upper().encode() + b'\\n')\n    return len(word)\n",
        "from pkg.m import shout\n\n\ndef test_shout(capsys):\n    assert shout('h\\u00e9llo') == 5\n    assert capsys.readouterr().out == 'say: H\\u00c9LLO\\n'\n",
        "shout",
        1,
    );
}

/// What the program prints crosses up to 64 KiB a call, however many of its calls back to the
/// tests carry a part of it.
#[test]
fn a_calls_output_is_capped_in_all_across_its_calls_back() {
    let module = "def noisy(call):\n    print('a' * 40000)\n    call()\n    print('b' * 40000)\n    return 1\n";
    let tests = "def test_noisy(capsys):\n    from pkg.m import noisy\n\n    assert noisy(lambda: None) == 1\n    out = capsys.readouterr().out\n    assert out.startswith('a' * 40000) and 'b' in out and len(out) == 64 << 10\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    let run = project.run(module, "noisy");
    assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{run:?}");
    assert!(run.outcomes.len() == 1 && run.outcomes[0].passed(), "{run:?}");
}

/// A class the target binds under a new name of its module (cerberus' `DefinitionSchema.__new__`
/// makes `SchemaValidator` with a factory on first use) exists in the tests' process too, where
/// their code, which never ran that line, finds it by that name: as a handle, its objects made in
/// the program's process. A class bound late that its own module names otherwise crosses by
/// name. Before, the tests' process failed with a `NameError` where one process passes.
#[test]
fn a_class_the_target_binds_under_a_new_name_is_found_by_the_tests() {
    let module = "import collections\n\n\ndef factory(name):\n    class Base:\n        def check(self, x):\n            return x > 0\n\n    return type(name, (Base,), {})\n\n\nclass Schema:\n    def __new__(cls, *args):\n        if 'Checker' not in globals():\n            global Checker, Kind\n            Checker = factory('Checker')\n            Kind = collections.OrderedDict\n        return super().__new__(cls)\n\n    def __init__(self, v):\n        self.ok = Checker().check(v)\n        self.kind = Kind\n";
    let tests = "import collections\n\nfrom pkg.m import Schema\n\n\ndef test_schema():\n    assert Schema(3).ok and not Schema(-1).ok\n    assert Schema(1).kind is collections.OrderedDict\n";
    passes_isolated_as_in_one_process(module, tests, "Schema.__new__", 1);
}

/// Module data the tests filled beyond what one call may copy (dateutil caches its zone file
/// instance, 160,000 values, in a module list) is lent with the call instead: the program reads it
/// in the tests' process, if at all. Before, every such call was judged in-process
/// (`call_values`).
#[test]
fn module_data_too_large_to_copy_is_lent() {
    let module = "CACHE = []\n\n\ndef last():\n    return len(CACHE), CACHE[-1] if CACHE else None\n\n\ndef double(x):\n    return 2 * x\n";
    let tests = "from pkg import m\n\n\ndef test_filled():\n    m.CACHE.extend(range(150_000))\n    assert m.last() == (150_000, 149_999)\n    assert m.double(2) == 4\n    m.CACHE.append(-1)\n    assert m.last() == (150_001, -1)\n";
    passes_isolated_as_in_one_process(module, tests, "last", 1);
    passes_isolated_as_in_one_process(module, tests, "double", 1);
}

/// In one process the program may set the defaults of a function it compiled from a string of
/// its own (boltons' `FunctionBuilder.get_func` `exec`s one and sets its `__defaults__`: judged
/// tampered before, so its released body was judged wrong in-process); setting a test's
/// function's defaults is still tampering.
#[test]
fn in_one_process_a_function_the_program_compiled_is_its_own_to_change() {
    let module = "def build(name, default, model):\n    ...\n";
    let tests = "from pkg.m import build\n\n\ndef helper(x=None):\n    return x\n\n\ndef test_build():\n    f = build('g', 3, helper)\n    assert f() == 3 and f.__name__ == 'g'\n";
    let own = "def build(name, default, model):\n    scope = {}\n    exec(compile('def %s(x=None):\\n    return x\\n' % name, '<builder>', 'exec'), scope)\n    fn = scope[name]\n    fn.__defaults__ = (default,)\n    return fn\n";
    let forged = "def build(name, default, model):\n    model.__defaults__ = (default,)\n    model.__name__ = name\n    return model\n";
    let Some(project) = OneModule::new(module, tests) else { return };
    let run = project.run_in_process(own, "build");
    assert!(run.tampered.is_empty() && run.outcomes.iter().all(|o| o.passed()), "{run:?}");
    let run = project.run_in_process(forged, "build");
    assert!(run.tampered.iter().any(|t| t.contains("__defaults__ (helper)")), "{run:?}");
}
