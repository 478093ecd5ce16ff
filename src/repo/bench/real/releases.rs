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

/// How a harvest keeps its pairs: those a stopped run finished (`earlier`) stand and are not
/// harvested again; `each` is told every other pair as it is done, and its error stops the harvest.
pub struct Kept<'a> {
    pub earlier: &'a [Harvested],
    pub each: &'a dyn Fn(&Harvested) -> anyhow::Result<()>,
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
/// `source`, each pair's suite run by `python` (else the release's venv), each pair kept by `kept`.
/// Nothing harvested while some pair failed is an error.
pub fn harvest_releases(
    cache: &Path,
    project: &str,
    (from, to): (Option<String>, Option<String>),
    source: Source,
    python: Option<&Path>,
    kept: Kept<'_>,
    say: &dyn Fn(&str),
) -> anyhow::Result<Harvest> {
    let Kept { earlier, each: harvested } = kept;
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
        harvested(&h)?;
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
        if let Some(h) = earlier.iter().find(|h| h.versions == [a.as_str(), b.as_str()]) {
            out.harvested.push(h.clone());
            continue;
        }
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
                harvested(&h)?;
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

/// A harvest's finished pairs, kept beside its `--out` list (`OUT.PROJECT.pairs`, one JSON line
/// per pair) while it runs: the list is rewritten after every pair, so a harvest killed at any
/// point keeps the instances of the pairs it finished, and `--resume` harvests only the pairs the
/// journal lacks. A finished harvest removes its journal.
pub struct Journal {
    path: PathBuf,
    out: PathBuf,
    project: String,
    pairs: std::cell::RefCell<Vec<Harvested>>,
}

impl Journal {
    /// The journal of `project`'s harvest into `out`: with `resume` the pairs an earlier run
    /// finished (a line a kill cut is that pair harvested again), else none (an old journal is
    /// removed).
    pub fn open(out: &Path, project: &str, resume: bool) -> anyhow::Result<Journal> {
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = out.with_file_name(format!("{name}.{project}.pairs"));
        let pairs = match std::fs::read_to_string(&path) {
            Ok(text) if resume => text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect(),
            Ok(_) => {
                std::fs::remove_file(&path).with_context(|| path.display().to_string())?;
                Vec::new()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| path.display().to_string()),
        };
        Ok(Journal {
            path,
            out: out.to_path_buf(),
            project: project.to_string(),
            pairs: std::cell::RefCell::new(pairs),
        })
    }

    /// The pairs finished before (resumed), in the order they were harvested.
    pub fn earlier(&self) -> Vec<Harvested> {
        self.pairs.borrow().clone()
    }

    /// `h` kept: appended to the journal, and the list rewritten with every finished pair's
    /// instances.
    pub fn record(&self, h: &Harvested) -> anyhow::Result<()> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| self.path.display().to_string())?;
        writeln!(file, "{}", serde_json::to_string(h)?).with_context(|| self.path.display().to_string())?;
        self.pairs.borrow_mut().push(h.clone());
        let instances: Vec<Instance> = self.pairs.borrow().iter().flat_map(|h| h.instances.iter().cloned()).collect();
        write_instances(&self.out, &self.project, &instances)
    }

    /// The harvest ended: its list is whole, the journal is no longer needed.
    pub fn finish(self) -> anyhow::Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).with_context(|| self.path.display().to_string()),
            _ => Ok(()),
        }
    }
}
