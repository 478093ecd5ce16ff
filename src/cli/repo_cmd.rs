//! `rgd index DIR`, `rgd context --repo DIR --target FILE::NAME` and `rgd bench repo`: a Python
//! project indexed, the context retrieved for one of its functions (with why each piece was
//! chosen), and retrieval measured on real projects.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::stderr_line;
use crate::config::Configured;
use crate::launch::project::{Progress, RetrievalArgs, Wanted, guide_model, open, print_report, retrieve};
use crate::repo::index::Embed;
use crate::store::Home;

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The project's root directory
    pub dir: PathBuf,
    /// Have the Guide's model describe each chunk (once per version of its code; kept in the
    /// index) and embed that too
    #[arg(long)]
    pub describe: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Check the index instead of building it: every record read from a copy of its database
    /// and compared with the project; exit 1 when damaged (`rgd index DIR` then rebuilds it)
    #[arg(long, conflicts_with = "describe")]
    pub verify: bool,
    /// For --describe
    #[command(flatten)]
    pub llm: crate::config::LlmArgs,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The project's root directory
    #[arg(long)]
    pub repo: PathBuf,
    /// The function: path/to/mod.py::name or path/to/mod.py::Class.method
    #[arg(long)]
    pub target: String,
    /// Treat the target's body as blank (what the agents see when they write it anew)
    #[arg(long)]
    pub blank: bool,
    /// How many pieces
    #[arg(long, default_value_t = 10, value_parser = crate::validate::parse_count)]
    pub k: usize,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    /// Print the context block itself, as the agents get it, within --budget
    #[arg(long)]
    pub prompt: bool,
    /// Let test functions and test files be retrieved too (the agents never get them: tests are
    /// the specification, not code to imitate)
    #[arg(long)]
    pub include_tests: bool,
    /// Print JSON (one object with the pieces)
    #[arg(long)]
    pub json: bool,
    /// For --augment and --rerank
    #[command(flatten)]
    pub llm: crate::config::LlmArgs,
}

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
        /// The interpreter (with pytest) the projects' tests run with (else $RGD_PYTHON, else python3)
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

pub async fn index(home: &Home, args: IndexArgs, from: Configured<'_>) -> anyhow::Result<ExitCode> {
    if args.verify {
        let check = crate::repo::index_check::verify_index(&home.root, &args.dir)?;
        return super::print_check(args.json, &check, &check.line(), !check.damage.is_empty());
    }
    let (mut index, mut report) = open(home, &args.dir, Embed::All)?;
    if args.describe {
        let (model, params, prompts) = guide_model(&from)?;
        let todo = crate::repo::index::undescribed(&index)?;
        let progress = Progress::new();
        let (written, failed) = crate::repo::llm::describe(model.as_ref(), &params, &prompts, &index, &todo, &|done, total| {
            progress.set("describing", done, total)
        })
        .await?;
        progress.finish();
        crate::repo::index::store_descriptions(&index.dir, &written)?;
        let described = written.len();
        let first = report;
        (index, report) = open(home, &args.dir, Embed::All)?;
        // The pass as a whole: what the first build parsed, what both embedded.
        report.parsed = first.parsed;
        report.embedded += first.embedded;
        report.described = described;
        report.describe_failed = failed;
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, &args.dir);
        println!("index in {}", index.dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn context(home: &Home, args: ContextArgs, from: Configured<'_>) -> anyhow::Result<ExitCode> {
    // A class is a target here too; whether it is one of the file's, the index says.
    crate::launch::project::check_target(&crate::launch::project::project_root(&args.repo)?, &args.target, false)?;
    let (mut index, report) = open(home, &args.repo, Embed::Ready)?;
    if !args.json {
        print_report(&report, &args.repo);
    }
    let target = index.target(&args.target)?;
    let k = args.k;
    let want = Wanted {
        target,
        blank: args.blank,
        k,
        tests: args.include_tests,
    };
    let ready = crate::launch::project::prepare(&mut index, &want, &args.retrieval)?;
    let pieces = retrieve(&index, want, &args.retrieval, &from, &|_| false).await?;
    if !args.json {
        eprintln!("retrieved with {}", ready.describe());
        eprintln!(
            "{}",
            if args.include_tests {
                "test functions and test files included (--include-tests): the agents never get them"
            } else {
                "test functions and test files left out, as for the agents (--include-tests shows them)"
            }
        );
    }
    let g = &index.graph;
    if args.prompt {
        let budget = args.retrieval.budget;
        let (text, used) = crate::repo::render::render_context(&index, target, &pieces[..pieces.len().min(k)], budget);
        print!("{text}");
        eprintln!(
            "{} of {} pieces in about {} of {budget} tokens",
            used.len(),
            k.min(pieces.len()),
            crate::repo::render::estimate_tokens(&text),
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        let shown: Vec<serde_json::Value> = pieces
            .iter()
            .take(k)
            .map(|p| {
                let c = &g.chunks[p.chunk];
                serde_json::json!({"id": c.id, "file": c.file, "start_line": c.start_line, "end_line": c.end_line,
                    "kind": c.kind, "score": p.score, "found_by": p.found_by})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"target": g.chunks[target].id, "pieces": shown, "embeddings": ready})
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("context for {} ({}):", g.chunks[target].id, g.chunks[target].signature);
    for (n, p) in pieces.iter().take(k).enumerate() {
        let c = &g.chunks[p.chunk];
        println!(
            "{:>2}. {}:{}-{}  {:?} {}  (fused {:.4})",
            n + 1,
            c.file,
            c.start_line,
            c.end_line,
            c.kind,
            c.name,
            p.score
        );
        for f in &p.found_by {
            println!("      {} #{}: {}", f.stream.name(), f.rank, f.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `rgd bench verdicts`: one table row per project and half, then every false alarm and every
/// test that did not pass, with why.
fn bench_verdicts(home: &Home, held_out: bool, python: Option<PathBuf>, json: bool) -> anyhow::Result<ExitCode> {
    let (set, runner, cache) = project_runs(home, held_out, &[], python)?;
    let projects = crate::repo::verdict_bench::run(&cache, set, &runner, &stderr_line)?;
    if json {
        println!("{}", serde_json::to_string(&projects)?);
    } else {
        println!("confinement: {}", runner.confinement().describe());
        println!("| project | the program (target) | half | tests | passed | tampered | seconds |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        for p in &projects {
            if let Some(why) = &p.skipped {
                println!("| {} | - | - | - | - | not measured: {why} | - |", p.name);
            }
            for (name, h) in [("visible", &p.visible), ("hidden", &p.hidden)] {
                let Some(h) = h else { continue };
                println!(
                    "| {} | {} | {name} | {} | {} | {} | {:.1} |",
                    p.name,
                    p.target,
                    h.tests,
                    h.passed,
                    match h.tampered.len() {
                        0 => "no".to_string(),
                        1..=3 => h.tampered.join("; "),
                        n => format!("{} (and {} more)", h.tampered[..3].join("; "), n - 3),
                    },
                    h.seconds
                );
            }
        }
        for p in &projects {
            for h in [&p.visible, &p.hidden].into_iter().flatten() {
                for (id, status, message) in &h.not_passed {
                    println!("not passed: {} {id}: {status} {message}", p.name);
                }
            }
        }
    }
    let alarms = projects
        .iter()
        .flat_map(|p| [&p.visible, &p.hidden])
        .flatten()
        .any(|h| !h.tampered.is_empty());
    Ok(if alarms { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// `rgd bench verdicts --isolation`: a row per project (functions isolated, outcomes that differ,
/// the median time ratio), then every function not isolated and every outcome that differs.
fn bench_isolation(
    home: &Home,
    held_out: bool,
    functions: usize,
    only: &[String],
    python: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    use crate::repo::isolation_bench::median;
    let (set, runner, cache) = project_runs(home, held_out, only, python)?;
    let projects = crate::repo::isolation_bench::run(&cache, set, only, &runner, functions, &stderr_line)?;
    let all: Vec<_> = projects.iter().flat_map(|p| &p.functions).collect();
    let isolated: Vec<_> = all.iter().filter(|f| f.not_isolated.is_none()).collect();
    let differ: usize = isolated.iter().map(|f| f.differ.len()).sum();
    let ratio = |fs: &[&&crate::repo::isolation_bench::FunctionParity]| {
        median(fs.iter().map(|f| f.seconds_isolated / f.seconds_in_process.max(1e-3)).collect())
    };
    if json {
        println!("{}", serde_json::to_string(&projects)?);
    } else {
        println!("confinement: {}", runner.confinement().describe());
        println!("| project | functions | isolated | tests (isolated) | outcomes differ | isolated / in-process time (median) |");
        println!("| --- | --- | --- | --- | --- | --- |");
        for p in &projects {
            if let Some(why) = &p.skipped {
                println!("| {} | - | - | - | - | not measured: {why} |", p.name);
                continue;
            }
            let iso: Vec<_> = p.functions.iter().filter(|f| f.not_isolated.is_none()).collect();
            println!(
                "| {} | {} | {} | {} | {} | {:.2}x |",
                p.name,
                p.functions.len(),
                iso.len(),
                iso.iter().map(|f| f.tests).sum::<usize>(),
                iso.iter().map(|f| f.differ.len()).sum::<usize>(),
                ratio(&iso.iter().collect::<Vec<_>>())
            );
        }
        println!(
            "| all | {} | {} ({:.0}%) | {} | {differ} | {:.2}x |",
            all.len(),
            isolated.len(),
            100.0 * isolated.len() as f64 / all.len().max(1) as f64,
            isolated.iter().map(|f| f.tests).sum::<usize>(),
            ratio(&isolated)
        );
        // What each remaining cause of the tests' process cost, in functions.
        let mut causes: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for f in all.iter().filter(|f| f.not_isolated.is_some()) {
            *causes.entry(f.cause.as_deref().unwrap_or("unknown")).or_default() += 1;
        }
        if !causes.is_empty() {
            println!();
            println!("| fallback cause | functions |");
            println!("| --- | --- |");
            for (cause, n) in &causes {
                println!("| {cause} | {n} |");
            }
        }
        for f in &all {
            if let Some(why) = &f.not_isolated {
                println!("in-process ({}): {}: {why}", f.cause.as_deref().unwrap_or("unknown"), f.target);
            }
            for (id, a, b, message) in &f.differ {
                println!("differs: {} {id}: in-process {a}, isolated {b}: {message}", f.target);
            }
        }
    }
    Ok(if differ > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
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
    use crate::repo::locate_bench::{Located, top};
    let (set, runner, cache) = project_runs(home, held_out, only, python)?;
    let projects = crate::repo::locate_bench::run(&cache, set, only, &runner, per_project, &stderr_line)?;
    if json {
        println!("{}", serde_json::to_string(&projects)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "| project | mutants | survived | located | ochiai top-1 | top-5 | call tree top-1 | top-5 | retrieval top-1 | top-5 | line ochiai top-1 | top-5 | rgd top-1 | top-3 | top-5 | s per mutant |"
    );
    println!("|{}", " --- |".repeat(16));
    let row = |name: &str, tried: usize, survived: usize, l: &[&Located]| {
        let secs = l.iter().map(|x| x.seconds).sum::<f64>() / l.len().max(1) as f64;
        println!(
            "| {name} | {tried} | {survived} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {secs:.1} |",
            l.len(),
            top(l, 1, |x| x.ochiai),
            top(l, 5, |x| x.ochiai),
            top(l, 1, |x| x.call_tree),
            top(l, 5, |x| x.call_tree),
            top(l, 1, |x| x.retrieval),
            top(l, 5, |x| x.retrieval),
            top(l, 1, |x| x.lines),
            top(l, 5, |x| x.lines),
            top(l, 1, |x| x.combined),
            top(l, 3, |x| x.combined),
            top(l, 5, |x| x.combined),
        );
    };
    for p in &projects {
        row(&p.name, p.tried, p.survived, &p.located.iter().collect::<Vec<_>>());
    }
    let all: Vec<&Located> = projects.iter().flat_map(|p| &p.located).collect();
    row(
        "all",
        projects.iter().map(|p| p.tried).sum(),
        projects.iter().map(|p| p.survived).sum(),
        &all,
    );
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
) -> anyhow::Result<(&'static [crate::repo::bench::Project], crate::repo::testrun::ProjectTests, PathBuf)> {
    let set = chosen_projects(held_out, only)?;
    let runner = crate::repo::testrun::ProjectTests::with(python.as_deref())?;
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
            python,
            json,
        } => return bench_isolation(home, held_out, functions, &projects, python, json),
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
        print_rows(&r.rows);
        return Ok(ExitCode::SUCCESS);
    }
    let set = project_set(held_out);
    let report = crate::repo::bench::run(&home.root, &cache, set, embedder, warm, &stderr_line)?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("| project | licence | files | lines | chunks | targets | index s | index MB |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for p in &report.projects {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} |",
            p.name,
            p.licence,
            p.files,
            p.lines,
            p.chunks,
            p.targets,
            p.index_seconds,
            p.index_bytes as f64 / 1e6
        );
    }
    println!(
        "\n{} targets (function bodies blanked; gold: the project names each body used)\n",
        report.targets
    );
    print_rows(&report.rows);
    println!(
        "\nindex: {:.1} s and {:.1} MB per 10k lines (cold, embeddings included); query (graph x3 + ensemble): median {:.1} ms, p95 {:.1} ms",
        report.index_seconds_per_10k_lines, report.index_mb_per_10k_lines, report.query_ms_median, report.query_ms_p95
    );
    println!(
        "cold start (last row): each query gave vectors to {:.1}% of its project's chunks on average; median {:.1} ms with those vectors cached (on a cold project they are embedded first: `rgd context` says how long)",
        report.cold_embedded_share * 100.0,
        report.cold_query_ms_median
    );
    Ok(ExitCode::SUCCESS)
}

fn print_rows(rows: &[crate::repo::bench::Row]) {
    println!("| retrieval | recall@5 | recall@10 | recall@30 |");
    println!("| --- | --- | --- | --- |");
    for r in rows {
        println!(
            "| {} | {:.3} | {:.3} | {:.3} |",
            r.name, r.recall_at_5, r.recall_at_10, r.recall_at_30
        );
    }
}
