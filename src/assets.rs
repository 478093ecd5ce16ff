//! rgd's cache of things built or fetched once (the sandbox component, the embedding model and its
//! runtime): where it lives, a cross-process lock, and running pip for the pinned wheels.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The interpreter the user named in `$RGD_PYTHON` (an empty `RGD_PYTHON=` is unset, as a shell
/// user means it).
pub fn given_python() -> Option<std::path::PathBuf> {
    std::env::var_os("RGD_PYTHON").filter(|p| !p.is_empty()).map(Into::into)
}

/// The interpreter used for pip: `$RGD_PYTHON` or `python3`.
pub fn python() -> String {
    given_python().map_or_else(|| "python3".into(), |p| p.to_string_lossy().into_owned())
}

static INTERACTIVE: AtomicBool = AtomicBool::new(false);

/// Lets pip draw its progress bars on the terminal (the CLI sets this when stderr is a terminal
/// and no full-screen view is up); otherwise pip is quiet and only its errors are kept.
pub fn set_interactive(on: bool) {
    INTERACTIVE.store(on, Ordering::Relaxed);
}

pub fn interactive() -> bool {
    INTERACTIVE.load(Ordering::Relaxed)
}

/// Runs `python -m pip ARGS`; the error carries the end of pip's output. Interactive, pip's
/// output (progress bars included) goes to stderr, so stdout stays clean for `--json`.
pub fn pip(args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let python = python();
    let mut command = Command::new(&python);
    command.args(["-m", "pip"]).args(args).arg("--disable-pip-version-check");
    if interactive() {
        let status = command
            .args(["--progress-bar", "on"])
            .stdout(std::process::Stdio::from(std::io::stderr()))
            .status()
            .map_err(|e| format!("cannot run {python} -m pip: {e}"))?;
        return if status.success() {
            Ok(())
        } else {
            Err(format!("pip failed ({status}); its output is above"))
        };
    }
    let result = command
        .arg("--quiet")
        .output()
        .map_err(|e| format!("cannot run {python} -m pip: {e}"))?;
    if result.status.success() {
        Ok(())
    } else {
        Err(tail(&result.stderr))
    }
}

/// Downloads the wheels pinned (with hashes) in `requirements` into `dir`, for any platform
/// (the files are data: models and shared libraries, not code pip installs).
pub fn download_wheels(requirements: &str, dir: &Path) -> Result<(), String> {
    let only_wheels: [&std::ffi::OsStr; 5] = [
        "--only-binary=:all:".as_ref(),
        "--platform".as_ref(),
        "manylinux_2_28_x86_64".as_ref(),
        "--python-version".as_ref(),
        "311".as_ref(),
    ];
    pip_download(requirements, dir, &only_wheels)
}

/// Downloads the source distributions pinned (with hashes) in `requirements` into `dir` (pip
/// reads each one's metadata, which may fetch its build backend from PyPI once).
pub fn download_sdists(requirements: &str, dir: &Path) -> Result<(), String> {
    pip_download(requirements, dir, &["--no-binary=:all:".as_ref()])
}

fn pip_download(requirements: &str, dir: &Path, kind: &[&std::ffi::OsStr]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join("requirements.txt");
    std::fs::write(&file, requirements).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut args: Vec<&std::ffi::OsStr> = vec!["download".as_ref(), "--require-hashes".as_ref(), "--no-deps".as_ref()];
    args.extend_from_slice(kind);
    args.extend_from_slice(&[
        "-d".as_ref(),
        dir.as_os_str(),
        "-r".as_ref(),
        file.as_os_str(),
        "--no-cache-dir".as_ref(),
    ]);
    pip(&args)
}

/// The downloaded wheel whose file name starts with `prefix` (`onnxruntime-`).
pub fn wheel(dir: &Path, prefix: &str) -> Result<PathBuf, String> {
    std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
        .ok_or_else(|| format!("pip did not download {prefix}*.whl"))
}

/// Copies one member of a zip archive (a wheel is one) to the end of `to`.
pub fn append_member(archive: &Path, member: &str, to: &mut std::fs::File) -> Result<u64, String> {
    let file = std::fs::File::open(archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mut entry = zip
        .by_name(member)
        .map_err(|e| format!("{} has no {member}: {e}", archive.display()))?;
    std::io::copy(&mut entry, to).map_err(|e| format!("copying {member}: {e}"))
}

/// Copies one member of a zip archive to the file `to`.
pub fn extract_member(archive: &Path, member: &str, to: &Path) -> Result<(), String> {
    let mut out = std::fs::File::create(to).map_err(|e| format!("{}: {e}", to.display()))?;
    append_member(archive, member, &mut out).map(drop)
}

/// The last lines of a tool's output, for error messages.
pub fn tail(bytes: &[u8]) -> String {
    last_lines(&String::from_utf8_lossy(bytes), 12)
}

/// The last `n` lines of `text`: what a reader of a tool's failure wants to see.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A byte-count progress bar on stderr (hidden unless interactive).
pub fn download_bar(total: Option<u64>, label: &str) -> indicatif::ProgressBar {
    if !interactive() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = match total {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::no_length(),
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(label.to_string());
    bar
}

/// A spinner with elapsed time for work that has no measurable progress (building the sandbox
/// component); hidden unless interactive.
pub fn spinner(label: &str) -> indicatif::ProgressBar {
    if !interactive() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(label.to_string());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}
