//! A project's own tests (pytest), run in a throw-away copy of the project, never in place, with
//! one file replaced by a candidate version. What the isolation is, precisely:
//! - the copy lives in a fresh temporary directory, removed afterwards; the project is only read;
//! - it is confined at the strongest level this machine allows (`confine.rs`): with bubblewrap,
//!   namespaces of its own in which only the system's files, the interpreter's and the copy exist
//!   and the network is loopback; else a network namespace only; the run reports which;
//! - rlimits: address space (`memory_mb`), CPU seconds (the timeout plus one), no core files; its
//!   own process group, killed whole at the timeout.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use super::confine::{Confinement, Jail};

/// One test's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// pytest's node id: `tests/test_core.py::test_render`.
    pub id: String,
    /// passed, failed, error, skipped, or "not run" (the run ended before it).
    pub status: String,
    /// The failure's one-line summary (`AssertionError: assert 1 == 2`).
    pub message: String,
    /// pytest's report of the failure (`--tb=short`), when it failed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    pub outcomes: Vec<Outcome>,
    pub seconds: f64,
    pub timed_out: bool,
    /// How the run was confined.
    pub confinement: Confinement,
    /// The end of pytest's output, for a reader (and a Feedback agent).
    pub output_tail: String,
}

#[derive(Debug, Clone, Copy)]
pub struct TestLimits {
    pub timeout: Duration,
    pub memory_mb: u64,
}

impl Default for TestLimits {
    fn default() -> Self {
        TestLimits {
            timeout: Duration::from_secs(120),
            memory_mb: 2048,
        }
    }
}

/// Runs a project's pytest suite with a given interpreter.
pub struct ProjectTests {
    python: PathBuf,
    jail: Jail,
}

/// Copies the project (the files `python_files`' walk would read, and every other file: data the
/// tests open) into `dest`, leaving out version control, virtual environments and caches.
pub fn copy_project(root: &Path, dest: &Path) -> anyhow::Result<()> {
    for entry in super::index::project_walk(root) {
        let entry = entry.with_context(|| format!("reading {}", root.display()))?;
        let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
        let to = dest.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to)?;
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &to).with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// `PASSED id`, `FAILED id - message`, `ERROR id - message`, `SKIPPED [1] file:line: reason`
/// lines of pytest's `-rA` summary.
fn parse_summary(output: &str) -> Vec<Outcome> {
    let mut out = Vec::new();
    for line in output.lines() {
        let Some((word, rest)) = line.split_once(' ') else { continue };
        let status = match word {
            "PASSED" => "passed",
            "FAILED" => "failed",
            "ERROR" => "error",
            "XFAIL" | "XPASS" | "SKIPPED" => "skipped",
            _ => continue,
        };
        let (id, message) = match rest.split_once(" - ") {
            Some((id, m)) => (id.trim(), m.trim()),
            None => (rest.trim(), ""),
        };
        if id.contains("::") || status == "error" {
            out.push(Outcome {
                id: id.to_string(),
                status: status.into(),
                message: message.to_string(),
                detail: String::new(),
            });
        }
    }
    out
}

/// `No module named 'x'` in a collection error: the missing package.
fn missing_module(output: &str) -> Option<String> {
    let at = output.find("No module named '")? + "No module named '".len();
    output[at..].split('\'').next().map(str::to_string)
}

impl ProjectTests {
    /// With `python` (which must have pytest), confined as `$RGD_CONFINE` asks, else at the
    /// strongest level that works here.
    pub fn new(python: &Path) -> anyhow::Result<ProjectTests> {
        let jail = Jail::from_env(python)?;
        // Asked of the executable the runs use: a shim or a name on PATH could stand for another.
        let out = Command::new(jail.executable())
            .args(["-m", "pytest", "--version"])
            .output()
            .with_context(|| format!("running {}", python.display()))?;
        // An exit status alone would take `/bin/true` for a Python with pytest.
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() || !said.contains("pytest ") {
            bail!(
                "the project's tests run with pytest, which {} does not have: {} -m pip install pytest (or set RGD_PYTHON)",
                python.display(),
                python.display()
            );
        }
        Ok(ProjectTests {
            python: python.to_path_buf(),
            jail,
        })
    }

    /// The node ids `selectors` select (pytest's own selection: paths, node ids, `-k EXPR`);
    /// an error names a selection of nothing, and packages the tests need but cannot import.
    pub fn collect(&self, root: &Path, selectors: &[String]) -> anyhow::Result<Vec<String>> {
        let copy = prepared_copy(root, None)?;
        let mut args: Vec<String> = ["-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
            .map(str::to_string)
            .to_vec();
        args.extend(selectors.iter().cloned());
        // Collecting imports the tests and the project: confined and timed like a run.
        let limits = TestLimits::default();
        let ended = self.limited(copy.path(), &[], &args, limits)?;
        if ended.timed_out {
            bail!("collecting {:?} ran past {:?}", selectors.join(" "), limits.timeout);
        }
        let text = ended.output.replace(&format!("{}/", copy.path().display()), "");
        if let Some(m) = missing_module(&text) {
            bail!(
                "the project's tests need packages that are missing here: {m} (install it for {})",
                self.python.display()
            );
        }
        let ids: Vec<String> = text
            .lines()
            .filter(|l| l.contains("::") && !l.contains(' '))
            .map(str::to_string)
            .collect();
        if ids.is_empty() {
            bail!(
                "the test selection {:?} selects no test in {}:\n{}",
                selectors.join(" "),
                root.display(),
                crate::assets::last_lines(&text, 8)
            );
        }
        Ok(ids)
    }

    /// Runs the tests `ids` in a copy of `root` in which `replace` (a path relative to the root,
    /// and its new text) is put first.
    pub fn run(&self, root: &Path, replace: Option<(&str, &str)>, ids: &[String], limits: TestLimits) -> anyhow::Result<TestRun> {
        let copy = prepared_copy(root, replace)?;
        let mut args: Vec<String> = [
            "-m",
            "pytest",
            "-q",
            "-rA",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "--color=no",
        ]
        .map(str::to_string)
        .to_vec();
        args.extend(ids.iter().cloned());
        let ended = self.limited(copy.path(), &[], &args, limits)?;
        // Paths in the copy, as the project's own (a prompt should not change with a temp dir).
        let output = ended.output.replace(&format!("{}/", copy.path().display()), "");
        let found = parse_summary(&output);
        let details = failure_sections(&output);
        let outcomes = ids
            .iter()
            .map(|id| {
                let mut o = found
                    .iter()
                    .find(|o| &o.id == id)
                    // A file that failed to import is one error for all its tests.
                    .or_else(|| {
                        found
                            .iter()
                            .find(|o| o.status == "error" && id.split("::").next() == Some(o.id.as_str()))
                    })
                    .cloned()
                    .map(|o| Outcome { id: id.clone(), ..o })
                    .unwrap_or_else(|| Outcome {
                        id: id.clone(),
                        status: "not run".into(),
                        message: if ended.timed_out {
                            format!("the run timed out after {:?}", limits.timeout)
                        } else {
                            String::new()
                        },
                        detail: String::new(),
                    });
                let file = id.split("::").next().unwrap_or(id);
                if let Some(d) = details
                    .get(&section_name(id))
                    .or_else(|| details.get(&format!("ERROR collecting {file}")))
                {
                    o.detail = d.clone();
                }
                // pytest names no message for a file it could not import: the report's last
                // `E` line says why (`SyntaxError: ...`).
                if o.message.is_empty() && !o.passed() {
                    o.message = o
                        .detail
                        .lines()
                        .rev()
                        .find_map(|l| l.strip_prefix("E "))
                        .map(|l| l.trim().to_string())
                        .unwrap_or_default();
                }
                o
            })
            .collect();
        Ok(TestRun {
            outcomes,
            seconds: ended.seconds,
            timed_out: ended.timed_out,
            confinement: self.jail.level,
            output_tail: crate::assets::last_lines(&output, 30),
        })
    }

    /// The call tree of one test (`id`) across the project's own files, with the source of the
    /// functions it entered (`sandbox/project_trace.py`), in a copy of `root` with `replace` put
    /// first. Information for a model, never a verdict.
    pub fn trace(
        &self,
        root: &Path,
        replace: Option<(&str, &str)>,
        id: &str,
        max_events: usize,
        limits: TestLimits,
    ) -> anyhow::Result<crate::sandbox::Trace> {
        let copy = prepared_copy(root, replace)?;
        let tools = tempfile::tempdir()?;
        std::fs::write(tools.path().join("tracer.py"), crate::sandbox::TRACER_PY)?;
        let driver = tools.path().join("project_trace.py");
        std::fs::write(&driver, PROJECT_TRACE_PY)?;
        let records = tools.path().join("records.jsonl");
        let args = [
            driver.display().to_string(),
            records.display().to_string(),
            max_events.to_string(),
            id.to_string(),
        ];
        let ended = self.limited(copy.path(), &[tools.path()], &args, limits)?;
        let text = std::fs::read_to_string(&records).unwrap_or_default();
        let mut trace = crate::sandbox::Trace::from_records("calls", &text);
        if trace.end.is_none() {
            trace.stopped = Some(if ended.timed_out {
                format!("the test ran past {:?}", limits.timeout)
            } else {
                format!("the tracer ended early: {}", crate::assets::last_lines(&ended.output, 5))
            });
        }
        Ok(trace)
    }

    /// How this machine confines the tests (the same for every run of this interpreter).
    pub fn confinement(&self) -> Confinement {
        self.jail.level
    }

    /// The same interpreter at another level of confinement (an error where it does not work).
    pub fn confined(&self, level: Confinement) -> anyhow::Result<ProjectTests> {
        Ok(ProjectTests {
            python: self.python.clone(),
            jail: Jail::at(&self.python, level)?,
        })
    }

    /// Runs `python ARGS` in `dir` (and may write `writable` besides): confined (`confine.rs`),
    /// rlimits, its own process group killed whole at the timeout.
    fn limited(&self, dir: &Path, writable: &[&Path], args: &[String], limits: TestLimits) -> anyhow::Result<Ended> {
        let mut cmd = self.jail.command(dir, writable);
        cmd.args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONHASHSEED", "0")
            // pytest cuts its summary lines to the terminal's width (80 without one).
            .env("COLUMNS", "400")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (memory, cpu) = (limits.memory_mb << 20, limits.timeout.as_secs() + 1);
        // SAFETY: between fork and exec only async-signal-safe calls (setsid, setrlimit).
        unsafe {
            cmd.pre_exec(move || {
                use nix::sys::resource::{Resource, setrlimit};
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                setrlimit(Resource::RLIMIT_AS, memory, memory).map_err(std::io::Error::from)?;
                setrlimit(Resource::RLIMIT_CPU, cpu, cpu).map_err(std::io::Error::from)?;
                setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(std::io::Error::from)?;
                Ok(())
            });
        }
        let started = Instant::now();
        let mut child = cmd.spawn().context("starting pytest")?;
        let pid = child.id();
        // Read both pipes on threads so a chatty test cannot block on a full pipe.
        let mut stdout = child.stdout.take().context("pytest's stdout")?;
        let mut stderr = child.stderr.take().context("pytest's stderr")?;
        let out_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
            s
        });
        let err_reader = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
            s
        });
        let mut timed_out = false;
        loop {
            if child.try_wait()?.is_some() {
                break;
            }
            if started.elapsed() > limits.timeout {
                timed_out = true;
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL);
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Ended {
            output: format!("{}{}", out_reader.join().unwrap_or_default(), err_reader.join().unwrap_or_default()),
            seconds: started.elapsed().as_secs_f64(),
            timed_out,
        })
    }
}

/// The driver that traces one test (see its docstring).
const PROJECT_TRACE_PY: &str = include_str!("../../sandbox/project_trace.py");

/// How a limited run ended.
struct Ended {
    output: String,
    seconds: f64,
    timed_out: bool,
}

/// A fresh copy of `root` with `replace` (a path relative to the root, and its new text) in it.
fn prepared_copy(root: &Path, replace: Option<(&str, &str)>) -> anyhow::Result<tempfile::TempDir> {
    let copy = tempfile::tempdir()?;
    copy_project(root, copy.path())?;
    if let Some((file, text)) = replace {
        let path = copy.path().join(file);
        anyhow::ensure!(path.is_file(), "{file}: no such file in {}", root.display());
        std::fs::write(&path, text)?;
    }
    Ok(copy)
}

/// The name pytest heads a test's failure section with: `test_x[1]`, `TestC.test_m`.
fn section_name(id: &str) -> String {
    id.split("::").skip(1).collect::<Vec<_>>().join(".")
}

/// The `____ name ____` sections of pytest's failure and error reports, by name.
fn failure_sections(output: &str) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let mut current: Option<(String, Vec<&str>)> = None;
    let mut finish = |current: &mut Option<(String, Vec<&str>)>| {
        if let Some((name, lines)) = current.take() {
            out.entry(name).or_insert_with(|| crate::assets::last_lines(&lines.join("\n"), 40));
        }
    };
    for line in output.lines() {
        let header = line
            .strip_prefix("___")
            .and_then(|l| l.strip_suffix("___"))
            .map(|l| l.trim_matches('_').trim());
        if let Some(name) = header.filter(|n| !n.is_empty()) {
            finish(&mut current);
            // Errors at setup are headed `ERROR at setup of test_x`.
            let name = name.rsplit(" of ").next().unwrap_or(name);
            current = Some((name.to_string(), Vec::new()));
        } else if line.starts_with("====") {
            finish(&mut current);
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    finish(&mut current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_summary_lines_become_outcomes() {
        let text = "..F\n=== short test summary info ===\nPASSED tests/test_a.py::test_one\nFAILED tests/test_a.py::test_two - AssertionError: assert 1 == 2\nERROR tests/test_b.py - ModuleNotFoundError: No module named 'numpy'\n1 failed, 1 passed";
        let got = parse_summary(text);
        assert_eq!(got.len(), 3);
        assert_eq!(
            (got[0].id.as_str(), got[0].status.as_str()),
            ("tests/test_a.py::test_one", "passed")
        );
        assert_eq!(got[1].message, "AssertionError: assert 1 == 2");
        assert_eq!(got[2].status, "error");
        assert_eq!(missing_module(text).as_deref(), Some("numpy"));
    }

    #[test]
    fn failure_sections_are_found_by_the_name_pytest_heads_them_with() {
        let text = "F.\n=================================== FAILURES ===================================\n______________________________ TestCart.test_sum _______________________________\ntests/test_a.py:5: in test_sum\n    assert total([1]) == 2\nE   assert 1 == 2\n____________________________ test_param[0.125] _____________________________\nE   assert 0.12 == 0.13\n=========================== short test summary info ============================\nFAILED tests/test_a.py::TestCart::test_sum - assert 1 == 2\n";
        let sections = failure_sections(text);
        assert_eq!(section_name("tests/test_a.py::TestCart::test_sum"), "TestCart.test_sum");
        let sum = &sections["TestCart.test_sum"];
        assert!(sum.contains("E   assert 1 == 2") && !sum.contains("0.13"), "{sum}");
        assert_eq!(sections["test_param[0.125]"], "E   assert 0.12 == 0.13");
    }
}
