//! `rgd bench real`: the shipped real regressions (`--list`), and harvesting them from a project's
//! releases on PyPI or from two source trees (`harvest`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::config::LlmArgs;
use crate::front::bench_fix::BenchFixer;
use crate::repo::bench::real::Instance;
use crate::repo::bench::real::measure::key;
use crate::repo::bench::real::releases::Source;
use crate::repo::bench::real::run::{Bench, Progress, choose, instances};
use crate::repo::bench::real::shards::{ShardRecord, list_hash, results_file, write_record};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RealArgs {
    #[command(subcommand)]
    pub action: Option<RealAction>,
    /// Print the shipped instances instead (--json: a JSON array, one object per instance)
    #[arg(long)]
    pub list: bool,
    /// The held-out projects' instances (never looked at while localisation was tuned)
    #[arg(long)]
    pub held_out: bool,
    /// Only this project's instances (repeatable)
    #[arg(long = "project", value_name = "NAME")]
    pub projects: Vec<String>,
    /// A list `harvest --out` wrote, instead of the shipped one (its releases are looked up in
    /// rgd's cache first, `HOME/bench/real/PROJECT-VERSION`, then fetched from PyPI)
    #[arg(long, value_name = "FILE")]
    pub instances: Option<PathBuf>,
    /// At most N instances, spread evenly over the set (its order: by project and release)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub limit: Option<usize>,
    /// Go on from an earlier run's results (kept per set in rgd's home), measuring only what it
    /// did not
    #[arg(long)]
    pub resume: bool,
    /// The interpreter (with pytest) the suites run with, as it is (else $RGD_PYTHON, else a venv
    /// rgd makes per project with pytest and the release's test dependencies)
    #[arg(long)]
    pub python: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// Then repair each instance with `rgd fix`: the agents on an oracle that answers the
    /// released fix (the pipeline's ceiling), or on the configured model (--base-url/--model, or
    /// the embedded one)
    #[arg(long, value_enum, value_name = "MODEL")]
    pub fix: Option<FixWith>,
    /// Write each instance's whole ranking here (every signal of every function, the true one
    /// named), to study or weigh localisation's signals anew
    #[arg(long, value_name = "DIR")]
    pub rankings: Option<PathBuf>,
    /// How many of the ranked suspects `rgd fix` repairs (its --candidates; default: its own, 3)
    #[arg(long, value_name = "N", requires = "fix", value_parser = crate::validate::parse_count)]
    pub fix_candidates: Option<usize>,
    /// Iterations of each attempt's agents, at least 2: the first runs the code as it is (default:
    /// 2 on the oracle, which answers at once or never; rgd fix's own on a model)
    #[arg(long, value_name = "N", requires = "fix", value_parser = clap::value_parser!(u32).range(2..))]
    pub fix_iters: Option<u32>,
    /// Measure the K-th of N parts of the chosen instances (0-based, contiguous), on one machine
    /// of several; `rgd bench real merge` puts the parts' results together
    #[arg(long, value_name = "K/N", value_parser = crate::engine::Shard::parse)]
    pub shard: Option<crate::engine::Shard>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// Whose repairs `--fix` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FixWith {
    /// A scripted model that writes the faulty function as its authors released it, and
    /// nothing else
    Oracle,
    /// The configured model
    Model,
}

#[derive(Debug, Subcommand)]
pub enum RealAction {
    /// Real regressions from consecutive releases of PROJECT: each function a release changed,
    /// put back as the release before had it, is kept when tests green on the release go red
    Harvest(Box<HarvestArgs>),
    /// Put the results of every shard of one measurement (`--shard K/N`) together, as one
    /// unsharded run would have them: refused when a shard is missing or given twice, an instance
    /// is lost or counted twice, or the shards were cut from different lists
    Merge {
        /// The shards' results files (HOME/bench/real/...-shard-K-of-N.jsonl)
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged results here (JSON lines, as an unsharded run writes them)
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// `rgd bench real harvest`'s arguments.
#[derive(Debug, clap::Args)]
pub struct HarvestArgs {
    /// The project's name on PyPI (with --from/--to: the name the instances get)
    pub project: String,
    /// The releases to pair, oldest..newest (either end may be left out: `2.0..`)
    #[arg(long, value_name = "A..B", value_parser = parse_releases)]
    pub releases: Option<(Option<String>, Option<String>)>,
    /// A local git repository's tags instead of PyPI's releases (the tags in version order;
    /// --releases names tags)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["from", "to"])]
    pub git: Option<PathBuf>,
    /// With --git: the commits of A..B on the first-parent line instead of the tags, each
    /// paired with its parent (either end may be left out: the root, HEAD)
    #[arg(long, value_name = "A..B", requires = "git", conflicts_with = "releases", value_parser = parse_releases)]
    pub commits: Option<(Option<String>, Option<String>)>,
    /// With --commits: only every N-th commit of the range, counting from the oldest
    #[arg(long, value_name = "N", default_value_t = 1, requires = "commits", value_parser = crate::validate::parse_count)]
    pub every: usize,
    /// Two source trees instead of PyPI's sdists: the older release ...
    #[arg(long, requires = "to", value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// ... and the newer
    #[arg(long, requires = "from", value_name = "DIR")]
    pub to: Option<PathBuf>,
    #[command(flatten)]
    pub to_list: super::bench_real_lists::ToList,
}

/// `A..B`, either end possibly empty.
fn parse_releases(text: &str) -> Result<(Option<String>, Option<String>), String> {
    let (a, b) = text.split_once("..").ok_or_else(|| format!("{text}: not A..B"))?;
    let end = |v: &str| (!v.is_empty()).then(|| v.to_string());
    Ok((end(a), end(b)))
}

pub async fn run(home: &crate::store::Home, config: Option<&Path>, args: RealArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(RealAction::Harvest(harvest)) => {
            let HarvestArgs {
                project,
                releases,
                git,
                commits,
                every,
                from,
                to,
                to_list,
            } = *harvest;
            let source = match (git, from.zip(to)) {
                (Some(repo), _) if commits.is_some() => Source::Commits { repo, every },
                (Some(repo), _) => Source::Git(repo),
                (None, Some(trees)) => Source::Trees(trees),
                (None, None) => Source::PyPi,
            };
            let range = commits.or(releases).unwrap_or_default();
            super::bench_real_lists::harvest(&real_cache(&home.root), &project, range, source, to_list)
        }
        Some(RealAction::Merge { files, out, json }) => super::bench_real_lists::merge(&files, out.as_deref(), json),
        None if args.list => super::bench_real_lists::list(&instances(args.instances.as_deref())?, &args.projects, args.json),
        None => measure(home, config, &args).await,
    }
}

/// Where `rgd bench real` keeps its releases' sources, venvs and results, under rgd's home
/// `root` (the harvest, the measurement, its Slurm jobs and the isolation bench share it).
pub fn real_cache(root: &Path) -> PathBuf {
    root.join("bench").join("real")
}

/// The instances `args` choose (the set, `--project`, `--limit`), before any `--shard`, and the
/// list's identity.
pub fn chosen(args: &RealArgs) -> anyhow::Result<(Vec<Instance>, String)> {
    let chosen = choose(instances(args.instances.as_deref())?, args.held_out, &args.projects, args.limit);
    if chosen.is_empty() {
        let of = match args.projects.is_empty() {
            true => String::new(),
            false => format!(" of {}", args.projects.join(", ")),
        };
        bail!("no instance of the list is in the {} set{of}", set_of(args));
    }
    let list = list_hash(&chosen);
    Ok((chosen, list))
}

fn set_of(args: &RealArgs) -> &'static str {
    if args.held_out { "held-out" } else { "tuning" }
}

/// Which measurement: the set, and the repairs' model with `--fix`; each keeps its own results.
pub fn kind_of(args: &RealArgs) -> String {
    let set = set_of(args);
    match args.fix {
        None => set.to_string(),
        Some(FixWith::Oracle) => format!("{set}-fix-oracle"),
        Some(FixWith::Model) => format!("{set}-fix-model"),
    }
}

/// Locates every instance of the set chosen (tuning or held-out, `--project`), and with `--fix`
/// repairs it, appending each result as it comes; `--resume` skips those an earlier run recorded.
async fn measure(home: &crate::store::Home, config: Option<&Path>, args: &RealArgs) -> anyhow::Result<ExitCode> {
    use crate::repo::bench::real::measure::summary;
    let (chosen, list) = chosen(args)?;
    let set = set_of(args);
    let chosen = match args.shard {
        Some(shard) => shard.part(&chosen).to_vec(),
        None => chosen,
    };
    let dir = real_cache(&home.root);
    std::fs::create_dir_all(&dir)?;
    if let Some(rankings) = &args.rankings {
        std::fs::create_dir_all(rankings).with_context(|| format!("--rankings {}", rankings.display()))?;
    }
    // Each kind of measurement keeps its own results: a fix run's instances are located too.
    let kind = kind_of(args);
    let results_path = match args.shard {
        None => dir.join(format!("{kind}.jsonl")),
        Some(shard) => {
            // Named by the list too: shards of another list never write over these.
            let path = results_file(&dir, &kind, &list, shard);
            let record = ShardRecord {
                list,
                kind: kind.clone(),
                index: shard.index,
                count: shard.count,
                keys: chosen.iter().map(key).collect(),
            };
            write_record(&path, &record)?;
            path
        }
    };
    let fixer = match args.fix {
        Some(with) => Some(
            BenchFixer::start(
                home,
                config,
                &args.llm,
                with == FixWith::Oracle,
                args.fix_iters,
                args.fix_candidates,
            )
            .await?,
        ),
        None => None,
    };
    let bench = Bench {
        cache: &dir,
        python: args.python.as_deref(),
        rankings: args.rankings.as_deref(),
        results: results_path.clone(),
        resume: args.resume,
    };
    let bar = Bar(indicatif::ProgressBar::new(0));
    let results = bench.run(&chosen, fixer.as_ref(), &bar).await?;
    bar.0.finish_and_clear();
    let s = summary(&results);
    if args.json {
        println!("{}", serde_json::json!({"summary": s, "instances": results}));
        return Ok(ExitCode::SUCCESS);
    }
    for m in results.iter().filter(|m| m.error.is_some()) {
        println!("not located: {}: {}", m.key, m.error.as_deref().unwrap_or_default());
    }
    super::print_lines(s.lines(set));
    println!("results: {}", results_path.display());
    Ok(ExitCode::SUCCESS)
}

/// The bench's progress bar on stderr; lines go above it (`println` would drop them when stderr
/// is no terminal).
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn start(&self, total: usize, done: usize) {
        self.0.set_length(total as u64);
        self.0.set_position(done as u64);
        self.0.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} instances, {elapsed} ({msg})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
    }

    fn at(&self, what: &str) {
        self.0.set_message(what.to_string());
    }

    fn say(&self, line: &str) {
        self.0.suspend(|| eprintln!("{line}"));
    }

    fn advanced(&self) {
        self.0.inc(1);
    }
}
