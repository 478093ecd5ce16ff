//! `rgd bench real`: the shipped real regressions (`--list`), and harvesting them from a project's
//! releases on PyPI or from two source trees (`harvest`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::config::LlmArgs;
use crate::repo::real::harvest::{Release, harvest};
use crate::repo::real::{Harvested, Instance, from_jsonl, pypi, to_jsonl};

/// The instances rgd ships, harvested by the commands in the README.
const SHIPPED: &str = include_str!("../../assets/real/instances.jsonl");

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
    Harvest {
        /// The project's name on PyPI (with --from/--to: the name the instances get)
        project: String,
        /// The releases to pair, oldest..newest (either end may be left out: `2.0..`)
        #[arg(long, value_name = "A..B", value_parser = parse_releases)]
        releases: Option<(Option<String>, Option<String>)>,
        /// A local git repository's tags instead of PyPI's releases (the tags in version order;
        /// --releases names tags)
        #[arg(long, value_name = "DIR", conflicts_with_all = ["from", "to"])]
        git: Option<PathBuf>,
        /// Two source trees instead of PyPI's sdists: the older release ...
        #[arg(long, requires = "to", value_name = "DIR")]
        from: Option<PathBuf>,
        /// ... and the newer
        #[arg(long, requires = "from", value_name = "DIR")]
        to: Option<PathBuf>,
        /// Write the instances here as JSON lines (a project's earlier ones replaced)
        #[arg(long)]
        out: Option<PathBuf>,
        /// The interpreter (with pytest) the suites run with, as it is (else $RGD_PYTHON, else a
        /// venv rgd makes per project with pytest and the release's test dependencies)
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

/// `A..B`, either end possibly empty.
fn parse_releases(text: &str) -> Result<(Option<String>, Option<String>), String> {
    let (a, b) = text.split_once("..").ok_or_else(|| format!("{text}: not A..B"))?;
    let end = |v: &str| (!v.is_empty()).then(|| v.to_string());
    Ok((end(a), end(b)))
}

pub async fn run(home: &crate::store::Home, config: Option<&Path>, args: RealArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(RealAction::Harvest {
            project,
            releases,
            git,
            from,
            to,
            out,
            python,
            json,
        }) => {
            let source = match (git, from.zip(to)) {
                (Some(repo), _) => Source::Git(repo),
                (None, Some(trees)) => Source::Trees(trees),
                (None, None) => Source::PyPi,
            };
            harvest_command(&home.root, &project, releases.unwrap_or_default(), source, out, python, json)
        }
        None if args.list => list(&instances(args.instances.as_deref())?, &args.projects, args.json),
        None => measure(home, config, &args).await,
    }
}

/// Locates every instance of the set chosen (tuning or held-out, `--project`), and with `--fix`
/// repairs it, appending each result as it comes; `--resume` skips those an earlier run recorded.
async fn measure(home: &crate::store::Home, config: Option<&Path>, args: &RealArgs) -> anyhow::Result<ExitCode> {
    use crate::repo::real::measure::{Measured, held_out, key, summary};
    let chosen: Vec<Instance> = instances(args.instances.as_deref())?
        .into_iter()
        .filter(|i| held_out(i) == args.held_out)
        .filter(|i| args.projects.is_empty() || args.projects.contains(&i.project))
        .collect();
    let chosen: Vec<Instance> = match args.limit {
        Some(n) if n < chosen.len() => {
            let step = chosen.len() as f64 / n as f64;
            (0..n).map(|k| chosen[(k as f64 * step) as usize].clone()).collect()
        }
        _ => chosen,
    };
    let set = if args.held_out { "held-out" } else { "tuning" };
    if chosen.is_empty() {
        bail!(
            "no instance of the list is in the {set} set{}",
            if args.projects.is_empty() {
                String::new()
            } else {
                format!(" of {}", args.projects.join(", "))
            }
        );
    }
    let dir = home.root.join("bench").join("real");
    std::fs::create_dir_all(&dir)?;
    if let Some(rankings) = &args.rankings {
        std::fs::create_dir_all(rankings).with_context(|| format!("--rankings {}", rankings.display()))?;
    }
    // Each kind of measurement keeps its own results: a fix run's instances are located too.
    let results_path = dir.join(match args.fix {
        None => format!("{set}.jsonl"),
        Some(FixWith::Oracle) => format!("{set}-fix-oracle.jsonl"),
        Some(FixWith::Model) => format!("{set}-fix-model.jsonl"),
    });
    let mut results: Vec<Measured> = Vec::new();
    if args.resume {
        if let Ok(text) = std::fs::read_to_string(&results_path) {
            // A line cut by a kill is the one instance measured again.
            results = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        }
    } else {
        let _ = std::fs::remove_file(&results_path);
    }
    let keys: std::collections::HashSet<String> = chosen.iter().map(key).collect();
    results.retain(|m| keys.contains(&m.key));
    let done: std::collections::HashSet<&str> = results.iter().map(|m| m.key.as_str()).collect();
    let todo: Vec<&Instance> = chosen.iter().filter(|i| !done.contains(key(i).as_str())).collect();
    let mut runners: std::collections::HashMap<String, crate::repo::testrun::ProjectTests> = Default::default();
    let fixer = match args.fix {
        Some(with) => Some(Fixer::start(home, config, args, with).await?),
        None => None,
    };
    let bar = indicatif::ProgressBar::new(chosen.len() as u64).with_position(results.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} instances, {elapsed} ({msg})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&results_path)?;
    for i in todo {
        bar.set_message(format!("{} {}", i.project, i.function));
        // One interpreter per release: the venv holds what that release names for its tests
        // (reused as it is while the requirements stay the same, as the harvest does per pair).
        let release = format!("{} {}", i.project, i.versions[1]);
        if !runners.contains_key(&release) {
            let runner = tokio::task::block_in_place(|| -> anyhow::Result<_> {
                let (tree, _) = pypi::sdist(&dir, &i.project, &i.versions[1])?;
                runner_for(&dir, args.python.as_deref(), &i.project, &tree, &|l| say(&bar, l))
            });
            match runner {
                Ok(r) => {
                    runners.insert(release.clone(), r);
                }
                Err(e) => say(&bar, &format!("{release}: no interpreter for its suite: {e:#}")),
            }
        }
        let m = match runners.get(&release) {
            Some(runner) => measure_one(&dir, runner, fixer.as_ref(), i, args.rankings.as_deref()).await,
            None => crate::repo::real::measure::Measured::failed(i, "no interpreter for its suite (said above)".into(), 0.0),
        };
        if let Some(f) = &m.fix {
            say(&bar, &format!("{}: {}", m.key, f.line()));
        }
        std::io::Write::write_all(&mut file, format!("{}\n", serde_json::to_string(&m)?).as_bytes())?;
        file.sync_data()?;
        results.push(m);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let s = summary(&results);
    if args.json {
        println!("{}", serde_json::json!({"summary": s, "instances": results}));
        return Ok(ExitCode::SUCCESS);
    }
    for m in results.iter().filter(|m| m.error.is_some()) {
        println!("not located: {}: {}", m.key, m.error.as_deref().unwrap_or_default());
    }
    println!(
        "{set} set: {} instances from {} projects located ({} could not be; {} without the faulty function among the suspects) in {:.0}s",
        s.instances, s.projects, s.errors, s.unranked, s.seconds
    );
    // With nothing located there is no ranking to show (an empty sum would print as -0.000).
    if s.instances > 0 {
        println!("{:<16} {:>6} {:>6} {:>6} {:>10}", "ranking", "top-1", "top-3", "top-5", "mean rank");
        for (name, top, mean) in [
            ("rgd locate", s.rgd, s.rgd_mean_rank),
            ("Ochiai alone", s.ochiai, s.ochiai_mean_rank),
        ] {
            println!("{name:<16} {:>6.3} {:>6.3} {:>6.3} {mean:>10.2}", top[0], top[1], top[2]);
        }
    }
    if let Some(f) = &s.fix {
        println!(
            "rgd fix ({}): {} of {} fixed ({:.3}; {} as released, {} fixed but breaking the suite), {:.0}s, {:.1} calls and {:.0} tokens per instance",
            f.model,
            f.fixed,
            f.instances,
            f.fixed as f64 / f.instances.max(1) as f64,
            f.as_released,
            f.breaking,
            f.seconds,
            f.calls,
            f.tokens
        );
        if f.in_process > 0 {
            println!(
                "  {} unverified ({:.3}): green with the function judged in the tests' process, which rgd cannot vouch for; not counted as fixed",
                f.in_process,
                f.in_process as f64 / f.instances.max(1) as f64,
            );
        }
    }
    println!("results: {}", results_path.display());
    Ok(ExitCode::SUCCESS)
}

/// A line on stderr above the progress bar (which `println` would drop when stderr is no terminal).
fn say(bar: &indicatif::ProgressBar, line: &str) {
    bar.suspend(|| eprintln!("{line}"));
}

/// One instance: located in a copy of its release with the faulty function put back, then
/// (with a fixer) repaired by `rgd fix` in that same copy.
async fn measure_one(
    cache: &Path,
    runner: &crate::repo::testrun::ProjectTests,
    fixer: Option<&Fixer<'_>>,
    i: &Instance,
    rankings: Option<&Path>,
) -> crate::repo::real::measure::Measured {
    use crate::repo::real::measure::{Fixing, faulty_copy, judge_fix, locate};
    let started = std::time::Instant::now();
    let (copy, released) = match tokio::task::block_in_place(|| faulty_copy(cache, i)) {
        Ok(made) => made,
        Err(e) => return crate::repo::real::measure::Measured::failed(i, format!("{e:#}"), started.elapsed().as_secs_f64()),
    };
    let (mut m, found) = tokio::task::block_in_place(|| locate(copy.path(), runner, i, started, rankings));
    let (Some(fixer), Some(found)) = (fixer, found) else {
        return m;
    };
    let fixing = std::time::Instant::now();
    let mut f = match fixer.fix(copy.path(), i, &released, runner.python(), found).await {
        Ok(record) => {
            let changes: Vec<(String, String)> = record.changes.iter().map(|c| (c.file.clone(), c.after.clone())).collect();
            let mut f = tokio::task::block_in_place(|| judge_fix(copy.path(), runner, i, &released, record.fixed_by.as_deref(), &changes));
            f.attempts = record.tried.len();
            f.runs = record
                .tried
                .iter()
                .filter(|t| !t.run_id.is_empty())
                .map(|t| t.run_id.clone())
                .collect();
            let fixed_by = record.fixed_by.as_deref().unwrap_or_default();
            f.in_process = record
                .tried
                .iter()
                .filter(|t| fixed_by.contains(&t.target))
                .find_map(|t| t.in_process.clone());
            f.calls = record.tried.iter().map(|t| t.calls).sum();
            f.tokens = record.tried.iter().map(|t| t.tokens).sum();
            f
        }
        Err(e) => Fixing {
            error: Some(format!("{e:#}")),
            ..Fixing::default()
        },
    };
    f.model = fixer.model.clone();
    f.seconds = fixing.elapsed().as_secs_f64();
    m.fix = Some(f);
    m
}

/// `rgd fix` as `--fix` runs it: on the oracle (started here, on loopback) or the configured
/// model, without the memory pool (no instance learns from another), every run recorded.
struct Fixer<'a> {
    home: &'a crate::store::Home,
    config: Option<&'a Path>,
    llm: LlmArgs,
    oracle: Option<crate::repo::real::oracle::Oracle>,
    model: String,
    iterations: Option<u32>,
    candidates: Option<usize>,
}

impl<'a> Fixer<'a> {
    async fn start(home: &'a crate::store::Home, config: Option<&'a Path>, args: &RealArgs, with: FixWith) -> anyhow::Result<Fixer<'a>> {
        let mut llm = args.llm.clone();
        let (oracle, model) = match with {
            FixWith::Oracle => {
                let oracle = crate::repo::real::oracle::Oracle::start().await?;
                llm = LlmArgs {
                    base_url: Some(oracle.base_url().to_string()),
                    api_key: Some("oracle".into()),
                    model: Some(crate::repo::real::oracle::MODEL.into()),
                    no_stream: true,
                    ..LlmArgs::default()
                };
                (Some(oracle), crate::repo::real::oracle::MODEL.to_string())
            }
            FixWith::Model => {
                let from = crate::config::Configured::load(config, &home.root, &llm)?;
                let settings = from.settings(None, None);
                let model = settings.agents.values().next().map(|p| p.model.clone()).unwrap_or_default();
                (None, model)
            }
        };
        Ok(Fixer {
            home,
            config,
            llm,
            oracle,
            model,
            iterations: args.fix_iters,
            candidates: args.fix_candidates,
        })
    }

    /// `rgd fix --repo COPY --failing <the red tests>` on the faulty copy, its suite run by `python`,
    /// from `found`: the localisation just measured, which is what `rgd fix` would compute (the same
    /// failing tests, selection and per-test time), so it is not run twice.
    async fn fix(
        &self,
        copy: &Path,
        i: &Instance,
        released: &str,
        python: &Path,
        found: crate::repo::localise::Localisation,
    ) -> anyhow::Result<super::fix::FixRecord> {
        if let Some(oracle) = &self.oracle {
            oracle.knows(&i.function, released);
        }
        // A verdict the isolation cannot reach is taken in the tests' process and counted apart
        // (`Fixing::in_process`), not lost: what it cannot guarantee is said with the number.
        let mut argv: Vec<std::ffi::OsString> = vec![
            "fix".into(),
            "--repo".into(),
            copy.into(),
            "--no-memory".into(),
            "--quiet".into(),
            "--allow-in-process".into(),
        ];
        for t in &i.red_tests {
            argv.extend(["--failing".into(), t.into()]);
        }
        // The oracle answers at once or never: more iterations only repeat its silence.
        if let Some(n) = self.iterations.or(self.oracle.as_ref().map(|_| 2)) {
            argv.extend(["--max-iters".into(), n.to_string().into()]);
        }
        if let Some(n) = self.candidates {
            argv.extend(["--candidates".into(), n.to_string().into()]);
        }
        argv.extend(["--python".into(), python.into()]);
        let args = <FixCommand as clap::Parser>::try_parse_from(argv)?.args;
        let from = crate::config::Configured::load(self.config, &self.home.root, &self.llm)?;
        super::fix::fix_for(self.home, &from, &args, Some(found), &|_: &crate::repo::fix_event::FixEvent| {}).await
    }
}

/// `rgd fix`'s own flags, read as a user would give them (their defaults are the command's).
#[derive(Debug, clap::Parser)]
struct FixCommand {
    #[command(flatten)]
    args: super::fix::FixArgs,
}

/// The suites' interpreter: the one given (`--python`, else `$RGD_PYTHON`) as it is, else the
/// project's venv with what the release at `tree` names for its tests (`venv.rs`).
fn runner_for(
    cache: &Path,
    given: Option<&Path>,
    project: &str,
    tree: &Path,
    say: &dyn Fn(&str),
) -> anyhow::Result<crate::repo::testrun::ProjectTests> {
    let given = given
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("RGD_PYTHON").map(PathBuf::from));
    let python = match given {
        Some(p) => p,
        None => crate::repo::real::venv::project_python(cache, project, tree, say)?,
    };
    crate::repo::testrun::ProjectTests::new(&python)
}

/// The shipped instances, or those of `file`.
fn instances(file: Option<&Path>) -> anyhow::Result<Vec<Instance>> {
    match file {
        None => from_jsonl(SHIPPED, "assets/real/instances.jsonl"),
        Some(f) => from_jsonl(
            &std::fs::read_to_string(f).with_context(|| f.display().to_string())?,
            &f.display().to_string(),
        ),
    }
}

/// The shipped instances, as a JSON array or a table per project.
fn list(all: &[Instance], projects: &[String], json: bool) -> anyhow::Result<ExitCode> {
    let all: Vec<&Instance> = all
        .iter()
        .filter(|i| projects.is_empty() || projects.contains(&i.project))
        .collect();
    if json {
        println!("{}", serde_json::to_string(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut by_project: std::collections::BTreeMap<&str, (usize, std::collections::BTreeSet<&[String; 2]>)> = Default::default();
    for i in &all {
        let e = by_project.entry(&i.project).or_default();
        e.0 += 1;
        e.1.insert(&i.versions);
    }
    for (project, (n, pairs)) in &by_project {
        println!("{project:<20} {n:>4} instances from {} release pairs that gave any", pairs.len());
    }
    println!("{} instances from {} projects", all.len(), by_project.len());
    Ok(ExitCode::SUCCESS)
}

/// A release's tree, fetched once into the cache, and its sdist's sha256 (or tag's commit).
type Fetch<'a> = dyn Fn(&str) -> anyhow::Result<(PathBuf, String)> + 'a;

/// Where a harvest's releases come from.
enum Source {
    PyPi,
    Git(PathBuf),
    /// An older and a newer source tree.
    Trees((PathBuf, PathBuf)),
}

fn harvest_command(
    home: &Path,
    project: &str,
    (from, to): (Option<String>, Option<String>),
    source: Source,
    out: Option<PathBuf>,
    python: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let say = |line: &str| eprintln!("{line}");
    let cache = home.join("bench").join("real");
    let mut harvested: Vec<Harvested> = Vec::new();
    let mut failed = Vec::new();
    if let Source::Trees((older, newer)) = source {
        let name = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // Named by --releases when it gives both ends, else by their directories.
        let (a, b) = match (from, to) {
            (Some(a), Some(b)) => (a, b),
            _ => (name(&older), name(&newer)),
        };
        let old = Release {
            version: &a,
            sha256: "",
            dir: &older,
        };
        let new = Release {
            version: &b,
            sha256: "",
            dir: &newer,
        };
        let runner = runner_for(&cache, python.as_deref(), project, &newer, &say)?;
        let h = harvest(project, &old, &new, &runner, &say)?;
        if !json {
            println!("{}", h.line());
        }
        harvested.push(h);
    } else {
        let (versions, fetch): (Vec<String>, Box<Fetch<'_>>) = match &source {
            Source::Git(repo) => (
                crate::repo::real::git::tags(repo)?,
                Box::new(|tag: &str| crate::repo::real::git::export(&cache, project, repo, tag)),
            ),
            _ => (
                pypi::releases(project)?,
                Box::new(|version: &str| pypi::sdist(&cache, project, version)),
            ),
        };
        for (a, b) in pypi::pairs(&versions, from.as_deref(), to.as_deref())? {
            // A release that cannot be fetched skips its pairs as a failed harvest does.
            let harvested_pair = fetch(&a).and_then(|(old_dir, old_hash)| {
                let (new_dir, new_hash) = fetch(&b)?;
                let old = Release {
                    version: &a,
                    sha256: &old_hash,
                    dir: &old_dir,
                };
                let new = Release {
                    version: &b,
                    sha256: &new_hash,
                    dir: &new_dir,
                };
                let runner = runner_for(&cache, python.as_deref(), project, &new_dir, &say)?;
                harvest(project, &old, &new, &runner, &say)
            });
            match harvested_pair {
                Ok(h) => {
                    if !json {
                        println!("{}", h.line());
                    }
                    harvested.push(h);
                }
                Err(e) => {
                    say(&format!("{project} {a} -> {b}: skipped: {e:#}"));
                    failed.push(format!("{a} -> {b}: {e:#}"));
                }
            }
        }
    }
    // Nothing harvested leaves `--out` as it was: a failed fetch must not replace the project's
    // earlier instances with none.
    if harvested.is_empty() && !failed.is_empty() {
        bail!("no pair of {project}'s releases could be harvested: {}", failed.join("; "));
    }
    let instances: Vec<Instance> = harvested.iter().flat_map(|h| h.instances.iter().cloned()).collect();
    if let Some(out) = &out {
        write_instances(out, project, &instances)?;
    }
    if json {
        println!("{}", serde_json::to_string(&harvested)?);
    } else {
        println!(
            "{project}: {} instances from {} release pairs{}",
            instances.len(),
            harvested.len(),
            if failed.is_empty() {
                String::new()
            } else {
                format!("; {} pairs skipped: {}", failed.len(), failed.join("; "))
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `out` with `project`'s earlier instances replaced by `instances`, in the stable order.
fn write_instances(out: &Path, project: &str, instances: &[Instance]) -> anyhow::Result<()> {
    let mut all: Vec<Instance> = match std::fs::read_to_string(out) {
        Ok(text) => from_jsonl(&text, &out.display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| out.display().to_string()),
    };
    all.retain(|i| i.project != project);
    all.extend(instances.iter().cloned());
    Ok(crate::checked::write_atomically(out, to_jsonl(&all)?.as_bytes())?)
}
