//! How a project's tests, and an isolated program's process, are confined (`rgd solve --repo`,
//! `repo/run/testrun.rs`): the strongest of four levels this machine allows, found once per process by
//! trying it (`$RGD_CONFINE` names one instead: then a level that does not work is an error, never
//! a weaker one).
//! - `bubblewrap` (Debian's `bubblewrap`, `bwrap`): new mount, network, PID, IPC and UTS
//!   namespaces. The process sees a fresh file tree holding only `/usr` and the system library
//!   links, a few files of `/etc` that hold no secret (time zone, hosts, passwd, the linker
//!   cache), the interpreter's own directories (its prefixes and `sys.path`), all read-only; the
//!   throw-away copy (read-write); and an empty `/tmp`. The user's home, the project itself and
//!   every other file are absent; the network is loopback only; it dies with rgd.
//! - `landlock` (the kernel's Landlock, Linux 5.13 and later; no package needed): the process may
//!   read and execute only the system's directories, those files of `/etc`, the interpreter's
//!   own directories and what it is given, and write only its copy; the user's home, the project
//!   and every other file cannot be opened; TCP is refused (Landlock ABI 4+), signals and abstract
//!   sockets reach no process outside it (ABI 6+), and where `unshare --net` works it also gets a
//!   network namespace of its own. Unlike bubblewrap it sees the real file tree's names (`ls /`
//!   works, opening is what fails) and cannot mount a file read-only inside its copy.
//! - `unshare` (`unshare --net`, as root or with `--map-root-user`): loopback only, but the whole
//!   file system is readable and writable as the user.
//! - `none`: neither is allowed here; rlimits and a process group only.
//!
//! The wasm sandbox remains the one for untrusted programs of benchmark tasks; this is the most
//! that can be had for a project's own test runner, which needs a real interpreter and its packages.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde::Serialize;

/// The level a run had.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confinement {
    Bubblewrap,
    Landlock,
    Unshare,
    None,
}

impl Confinement {
    /// Every level, strongest first: the order they are tried in.
    pub const ALL: [Confinement; 4] = [
        Confinement::Bubblewrap,
        Confinement::Landlock,
        Confinement::Unshare,
        Confinement::None,
    ];

    /// One line for a person: what the tests can and cannot reach.
    pub fn describe(self) -> &'static str {
        match self {
            Confinement::Bubblewrap => "bubblewrap: no network, and no file but the system's, the interpreter's and the copy's",
            Confinement::Landlock => {
                "landlock: no TCP, and no file opened but the system's, the interpreter's and the copy's (bubblewrap also hides their names)"
            }
            Confinement::Unshare => "unshare: no network, but every file the user can read (install bubblewrap to hide them)",
            Confinement::None => "none: the host's network and every file the user can read (install bubblewrap, or run as root)",
        }
    }

    /// What an isolated program's process (`isolate.rs`) can read at this level.
    pub fn program_reads(self) -> &'static str {
        match self {
            Confinement::Bubblewrap | Confinement::Landlock => {
                "the program's process reads only the system's files, the interpreter's and its own copy of the project, which holds no test"
            }
            Confinement::Unshare | Confinement::None => "the program's process can read every file you can, your project's tests included",
        }
    }

    /// The word `$RGD_CONFINE` takes for it.
    pub fn word(self) -> &'static str {
        match self {
            Confinement::Bubblewrap => "bubblewrap",
            Confinement::Landlock => "landlock",
            Confinement::Unshare => "unshare",
            Confinement::None => "none",
        }
    }

    pub fn parse(word: &str) -> anyhow::Result<Confinement> {
        Confinement::ALL
            .into_iter()
            .find(|c| c.word() == word.trim())
            .ok_or_else(|| anyhow::anyhow!("RGD_CONFINE={word:?}: use bubblewrap, landlock, unshare or none"))
    }

    /// Whether this level works on this machine for an interpreter reading `reads`.
    fn works(self, reads: &[PathBuf]) -> bool {
        match self {
            Confinement::Bubblewrap => bwrap_works(reads),
            Confinement::Landlock => landlock_works(reads),
            Confinement::Unshare => unshare_args().is_some(),
            Confinement::None => true,
        }
    }
}

/// Files of `/etc` a test may need and that hold nothing private.
const ETC: &[&str] = &[
    "/etc/localtime",
    "/etc/timezone",
    "/etc/hosts",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/mime.types",
    "/etc/ssl/certs",
    "/etc/os-release",
];

/// Top-level system directories that are links into `/usr` on merged systems, directories elsewhere.
const SYSTEM: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// A confined command builder for one interpreter.
#[derive(Debug, Clone)]
pub struct Jail {
    pub level: Confinement,
    /// The interpreter's own executable (`sys.executable`): a name looked up on `PATH`, or a
    /// pyenv shim, could find another interpreter inside the jail than the one that was checked.
    executable: PathBuf,
    /// Directories the interpreter reads (prefixes, `sys.path`), bound read-only under bubblewrap.
    reads: Vec<PathBuf>,
}

impl Jail {
    /// The strongest level that works here for `python`.
    pub fn for_python(python: &Path) -> Jail {
        static LEVEL: OnceLock<Confinement> = OnceLock::new();
        let (executable, reads) = interpreter(python);
        let level = *LEVEL.get_or_init(|| {
            Confinement::ALL
                .into_iter()
                .find(|level| level.works(&reads))
                .unwrap_or(Confinement::None)
        });
        Jail { level, executable, reads }
    }

    /// At the level `$RGD_CONFINE` asks for (`bubblewrap`, `unshare`, `none`), an error where that
    /// level does not work here; the strongest available when it is unset.
    pub fn from_env(python: &Path) -> anyhow::Result<Jail> {
        match std::env::var("RGD_CONFINE") {
            Ok(word) if !word.is_empty() => Jail::at(python, Confinement::parse(&word)?),
            _ => Ok(Jail::for_python(python)),
        }
    }

    /// At `level` exactly, an error where it does not work here (never a weaker one).
    pub fn at(python: &Path, level: Confinement) -> anyhow::Result<Jail> {
        let (executable, reads) = interpreter(python);
        anyhow::ensure!(
            level.works(&reads),
            "{} confinement does not work on this machine ({})",
            level.word(),
            match level {
                Confinement::Bubblewrap => "install bubblewrap (Debian: apt-get install bubblewrap); it needs user namespaces or root",
                Confinement::Landlock => "the kernel has no Landlock (Linux 5.13 or later, enabled at boot: lsm=...,landlock)",
                _ => "unshare --net needs root or unprivileged user namespaces",
            }
        );
        Ok(Jail { level, executable, reads })
    }

    /// The interpreter's executable in its own words (`sys.executable`).
    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// The interpreter with ARGS to come, in `work` (read-write, the working directory), with
    /// `writable` directories besides and `readonly` files or directories (which may lie inside
    /// `work`: under bubblewrap they are mounted read-only there; the weaker levels cannot);
    /// confined at this jail's level. `hidden` (the user's project) is never made readable, even
    /// where the interpreter's path reaches into it (an editable install). The caller adds the
    /// arguments, the environment and limits.
    pub fn command(&self, work: &Path, writable: &[&Path], readonly: &[PathBuf], hidden: &Path) -> Command {
        let python = &self.executable;
        let reads: Vec<PathBuf> = self
            .reads
            .iter()
            .filter(|d| !d.starts_with(hidden) && !hidden.starts_with(d))
            .cloned()
            .collect();
        match self.level {
            Confinement::Landlock => {
                let mut c = match unshare_args() {
                    Some(args) => {
                        let mut c = Command::new("unshare");
                        c.args(args).arg(python);
                        c
                    }
                    None => Command::new(python),
                };
                let mut rules = Some(landlock_rules(&reads, work, writable, readonly));
                // SAFETY: the ruleset was built before the fork; between fork and exec only
                // prctl and landlock_restrict_self run, and no allocation (errors are raw codes).
                unsafe {
                    c.pre_exec(move || match rules.take() {
                        Some(Ok(rules)) => match rules.restrict_self() {
                            Ok(status) if status.ruleset != landlock::RulesetStatus::NotEnforced => Ok(()),
                            _ => Err(std::io::Error::from_raw_os_error(nix::libc::EPERM)),
                        },
                        _ => Err(std::io::Error::from_raw_os_error(nix::libc::EPERM)),
                    });
                }
                c
            }
            Confinement::Bubblewrap => {
                let mut c = Command::new("bwrap");
                c.args(bwrap_args(&reads, work, writable))
                    .args(
                        readonly
                            .iter()
                            .flat_map(|p| [std::ffi::OsStr::new("--ro-bind"), p.as_os_str(), p.as_os_str()]),
                    )
                    .arg("--")
                    .arg(python);
                c
            }
            Confinement::Unshare => {
                let mut c = Command::new("unshare");
                c.args(unshare_args().unwrap_or_default()).arg(python);
                c
            }
            Confinement::None => Command::new(python),
        }
    }
}

/// What a process confined by Landlock may do: read and execute the system's directories, the
/// files of `ETC`, the interpreter's directories (`reads`) and `readonly`; read, write and execute
/// in `work` and `writable`, and use the null and random devices; nothing else of the file
/// system, no TCP (ABI 4+), no signal or abstract socket beyond its own domain (ABI 6+). Rights a
/// kernel lacks are left out (the crate's best effort); the file system's are there since ABI 1.
fn landlock_rules(
    reads: &[PathBuf],
    work: &Path,
    writable: &[&Path],
    readonly: &[PathBuf],
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    use landlock::{ABI, Access, AccessFs, AccessNet, RulesetAttr, RulesetCreatedAttr, Scope, path_beneath_rules};
    let abi = ABI::V6;
    let read: Vec<PathBuf> = std::iter::once(PathBuf::from("/usr"))
        .chain(SYSTEM.iter().chain(ETC).map(PathBuf::from))
        .chain(reads.iter().cloned())
        .chain(readonly.iter().cloned())
        .filter(|p| p.exists())
        .collect();
    let write: Vec<PathBuf> = std::iter::once(work)
        .chain(writable.iter().copied())
        .map(Path::to_path_buf)
        .chain(DEVICES.iter().map(PathBuf::from))
        .filter(|p| p.exists())
        .collect();
    landlock::Ruleset::default()
        .handle_access(AccessFs::from_all(abi))?
        .handle_access(AccessNet::from_all(abi))?
        .scope(Scope::from_all(abi))?
        .create()?
        .add_rules(path_beneath_rules(&read, AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(&write, AccessFs::from_all(abi)))
}

/// Devices a test may open: writing to the null device, reading zeros and randomness.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"];

/// Whether Landlock confines here: the kernel has it, and `true` runs under the rules this
/// interpreter would get and cannot read a file it was not given.
fn landlock_works(reads: &[PathBuf]) -> bool {
    let Ok(outside) = tempfile::NamedTempFile::new() else {
        return false;
    };
    let Some(work) = tempfile::tempdir().ok() else { return false };
    let jail = Jail {
        level: Confinement::Landlock,
        executable: PathBuf::from("/bin/sh"),
        reads: reads.to_vec(),
    };
    // `sh -c 'cat FILE'` must fail: the rules hold, not merely load.
    let mut c = jail.command(work.path(), &[], &[], Path::new("/nonexistent"));
    c.arg("-c")
        .arg(format!("exec 2>/dev/null; true && ! cat {:?}", outside.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c.status().is_ok_and(|s| s.success())
}

/// Whether bubblewrap runs `true` in the jail this interpreter would get.
fn bwrap_works(reads: &[PathBuf]) -> bool {
    let work = tempfile::tempdir().ok();
    work.as_ref().is_some_and(|w| {
        Command::new("bwrap")
            .args(bwrap_args(reads, w.path(), &[]))
            .args(["--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// `unshare`'s arguments for a network namespace, where it is allowed (as root, or mapping root
/// in a user namespace).
fn unshare_args() -> Option<Vec<&'static str>> {
    static ARGS: OnceLock<Option<Vec<&'static str>>> = OnceLock::new();
    ARGS.get_or_init(|| {
        [&["--net"][..], &["--net", "--map-root-user"][..]].into_iter().find_map(|args| {
            Command::new("unshare")
                .args(args)
                .arg("true")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
                .then(|| args.to_vec())
        })
    })
    .clone()
}

fn bwrap_args(reads: &[PathBuf], work: &Path, writable: &[&Path]) -> Vec<std::ffi::OsString> {
    let mut a: Vec<std::ffi::OsString> = Vec::new();
    let mut push = |words: &[&std::ffi::OsStr]| a.extend(words.iter().map(|w| w.to_os_string()));
    push(&["--unshare-all".as_ref(), "--die-with-parent".as_ref()]);
    push(&["--ro-bind".as_ref(), "/usr".as_ref(), "/usr".as_ref()]);
    for dir in SYSTEM {
        let path = Path::new(dir);
        match std::fs::read_link(path) {
            Ok(to) => push(&["--symlink".as_ref(), to.as_os_str(), path.as_os_str()]),
            Err(_) if path.is_dir() => push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]),
            Err(_) => {}
        }
    }
    push(&["--proc".as_ref(), "/proc".as_ref(), "--dev".as_ref(), "/dev".as_ref()]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
    for file in ETC.iter().map(Path::new).filter(|p| p.exists()) {
        push(&["--ro-bind".as_ref(), file.as_os_str(), file.as_os_str()]);
    }
    for dir in reads.iter().filter(|d| !d.starts_with("/usr")) {
        push(&["--ro-bind".as_ref(), dir.as_os_str(), dir.as_os_str()]);
    }
    for dir in std::iter::once(work).chain(writable.iter().copied()) {
        push(&["--bind".as_ref(), dir.as_os_str(), dir.as_os_str()]);
    }
    push(&["--chdir".as_ref(), work.as_os_str()]);
    a
}

/// `python`'s executable (`python` itself when it cannot say) and the directories it reads:
/// prefixes, `sys.path` (site-packages, `.pth` entries of editable installs) and the directory of
/// its real executable. Asked of it with the environment a test run gets (none), from rgd's
/// working directory, where a version manager's shim picks the Python you would get there.
fn interpreter(python: &Path) -> (PathBuf, Vec<PathBuf>) {
    const ASK: &str = "import sys, os, json; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, \
                       sys.exec_prefix, sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable))] + sys.path))";
    let out = Command::new(python)
        .args(["-c", ASK])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stderr(Stdio::null())
        .output();
    let dirs: Vec<String> = out.ok().and_then(|o| serde_json::from_slice(&o.stdout).ok()).unwrap_or_default();
    let executable = dirs
        .first()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_file())
        .unwrap_or_else(|| python.to_path_buf());
    let mut kept: Vec<PathBuf> = Vec::new();
    for d in dirs.iter().skip(1).map(PathBuf::from) {
        // Zip files on sys.path are files; `/` would bind everything.
        if d.is_absolute() && d.exists() && d != Path::new("/") && !kept.contains(&d) {
            kept.push(d);
        }
    }
    (executable, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jail_binds_the_work_read_write_and_never_the_root_or_the_home() {
        let reads = vec![PathBuf::from("/usr/lib/python3"), PathBuf::from("/opt/venv")];
        let args: Vec<String> = bwrap_args(&reads, Path::new("/tmp/copy"), &[Path::new("/tmp/tools")])
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        assert!(joined.contains("--bind /tmp/copy /tmp/copy"), "{joined}");
        assert!(joined.contains("--bind /tmp/tools /tmp/tools"), "{joined}");
        assert!(joined.contains("--ro-bind /opt/venv /opt/venv"), "{joined}");
        assert!(joined.contains("--unshare-all"), "{joined}");
        assert!(joined.ends_with("--chdir /tmp/copy"), "{joined}");
        // /usr is bound once, not again for an interpreter directory under it.
        assert_eq!(args.iter().filter(|a| a.starts_with("/usr")).count(), 2, "{joined}");
        assert!(!args.iter().any(|a| a == "/" || a == "/root" || a == "/home"), "{joined}");
    }

    #[test]
    fn rgd_confine_names_a_level_or_is_refused() {
        for level in Confinement::ALL {
            assert_eq!(Confinement::parse(level.word()).unwrap(), level);
        }
        let err = Confinement::parse("strict").unwrap_err().to_string();
        assert!(err.contains("bubblewrap, landlock, unshare or none"), "{err}");
    }
}
