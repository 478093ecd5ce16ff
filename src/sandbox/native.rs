//! The native executor: `python3` subprocesses (the program's and the tests', see `judge.rs`),
//! each in its own process group, with rlimits, an empty temporary working directory and a
//! minimal environment. Weaker than the wasm sandbox: the
//! program can still read files the user can read. Use it where wasm is unavailable.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use futures::FutureExt;
use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::sync::Semaphore;

use super::judge::{Clock, Interpreters, Role, World, judge};
use super::verdict::Ended;
use super::{Executor, Job, Limits, RUNNER_PY, RunReport, SandboxError};

pub struct NativeExecutor {
    python: PathBuf,
    slots: Semaphore,
}

impl NativeExecutor {
    /// Finds the real interpreter behind `python3` (or `$RGD_PYTHON`): version-manager shims
    /// cost hundreds of milliseconds per start, so the resolved executable is called directly.
    pub fn discover() -> Result<Self, SandboxError> {
        let candidate = crate::assets::python();
        let out = std::process::Command::new(&candidate)
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .map_err(|e| SandboxError::NoPython(format!("{candidate}: {e}")))?;
        if !out.status.success() {
            return Err(SandboxError::NoPython(format!("{candidate} exited with {}", out.status)));
        }
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let python = path.canonicalize().unwrap_or(path);
        let parallel = super::cores();
        Ok(NativeExecutor {
            python,
            slots: Semaphore::new(parallel),
        })
    }

    pub fn python(&self) -> &std::path::Path {
        &self.python
    }
}

#[async_trait::async_trait]
impl Executor for NativeExecutor {
    fn name(&self) -> &'static str {
        "native"
    }

    async fn run(&self, job: Job<'_>) -> Result<RunReport, SandboxError> {
        // One run per core: more only makes every test slower and deadlines noisier.
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| SandboxError::Io(std::io::Error::other("the sandbox is shutting down")))?;
        judge(self, &job).await
    }

    async fn trace(&self, job: super::TraceJob<'_>) -> Result<super::Trace, SandboxError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| SandboxError::Io(std::io::Error::other("the sandbox is shutting down")))?;
        super::trace::trace_with(self, &job).await
    }
}

#[async_trait::async_trait]
impl Interpreters for NativeExecutor {
    fn name(&self) -> &'static str {
        "native"
    }

    async fn start(&self, role: Role, limits: &Limits, _clock: Arc<Clock>) -> Result<World, SandboxError> {
        let total = limits.max_total;
        let memory = limits.memory_mb * 1024 * 1024;
        let cpu_secs = total.as_secs() + 1;
        let workdir = tempfile::tempdir()?;
        // The judge checked the directory before starting the round.
        if let (Role::Candidate, Some(data)) = (role, limits.data_dir.as_deref()) {
            // A private copy: whatever the program writes stays in its own working directory.
            copy_tree(data, workdir.path())?;
        }
        let mut cmd = tokio::process::Command::new(&self.python);
        cmd.args(["-I", "-S", "-c", RUNNER_PY])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("PYTHONHASHSEED", "0")
            .env("PYTHONIOENCODING", "utf-8")
            .env("LC_ALL", "C.UTF-8")
            .current_dir(workdir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .process_group(0);
        // SAFETY: only async-signal-safe setrlimit calls run between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                setrlimit(Resource::RLIMIT_AS, memory, memory)?;
                setrlimit(Resource::RLIMIT_CPU, cpu_secs, cpu_secs + 1)?;
                setrlimit(Resource::RLIMIT_FSIZE, 1 << 20, 1 << 20)?;
                setrlimit(Resource::RLIMIT_NOFILE, 64, 64)?;
                setrlimit(Resource::RLIMIT_CORE, 0, 0)?;
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| SandboxError::NoPython(format!("{}: {e}", self.python.display())))?;
        let group = child.id().map(|p| GroupKill(Pid::from_raw(p as i32)));
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SandboxError::Io(std::io::Error::other("python3 started without pipes")));
        };
        let ended = async move {
            // Held until the interpreter has ended or the world is dropped: either way its whole
            // process group goes (the program may have forked), and so does its working directory.
            let _group = group;
            let _workdir = workdir;
            let status = child.wait().await;
            use std::os::unix::process::ExitStatusExt;
            match status {
                Ok(s) => match (s.signal(), s.code()) {
                    (Some(sig), _) => Some(Ended::Signal(sig)),
                    (None, Some(code)) if code != 0 => Some(Ended::Exit(code)),
                    _ => None,
                },
                Err(_) => Some(Ended::Signal(9)),
            }
        }
        .boxed();
        Ok(World {
            stdin: Box::new(stdin),
            stdout: Box::new(stdout),
            ended,
            rearm: None,
        })
    }
}

/// Kills a process group when dropped.
struct GroupKill(Pid);

impl Drop for GroupKill {
    fn drop(&mut self) {
        let _ = killpg(self.0, Signal::SIGKILL);
    }
}

/// Copies the files under `from` into `to` (symbolic links are not followed).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
