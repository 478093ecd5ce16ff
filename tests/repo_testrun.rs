//! A project's own pytest suite run in a throw-away copy, one file replaced: outcomes per test,
//! the project untouched, a selection of nothing and a missing package named, the timeout. Needs
//! an interpreter with pytest: $RGD_TEST_PYTHON (`.ci/test` installs pytest into its venv), else
//! python3 if it has pytest; without one the test says so loudly and checks nothing.

mod support;

use std::path::Path;
use std::time::Duration;

use rgd::repo::testrun::{ProjectTests, TestLimits};

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

#[test]
fn the_suite_runs_in_a_copy_with_one_file_replaced_and_reports_each_test() {
    let Some(python) = support::pytest_python() else { return };
    let runner = ProjectTests::new(&python).unwrap();
    let project = project();
    let before = support::snapshot(project.path());

    let ids = runner.collect(project.path(), &["tests/test_core.py".into()]).unwrap();
    assert_eq!(ids, ["tests/test_core.py::test_two", "tests/test_core.py::test_zero"]);

    let limits = TestLimits::default();
    let good = runner.run(project.path(), None, &ids, limits).unwrap();
    assert!(good.outcomes.iter().all(|o| o.passed()), "{good:?}");

    // A wrong candidate: one test fails, with pytest's message; the other still passes.
    let wrong = "def double(x):\n    \"\"\"Twice x.\"\"\"\n    return x + 2\n";
    let bad = runner.run(project.path(), Some(("pkg/core.py", wrong)), &ids, limits).unwrap();
    assert_eq!(bad.outcomes[0].status, "failed", "{bad:?}");
    assert!(bad.outcomes[0].message.contains("assert 3 == 2"), "{bad:?}");
    assert_eq!(bad.outcomes[1].status, "failed", "double(0) is 2 here: {bad:?}");
    // pytest's report of the failure comes with it, with the copy's paths as the project's.
    assert!(bad.outcomes[0].detail.contains("assert 3 == 2"), "{bad:?}");
    assert!(!bad.outcomes[0].detail.contains("/tmp/"), "{bad:?}");
    // A candidate that does not even import: every test is an error saying why.
    let broken = runner
        .run(
            project.path(),
            Some(("pkg/core.py", "def double(x):\n    return (x\n")),
            &ids,
            limits,
        )
        .unwrap();
    for o in &broken.outcomes {
        assert_eq!(o.status, "error", "{broken:?}");
        assert!(o.message.contains("SyntaxError"), "{broken:?}");
    }
    // The project itself never changes.
    assert_eq!(support::snapshot(project.path()), before);
    // Root here: the run had a network namespace of its own.
    let unshare = std::process::Command::new("unshare")
        .args(["--net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert_eq!(good.network_isolated, unshare);
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

    let slow = vec!["tests/test_slow.py::test_sleeps".to_string()];
    let limits = TestLimits {
        timeout: Duration::from_secs(2),
        memory_mb: 1024,
    };
    let run = runner.run(project.path(), None, &slow, limits).unwrap();
    assert!(run.timed_out && run.seconds < 10.0, "{run:?}");
    assert_eq!(run.outcomes[0].status, "not run");
    assert!(run.outcomes[0].message.contains("timed out"), "{run:?}");

    let err = ProjectTests::new(Path::new("/bin/true")).err().map(|e| format!("{e:#}"));
    assert!(err.is_some_and(|e| e.contains("does not have") || e.contains("pytest")));
}
