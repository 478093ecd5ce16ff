//! The native executor: a `python3` subprocess in its own process group, with rlimits, an empty
//! temporary working directory and a minimal environment. Weaker than the wasm sandbox: the
//! program can still read files the user can read. Use it where wasm is unavailable.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Instant;

use nix::sys::resource::{Resource, setrlimit};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use super::verdict::Ended;
use super::{Executor, Job, RUNNER_PY, RunReport, SandboxError, runner_job};

/// Bytes of runner stdout accepted before the run is killed as an output flood. The runner keeps
/// program output inside its verdicts (capped per test), so only direct fd writes get this far.
const STDOUT_CAP: u64 = 8 << 20;

pub struct NativeExecutor {
    python: PathBuf,
    slots: Semaphore,
}

impl NativeExecutor {
    /// Finds the real interpreter behind `python3` (or `$RGD_PYTHON`): version-manager shims
    /// cost hundreds of milliseconds per start, so the resolved executable is called directly.
    pub fn discover() -> Result<Self, SandboxError> {
        let candidate = std::env::var("RGD_PYTHON").unwrap_or_else(|_| "python3".into());
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
        // One interpreter per core: more only makes every test slower and deadlines noisier.
        let _slot = self.slots.acquire().await.expect("semaphore is never closed");
        let nonce = ulid::Ulid::generate().to_string();
        let input = serde_json::to_vec(&runner_job(&job, &nonce)).expect("job is plain JSON");
        let total = job.limits.total_for(job.tests.len());
        let memory = job.limits.memory_mb * 1024 * 1024;
        let cpu_secs = total.as_secs() + 1;
        let workdir = tempfile::tempdir()?;
        if let Some(data) = job.limits.checked_data_dir()? {
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
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .map_err(|e| SandboxError::NoPython(format!("{}: {e}", self.python.display())))?;
        let pid = child.id().map(|p| Pid::from_raw(p as i32));
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");

        // Verdict lines read so far survive a deadline kill: the buffer outlives the timed-out future.
        let mut buf = Vec::new();
        let work = async {
            // The program may never read stdin; a failed write then is not our error.
            let _ = stdin.write_all(&input).await;
            drop(stdin);
            let mut stdout = stdout;
            let mut chunk = [0u8; 16 * 1024];
            loop {
                let n = stdout.read(&mut chunk).await?;
                if n == 0 {
                    return Ok::<_, std::io::Error>(false);
                }
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() as u64 > STDOUT_CAP {
                    return Ok(true);
                }
            }
        };
        let ended = match tokio::time::timeout(total, work).await {
            Ok(Ok(false)) => None,
            Ok(Ok(true)) => Some(Ended::OutputFlood),
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => Some(Ended::Deadline),
        };
        if ended.is_some()
            && let Some(pid) = pid
        {
            // The whole group: the program may have forked.
            let _ = killpg(pid, Signal::SIGKILL);
        }
        let status = child.wait().await?;
        let ended = ended.or_else(|| {
            use std::os::unix::process::ExitStatusExt;
            match (status.signal(), status.code()) {
                (Some(sig), _) => Some(Ended::Signal(sig)),
                (None, Some(code)) if code != 0 => Some(Ended::Exit(code)),
                _ => None,
            }
        });
        let wall_ms = started.elapsed().as_millis() as u64;
        let text = String::from_utf8_lossy(&buf);
        let mut report = RunReport::from_runner_output(self.name(), &text, &nonce, job.tests.len(), ended, wall_ms);
        // A runner that reported every test and then exited non-zero (e.g. the program's atexit
        // handler) has still been judged; only unreported tests carry the abnormal end.
        if report.tests.iter().all(|t| t.exc_type.as_deref() != Some("Exited")) && matches!(ended, Some(Ended::Exit(_))) {
            report.abnormal_end = None;
        }
        Ok(report)
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
