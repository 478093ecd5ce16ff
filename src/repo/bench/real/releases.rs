//! Harvesting a project's releases pair by pair (`rgd bench real harvest`): from PyPI's sdists,
//! from a git repository's tags, or from two source trees; each pair harvested as `harvest.rs`
//! does, a pair that cannot be fetched or harvested skipped and named.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::harvest::{Release, harvest};
use super::venv::suite_runner;
use super::{Harvested, Instance, from_jsonl, pypi, to_jsonl};

/// Where a harvest's releases come from.
pub enum Source {
    PyPi,
    /// A repository's tags, in version order.
    Git(PathBuf),
    /// A repository's commits, each (or every N-th) paired with its parent: the range is
    /// `--commits A..B`, not `--releases`.
    Commits {
        repo: PathBuf,
        every: usize,
    },
    /// An older and a newer source tree.
    Trees((PathBuf, PathBuf)),
}

/// A release's tree, fetched once into the cache, and its sdist's sha256 (or tag's commit).
type Fetch<'a> = dyn Fn(&str) -> anyhow::Result<(PathBuf, String)> + 'a;

/// What a harvest of a project's releases gave: the pairs harvested, and those skipped and why.
pub struct Harvest {
    pub harvested: Vec<Harvested>,
    pub skipped: Vec<String>,
}

impl Harvest {
    pub fn instances(&self) -> Vec<Instance> {
        self.harvested.iter().flat_map(|h| h.instances.iter().cloned()).collect()
    }
}

/// Harvests `project`'s consecutive releases from `from` to `to` (either end open) out of
/// `source`, each pair's suite run by `python` (else the release's venv). `harvested` is told
/// each pair as it is done. Nothing harvested while some pair failed is an error.
pub fn harvest_releases(
    cache: &Path,
    project: &str,
    (from, to): (Option<String>, Option<String>),
    source: Source,
    python: Option<&Path>,
    harvested: &dyn Fn(&Harvested),
    say: &dyn Fn(&str),
) -> anyhow::Result<Harvest> {
    let mut out = Harvest {
        harvested: Vec::new(),
        skipped: Vec::new(),
    };
    if let Source::Trees((older, newer)) = source {
        let name = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // Named by --releases when it gives both ends, else by their directories.
        let (a, b) = match (from, to) {
            (Some(a), Some(b)) => (a, b),
            _ => (name(&older), name(&newer)),
        };
        let runner = suite_runner(cache, python, project, &newer, say)?;
        let h = harvest(project, &release(&a, "", &older), &release(&b, "", &newer), &runner, say)?;
        harvested(&h);
        out.harvested.push(h);
        return Ok(out);
    }
    let (pairs, fetch): (Vec<(String, String)>, Box<Fetch<'_>>) = match &source {
        Source::Git(repo) => (
            pypi::pairs(&super::git::tags(repo)?, from.as_deref(), to.as_deref())?,
            Box::new(|tag: &str| super::git::export(cache, project, repo, tag)),
        ),
        Source::Commits { repo, every } => (
            super::git::commit_pairs(repo, from.as_deref(), to.as_deref(), *every)?,
            Box::new(|commit: &str| super::git::export(cache, project, repo, commit)),
        ),
        _ => (
            pypi::pairs(&pypi::releases(project)?, from.as_deref(), to.as_deref())?,
            Box::new(|version: &str| pypi::sdist(cache, project, version)),
        ),
    };
    for (a, b) in pairs {
        // A release that cannot be fetched skips its pairs as a failed harvest does.
        let pair = fetch(&a).and_then(|(old_dir, old_hash)| {
            let (new_dir, new_hash) = fetch(&b)?;
            let runner = suite_runner(cache, python, project, &new_dir, say)?;
            harvest(
                project,
                &release(&a, &old_hash, &old_dir),
                &release(&b, &new_hash, &new_dir),
                &runner,
                say,
            )
        });
        match pair {
            Ok(h) => {
                harvested(&h);
                out.harvested.push(h);
            }
            Err(e) => {
                say(&format!("{project} {a} -> {b}: skipped: {e:#}"));
                out.skipped.push(format!("{a} -> {b}: {e:#}"));
            }
        }
    }
    // Nothing harvested leaves `--out` as it was: a failed fetch must not replace the project's
    // earlier instances with none.
    if out.harvested.is_empty() && !out.skipped.is_empty() {
        bail!("no pair of {project}'s releases could be harvested: {}", out.skipped.join("; "));
    }
    Ok(out)
}

fn release<'a>(version: &'a str, sha256: &'a str, dir: &'a Path) -> Release<'a> {
    Release { version, sha256, dir }
}

/// `out` with `project`'s earlier instances replaced by `instances`, in the stable order.
pub fn write_instances(out: &Path, project: &str, instances: &[Instance]) -> anyhow::Result<()> {
    let mut all: Vec<Instance> = match std::fs::read_to_string(out) {
        Ok(text) => from_jsonl(&text, &out.display().to_string())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| out.display().to_string()),
    };
    all.retain(|i| i.project != project);
    all.extend(instances.iter().cloned());
    Ok(crate::checked::write_atomically(out, to_jsonl(&all)?.as_bytes())?)
}
