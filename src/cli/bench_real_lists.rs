//! `rgd bench real`'s lists: the shipped instances (`--list`), a project's releases harvested
//! into instances (`harvest`), and the shards of one measurement merged (`merge`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::repo::bench::real::releases::{Source, harvest_releases, write_instances};
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

pub fn harvest(
    home: &Path,
    project: &str,
    releases: (Option<String>, Option<String>),
    source: Source,
    out: Option<PathBuf>,
    python: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let say = |line: &str| eprintln!("{line}");
    let cache = home.join("bench").join("real");
    let each = |h: &Harvested| {
        if !json {
            println!("{}", h.line());
        }
    };
    let done = harvest_releases(&cache, project, releases, source, python.as_deref(), &each, &say)?;
    let instances = done.instances();
    if let Some(out) = &out {
        write_instances(out, project, &instances)?;
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
