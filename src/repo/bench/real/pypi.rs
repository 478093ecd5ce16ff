//! Releases of a project on PyPI (through pip, so a user's index settings hold), and their sdists,
//! downloaded once into rgd's cache, unpacked, with the archive's sha256 kept beside them.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

/// The project's releases, oldest first (pip's order: PEP 440, pre-releases left out).
pub fn releases(project: &str) -> anyhow::Result<Vec<String>> {
    let python = crate::assets::python();
    let out = std::process::Command::new(&python)
        .args(["-m", "pip", "index", "versions", project, "--disable-pip-version-check"])
        .output()
        .with_context(|| format!("cannot run {python} -m pip"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().find_map(|l| l.strip_prefix("Available versions:")) else {
        let said = String::from_utf8_lossy(&out.stderr);
        bail!(
            "PyPI has no releases of {project} ({})",
            said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("pip said nothing").trim()
        );
    };
    let mut versions: Vec<String> = line.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
    versions.reverse();
    Ok(versions)
}

/// Consecutive pairs of `versions` (oldest first) from `from` to `to` (each may be absent: the
/// first and the last), or what in the range is not a release.
pub fn pairs(versions: &[String], from: Option<&str>, to: Option<&str>) -> anyhow::Result<Vec<(String, String)>> {
    let at = |v: Option<&str>, default: usize| -> anyhow::Result<usize> {
        match v {
            None => Ok(default),
            Some(v) => versions
                .iter()
                .position(|x| x == v)
                .with_context(|| format!("no release {v} (releases: {})", versions.join(", "))),
        }
    };
    let (a, b) = (at(from, 0)?, at(to, versions.len().saturating_sub(1))?);
    if a >= b {
        bail!("the range {}..{} holds no pair of releases", versions[a], versions[b]);
    }
    Ok(versions[a..=b].windows(2).map(|w| (w[0].clone(), w[1].clone())).collect())
}

/// The release's unpacked sdist and the archive's sha256, fetched once into `cache`; a release
/// without an sdist is named.
pub fn sdist(cache: &Path, project: &str, version: &str) -> anyhow::Result<(PathBuf, String)> {
    let dir = cache.join(format!("{project}-{version}"));
    let hash_file = cache.join(format!("{project}-{version}.sha256"));
    if dir.is_dir()
        && let Ok(hash) = std::fs::read_to_string(&hash_file)
    {
        return Ok((dir, hash.trim().to_string()));
    }
    let downloads = cache.join("sdists").join(format!("{project}-{version}"));
    let _ = std::fs::remove_dir_all(&downloads);
    std::fs::create_dir_all(&downloads)?;
    let spec = format!("{project}=={version}");
    crate::assets::pip(&[
        "download".as_ref(),
        "--no-deps".as_ref(),
        "--no-binary=:all:".as_ref(),
        "-d".as_ref(),
        downloads.as_os_str(),
        spec.as_ref(),
    ])
    .map_err(|e| anyhow::anyhow!("{project} {version}: no sdist to download ({e})"))?;
    let archive = std::fs::read_dir(&downloads)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .with_context(|| format!("{project} {version}: its sdist is not a .tar.gz"))?;
    let hash = hex::encode(Sha256::digest(std::fs::read(&archive)?));
    crate::repo::bench::unpack(&archive, &dir)?;
    std::fs::write(&hash_file, &hash)?;
    Ok((dir, hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_consecutive_releases_within_the_range() {
        let v: Vec<String> = ["1.0", "1.1", "1.2", "2.0"].map(String::from).to_vec();
        assert_eq!(pairs(&v, Some("1.1"), None).unwrap().len(), 2);
        assert_eq!(pairs(&v, None, Some("1.1")).unwrap(), [("1.0".to_string(), "1.1".to_string())]);
        assert!(pairs(&v, Some("1.5"), None).unwrap_err().to_string().contains("no release 1.5"));
        assert!(pairs(&v, Some("2.0"), None).is_err());
    }
}
