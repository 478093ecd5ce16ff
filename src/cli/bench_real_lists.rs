//! `rgd bench real`'s lists: the shipped instances (`--list`), a project's releases harvested
//! into instances (`harvest`), and the shards of one measurement merged (`merge`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::repo::bench::real::releases::{Journal, Kept, Source, harvest_releases, write_instances};
use crate::repo::bench::real::{Harvested, Instance};

/// The shipped instances, as a JSON array or a table per project.
pub fn list(all: &[Instance], projects: &[String], json: bool) -> anyhow::Result<ExitCode> {
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

/// Where a harvest goes and how its suites run (`harvest`'s options).
#[derive(Debug, clap::Args)]
pub struct ToList {
    /// Write the instances here as JSON lines (a project's earlier ones replaced), rewritten
    /// after every pair: a harvest stopped at any point keeps the pairs it finished
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Go on from a stopped harvest into the same --out: the pairs it finished stand and are
    /// not harvested again (pairs it skipped are tried again)
    #[arg(long, requires = "out")]
    pub resume: bool,
    /// The interpreter (with pytest) the suites run with, as it is (else $RGD_PYTHON, else a
    /// venv rgd makes per project with pytest and the release's test dependencies)
    #[arg(long)]
    pub python: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

/// `rgd bench real harvest`: each pair's line as it ends, kept in `--out` as it ends (resumable);
/// releases and venvs in `cache` (`bench_real::real_cache`).
pub fn harvest(
    cache: &Path,
    project: &str,
    releases: (Option<String>, Option<String>),
    source: Source,
    to_list: ToList,
) -> anyhow::Result<ExitCode> {
    let ToList { out, resume, python, json } = to_list;
    let say = |line: &str| eprintln!("{line}");
    let journal = out.as_deref().map(|o| Journal::open(o, project, resume)).transpose()?;
    let earlier = journal.as_ref().map(Journal::earlier).unwrap_or_default();
    if !json {
        for h in &earlier {
            println!("{} (harvested before)", h.line());
        }
    }
    let each = |h: &Harvested| {
        if !json {
            println!("{}", h.line());
        }
        journal.as_ref().map_or(Ok(()), |j| j.record(h))
    };
    let done = harvest_releases(
        cache,
        project,
        releases,
        source,
        python.as_deref(),
        Kept {
            earlier: &earlier,
            each: &each,
        },
        &say,
    )?;
    let instances = done.instances();
    if let (Some(out), Some(journal)) = (&out, journal) {
        write_instances(out, project, &instances)?;
        journal.finish()?;
    }
    if json {
        println!("{}", serde_json::to_string(&done.harvested)?);
        return Ok(ExitCode::SUCCESS);
    }
    let skipped = match done.skipped.len() {
        0 => String::new(),
        n => format!("; {n} pairs skipped: {}", done.skipped.join("; ")),
    };
    println!(
        "{project}: {} instances from {} release pairs{skipped}",
        instances.len(),
        done.harvested.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `rgd bench real merge`: the shards' results, verified, as one measurement.
pub fn merge(files: &[PathBuf], out: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let (whole, results) = crate::repo::bench::real::shards::merge(files)?;
    if let Some(out) = out {
        let lines: String = results
            .iter()
            .map(|m| serde_json::to_string(m).map(|l| l + "\n"))
            .collect::<Result<_, _>>()?;
        crate::checked::write_atomically(out, lines.as_bytes())?;
    }
    let s = crate::repo::bench::real::measure::summary(&results);
    if json {
        println!("{}", serde_json::json!({"summary": s, "instances": results}));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} shards of one list ({} instances, {}) merged",
        files.len(),
        whole.keys.len(),
        whole.kind
    );
    let set = whole.kind.split("-fix-").next().unwrap_or(&whole.kind).to_string();
    super::print_lines(s.lines(&set));
    Ok(ExitCode::SUCCESS)
}
