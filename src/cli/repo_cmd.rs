//! `rgd index DIR`, `rgd context --repo DIR --target FILE::NAME` and `rgd bench repo`: a Python
//! project indexed, the context retrieved for one of its functions (with why each piece was
//! chosen), and retrieval measured on real projects.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use super::stderr_line;
use crate::repo::{IndexReport, Query, RepoIndex, Stream, embedder};
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
}

/// `rgd solve --repo`'s own flags (the rest are `rgd solve`'s).
#[derive(Debug, Args)]
#[command(next_help_heading = "With --repo")]
pub struct RepoSolveArgs {
    /// Give the agents no repository context (the ablation: the function's file alone)
    #[arg(long, requires = "repo")]
    pub no_context: bool,
    /// How many retrieved pieces the context may hold
    #[arg(long, default_value_t = 10, value_parser = crate::validate::parse_count)]
    pub context_k: usize,
    /// The interpreter that runs the project's tests: it needs pytest and the project's
    /// dependencies [default: $RGD_PYTHON, else python3]
    #[arg(long, requires = "repo")]
    pub python: Option<PathBuf>,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
}

/// How the context of a target is retrieved (shared by `rgd context` and `rgd solve --repo`).
#[derive(Debug, Clone, Args)]
pub struct RetrievalArgs {
    /// The streams to fuse (comma-separated; all but augmented by default)
    #[arg(long, value_enum, value_delimiter = ',', default_value = "graph,bm25,code,description")]
    pub streams: Vec<Stream>,
    /// Also search with the requirement as the Guide's model restates it, with a sketch
    /// implementation (RepoRift's query augmentation; one LLM call)
    #[arg(long)]
    pub augment: bool,
    /// Let the Guide's model pick, among the first N fused pieces, the ones the function needs;
    /// they move to the front (qodo's second stage; one LLM call)
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "20", value_parser = crate::validate::parse_count)]
    pub rerank: Option<usize>,
    /// Tokens the context block may take (estimated as characters / 4)
    #[arg(long, default_value_t = 2000, value_parser = crate::validate::parse_count)]
    pub budget: usize,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
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
    /// run should come back untampered
    Verdicts {
        /// The held-out projects instead
        #[arg(long)]
        held_out: bool,
        /// The interpreter (with pytest) the projects' tests run with (else $RGD_PYTHON, else python3)
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

fn bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar
}

pub(super) fn open(home: &Home, dir: &Path) -> anyhow::Result<(RepoIndex, IndexReport)> {
    let embedder = embedder(&stderr_line)?;
    let bar = bar();
    let result = RepoIndex::build(&home.root, dir, embedder, &|what, done, total| {
        bar.set_message(what.to_string());
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    });
    bar.finish_and_clear();
    result
}

/// `--repo DIR` as a project root: an existing directory, canonical.
pub(super) fn project_root(repo: &Path) -> anyhow::Result<PathBuf> {
    let root = repo
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("--repo {}: no such directory ({e})", repo.display()))?;
    if !root.is_dir() {
        anyhow::bail!("--repo {}: not a directory", repo.display());
    }
    Ok(root)
}

pub(super) fn print_report(r: &IndexReport, dir: &Path) {
    eprintln!(
        "indexed {}: {} files ({} parsed again, {} unchanged), {} lines, {} chunks, {} edges; {} texts embedded; {:.1}s, {:.1} MB",
        dir.display(),
        r.files,
        r.parsed,
        r.files - r.parsed - r.failed.len().min(r.files - r.parsed),
        r.lines,
        r.chunks,
        r.edges,
        r.embedded,
        r.seconds,
        r.bytes as f64 / 1e6
    );
    if r.described + r.describe_failed > 0 {
        eprintln!(
            "the model described {} chunks{}",
            r.described,
            if r.describe_failed > 0 {
                format!(" ({} failed: they keep their docstring)", r.describe_failed)
            } else {
                String::new()
            }
        );
    }
    for (file, line) in &r.failed {
        eprintln!("  {file}:{line}: does not parse; left out");
    }
}

pub async fn index(home: &Home, args: IndexArgs, from: ModelFrom<'_>) -> anyhow::Result<ExitCode> {
    let (mut index, mut report) = open(home, &args.dir)?;
    if args.describe {
        let (model, params, prompts) = guide_model(home, &from)?;
        let todo = crate::repo::index::undescribed(&index)?;
        let bar = bar();
        bar.set_message("describing");
        let (written, failed) = crate::repo::llm::describe(model.as_ref(), &params, &prompts, &index, &todo, &|done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        })
        .await?;
        bar.finish_and_clear();
        crate::repo::index::store_descriptions(&index.dir, &written)?;
        let described = written.len();
        let first = report;
        (index, report) = open(home, &args.dir)?;
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

type GuideModel = (
    std::sync::Arc<dyn crate::llm::ChatModel>,
    crate::llm::CallParams,
    crate::agents::Prompts,
);

/// The Guide agent's model and parameters, and the built-in prompts.
fn guide_model(home: &Home, from: &ModelFrom<'_>) -> anyhow::Result<GuideModel> {
    let (file, path) = crate::config::FileConfig::load(from.config, &home.root)?;
    let settings = crate::config::Settings::resolve(file, path, from.llm, Some(1), None);
    let params = settings
        .agents
        .get(&crate::agents::Agent::Guide)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no Guide agent configured"))?;
    Ok((
        crate::launch::chat_model(&settings, &stderr_line)?,
        params,
        crate::agents::Prompts::builtin(),
    ))
}

/// Where `rgd index` and `rgd context` find a model when they ask one.
pub struct ModelFrom<'a> {
    pub config: Option<&'a Path>,
    pub llm: &'a crate::config::LlmArgs,
}

/// What is retrieved: for which chunk, whether its body counts as blank, how many pieces.
pub(super) struct Wanted {
    pub target: usize,
    pub blank: bool,
    pub k: usize,
    /// Test functions and files may be retrieved (`rgd context --include-tests`; never for agents).
    pub tests: bool,
}

/// The pieces retrieved as `want` and `args` ask (fused streams, then the LLM stages), best
/// first, leaving out the chunks `exclude` refuses (a solve's test files: hidden tests must never
/// reach a prompt).
pub(super) async fn retrieve(
    home: &Home,
    index: &RepoIndex,
    want: Wanted,
    args: &RetrievalArgs,
    from: &ModelFrom<'_>,
    exclude: &dyn Fn(&crate::repo::Chunk) -> bool,
) -> anyhow::Result<Vec<crate::repo::Piece>> {
    let Wanted { target, blank, k, .. } = want;
    // The Guide's model, when a stage asks one.
    let model = if args.augment || args.rerank.is_some() {
        Some(guide_model(home, from)?)
    } else {
        None
    };
    let mut streams = args.streams.clone();
    let augmented = match (&model, args.augment) {
        (Some((m, params, prompts)), true) => {
            if !streams.contains(&Stream::Augmented) {
                streams.push(Stream::Augmented);
            }
            Some(crate::repo::llm::augment(m.as_ref(), params, prompts, index, target).await?)
        }
        _ => None,
    };
    let query = Query {
        target,
        text: index.requirement(target),
        body_known: !blank,
        augmented,
        streams,
        depth: k.max(30),
        similar: crate::repo::retrieve::SIMILAR,
        tests: want.tests,
    };
    let mut pieces = index.retrieve(&query, crate::repo::retrieve::GRAPH_WEIGHT)?;
    pieces.retain(|p| !exclude(&index.graph.chunks[p.chunk]));
    if let (Some((m, params, prompts)), Some(top)) = (&model, args.rerank) {
        pieces = crate::repo::llm::rerank(m.as_ref(), params, prompts, index, target, pieces, top).await?;
    }
    Ok(pieces)
}

pub async fn context(home: &Home, args: ContextArgs, from: ModelFrom<'_>) -> anyhow::Result<ExitCode> {
    let (index, report) = open(home, &args.repo)?;
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
    let pieces = retrieve(home, &index, want, &args.retrieval, &from, &|_| false).await?;
    if !args.json {
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
        println!("{}", serde_json::json!({"target": g.chunks[target].id, "pieces": shown}));
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
    let runner = crate::repo::testrun::ProjectTests::with(python.as_deref())?;
    let set = project_set(held_out);
    let cache = home.root.join("bench").join("repo");
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
    let set = project_set(held_out);
    if let Some(unknown) = only.iter().find(|n| !set.iter().any(|p| &p.name == n)) {
        anyhow::bail!(
            "--project {unknown}: not one of {}",
            set.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
        );
    }
    let runner = crate::repo::testrun::ProjectTests::with(python.as_deref())?;
    let cache = home.root.join("bench").join("repo");
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

fn project_set(held_out: bool) -> &'static [crate::repo::bench::Project] {
    if held_out {
        &crate::repo::bench::HELD_OUT
    } else {
        &crate::repo::bench::PROJECTS
    }
}

pub async fn bench(home: &Home, cmd: BenchCommand, from: ModelFrom<'_>) -> anyhow::Result<ExitCode> {
    let (warm, json, with_model, held_out, sample) = match cmd {
        BenchCommand::Verdicts { held_out, python, json } => return bench_verdicts(home, held_out, python, json),
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
        } => (warm, json, with_model, held_out, sample),
    };
    let embedder = embedder(&stderr_line)?;
    let cache = home.root.join("bench").join("repo");
    if with_model {
        let (model, params, prompts) = guide_model(home, &from)?;
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
