//! `cargo bench --bench confine`: what confining a project's tests and judging them with rgd's
//! pytest plugin cost. The same pytest run (`rgd solve --repo`'s: a throw-away copy of a small
//! project, two tests) at every level this machine allows, each once as rgd runs it
//! (`ProjectTests::run`: the plugin, its audit hook and channel, the test files mounted read-only)
//! and once without the plugin (`run_without_plugin`: pytest alone, as before the plugin), all
//! interleaved round by round so the machine's noise falls on all alike. Per level: median and p90
//! wall time, the ratio to no confinement, and the plugin's cost over pytest alone. Needs an
//! interpreter with pytest ($RGD_TEST_PYTHON, else python3).

use std::path::PathBuf;
use std::time::Instant;

use rgd::repo::run::confine::Confinement;
use rgd::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};

const ROUNDS: usize = 30;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let python = PathBuf::from(std::env::var("RGD_TEST_PYTHON").unwrap_or_else(|_| "python3".into()));
    let base = ProjectTests::new(&python).expect("an interpreter with pytest (set RGD_TEST_PYTHON)");
    let project = tempfile::tempdir().expect("temp dir");
    for (path, text) in [
        ("pkg/__init__.py", "from .core import *\n"),
        ("pkg/core.py", "def double(x):\n    return 2 * x\n"),
        (
            "tests/test_core.py",
            "from pkg import double\n\ndef test_two():\n    assert double(1) == 2\n\ndef test_zero():\n    assert double(0) == 0\n",
        ),
    ] {
        let p = project.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    let ids = vec![
        "tests/test_core.py::test_two".to_string(),
        "tests/test_core.py::test_zero".to_string(),
    ];
    let levels: Vec<(Confinement, ProjectTests)> = Confinement::ALL
        .into_iter()
        .rev()
        .filter_map(|level| match base.confined(level) {
            Ok(runner) => Some((level, runner)),
            Err(e) => {
                println!("{:<10} not available here: {e:#}", level.word());
                None
            }
        })
        .collect();
    let mut times: Vec<[Vec<f64>; 2]> = vec![[Vec::new(), Vec::new()]; levels.len()];
    let spec = RunSpec {
        ids: &ids,
        ..RunSpec::default()
    };
    for _ in 0..ROUNDS {
        for (i, (level, runner)) in levels.iter().enumerate() {
            let started = Instant::now();
            runner
                .run_without_plugin(project.path(), &ids, TestLimits::default())
                .expect("runs");
            times[i][0].push(started.elapsed().as_secs_f64() * 1000.0);
            let started = Instant::now();
            let run = runner.run(project.path(), &spec, TestLimits::default()).expect("runs");
            assert!(
                run.outcomes.iter().all(|o| o.passed()) && run.tampered.is_empty(),
                "{}: {run:?}",
                level.word()
            );
            assert_eq!(run.confinement, *level);
            times[i][1].push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() * 9 / 10])
    };
    let none = median(&times[0][0]).0;
    println!("{ROUNDS} rounds, interleaved; one pytest run of 2 tests in a fresh copy");
    println!("| confinement | pytest alone: median ms | p90 ms | vs none | with rgd's plugin: median ms | p90 ms | plugin's cost |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (i, (level, _)) in levels.iter().enumerate() {
        let (m, p90) = median(&times[i][0]);
        let (pm, pp90) = median(&times[i][1]);
        println!(
            "| {} | {m:.1} | {p90:.1} | {:.2}x | {pm:.1} | {pp90:.1} | {:+.1}% |",
            level.word(),
            m / none,
            (pm / m - 1.0) * 100.0
        );
    }
}
