//! What every repository command shares (`solve --repo`, `fix`, `context`, `index`): the
//! project's root and index, retrieval for a target function, a target as the agents' task, and
//! the run again in a fresh copy before anything is written. Commands call this, never each other.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::stderr_line;
use crate::config::Configured;
use crate::repo::index::Embed;
use crate::repo::index::chunks::is_test_file;
use crate::repo::index::render::{estimate_tokens, render_context};
use crate::repo::index::retrieve::Readiness;
use crate::repo::locate::localise::localise;
use crate::repo::run::testrun::ProjectTests;
use crate::repo::task::{RepoTaskSpec, repo_task};
use crate::repo::{IndexReport, Query, RepoIndex, Stream, embedder};
use crate::store::Home;

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
    /// Let --write and the memory pool take a verdict reached with the program inside the tests'
    /// process, "in-process (best effort)": where the tests hand the function something that is
    /// not data (an open file, a mock), rgd can only watch the program there, not keep it apart
    #[arg(long, requires = "repo")]
    pub allow_in_process: bool,
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

impl Default for RetrievalArgs {
    /// The flags' defaults, for a command that retrieves without a command line of its own.
    fn default() -> Self {
        RetrievalArgs {
            streams: vec![Stream::Graph, Stream::Bm25, Stream::Code, Stream::Description],
            augment: false,
            rerank: None,
            budget: 2000,
        }
    }
}

impl RepoSolveArgs {
    /// The flags' defaults with `python` as the tests' interpreter.
    pub fn with_python(python: Option<PathBuf>) -> RepoSolveArgs {
        RepoSolveArgs {
            no_context: false,
            context_k: 10,
            python,
            allow_in_process: false,
            retrieval: RetrievalArgs::default(),
        }
    }
}

/// A progress bar on stderr that shows itself only once the work has taken a second (a warm
/// index opens without one): what is being done, how far, how fast, and the time left.
pub struct Progress {
    bar: ProgressBar,
    started: std::time::Instant,
}

impl Progress {
    pub fn new() -> Progress {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{msg:>16} [{bar:30}] {pos}/{len}  {per_sec}  eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Progress {
            bar,
            started: std::time::Instant::now(),
        }
    }

    pub fn set(&self, what: &str, done: usize, total: usize) {
        if self.bar.is_hidden() && self.started.elapsed() > std::time::Duration::from_secs(1) {
            self.bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        if self.bar.message() != what {
            // A new stage: its rate and time left start again.
            self.bar.set_message(what.to_string());
            self.bar.reset();
        }
        self.bar.set_length(total as u64);
        self.bar.set_position(done as u64);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

/// Opens (builds, updates) `dir`'s index, embedding what `embed` says: `rgd index` every text;
/// the commands that retrieve for one target what is cached, the rest when a query needs it.
pub fn open(home: &Home, dir: &Path, embed: Embed) -> anyhow::Result<(RepoIndex, IndexReport)> {
    // Before the model loads: a directory without Python is refused at once.
    crate::repo::index::python_project(dir)?;
    let embedder = embedder(&stderr_line)?;
    let progress = Progress::new();
    let result = RepoIndex::build(&home.root, dir, embedder, embed, &|what, done, total| {
        progress.set(what, done, total)
    });
    progress.finish();
    result
}

/// `--repo DIR` as a project root: an existing directory, canonical.
pub fn project_root(repo: &Path) -> anyhow::Result<PathBuf> {
    let root = repo
        .canonicalize()
        .map_err(|e| anyhow::anyhow!("--repo {}: no such directory ({e})", repo.display()))?;
    if !root.is_dir() {
        anyhow::bail!("--repo {}: not a directory", repo.display());
    }
    Ok(root)
}

/// `--target FILE::NAME` checked against the project's files, before any index is opened (a
/// cold one takes a while): a `.py` file inside the project; with `function`, one that holds
/// that function where it can be spliced back (not nested in another function).
pub fn check_target(root: &Path, target: &str, function: bool) -> anyhow::Result<()> {
    let (file, name) = target
        .split_once("::")
        .with_context(|| format!("--target {target:?}: a target is path/to/mod.py::name (or ::Class.method)"))?;
    let relative = Path::new(file).components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if !relative || !file.ends_with(".py") {
        anyhow::bail!("--target {target}: give a .py file inside the project, relative to its root");
    }
    // The index never follows a symbolic link (it could lead out of the project or loop), so a
    // target reached through one is refused here, with that reason, not later as "no such file".
    let mut walked = root.to_path_buf();
    for part in Path::new(file).components() {
        walked.push(part);
        if walked.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
            anyhow::bail!(
                "--target {target}: {} is a symbolic link; rgd reads only the project's own files (give the path it points to, inside the project)",
                walked.strip_prefix(root).unwrap_or(&walked).display()
            );
        }
    }
    if !root.join(file).is_file() {
        anyhow::bail!("--target {target}: {file}: no such Python file in {}", root.display());
    }
    if function {
        let module = std::fs::read_to_string(root.join(file)).with_context(|| format!("--target {target}: reading {file}"))?;
        crate::code::find_function(&module, name).map_err(|e| anyhow::anyhow!("--target {target}: {e}"))?;
    }
    Ok(())
}

pub fn print_report(r: &IndexReport, dir: &Path) {
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
    if r.pending > 0 {
        eprintln!(
            "{} texts not embedded yet: a query embeds those it needs (graph and BM25 find them); `rgd index {}` embeds them all",
            r.pending,
            dir.display()
        );
    }
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
    for (file, why) in &r.skipped {
        eprintln!("  {file}: left out: {why}");
    }
}

pub type GuideModel = (
    std::sync::Arc<dyn crate::llm::ChatModel>,
    crate::llm::CallParams,
    crate::agents::Prompts,
);

/// The Guide agent's model and parameters, and the built-in prompts.
pub fn guide_model(from: &Configured<'_>) -> anyhow::Result<GuideModel> {
    let settings = from.settings(Some(1), None);
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

/// What is retrieved: for which chunk, whether its body counts as blank, how many pieces.
pub struct Wanted {
    pub target: usize,
    pub blank: bool,
    pub k: usize,
    /// Test functions and files may be retrieved (`rgd context --include-tests`; never for agents).
    pub tests: bool,
}

/// The query `want` makes.
fn query(index: &RepoIndex, want: &Wanted, streams: Vec<Stream>, augmented: Option<String>) -> Query {
    Query {
        target: want.target,
        text: index.requirement(want.target),
        body_known: !want.blank,
        augmented,
        streams,
        depth: want.k.max(30),
        similar: crate::repo::index::retrieve::SIMILAR,
        tests: want.tests,
    }
}

/// Gets `index` ready to retrieve for `want` (`RepoIndex::prepare`): on an index not fully
/// embedded (a cold project), embeds what the target's graph and BM25 neighbourhood needs.
pub fn prepare(index: &mut RepoIndex, want: &Wanted, args: &RetrievalArgs) -> anyhow::Result<Readiness> {
    let q = query(index, want, args.streams.clone(), None);
    index.prepare(&q)
}

/// The pieces retrieved as `want` and `args` ask (fused streams, then the LLM stages), best
/// first, leaving out the chunks `exclude` refuses (a solve's test files: hidden tests must never
/// reach a prompt).
pub async fn retrieve(
    index: &RepoIndex,
    want: Wanted,
    args: &RetrievalArgs,
    from: &Configured<'_>,
    exclude: &dyn Fn(&crate::repo::Chunk) -> bool,
) -> anyhow::Result<Vec<crate::repo::Piece>> {
    let target = want.target;
    // The Guide's model, when a stage asks one.
    let model = if args.augment || args.rerank.is_some() {
        Some(guide_model(from)?)
    } else {
        None
    };
    let mut streams = args.streams.clone();
    let augmented = match (&model, args.augment) {
        (Some((m, params, prompts)), true) => {
            if !streams.contains(&Stream::Augmented) {
                streams.push(Stream::Augmented);
            }
            Some(crate::repo::index::llm::augment(m.as_ref(), params, prompts, index, target).await?)
        }
        _ => None,
    };
    let q = query(index, &want, streams, augmented);
    let mut pieces = index.retrieve(&q, crate::repo::index::retrieve::GRAPH_WEIGHT)?;
    pieces.retain(|p| !exclude(&index.graph.chunks[p.chunk]));
    if let (Some((m, params, prompts)), Some(top)) = (&model, args.rerank) {
        pieces = crate::repo::index::llm::rerank(m.as_ref(), params, prompts, index, target, pieces, top).await?;
    }
    Ok(pieces)
}

/// What the agents' context for `target` (`path/to/mod.py::name`) is retrieved for: its chunk,
/// whether its body is blank (then its callees are unknown), `k` pieces, no tests.
pub fn target_wanted(index: &RepoIndex, root: &Path, target: &str, k: usize) -> anyhow::Result<Wanted> {
    let (file, name) = target
        .split_once("::")
        .with_context(|| format!("{target}: give path/to/mod.py::name"))?;
    let chunk = index.target(target)?;
    let module = std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))?;
    Ok(Wanted {
        target: chunk,
        blank: crate::code::find_function(&module, name).is_ok_and(|s| s.is_stub),
        k,
        tests: false,
    })
}

/// Gets `index` ready for the agents' context of each of `targets` (see `prepare`), unless
/// they get none; all before any is retrieved, so that each context comes from the same index.
/// A target the index does not hold is left to its attempt to name.
pub fn prepare_targets(index: &mut RepoIndex, root: &Path, targets: &[String], repo_args: &RepoSolveArgs) -> anyhow::Result<()> {
    if repo_args.no_context {
        return Ok(());
    }
    for target in targets {
        if let Ok(want) = target_wanted(index, root, target, repo_args.context_k) {
            prepare(index, &want, &repo_args.retrieval)?;
        }
    }
    Ok(())
}

/// The task for `spec` (its `context` left as given with `--no-context`, else retrieved for the
/// function from `index`, leaving out every test file and every file of a hidden test); what the
/// context holds is told to `say`.
pub async fn target_task(
    from: &Configured<'_>,
    index: &crate::repo::RepoIndex,
    repo_args: &RepoSolveArgs,
    spec: &RepoTaskSpec<'_>,
    say: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<crate::dataset::UserTask> {
    let chunk = index.target(spec.target)?;
    let context = if repo_args.no_context {
        say("context: none (--no-context)");
        None
    } else {
        let hidden_files: HashSet<&str> = spec.hidden.iter().filter_map(|h| h.split("::").next()).collect();
        let exclude = |c: &crate::repo::Chunk| is_test_file(&c.file) || hidden_files.contains(c.file.as_str());
        let k = repo_args.context_k;
        let r = &repo_args.retrieval;
        let want = target_wanted(index, spec.root, spec.target, k)?;
        let pieces = retrieve(index, want, r, from, &exclude).await?;
        let (text, used) = render_context(index, chunk, &pieces[..pieces.len().min(k)], r.budget);
        let names: Vec<&str> = used.iter().map(|&i| index.graph.chunks[i].id.as_str()).collect();
        say(&format!(
            "context: {} pieces in about {} of {} tokens: {}; retrieved with {}",
            used.len(),
            estimate_tokens(&text),
            r.budget,
            names.join(", "),
            index.readiness().describe()
        ));
        Some(text)
    };
    repo_task(
        index,
        &RepoTaskSpec {
            context: context.as_deref().or(spec.context),
            ..*spec
        },
    )
}

/// Before --write: the program passes every test of `all` again, in a fresh copy of `root`, with
/// the program in a process of its own (or in the tests' process, unverified, only when
/// `allow_in_process`).
pub fn verifier<'a>(
    runner: &'a ProjectTests,
    root: &'a Path,
    file: &'a str,
    name: &'a str,
    all: &'a [String],
    allow_in_process: bool,
) -> impl Fn(&str) -> anyhow::Result<()> + Sync + 'a {
    move |program: &str| match runner.rerun(root, file, name, all, program)? {
        Some(why) if !allow_in_process => anyhow::bail!(
            "the verdict is {} ({why}); pass --allow-in-process to write it anyway",
            crate::repo::run::isolate::Isolation::BEST_EFFORT
        ),
        _ => Ok(()),
    }
}

/// A project and some of its failing tests (`rgd locate`, `rgd fix`).
#[derive(Debug, Args)]
pub struct FailureArgs {
    /// The Python project
    #[arg(long)]
    pub repo: PathBuf,
    /// A failing test (a pytest node id); give it once per test
    #[arg(long = "failing", required = true, value_name = "ID")]
    pub failing: Vec<String>,
    /// The tests whose passing runs count against a suspect, and which a repair must not break (a
    /// pytest selection; default: the failing tests' files)
    #[arg(long, allow_hyphen_values = true)]
    pub tests: Option<String>,
    /// Let the Guide's model read the failing tests and the first N suspects' source and pick the
    /// likeliest; they move to the front (qodo's second stage; one LLM call)
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10", value_parser = crate::validate::parse_count)]
    pub rerank_suspects: Option<usize>,
}

/// The failure's suspects: located (each test stopped after `test_seconds`), then (with
/// `--rerank`) reordered by the Guide's model.
pub async fn suspects(
    from: &Configured<'_>,
    runner: &ProjectTests,
    root: &std::path::Path,
    args: &FailureArgs,
    test_seconds: f64,
) -> anyhow::Result<crate::repo::locate::localise::Localisation> {
    let per_test = std::time::Duration::from_secs_f64(test_seconds);
    let mut found = localise(runner, root, &args.failing, args.tests.as_deref(), per_test)?;
    if let Some(top) = args.rerank_suspects {
        let (model, params, prompts) = guide_model(from)?;
        let ranked = std::mem::take(&mut found.ranked);
        found.ranked =
            crate::repo::index::llm::rerank_suspects(model.as_ref(), &params, &prompts, root, &found.failures, ranked, top).await?;
        let named = found.ranked.iter().filter(|c| c.model_rank.is_some()).count();
        eprintln!("the Guide's model named {named} of the first {top} suspects (--rerank-suspects)");
    }
    Ok(found)
}

/// The first `k` candidates, one line each and a line of why.
pub fn print_ranking(ranked: &[crate::repo::locate::Candidate], failing: usize, k: usize) {
    for (i, c) in ranked.iter().take(k).enumerate() {
        println!("{:>2}. {}:{}  {}  score {:.2}", i + 1, c.file, c.line, c.name, c.score);
        println!("    {}", c.why(failing));
    }
}
