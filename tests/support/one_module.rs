//! One module of a project and its tests, run by rgd's project runner with the module's target
//! isolated or in the tests' process: the repository-mode verdict tests share it. Needs an
//! interpreter with pytest (`pytest_python`); without one, `OneModule::new` is None.

use rgd::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};

/// Held by the tests that start programs' processes, so that counting those left behind sees only
/// one test's.
pub static PROGRAMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A run of `ids` with `file` holding `text` and `target` the agents' function in it.
pub fn on_target<'a>(file: &'a str, text: &'a str, target: &'a str, ids: &'a [String]) -> RunSpec<'a> {
    RunSpec {
        replace: Some((file, text)),
        target: Some(target),
        ids,
        withhold: &[],
    }
}

/// A project whose `pkg/m.py` is `module` and whose `tests/test_m.py` is `tests`, its tests
/// collected, holding the lock on programs' processes while it lives; None where no interpreter
/// has pytest.
pub struct OneModule {
    pub runner: ProjectTests,
    pub project: tempfile::TempDir,
    pub ids: Vec<String>,
    _one: std::sync::MutexGuard<'static, ()>,
}

impl OneModule {
    pub fn new(module: &str, tests: &str) -> Option<Self> {
        let _one = PROGRAMS.lock().unwrap_or_else(|e| e.into_inner());
        let runner = ProjectTests::new(&super::pytest_python()?).unwrap();
        let project = super::project_with(&[("pkg/__init__.py", ""), ("pkg/m.py", module), ("tests/test_m.py", tests)]);
        let ids = runner.collect(project.path(), &["tests/test_m.py".into()]).unwrap();
        Some(OneModule {
            runner,
            project,
            ids,
            _one,
        })
    }

    /// The tests, with `program` in `pkg/m.py`'s place and `target` isolated.
    pub fn run(&self, program: &str, target: &str) -> rgd::repo::run::testrun::TestRun {
        let spec = on_target("pkg/m.py", program, target, &self.ids);
        self.runner.run(self.project.path(), &spec, TestLimits::default()).unwrap()
    }

    /// The tests, with `program` in `pkg/m.py`'s place and `target` in the tests' process.
    pub fn run_in_process(&self, program: &str, target: &str) -> rgd::repo::run::testrun::TestRun {
        let spec = on_target("pkg/m.py", program, target, &self.ids);
        self.runner
            .run_in_process(self.project.path(), &spec, TestLimits::default())
            .unwrap()
    }

    /// With `program` in `pkg/m.py`'s place and `target` isolated, all `count` tests pass and
    /// the run says it was isolated.
    pub fn passes_isolated(&self, program: &str, target: &str, count: usize) {
        let run = self.run(program, target);
        assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{run:?}");
        assert_eq!(run.outcomes.len(), count, "{run:?}");
        assert!(run.outcomes.iter().all(|o| o.passed()), "{run:?}");
    }

    /// With `program` (a wrong one) in `pkg/m.py`'s place and `target` isolated, the run says it
    /// was isolated and only `passing` tests pass.
    pub fn fails_isolated(&self, program: &str, target: &str, passing: usize) {
        let run = self.run(program, target);
        assert_eq!(run.isolation, rgd::repo::run::isolate::Isolation::Isolated, "{run:?}");
        assert_eq!(run.outcomes.iter().filter(|o| o.passed()).count(), passing, "{run:?}");
    }
}

/// `tests` pass on `module` (`pkg/m.py`) with `target` judged in-process, for a reason that
/// says `because`.
pub fn passes_in_process_because(module: &str, tests: &str, target: &str, because: &str) {
    let Some(project) = OneModule::new(module, tests) else { return };
    let run = project.run(module, target);
    match &run.isolation {
        rgd::repo::run::isolate::Isolation::InProcess { why, .. } => assert!(why.contains(because), "{run:?}"),
        other => panic!("{other:?}: {run:?}"),
    }
    assert!(run.outcomes.iter().all(|o| o.passed()), "{run:?}");
}

/// Runs `tests` against `module` (`pkg/m.py`) with `target` isolated, after checking they pass
/// in one process: every test passes isolated too, and the run says it was isolated.
pub fn passes_isolated_as_in_one_process(module: &str, tests: &str, target: &str, count: usize) {
    let Some(project) = OneModule::new(module, tests) else { return };
    let in_process = project.run_in_process(module, target);
    assert!(in_process.outcomes.iter().all(|o| o.passed()), "{in_process:?}");
    project.passes_isolated(module, target, count);
}

/// `passes_isolated_as_in_one_process`, then `wrong` in `module`'s place fails isolated with
/// only `passing` tests passing.
pub fn right_passes_and_wrong_fails(module: &str, tests: &str, target: &str, count: usize, wrong: &str, passing: usize) {
    passes_isolated_as_in_one_process(module, tests, target, count);
    if let Some(project) = OneModule::new(module, tests) {
        project.fails_isolated(wrong, target, passing);
    }
}
