//! `rgd bench verdicts --isolation`: whether isolating a repository target changes a verdict, on
//! the pinned bench projects or (`--real-bugs`) on the real-bug list's projects.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{print_lines, stderr_line};
use crate::store::Home;

/// `rgd bench verdicts --isolation`: a row per project (functions isolated, outcomes that differ,
/// the median time ratio), then every function not isolated and every outcome that differs; the
/// projects `only` names of `set` (fetched into `cache`), their suites run by `runner`.
pub fn pinned(
    (set, runner, cache): (
        &'static [crate::repo::bench::Project],
        crate::repo::run::testrun::ProjectTests,
        PathBuf,
    ),
    only: &[String],
    functions: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let chosen = crate::repo::bench::chosen(&cache, set, only, &stderr_line)?;
    let projects = crate::repo::bench::isolation::run(
        chosen.into_iter().map(|(name, dir)| (name, Ok((dir, &runner)))),
        functions,
        &stderr_line,
    )?;
    report(&projects, runner.confinement().describe(), json)
}

/// `rgd bench verdicts --isolation --real-bugs`: the same, over the projects of the real-bug
/// list, each at the newest release its instances come from and in its own venv.
pub fn real(
    home: &Home,
    held_out: bool,
    functions: usize,
    only: &[String],
    list: Option<&std::path::Path>,
    python: Option<PathBuf>,
) -> anyhow::Result<(Vec<crate::repo::bench::isolation::ProjectParity>, &'static str)> {
    use crate::repo::bench::real::{measure::newer_release, run, venv::suite_runner};
    let chosen = run::choose(run::instances(list)?, held_out, only, None);
    if chosen.is_empty() {
        anyhow::bail!(
            "no project of the list is in the {} set",
            if held_out { "held-out" } else { "tuning" }
        );
    }
    let cache = super::bench_real::real_cache(&home.root);
    std::fs::create_dir_all(&cache)?;
    // Each venv's interpreter is confined alike on one machine: the last one made is reported.
    let confinement = std::cell::Cell::new("not measured");
    let releases = run::newest_releases(&chosen);
    let projects = releases.into_iter().map(|i| {
        let made = newer_release(&cache, i).and_then(|tree| {
            let runner = suite_runner(&cache, python.as_deref(), &i.project, &tree, &stderr_line)?;
            confinement.set(runner.confinement().describe());
            Ok((tree, runner))
        });
        (format!("{} {}", i.project, i.versions[1]), made)
    });
    let measured = crate::repo::bench::isolation::run(projects, functions, &stderr_line)?;
    Ok((measured, confinement.get()))
}

/// The isolation bench's table or JSON; failure when an isolated outcome differs.
pub fn report(projects: &[crate::repo::bench::isolation::ProjectParity], confinement: &str, json: bool) -> anyhow::Result<ExitCode> {
    let all: Vec<_> = projects.iter().flat_map(|p| &p.functions).collect();
    let isolated: Vec<_> = all.iter().filter(|f| f.not_isolated.is_none()).collect();
    let differ: usize = isolated.iter().map(|f| f.differ.len()).sum();
    if json {
        println!("{}", serde_json::to_string(&projects)?);
    } else {
        print_lines(crate::repo::bench::isolation::table(projects, confinement));
    }
    Ok(if differ > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
