//! Building the sandbox component: CPython for WASI (PyPI `componentize-py`, pinned and
//! hash-checked) wraps `sandbox/runner.py` into a `wasi:cli/command` component. Built once into
//! rgd's cache, keyed by the hash of every source that goes in; never committed as a binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::super::SandboxError;

/// Everything the component is built from, compiled into the binary so an installed rgd can
/// build its sandbox without the source tree.
const SOURCES: &[(&str, &str)] = &[
    ("requirements.txt", include_str!("../../../sandbox/requirements.txt")),
    ("runner.py", include_str!("../../../sandbox/runner.py")),
    ("guest.py", include_str!("../../../sandbox/guest.py")),
    ("wit/world.wit", include_str!("../../../sandbox/wit/world.wit")),
    ("wit/deps/cli.wit", include_str!("../../../sandbox/wit/deps/cli.wit")),
    ("wit/deps/clocks.wit", include_str!("../../../sandbox/wit/deps/clocks.wit")),
    ("wit/deps/filesystem.wit", include_str!("../../../sandbox/wit/deps/filesystem.wit")),
    ("wit/deps/io.wit", include_str!("../../../sandbox/wit/deps/io.wit")),
    ("wit/deps/random.wit", include_str!("../../../sandbox/wit/deps/random.wit")),
    ("wit/deps/sockets.wit", include_str!("../../../sandbox/wit/deps/sockets.wit")),
];

/// Pinned in `sandbox/requirements.txt`; part of the tool directory's name.
const TOOL: &str = "componentize-py-0.25.1";

/// `$RGD_CACHE/sandbox`, else the platform cache dir (`~/.cache/rgd/sandbox`).
pub fn cache_dir() -> PathBuf {
    crate::assets::cache_root().join("sandbox")
}

/// Hash of all sources (names and contents): the component's identity.
pub fn sources_hash() -> String {
    let mut hasher = Sha256::new();
    for (name, text) in SOURCES {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

fn component_file() -> PathBuf {
    cache_dir().join(format!("guest-{}.wasm", &sources_hash()[..16]))
}

/// The built component if it is already in the cache (nothing is built).
pub fn installed_component() -> Option<PathBuf> {
    Some(component_file()).filter(|p| p.is_file())
}

/// The built component, building it first if needed. `report` hears progress lines.
pub fn ensure_component(report: &dyn Fn(&str)) -> Result<PathBuf, SandboxError> {
    let dir = cache_dir();
    let target = component_file();
    if target.is_file() {
        return Ok(target);
    }
    std::fs::create_dir_all(&dir)?;
    // One build at a time across processes (parallel tests, a sweep and a verify): the others wait
    // here and then find the finished component.
    let _lock = lock_cache(&dir)?;
    if target.is_file() {
        return Ok(target);
    }
    let python = crate::assets::python();
    let tool = install_tool(&dir, report)?;

    report("building the sandbox component (once, about 30 s)");
    let work = tempfile::tempdir_in(&dir)?;
    for (name, text) in SOURCES {
        let path = work.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    let output = work.path().join("guest.wasm");
    let spinner = crate::assets::spinner("building the sandbox component (CPython for WASI)");
    let result = Command::new(&python)
        .env("PYTHONPATH", &tool)
        .arg("-c")
        .arg("import sys, componentize_py; sys.argv[0] = 'componentize-py'; sys.exit(componentize_py.script())")
        .args(["-q", "-d"])
        .arg(work.path().join("wit"))
        .args(["-w", "rgd:sandbox/guest", "componentize", "-p"])
        .arg(work.path())
        .arg("guest")
        .arg("-o")
        .arg(&output)
        .current_dir(work.path())
        .output()
        .map_err(|e| build_error(format!("cannot run {python}: {e}")))?;
    spinner.finish_and_clear();
    if !result.status.success() || !output.is_file() {
        return Err(build_error(format!("componentize-py failed: {}", tail(&result.stderr))));
    }
    // Rename last: a concurrent or interrupted build never leaves a half-written component.
    std::fs::rename(&output, &target)?;
    Ok(target)
}

/// Installs the pinned componentize-py wheel (hash-checked) into the cache, once.
fn install_tool(dir: &Path, report: &dyn Fn(&str)) -> Result<PathBuf, SandboxError> {
    let tool = dir.join(TOOL);
    if tool.join(".complete").is_file() {
        return Ok(tool);
    }
    report("installing componentize-py 0.25.1 from PyPI (hash-checked, about 17 MB)");
    let staging = tempfile::tempdir_in(dir)?;
    let requirements = staging.path().join("requirements.txt");
    std::fs::write(&requirements, SOURCES[0].1)?;
    let target = staging.path().join("lib");
    let args: [&std::ffi::OsStr; 7] = [
        "install".as_ref(),
        "--require-hashes".as_ref(),
        "--no-deps".as_ref(),
        "--target".as_ref(),
        target.as_os_str(),
        "-r".as_ref(),
        requirements.as_os_str(),
    ];
    crate::assets::pip(&args).map_err(|e| build_error(format!("pip could not install componentize-py: {e}")))?;
    std::fs::write(target.join(".complete"), "")?;
    if tool.exists() {
        std::fs::remove_dir_all(&tool)?;
    }
    std::fs::rename(&target, &tool)?;
    Ok(tool)
}

/// An exclusive lock on the cache directory, released when dropped.
pub fn lock_cache(dir: &Path) -> Result<std::fs::File, SandboxError> {
    Ok(crate::assets::lock_dir(dir)?)
}

fn build_error(detail: String) -> SandboxError {
    SandboxError::Build(format!(
        "{detail}\nThe wasm sandbox needs python3 with pip and access to PyPI once (Debian: apt-get install python3-pip). \
         Meanwhile `--sandbox native` runs programs in a python3 subprocess (weaker isolation)."
    ))
}

use crate::assets::tail;
