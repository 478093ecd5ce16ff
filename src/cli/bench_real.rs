//! `rgd bench real`: the shipped real regressions (`--list`), and harvesting them from a project's
//! releases on PyPI or from two source trees (`harvest`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use crate::repo::real::harvest::{Release, harvest};
use crate::repo::real::{Harvested, Instance, from_jsonl, pypi, to_jsonl};

/// The instances rgd ships, harvested by the commands in the README.
const SHIPPED: &str = include_str!("../../assets/real/instances.jsonl");

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RealArgs {
    #[command(subcommand)]
    pub action: Option<RealAction>,
    /// Print the shipped instances (what `rgd bench real` alone does; --json: a JSON array, one
    /// object per instance)
    #[arg(long)]
    pub list: bool,
    /// Only this project's instances (repeatable)
    #[arg(long = "project", value_name = "NAME")]
    pub projects: Vec<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RealAction {
    /// Real regressions from consecutive releases of PROJECT: each function a release changed,
    /// put back as the release before had it, is kept when tests green on the release go red
    Harvest {
        /// The project's name on PyPI (with --from/--to: the name the instances get)
        project: String,
        /// The releases to pair, oldest..newest (either end may be left out: `2.0..`)
        #[arg(long, value_name = "A..B")]
        releases: Option<String>,
        /// Two source trees instead of PyPI's sdists: the older release ...
        #[arg(long, requires = "to", value_name = "DIR")]
        from: Option<PathBuf>,
        /// ... and the newer
        #[arg(long, requires = "from", value_name = "DIR")]
        to: Option<PathBuf>,
        /// Write the instances here as JSON lines (a project's earlier ones replaced)
        #[arg(long)]
        out: Option<PathBuf>,
        /// The interpreter (with pytest) the suites run with (else $RGD_PYTHON, else python3)
        #[arg(long)]
        python: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(home: &Path, args: RealArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(RealAction::Harvest {
            project,
            releases,
            from,
            to,
            out,
            python,
            json,
        }) => harvest_command(home, &project, releases.as_deref(), from.zip(to), out, python, json),
        None => list(&args.projects, args.json),
    }
}

fn shipped() -> anyhow::Result<Vec<Instance>> {
    from_jsonl(SHIPPED, "assets/real/instances.jsonl")
}

/// The shipped instances, as a JSON array or a table per project.
fn list(projects: &[String], json: bool) -> anyhow::Result<ExitCode> {
    let all: Vec<Instance> = shipped()?
        .into_iter()
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
        println!("{project:<20} {n:>4} instances from {} release pairs", pairs.len());
    }
    println!("{} instances from {} projects", all.len(), by_project.len());
    Ok(ExitCode::SUCCESS)
}

fn harvest_command(
    home: &Path,
    project: &str,
    releases: Option<&str>,
    trees: Option<(PathBuf, PathBuf)>,
    out: Option<PathBuf>,
    python: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let runner = crate::repo::testrun::ProjectTests::with(python.as_deref())?;
    let say = |line: &str| eprintln!("{line}");
    let mut harvested: Vec<Harvested> = Vec::new();
    let mut failed = Vec::new();
    if let Some((older, newer)) = trees {
        let name = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let (a, b) = match releases.and_then(|r| r.split_once("..")) {
            Some((a, b)) if !a.is_empty() && !b.is_empty() => (a.to_string(), b.to_string()),
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
        harvested.push(harvest(project, &old, &new, &runner, &say)?);
    } else {
        let (from, to) = match releases {
            None => (None, None),
            Some(r) => {
                let (a, b) = r.split_once("..").with_context(|| format!("--releases {r}: not A..B"))?;
                ((!a.is_empty()).then_some(a), (!b.is_empty()).then_some(b))
            }
        };
        let versions = pypi::releases(project)?;
        let cache = home.join("bench").join("real");
        for (a, b) in pypi::pairs(&versions, from, to)? {
            let fetched = pypi::sdist(&cache, project, &a).and_then(|old| Ok((old, pypi::sdist(&cache, project, &b)?)));
            let ((old_dir, old_hash), (new_dir, new_hash)) = match fetched {
                Ok(f) => f,
                Err(e) => {
                    say(&format!("{project} {a} -> {b}: skipped: {e:#}"));
                    failed.push(format!("{a} -> {b}: {e:#}"));
                    continue;
                }
            };
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
            match harvest(project, &old, &new, &runner, &say) {
                Ok(h) => {
                    harvested.push(h);
                }
                Err(e) => {
                    say(&format!("{project} {a} -> {b}: skipped: {e:#}"));
                    failed.push(format!("{a} -> {b}: {e:#}"));
                }
            }
        }
    }
    let instances: Vec<Instance> = harvested.iter().flat_map(|h| h.instances.iter().cloned()).collect();
    if let Some(out) = &out {
        write_instances(out, project, &instances)?;
    }
    if json {
        println!("{}", serde_json::to_string(&harvested)?);
    } else {
        for h in &harvested {
            println!("{}", h.line());
        }
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
    if harvested.is_empty() && !failed.is_empty() {
        bail!("no pair of {project}'s releases could be harvested");
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
