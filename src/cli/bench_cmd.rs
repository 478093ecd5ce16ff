//! `rgd bench repo|locate|verdicts|real`: retrieval, fault localisation, verdicts and isolation
//! measured on real projects, each bench run by its module under `repo/` and its report printed
//! here.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use super::{print_lines, stderr_line};
use crate::config::Configured;
use crate::launch::project::guide_model;
use crate::store::Home;

// Parsed once per process: the model flags' size on one variant costs nothing worth boxing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Real regressions from consecutive releases on PyPI: the shipped instances (--list), and
    /// `harvest` to make them
    Real(super::bench_real::RealArgs),
    /// Retrieval on real projects from PyPI: recall@5/@10 of each stream, fused, with the graph;
    /// index time and size per 10k lines; query latency
    Repo {
        /// Reuse the projects' indexes from an earlier run (index time is then not the cold cost)
        #[arg(long)]
        warm: bool,
        #[arg(long)]
        json: bool,
        /// Measure the stages that ask the Guide's model instead (--augment, --rerank, both), on
        /// --sample targets spread over all of them
        #[arg(long)]
        with_model: bool,
        /// Measure on the held-out projects instead (click, funcy, jmespath, sqlparse): chosen
        /// after the retrieval's weights were set on the six, never used to set one
        #[arg(long, conflicts_with = "with_model")]
        held_out: bool,
        /// Targets the model stages are measured on
        #[arg(long, default_value_t = 20, value_parser = crate::validate::parse_count, requires = "with_model")]
        sample: usize,
        /// For --with-model
        #[command(flatten)]
        llm: crate::config::LlmArgs,
    },
    /// Fault localisation on planted faults: single-fault mutants of the same projects' modules,
    /// each located from its failing tests; top-1/3/5 of the mutated function, Ochiai alone and
    /// rgd's ranking
    Locate {
        /// The held-out projects instead
        #[arg(long)]
        held_out: bool,
        /// Mutants per project, spread evenly over all it has
        #[arg(long, default_value_t = 60, value_parser = crate::validate::parse_count)]
        per_project: usize,
        /// Only these projects (by PyPI name; repeatable)
        #[arg(long = "project", value_name = "NAME")]
        projects: Vec<String>,
        /// The interpreter (with pytest) the projects' tests run with (else $RGD_PYTHON, else python3)
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// False alarms of repository mode's verdicts: the same projects' own suites with their
    /// original code, split visible/hidden and run as `rgd solve --repo` runs a program; every
    /// run should come back untampered. With --isolation: each project's most tested functions
    /// taken as the target in turn, their tests run in-process and isolated, outcomes compared
    Verdicts {
        /// The held-out projects instead
        #[arg(long)]
        held_out: bool,
        /// Compare isolated runs with in-process ones, function by function
        #[arg(long)]
        isolation: bool,
        /// With --isolation: how many functions per project (the ones the most tests enter)
        #[arg(long, default_value_t = 20, value_parser = crate::validate::parse_count, requires = "isolation")]
        functions: usize,
        /// With --isolation: only these projects (by name)
        #[arg(long = "project", value_name = "NAME", requires = "isolation")]
        projects: Vec<String>,
        /// With --isolation: the projects of the real-bug list (`rgd bench real`; its tuning set,
        /// or with --held-out its held-out set) instead, each at its newest release in the list,
        /// its suite run in the venv `rgd bench real` makes for it (unless --python)
        #[arg(long, requires = "isolation")]
        real_bugs: bool,
        /// With --real-bugs: the instance list whose projects are taken (default: the shipped one)
        #[arg(long, value_name = "FILE", requires = "real_bugs")]
        instances: Option<PathBuf>,
        /// The interpreter (with pytest) the projects' tests run with (else $RGD_PYTHON, else python3)
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// `rgd bench verdicts`: one table row per project and half, then every false alarm and every
/// test that did not pass, with why.
fn bench_verdicts(home: &Home, held_out: bool, python: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let (set, runner, cache) = project_runs(home, held_out, &[], python)?;
    let projects = crate::repo::bench::verdicts::run(&cache, set, &runner, &stderr_line)?;
    if json {
        println!("{}", serde_json::to_string(&projects)?);
    } else {
        print_lines(crate::repo::bench::verdicts::table(&projects, runner.confinement().describe()));
    }
    let alarms = projects
        .iter()
        .flat_map(|p| [&p.visible, &p.hidden])
        .flatten()
        .any(|h| !h.tampered.is_empty());
    Ok(if alarms { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// `rgd bench locate`: per project and overall, top-1/3/5 of the mutated function.
fn bench_locate(
    home: &Home,
    held_out: bool,
    per_project: usize,
    only: &[String],
    python: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (set, runner, cache) = project_runs(home, held_out, only, python)?;
    let projects = crate::repo::bench::locate::run(&cache, set, only, &runner, per_project, &stderr_line)?;
    if json {
        println!("{}", serde_json::to_string(&projects)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_lines(crate::repo::bench::locate::table(&projects));
    Ok(ExitCode::SUCCESS)
}

/// Where the benches keep the projects' sources (fetched once).
fn bench_cache(home: &Home) -> PathBuf {
    home.root.join("bench").join("repo")
}

/// What a bench that runs the projects' suites needs: the projects chosen, the test runner with
/// the interpreter asked for, and where their sources are kept.
fn project_runs(
    home: &Home,
    held_out: bool,
    only: &[String],
    python: Option<PathBuf>,
) -> anyhow::Result<(
    &'static [crate::repo::bench::Project],
    crate::repo::run::testrun::ProjectTests,
    PathBuf,
)> {
    let set = chosen_projects(held_out, only)?;
    let runner = crate::repo::run::testrun::ProjectTests::with(python.as_deref())?;
    Ok((set, runner, bench_cache(home)))
}

/// The set `--held-out` picks, once every `--project NAME` is checked to be one of it.
fn chosen_projects(held_out: bool, only: &[String]) -> anyhow::Result<&'static [crate::repo::bench::Project]> {
    let set = project_set(held_out);
    if let Some(unknown) = only.iter().find(|n| !set.iter().any(|p| &p.name == n)) {
        anyhow::bail!(
            "--project {unknown}: not one of {}",
            set.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(set)
}

fn project_set(held_out: bool) -> &'static [crate::repo::bench::Project] {
    if held_out {
        &crate::repo::bench::HELD_OUT
    } else {
        &crate::repo::bench::PROJECTS
    }
}

pub async fn bench(home: &Home, cmd: BenchCommand, config: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    let (warm, json, with_model, held_out, sample, llm) = match cmd {
        BenchCommand::Real(args) => return super::bench_real::run(home, config, args).await,
        BenchCommand::Verdicts {
            held_out,
            isolation: true,
            functions,
            projects,
            real_bugs: true,
            instances,
            python,
            json,
        } => {
            let (measured, confinement) = super::bench_isolation::real(home, held_out, functions, &projects, instances.as_deref(), python)?;
            return super::bench_isolation::report(&measured, confinement, json);
        }
        BenchCommand::Verdicts {
            held_out,
            isolation: true,
            functions,
            projects,
            python,
            json,
            ..
        } => return super::bench_isolation::pinned(project_runs(home, held_out, &projects, python)?, &projects, functions, json),
        BenchCommand::Verdicts {
            held_out, python, json, ..
        } => return bench_verdicts(home, held_out, python, json),
        BenchCommand::Locate {
            held_out,
            per_project,
            projects,
            python,
            json,
        } => return bench_locate(home, held_out, per_project, &projects, python, json),
        BenchCommand::Repo {
            warm,
            json,
            with_model,
            held_out,
            sample,
            llm,
        } => (warm, json, with_model, held_out, sample, llm),
    };
    let from = Configured::load(config, &home.root, &llm)?;
    let embedder = crate::repo::embedder(&stderr_line)?;
    let cache = bench_cache(home);
    if with_model {
        let (model, params, prompts) = guide_model(&from)?;
        let stages = crate::repo::bench::ModelStages {
            model: model.as_ref(),
            params: &params,
            prompts: &prompts,
            sample,
        };
        let r = crate::repo::bench::run_model_stages(&home.root, &cache, embedder, stages, &stderr_line).await?;
        if json {
            println!("{}", serde_json::to_string(&r)?);
            return Ok(ExitCode::SUCCESS);
        }
        println!(
            "{} targets; the Guide's model {}: {} calls, {} failed or unusable, {:.1} s a call\n",
            r.sample, r.model, r.calls, r.failed, r.seconds_per_call
        );
        print_lines(crate::repo::bench::rows_table(&r.rows));
        return Ok(ExitCode::SUCCESS);
    }
    let set = project_set(held_out);
    let report = crate::repo::bench::run(&home.root, &cache, set, embedder, warm, &stderr_line)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_lines(crate::repo::bench::table(&report));
    Ok(ExitCode::SUCCESS)
}
