//! A local git repository's tags as a project's releases (`rgd bench real harvest PROJECT --git
//! DIR`): the tags in version order are paired as PyPI's releases are, and each tagged tree is
//! exported once (`git archive`) into rgd's cache where a fetched sdist would go, with the commit
//! it names recorded in place of the sdist's sha256. `rgd bench real --instances` then finds the
//! trees there, as it finds sdists.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

fn git(repo: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!("git {} in {}: {}", args.join(" "), repo.display(), crate::assets::tail(&out.stderr));
    }
    Ok(out.stdout)
}

/// The repository's tags, oldest version first (git's version sort: `v1.10` after `v1.9`).
pub fn tags(repo: &Path) -> anyhow::Result<Vec<String>> {
    let listed = String::from_utf8_lossy(&git(repo, &["tag", "--list", "--sort=v:refname"])?).into_owned();
    let tags: Vec<String> = listed.lines().map(str::trim).filter(|t| !t.is_empty()).map(String::from).collect();
    if tags.is_empty() {
        bail!("{} has no tags to take as releases", repo.display());
    }
    Ok(tags)
}

/// The tree `tag` names, exported once into `cache` as `PROJECT-TAG`, and its commit.
pub fn export(cache: &Path, project: &str, repo: &Path, tag: &str) -> anyhow::Result<(PathBuf, String)> {
    let dir = cache.join(format!("{project}-{tag}"));
    let commit_file = cache.join(format!("{project}-{tag}.sha256"));
    let commit = String::from_utf8_lossy(&git(repo, &["rev-parse", &format!("{tag}^{{commit}}")])?)
        .trim()
        .to_string();
    if dir.is_dir() && std::fs::read_to_string(&commit_file).is_ok_and(|c| c.trim() == commit) {
        return Ok((dir, commit));
    }
    let archive = git(repo, &["archive", "--format=tar", &commit])?;
    let part = dir.with_extension("part");
    let _ = std::fs::remove_dir_all(&part);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&part)?;
    tar::Archive::new(&archive[..])
        .unpack(&part)
        .with_context(|| format!("unpacking {tag} of {}", repo.display()))?;
    std::fs::rename(&part, &dir)?;
    std::fs::write(&commit_file, &commit)?;
    Ok((dir, commit))
}

/// Your own history as releases (`--commits A..B`): each commit of the range on its first-parent
/// line (every `every`-th, counting from the oldest), paired with its parent, oldest first, each
/// named by its first 12 hex digits. `A` left out starts at the root; `B` left out is `HEAD`. A
/// root commit has no parent to pair with and is left out.
pub fn commit_pairs(repo: &Path, from: Option<&str>, to: Option<&str>, every: usize) -> anyhow::Result<Vec<(String, String)>> {
    let to = to.unwrap_or("HEAD");
    let range = match from {
        Some(from) => format!("{from}..{to}"),
        None => to.to_string(),
    };
    let listed = String::from_utf8_lossy(&git(repo, &["rev-list", "--reverse", "--first-parent", "--parents", &range])?).into_owned();
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_string();
    let pairs: Vec<(String, String)> = listed
        .lines()
        .enumerate()
        .filter(|(i, _)| (i + 1) % every.max(1) == 0)
        .filter_map(|(_, line)| {
            let mut shas = line.split_whitespace();
            let commit = shas.next()?;
            let parent = shas.next()?;
            Some((short(parent), short(commit)))
        })
        .collect();
    if pairs.is_empty() {
        bail!("{range} in {} holds no commit with a parent to pair it with", repo.display());
    }
    Ok(pairs)
}
