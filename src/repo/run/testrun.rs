//! A project's own tests (pytest), run in a throw-away copy of the project, never in place, with
//! one file replaced by a candidate version. What the isolation is, precisely:
//! - the copy lives in a fresh temporary directory, removed afterwards; the project is only read;
//! - it is confined at the strongest level this machine allows (`confine.rs`): with bubblewrap,
//!   namespaces of its own in which only the system's files, the interpreter's and the copy exist
//!   and the network is loopback; else a network namespace only; the run reports which;
//! - rlimits: address space (`memory_mb`), CPU seconds (the timeout plus one), no core files; its
//!   own process group, killed whole at the timeout and after every run;
//! - outcomes come from rgd's pytest plugin over a channel of its own (`verdict.rs`), never from
//!   pytest's output, which the program under test can write to; the plugin's tamper findings
//!   make every test count as failed;
//! - a visible run's copy holds no hidden test (`withhold.rs`), and under bubblewrap the test
//!   files and conftests are mounted read-only.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use crate::repo::run::confine::{Confinement, Jail};
pub use crate::repo::run::copies::copy_project;
use crate::repo::run::copies::decides_tests;
use crate::repo::run::isolate::{Halves, Isolation};
use crate::repo::run::verdict::Channel;
pub use crate::repo::run::verdict::Outcome;
use crate::repo::run::withhold::Withheld;

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    pub outcomes: Vec<Outcome>,
    pub seconds: f64,
    pub timed_out: bool,
    /// How the run was confined.
    pub confinement: Confinement,
    /// The end of pytest's output, for a person reading a failed run (never an outcome).
    pub output_tail: String,
    /// Why the run counts as tampered with (empty when it does not): every test then fails.
    pub tampered: Vec<String>,
    /// Whether the program ran apart from the tests (`isolate.rs`), or why not.
    #[serde(flatten)]
    pub isolation: Isolation,
}

impl TestRun {
    /// Whether the run vouches for the program: untampered, and every test ran and passed (else
    /// why not).
    pub fn all_passed(&self) -> Result<(), String> {
        if !self.tampered.is_empty() {
            return Err(format!("the program tampered with its tests: {}", self.tampered.join("; ")));
        }
        match self.outcomes.iter().find(|o| !o.passed()) {
            Some(o) => Err(format!("{} {}: {}", o.id, o.status, o.message)),
            None => Ok(()),
        }
    }
}

/// One run: which tests, on which version of which file, withholding which hidden tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunSpec<'a> {
    /// A path relative to the root, and its new text (the agents' program).
    pub replace: Option<(&'a str, &'a str)>,
    /// The function the agents wrote in that file (`name`, `Class.name`): what it returns is
    /// probed for objects that claim to equal anything.
    pub target: Option<&'a str>,
    /// The node ids to run.
    pub ids: &'a [String],
    /// Hidden tests the copy must not hold (`withhold.rs`): a visible run's.
    pub withhold: &'a [String],
}

#[derive(Debug, Clone, Copy)]
pub struct TestLimits {
    pub timeout: Duration,
    pub memory_mb: u64,
    /// Under the spectrum collector: how long one test may run before it is stopped where it is
    /// (then 1 s for the rest of the run: `project_spectra.py`), so a looping fault leaves
    /// spectra to rank instead of one timed-out run.
    pub per_test: Option<Duration>,
}

impl Default for TestLimits {
    fn default() -> Self {
        TestLimits {
            timeout: Duration::from_secs(120),
            memory_mb: 2048,
            per_test: None,
        }
    }
}

/// What pytest collected: the test ids, each collector that failed (file, message), and pytest's
/// output (for a person to read when nothing collects).
pub struct Collected {
    pub ids: Vec<String>,
    pub errors: Vec<(String, String)>,
    pub output: String,
}

/// Runs a project's pytest suite with a given interpreter.
pub struct ProjectTests {
    python: PathBuf,
    jail: Jail,
    /// rgd's plugin, written and compiled once: every run mounts it read-only (and skips
    /// compiling 600 lines of Python, runs of a small suite being mostly start-up).
    tools: std::sync::Arc<tempfile::TempDir>,
    /// (file, target, tests) whose tests handed the target something that is not data: their
    /// later runs go in-process at once, for the same reason.
    refused: Refusals,
}

/// Why a (file, target, tests) could not be isolated, once found out.
type Refusals = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<(String, String, String), Isolation>>>;

/// How rgd's plugin sees the run: what in the tests' process is the program, if anything.
enum Watch<'a> {
    /// No program of the agents' (collection, the original code, a trace).
    Nothing,
    /// The program runs in the tests' process: its functions (`names`) in `file` are watched.
    InProcess { file: &'a str, name: &'a str, names: &'a [String] },
    /// The program runs in a process of its own; the tests reach it through the socket `fd`
    /// (`config`: `rgd_isolate`'s settings for the tests' side); `tmp` is the temporary folder
    /// both processes share (a test's `tmp_path` handed to the program is there).
    Isolated { fd: i32, config: String, tmp: &'a Path },
}

/// A directory holding rgd's pytest plugin, compiled by `executable` (its cache is read back,
/// never written, by the runs: they have `PYTHONDONTWRITEBYTECODE`).
fn plugin_dir(executable: &Path) -> anyhow::Result<std::sync::Arc<tempfile::TempDir>> {
    let dir = tempfile::tempdir()?;
    // pytest rewrites the asserts of every `-p` plugin: it parses and compiles it again at every
    // run, whatever cache there is (11 ms of a 160 ms run). The plugin it loads is a shim that
    // imports the plugin's code as an ordinary, precompiled module.
    std::fs::write(dir.path().join("rgd_verdict.py"), PLUGIN_SHIM)?;
    std::fs::write(dir.path().join("rgd_spectra.py"), PROJECT_SPECTRA_PY)?;
    let package = dir.path().join("rgd_isolate");
    std::fs::create_dir(&package)?;
    for (name, source) in RGD_ISOLATE {
        std::fs::write(package.join(name), source)?;
    }
    let plugin = dir.path().join("rgd_verdict_impl.py");
    std::fs::write(&plugin, PYTEST_VERDICT_PY)?;
    // Without a compiled copy each run compiles the plugin itself: slower, never wrong.
    let _ = Command::new(executable)
        .args([
            "-c",
            "import py_compile, sys; [py_compile.compile(p, doraise=True) for p in sys.argv[1:]]",
        ])
        .arg(&plugin)
        .args(RGD_ISOLATE.iter().map(|(name, _)| package.join(name)))
        .env_clear()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    Ok(std::sync::Arc::new(dir))
}

/// Directories the project's packages import from, in `root`: the one above the target file's
/// top package (`src/` for `src/pkg/mod.py`), and `src/` when it holds a package.
fn import_roots(root: &Path, target: Option<&str>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(file) = target {
        let mut dir = root.join(file);
        dir.pop();
        while dir.starts_with(root) && dir != root && dir.join("__init__.py").is_file() {
            dir.pop();
        }
        roots.push(dir);
    }
    let src = root.join("src");
    let has_package = std::fs::read_dir(&src)
        .map(|entries| entries.flatten().any(|e| e.path().join("__init__.py").is_file()))
        .unwrap_or(false);
    if has_package && !roots.contains(&src) {
        roots.push(src);
    }
    roots.retain(|d| d != root);
    roots
}

/// The module name `file` is imported as from the first of `import_roots` (or the root).
fn module_of(root: &Path, file: &str) -> String {
    let base = import_roots(root, Some(file))
        .into_iter()
        .next()
        .unwrap_or_else(|| root.to_path_buf());
    let rel = root.join(file);
    let rel = rel
        .strip_prefix(&base)
        .unwrap_or(Path::new(file))
        .to_string_lossy()
        .replace('\\', "/");
    let rel = rel.strip_suffix(".py").unwrap_or(&rel);
    rel.strip_suffix("/__init__").unwrap_or(rel).replace('/', ".")
}

/// A pytest selection as the user wrote it, split like a shell would; a path in it must name a
/// file or directory inside the project.
pub fn selection(flag: &str, text: &str, root: &Path) -> anyhow::Result<Vec<String>> {
    let words = shlex::split(text).with_context(|| format!("{flag} {text:?}: unbalanced quotes"))?;
    if words.is_empty() {
        bail!("{flag} is empty: give test paths, node ids or -k EXPR");
    }
    let mut takes_value = false;
    for word in &words {
        let is_path = !takes_value && !word.starts_with('-');
        takes_value = matches!(
            word.as_str(),
            "-k" | "-m" | "--deselect" | "--ignore" | "--ignore-glob" | "-o" | "-p"
        );
        if !is_path {
            continue;
        }
        inside(flag, word, root)?;
    }
    Ok(words)
}

/// A single pytest node id (`tests/t.py::test_x[a b]`: its parameters may hold spaces, quotes and
/// brackets, so it is not split as a selection is), whose file is inside the project.
pub fn node_id(flag: &str, id: &str, root: &Path) -> anyhow::Result<()> {
    if id.trim().is_empty() || id.starts_with('-') {
        bail!("{flag} {id:?}: give a pytest node id (path/to/test_file.py::test_name)");
    }
    inside(flag, id, root)
}

/// The file or directory a selection word or node id names is inside the project.
fn inside(flag: &str, word: &str, root: &Path) -> anyhow::Result<()> {
    let path = word.split("::").next().unwrap_or(word);
    let inside = Path::new(path).is_relative() && root.join(path).canonicalize().is_ok_and(|p| p.starts_with(root));
    if !inside {
        bail!(
            "{flag}: {path} is not a test file or directory inside the project {}",
            root.display()
        );
    }
    Ok(())
}

/// `No module named 'x'` in a collection error's message: the missing package.
fn missing_module(output: &str) -> Option<String> {
    let at = output.find("No module named '")? + "No module named '".len();
    output[at..].split('\'').next().map(str::to_string)
}

impl ProjectTests {
    /// With `python`, else rgd's default interpreter ($RGD_PYTHON, else python3).
    pub fn with(python: Option<&Path>) -> anyhow::Result<ProjectTests> {
        match python {
            Some(p) => ProjectTests::new(p),
            None => ProjectTests::new(Path::new(&crate::assets::python())),
        }
    }

    /// The interpreter the runs use, as given.
    pub fn python(&self) -> &Path {
        &self.python
    }

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
            // Installed but broken (a dependency pinned too old) is not the same as absent.
            if said.contains("No module named pytest") || !said.contains("pytest") {
                bail!(
                    "the project's tests run with pytest, which {} does not have: {} -m pip install pytest (or set RGD_PYTHON)",
                    python.display(),
                    python.display()
                );
            }
            let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().trim();
            bail!("pytest does not start with {}: {last}", python.display());
        }
        Ok(ProjectTests {
            python: python.to_path_buf(),
            tools: plugin_dir(jail.executable())?,
            jail,
            refused: Default::default(),
        })
    }

    /// The node ids `selectors` select (pytest's own selection: paths, node ids, `-k EXPR`);
    /// an error names a selection of nothing, files that cannot be collected, and packages the
    /// tests need but cannot import.
    pub fn collect(&self, root: &Path, selectors: &[String]) -> anyhow::Result<Vec<String>> {
        let spec = RunSpec {
            ids: selectors,
            ..RunSpec::default()
        };
        let Collected { ids, errors, output } = self.collect_with_errors(root, &spec)?;
        if let Some(m) = errors.iter().find_map(|(_, m)| missing_module(m)) {
            bail!(
                "the project's tests need packages that are missing here: {m} (install it for {})",
                self.python.display()
            );
        }
        if let Some((file, message)) = errors.first() {
            bail!(
                "pytest cannot collect {}: {message}",
                if file.is_empty() { "the project's tests" } else { file }
            );
        }
        if ids.is_empty() && selectors.is_empty() {
            // (sortedcontainers' source distribution ships without its tests.)
            bail!(
                "pytest collects no test in {}: the project has none there (a source distribution may ship without its tests):\n{}",
                root.display(),
                crate::assets::last_lines(&output, 8)
            );
        }
        if ids.is_empty() {
            bail!(
                "the test selection {:?} selects no test in {}:\n{}",
                selectors.join(" "),
                root.display(),
                crate::assets::last_lines(&output, 8)
            );
        }
        Ok(ids)
    }

    /// The tests pytest collects from `spec.ids` (selectors; none for the whole suite) in a copy
    /// with `spec.replace` put in, with every collector that failed instead of an error for the
    /// first: a harvest takes what collects, and asks whether a put-back still does (`rgd bench
    /// real`).
    pub fn collect_with_errors(&self, root: &Path, spec: &RunSpec<'_>) -> anyhow::Result<Collected> {
        let copy = prepared_copy(root, spec)?;
        let selectors = spec.ids;
        let mut args: Vec<String> = ["--collect-only", "-q"].map(str::to_string).to_vec();
        args.extend(selectors.iter().cloned());
        // Collecting imports the tests and the project: confined and timed like a run.
        let limits = TestLimits::default();
        let args = PytestArgs { args, select: None };
        let ended = self.pytest(&copy, Watch::Nothing, &args, limits, None)?;
        if ended.timed_out {
            bail!("collecting {:?} ran past {:?}", selectors.join(" "), limits.timeout);
        }
        let channel = &ended.channel;
        let errors = channel.collect_errors().map(|(f, m)| (f.to_string(), m.to_string())).collect();
        Ok(Collected {
            ids: channel.collected.clone().unwrap_or_default(),
            errors,
            output: ended.output.clone(),
        })
    }

    /// Runs the tests `spec.ids` in a fresh copy of `root` with `spec.replace` put in and the
    /// hidden tests `spec.withhold` left out. Outcomes come from rgd's plugin alone.
    pub fn run(&self, root: &Path, spec: &RunSpec<'_>, limits: TestLimits) -> anyhow::Result<TestRun> {
        self.run_recording(root, spec, limits, None)
    }

    /// Before a program is taken (written, or counted as a fix): every test of `all` passes
    /// again in a fresh copy of `root` with `program` as `file`, the function `name` in a process
    /// of its own. `Err` when a test fails; else why the verdict was reached with the program in
    /// the tests' process (unverified), when it was.
    pub fn rerun(&self, root: &Path, file: &str, name: &str, all: &[String], program: &str) -> anyhow::Result<Option<String>> {
        let spec = RunSpec {
            replace: Some((file, program)),
            target: Some(name),
            ids: all,
            withhold: &[],
        };
        let run = self.run(root, &spec, TestLimits::default())?;
        run.all_passed()
            .map_err(|why| anyhow::anyhow!("run again in a fresh copy: {why}"))?;
        Ok(run.isolation.best_effort().map(str::to_string))
    }

    /// `run` with the program in the tests' process whatever it is (the in-process side of `rgd
    /// bench verdicts --isolation`), labelled so.
    pub fn run_in_process(&self, root: &Path, spec: &RunSpec<'_>, limits: TestLimits) -> anyhow::Result<TestRun> {
        let names = match spec.replace.zip(spec.target) {
            Some(((file, program), name)) => {
                let original = std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))?;
                crate::code::program_names(&original, program, name)
            }
            None => Vec::new(),
        };
        let asked = Isolation::in_process("asked for in-process".into(), "asked");
        self.run_in_process_as(root, spec, limits, None, asked, &names)
    }

    /// `run`, and which of the project's functions each test entered (`sandbox/project_spectra.py`):
    /// the spectra of `rgd locate`.
    pub fn spectra(&self, root: &Path, spec: &RunSpec<'_>, limits: TestLimits) -> anyhow::Result<(TestRun, Vec<Spectrum>)> {
        let out = tempfile::tempdir()?;
        let run = self.run_recording(root, spec, limits, Some(out.path()))?;
        let text = std::fs::read_to_string(out.path().join("spectra.jsonl")).unwrap_or_default();
        let spectra = text
            .lines()
            .map(|l| serde_json::from_str(l).with_context(|| format!("a spectrum rgd's collector wrote: {l}")))
            .collect::<anyhow::Result<Vec<Spectrum>>>()?;
        Ok((run, spectra))
    }

    /// A candidate (`spec.replace` with its `spec.target`) runs isolated (`isolate.rs`); where
    /// the tests hand it something that is not data, or it cannot be forwarded, in-process and
    /// labelled so. Runs without a target, and the spectrum collector's, are in-process.
    fn run_recording(&self, root: &Path, spec: &RunSpec<'_>, limits: TestLimits, spectra: Option<&Path>) -> anyhow::Result<TestRun> {
        let (file, program, name) = match (spec.replace, spec.target) {
            (None, _) => return self.run_in_process_as(root, spec, limits, spectra, Isolation::NoProgram, &[]),
            (Some(_), None) => {
                let why = Isolation::in_process("no target function was named".into(), "no_target");
                return self.run_in_process_as(root, spec, limits, spectra, why, &[]);
            }
            (Some((file, program)), Some(name)) => (file, program, name),
        };
        let original = std::fs::read_to_string(root.join(file)).with_context(|| format!("reading {file}"))?;
        let names = crate::code::program_names(&original, program, name);
        let fallback = |why: Isolation| self.run_in_process_as(root, spec, limits, spectra, why, &names);
        if spectra.is_some() {
            let why = "the spectrum collector watches the program in the tests' process";
            return fallback(Isolation::in_process(why.into(), "spectra"));
        }
        let key = (file.to_string(), name.to_string(), spec.ids.join("\n"));
        if let Some(why) = self.refused.lock().ok().and_then(|r| r.get(&key).cloned()) {
            return fallback(why);
        }
        let halves = match Halves::new(&original, program, name) {
            Ok(h) => h,
            Err(why) => return fallback(Isolation::in_process(why, "no_stub")),
        };
        let run = self.run_isolated(root, spec, file, name, &halves, limits)?;
        match run {
            Ok(run) => Ok(run),
            Err(why) => {
                if let Ok(mut r) = self.refused.lock() {
                    r.insert(key, why.clone());
                }
                fallback(why)
            }
        }
    }

    /// The run with the program in the tests' process, watched by the plugin.
    fn run_in_process_as(
        &self,
        root: &Path,
        spec: &RunSpec<'_>,
        limits: TestLimits,
        spectra: Option<&Path>,
        isolation: Isolation,
        names: &[String],
    ) -> anyhow::Result<TestRun> {
        let copy = prepared_copy(root, spec)?;
        let watch = match (spec.replace, spec.target) {
            (Some((file, _)), Some(name)) => Watch::InProcess { file, name, names },
            _ => Watch::Nothing,
        };
        let ended = self.pytest(&copy, watch, &pytest_args(spec), limits, spectra)?;
        self.judged(spec, limits, ended, isolation, String::new())
    }

    /// The run with the program in a process of its own: `Err` (why, and its cause) when the
    /// tests handed the target something that is not data (the run then judges nothing).
    fn run_isolated(
        &self,
        root: &Path,
        spec: &RunSpec<'_>,
        file: &str,
        name: &str,
        halves: &Halves,
        limits: TestLimits,
    ) -> anyhow::Result<Result<TestRun, Isolation>> {
        use std::os::fd::AsRawFd;
        let copy = prepared_copy(
            root,
            &RunSpec {
                replace: Some((file, &halves.tests_text)),
                ..*spec
            },
        )?;
        let program_dir = tempfile::tempdir()?;
        let modules = crate::repo::run::copies::program_copy(root, program_dir.path(), file, &halves.program_text)?;
        let (tests_end, program_end) = std::os::unix::net::UnixStream::pair().context("a socket between the two processes")?;
        let tmp = tempfile::tempdir()?;
        // One call may take half the run's time: past it, that test fails with the reason.
        let per_call = (limits.timeout.as_secs_f64() / 2.0).max(1.0);
        let ends = (program_end.as_raw_fd(), tmp.path());
        let dirs = (program_dir.path(), copy.dir.path());
        let server = self.start_program(root, dirs, file, name, &modules, ends, limits)?;
        drop(program_end);
        let config = crate::repo::run::isolate::TestsConfig {
            channel: crate::repo::run::isolate::Channel {
                fd: tests_end.as_raw_fd(),
                root: copy.dir.path(),
                project: &modules,
            },
            timeout: per_call,
            tmp: tmp.path(),
        };
        let watch = Watch::Isolated {
            fd: tests_end.as_raw_fd(),
            config: serde_json::to_string(&config)?,
            tmp: tmp.path(),
        };
        let ended = self.pytest(&copy, watch, &pytest_args(spec), limits, None);
        drop(tests_end);
        let program_output = server.stop();
        let ended = ended?;
        if let Some(why) = ended.channel.not_isolated.first() {
            return Ok(Err(Isolation::InProcess {
                why: why.clone(),
                cause: ended.channel.cause.clone(),
            }));
        }
        let program_output = program_output.replace(&format!("{}/", program_dir.path().display()), "");
        self.judged(spec, limits, ended, Isolation::Isolated, program_output).map(Ok)
    }

    /// The program's process for `name` of `file`, serving calls on the socket `fd`; confined
    /// like the tests, in `dir` (which holds no test); `tests` is the tests' copy, which it cannot
    /// open (a path into it crosses as the same path of `dir`).
    #[allow(clippy::too_many_arguments, reason = "one private helper; a struct would only rename them")]
    fn start_program(
        &self,
        root: &Path,
        (dir, tests): (&Path, &Path),
        file: &str,
        name: &str,
        modules: &[String],
        (fd, tmp): (i32, &Path),
        limits: TestLimits,
    ) -> anyhow::Result<Program> {
        let mut path: Vec<PathBuf> = import_roots(dir, Some(file));
        path.push(self.tools.path().to_path_buf());
        let path = std::env::join_paths(&path)?;
        let config = crate::repo::run::isolate::ProgramConfig {
            channel: crate::repo::run::isolate::Channel {
                fd,
                root: dir,
                project: modules,
            },
            module: module_of(dir, file),
            qualname: name,
            tests_root: tests,
        };
        let mut cmd = self.jail.command(dir, &[tmp], &[self.tools.path().to_path_buf()], root);
        cmd.args(["-c", "import rgd_isolate; rgd_isolate.serve()"]);
        plain_python(&mut cmd, dir)
            .env("PYTHONPATH", &path)
            .env("RGD_ISOLATE", serde_json::to_string(&config)?)
            .env("TMPDIR", tmp);
        limit_child(&mut cmd, limits, vec![fd]);
        let mut child = cmd.spawn().context("starting the program's process")?;
        let out = read_all(child.stdout.take().context("the program's stdout")?);
        let err = read_all(child.stderr.take().context("the program's stderr")?);
        Ok(Program { child, out, err })
    }

    /// Under Landlock the shared `/tmp` cannot be written: temporary files (pytest's `tmp_path`
    /// among them) go to a folder of the copy's. Bubblewrap mounts an empty `/tmp` of its own;
    /// the weaker levels write the host's.
    fn private_tmp(&self, cmd: &mut Command, dir: &Path) -> anyhow::Result<()> {
        if self.jail.level == Confinement::Landlock {
            let tmp = dir.join(".rgd-tmp");
            std::fs::create_dir_all(&tmp)?;
            cmd.env("TMPDIR", &tmp);
        }
        Ok(())
    }

    /// The outcomes of an ended run as its plugin reported them.
    fn judged(
        &self,
        spec: &RunSpec<'_>,
        limits: TestLimits,
        ended: Ended,
        isolation: Isolation,
        program_output: String,
    ) -> anyhow::Result<TestRun> {
        let channel = &ended.channel;
        if channel.records == 0 && !ended.timed_out && ended.exit.is_some() {
            bail!(
                "rgd's pytest plugin did not report (is pytest older than 7?): {}",
                crate::assets::last_lines(&ended.output, 8)
            );
        }
        let mut tampered = channel.tampered.clone();
        // The process left on its own before pytest finished: `os._exit` in a test.
        if let (false, false, Some(code)) = (channel.ended, ended.timed_out, ended.exit) {
            tampered.push(format!("the tests' process exited (status {code}) before pytest finished"));
        }
        let outcomes = spec
            .ids
            .iter()
            .map(|id| {
                let mut o = channel.outcome(id);
                if o.status == "not run" && ended.timed_out {
                    o.message = format!("the run timed out after {:?}", limits.timeout);
                }
                o
            })
            .collect();
        let mut output_tail = crate::assets::last_lines(&ended.output, 30);
        if !program_output.trim().is_empty() {
            output_tail.push_str("\n----- the program's process -----\n");
            output_tail.push_str(&crate::assets::last_lines(&program_output, 15));
        }
        Ok(TestRun {
            outcomes,
            seconds: ended.seconds,
            timed_out: ended.timed_out,
            confinement: self.jail.level,
            output_tail,
            tampered,
            isolation,
        })
    }

    /// Time of the same run without rgd's plugin, whose outcomes are not read: the cost baseline
    /// of `cargo bench --bench confine`.
    pub fn run_without_plugin(&self, root: &Path, ids: &[String], limits: TestLimits) -> anyhow::Result<f64> {
        let copy = prepared_copy(root, &RunSpec::default())?;
        let mut args: Vec<String> = [
            "-m",
            "pytest",
            "-q",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            "--no-header",
            "--color=no",
        ]
        .map(str::to_string)
        .to_vec();
        args.extend(ids.iter().cloned());
        let ended = self.limited(&copy, &[], &copy.readonly(&[]), &args, None, &[], &[], limits)?;
        Ok(ended.seconds)
    }

    /// The call tree of one test (`id`) across the project's own files, with the source of the
    /// functions it entered (`sandbox/project_trace.py`), in a copy of `root` as `spec` says
    /// (the hidden tests withheld). Information for a model, never a verdict.
    pub fn trace(
        &self,
        root: &Path,
        spec: &RunSpec<'_>,
        id: &str,
        max_events: usize,
        limits: TestLimits,
    ) -> anyhow::Result<crate::sandbox::Trace> {
        let copy = prepared_copy(root, spec)?;
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
        let ended = self.limited(&copy, &[tools.path()], &copy.readonly(&[]), &args, None, &[], &[], limits)?;
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
            tools: self.tools.clone(),
            refused: self.refused.clone(),
        })
    }

    /// `python -m pytest ARGS` in `copy` with rgd's plugin loaded first and its channel read;
    /// `watch` says where the program is. With `spectra`, a directory the spectrum collector
    /// writes `spectra.jsonl` into.
    fn pytest(
        &self,
        copy: &Copy,
        watch: Watch<'_>,
        args: &PytestArgs,
        limits: TestLimits,
        spectra: Option<&Path>,
    ) -> anyhow::Result<Ended> {
        let tools = &self.tools;
        let key = hex::encode(rand::random::<[u8; 16]>());
        let (target, names, isolated) = match &watch {
            Watch::Nothing => (None, None, None),
            Watch::InProcess { file, name, names } => (Some((*file, *name)), Some(*names), None),
            Watch::Isolated { fd, config, tmp } => (None, None, Some((*fd, config.as_str(), *tmp))),
        };
        let config = serde_json::json!({
            "key": key,
            "root": copy.dir.path(),
            "target": target.map(|t| t.0),
            "name": target.map(|t| t.1),
            "program": names,
            "isolate": isolated.is_some(),
            "protected": copy.protected,
            "select": args.select,
        });
        let mut full: Vec<String> = ["-m", "pytest", "-p", "rgd_verdict", "-p", "no:cacheprovider"]
            .map(str::to_string)
            .to_vec();
        if spectra.is_some() {
            full.extend(["-p".to_string(), "rgd_spectra".to_string()]);
        }
        full.extend(args.args.iter().cloned());
        // The copy's code comes first on the path: with a `src/` layout, or a package installed
        // (even editable, pointing at the project itself), the tests would otherwise import
        // another copy than the one holding the program, and judge that instead.
        let mut path: Vec<PathBuf> = import_roots(copy.dir.path(), target.map(|t| t.0));
        path.push(tools.path().to_path_buf());
        let path = std::env::join_paths(&path)?;
        let spectra_file = spectra.map(|d| d.join("spectra.jsonl"));
        let per_test = limits.per_test.map(|d| std::ffi::OsString::from(format!("{}", d.as_secs_f64())));
        let mut env = vec![("PYTHONPATH", path.as_os_str())];
        let isolate_config = isolated.map(|(_, c, _)| std::ffi::OsString::from(c));
        if let Some(c) = &isolate_config {
            env.push(("RGD_ISOLATE", c.as_os_str()));
        }
        if let Some((_, _, tmp)) = isolated {
            env.push(("TMPDIR", tmp.as_os_str()));
        }
        let fds: Vec<i32> = isolated.map(|(fd, _, _)| fd).into_iter().collect();
        if let Some(f) = &spectra_file {
            env.push(("RGD_SPECTRA_OUT", f.as_os_str()));
            if let Some(seconds) = &per_test {
                env.push(("RGD_SPECTRA_TEST_SECONDS", seconds.as_os_str()));
            }
        }
        let readonly = copy.readonly(&[tools.path()]);
        let writable: Vec<&Path> = spectra.into_iter().chain(isolated.map(|(_, _, tmp)| tmp)).collect();
        let mut ended = self.limited(
            copy,
            &writable,
            &readonly,
            &full,
            Some((&key, config.to_string())),
            &env,
            &fds,
            limits,
        )?;
        // Paths in the copy, as the project's own (a prompt should not change with a temp dir).
        ended.output = ended.output.replace(&format!("{}/", copy.dir.path().display()), "");
        Ok(ended)
    }

    /// Runs `python ARGS` in `copy` (and may write `writable` besides, and read `readonly`, which
    /// may lie inside the copy): confined (`confine.rs`), rlimits, its own process group killed whole
    /// at the timeout and at its end. With `channel` (the key and the configuration), the verdict
    /// channel is handed to the process and read.
    #[allow(clippy::too_many_arguments, reason = "one private helper; a struct would only rename them")]
    fn limited(
        &self,
        copy: &Copy,
        writable: &[&Path],
        readonly: &[PathBuf],
        args: &[String],
        channel: Option<(&str, String)>,
        env: &[(&str, &std::ffi::OsStr)],
        fds: &[i32],
        limits: TestLimits,
    ) -> anyhow::Result<Ended> {
        let dir = copy.dir.path();
        let mut cmd = self.jail.command(dir, writable, readonly, &copy.source);
        cmd.args(args);
        // pytest cuts its summary lines to the terminal's width (80 without one).
        plain_python(&mut cmd, dir).env("COLUMNS", "400");
        for (k, v) in env {
            cmd.env(k, v);
        }
        if !env.iter().any(|(k, _)| *k == "TMPDIR") {
            self.private_tmp(&mut cmd, dir)?;
        }
        // The channel: the configuration goes in through one pipe, records come out of another.
        // Both ends the child needs are close-on-exec in rgd (other runs on other threads must not
        // inherit them) and made inheritable in the child alone, between fork and exec.
        let pipes = match &channel {
            Some(_) => {
                let (cfg_read, cfg_write) = std::io::pipe()?;
                let (out_read, out_write) = std::io::pipe()?;
                Some((cfg_read, cfg_write, out_read, out_write))
            }
            None => None,
        };
        let mut inherit: Vec<i32> = pipes
            .as_ref()
            .map(|(cfg_read, _, _, out_write)| {
                use std::os::fd::AsRawFd;
                vec![cfg_read.as_raw_fd(), out_write.as_raw_fd()]
            })
            .unwrap_or_default();
        if let [cfg, out] = inherit[..] {
            cmd.env("RGD_VERDICT_IN", cfg.to_string()).env("RGD_VERDICT_OUT", out.to_string());
        }
        inherit.extend_from_slice(fds);
        limit_child(&mut cmd, limits, inherit);
        let started = Instant::now();
        let mut child = cmd.spawn().context("starting pytest")?;
        let pid = child.id();
        let group = nix::unistd::Pid::from_raw(pid as i32);
        // Read every pipe on a thread so a chatty test cannot block on a full pipe.
        let stdout = child.stdout.take().context("pytest's stdout")?;
        let stderr = child.stderr.take().context("pytest's stderr")?;
        let out_reader = read_all(stdout);
        let err_reader = read_all(stderr);
        let channel_reader = match (pipes, &channel) {
            (Some((cfg_read, mut cfg_write, out_read, out_write)), Some((_, config))) => {
                // rgd's copies of the child's ends: the reader sees the end once the child's are closed.
                drop((cfg_read, out_write));
                let config = config.clone();
                std::thread::spawn(move || {
                    let _ = std::io::Write::write_all(&mut cfg_write, config.as_bytes());
                });
                Some(read_all(out_read))
            }
            _ => None,
        };
        // The end is awaited on a thread, not polled: a run's time is its own, to the millisecond.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        let (status, timed_out) = match rx.recv_timeout(limits.timeout) {
            Ok(status) => (Some(status?), false),
            Err(_) => {
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
                let _ = rx.recv();
                (None, true)
            }
        };
        // Whatever the tests left running (a forked child holding a pipe) goes with them.
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let seconds = started.elapsed().as_secs_f64();
        let text = |reader: Reader| reader.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
        let output = format!("{}{}", text(out_reader), text(err_reader));
        let channel = match (channel_reader, &channel) {
            (Some(reader), Some((key, _))) => Channel::read(&text(reader), key),
            _ => Channel::default(),
        };
        Ok(Ended {
            output,
            seconds,
            timed_out,
            exit: status.and_then(|s| s.code()),
            channel,
        })
    }
}

/// An interpreter in `dir` with nothing of rgd's environment (its keys stay out): the path, a home
/// in the copy, no bytecode written, a fixed hash seed; no input, its output read.
fn plain_python<'c>(cmd: &'c mut Command, dir: &Path) -> &'c mut Command {
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
}

/// Limits a child to be (rlimits from `limits`, a process group of its own) and hands it the
/// descriptors `inherit`, which are close-on-exec in rgd (other runs on other threads must not
/// inherit them) and made inheritable in the child alone, between fork and exec.
fn limit_child(cmd: &mut Command, limits: TestLimits, inherit: Vec<i32>) {
    let (memory, cpu) = (limits.memory_mb << 20, limits.timeout.as_secs() + 1);
    // SAFETY: between fork and exec only async-signal-safe calls (setsid, setrlimit, fcntl).
    unsafe {
        cmd.pre_exec(move || {
            use nix::sys::resource::{Resource, setrlimit};
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_AS, memory, memory).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_CPU, cpu, cpu).map_err(std::io::Error::from)?;
            setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(std::io::Error::from)?;
            for &fd in &inherit {
                if nix::libc::fcntl(fd, nix::libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// The program's process of an isolated run.
struct Program {
    child: std::process::Child,
    out: Reader,
    err: Reader,
}

impl Program {
    /// Ends it, and whatever it started (its process group), and returns what it printed.
    fn stop(mut self) -> String {
        // How it ended, when it ended before the tests did (a crash, a signal): said to a reader.
        let ended = match self.child.try_wait() {
            Ok(Some(status)) => format!("(it ended before the tests: {status})\n"),
            _ => String::new(),
        };
        let group = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
        let text = |reader: &Reader| reader.recv_timeout(Duration::from_secs(2)).unwrap_or_default();
        format!("{}{}{ended}", text(&self.out), text(&self.err))
    }
}

/// What pytest is given for a run: its command line, and the node ids the plugin keeps of what
/// that collects.
struct PytestArgs {
    args: Vec<String>,
    select: Option<Selection>,
}

/// A run's node ids, for the plugin: of `files`, only `ids` are kept (the others deselected).
#[derive(Debug, serde::Serialize)]
struct Selection {
    files: Vec<String>,
    ids: Vec<String>,
}

/// pytest's arguments for a run of `spec.ids`: the files of the node ids on the command line, and
/// the ids themselves to rgd's plugin, which deselects the rest of those files. Given as
/// arguments, one id that no longer collects (a parameter made from the clock,
/// `test_invalid[15:49:14 2026-11-29]`) makes pytest refuse the whole run ("not found"); this way
/// that test is not run, as a vanished test should be, and the others run. In a narrowed file the
/// plugin collects only what an asked id names, as pytest does for ids on its command line: a
/// class it would warn it cannot collect, where a test module made warnings errors, fails the
/// whole collection when collected (markdown's `TestSuite`). An id without `::` (a file or a
/// folder) is passed as it is, and a file under it is not narrowed.
fn pytest_args(spec: &RunSpec<'_>) -> PytestArgs {
    let mut args: Vec<String> = ["-q", "--tb=short", "--no-header", "--color=no"].map(str::to_string).to_vec();
    let (nodes, whole): (Vec<&String>, Vec<&String>) = spec.ids.iter().partition(|id| id.contains("::"));
    let under_whole = |file: &str| {
        whole.iter().any(|w| {
            let w = w.trim_end_matches('/');
            file == w || file.starts_with(&format!("{w}/"))
        })
    };
    let (mut files, mut ids): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for id in nodes {
        let file = id.split("::").next().unwrap_or_default();
        if under_whole(file) {
            continue;
        }
        if !files.iter().any(|f| f == file) {
            files.push(file.to_string());
        }
        ids.push(id.clone());
    }
    args.extend(whole.into_iter().cloned());
    args.extend(files.iter().cloned());
    let select = (!files.is_empty()).then_some(Selection { files, ids });
    PytestArgs { args, select }
}

type Reader = std::sync::mpsc::Receiver<String>;

/// Reads a pipe to its end on a thread; the text arrives on the receiver.
fn read_all<R: std::io::Read + Send + 'static>(mut pipe: R) -> Reader {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// rgd's pytest plugin (see its docstring): loaded first, it reports outcomes over its channel.
pub const PYTEST_VERDICT_PY: &str = include_str!("../../../sandbox/pytest_verdict.py");

/// The spectrum collector of `rgd locate` (see its docstring): information, never a verdict.
const PROJECT_SPECTRA_PY: &str = include_str!("../../../sandbox/project_spectra.py");

/// A project function as the collector names it: (file, qualified name, first line).
pub type Frame = (String, String, u32);

/// One test's spectrum: the project's functions its call phase entered (and the lines of each it
/// ran), and, when it failed, the project frames its exception passed through, innermost last;
/// each (file, qualified name, line).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Spectrum {
    pub id: String,
    pub functions: Vec<Frame>,
    /// (file, qualified name, line, the lines it ran) for each function of `functions`.
    #[serde(default)]
    pub lines: Vec<(String, String, u32, Vec<u32>)>,
    #[serde(default)]
    pub raised: Vec<Frame>,
    /// Collection's record only (id `<collection>`): each collector that failed (a module that
    /// did not import) and the project frames its error passed through.
    #[serde(default)]
    pub errors: Vec<(String, Vec<Frame>)>,
    /// What the TypeErrors said of the calls from project code whose arguments did not fit the
    /// callee, caught or not (`TypeError: f() takes ...`; `locate::mismatched_callee` reads them).
    #[serde(default)]
    pub mismatched: Vec<String>,
    /// The collector's per-test timer stopped this test (`project_spectra.py`).
    #[serde(default)]
    pub stopped: bool,
}

/// The isolation of a target (see the package's docstring): the stub's calls and the program's
/// process. Its modules, written as the package `rgd_isolate` beside the plugin.
const RGD_ISOLATE: &[(&str, &str)] = &[
    ("__init__.py", include_str!("../../../sandbox/rgd_isolate/__init__.py")),
    ("assigned.py", include_str!("../../../sandbox/rgd_isolate/assigned.py")),
    ("common.py", include_str!("../../../sandbox/rgd_isolate/common.py")),
    ("config.py", include_str!("../../../sandbox/rgd_isolate/config.py")),
    ("decode.py", include_str!("../../../sandbox/rgd_isolate/decode.py")),
    ("encode.py", include_str!("../../../sandbox/rgd_isolate/encode.py")),
    ("fds.py", include_str!("../../../sandbox/rgd_isolate/fds.py")),
    ("handles.py", include_str!("../../../sandbox/rgd_isolate/handles.py")),
    ("lifetimes.py", include_str!("../../../sandbox/rgd_isolate/lifetimes.py")),
    ("modules.py", include_str!("../../../sandbox/rgd_isolate/modules.py")),
    ("output.py", include_str!("../../../sandbox/rgd_isolate/output.py")),
    ("peer.py", include_str!("../../../sandbox/rgd_isolate/peer.py")),
    ("policy.py", include_str!("../../../sandbox/rgd_isolate/policy.py")),
    ("program_side.py", include_str!("../../../sandbox/rgd_isolate/program_side.py")),
    ("refusals.py", include_str!("../../../sandbox/rgd_isolate/refusals.py")),
    ("served.py", include_str!("../../../sandbox/rgd_isolate/served.py")),
    ("state.py", include_str!("../../../sandbox/rgd_isolate/state.py")),
    ("tests_side.py", include_str!("../../../sandbox/rgd_isolate/tests_side.py")),
    ("values.py", include_str!("../../../sandbox/rgd_isolate/values.py")),
];

/// What `-p rgd_verdict` loads: the plugin's hooks, from its precompiled module.
const PLUGIN_SHIM: &str =
    "\"\"\"rgd's pytest plugin (rgd_verdict_impl). PYTEST_DONT_REWRITE\"\"\"\nfrom rgd_verdict_impl import *  # noqa: F401,F403\n";

/// The driver that traces one test (see its docstring).
const PROJECT_TRACE_PY: &str = include_str!("../../../sandbox/project_trace.py");

/// How a limited run ended.
struct Ended {
    output: String,
    seconds: f64,
    timed_out: bool,
    /// The exit status, when the process exited by itself (not by a signal or the timeout).
    exit: Option<i32>,
    /// What rgd's plugin reported (empty without a channel).
    channel: Channel,
}

/// A throw-away copy of the project.
struct Copy {
    dir: tempfile::TempDir,
    /// The project it was copied from: never readable by the run (`Jail::command`'s `hidden`).
    source: PathBuf,
    /// Files (relative) that decide which tests run and how: read-only under bubblewrap, watched
    /// by the plugin.
    protected: Vec<String>,
}

impl Copy {
    /// What a run may only read: `extra`, and the protected files of the copy.
    fn readonly(&self, extra: &[&Path]) -> Vec<PathBuf> {
        extra
            .iter()
            .map(|p| p.to_path_buf())
            .chain(self.protected.iter().map(|f| self.dir.path().join(f)))
            .collect()
    }
}

/// A fresh copy of `root` with `spec.replace` (a path relative to the root, and its new text) in
/// it and the hidden tests `spec.withhold` left out.
fn prepared_copy(root: &Path, spec: &RunSpec<'_>) -> anyhow::Result<Copy> {
    let dir = tempfile::tempdir()?;
    let files = copy_project(root, dir.path())?;
    if let Some((file, text)) = spec.replace {
        let path = dir.path().join(file);
        anyhow::ensure!(path.is_file(), "{file}: no such file in {}", root.display());
        std::fs::write(&path, text)?;
    }
    let withheld = Withheld::plan(&files, spec.ids, spec.withhold)?;
    withheld.apply(dir.path())?;
    let protected = files
        .into_iter()
        .filter(|f| !withheld.files.contains(f) && decides_tests(f) && Some(f.as_str()) != spec.replace.map(|r| r.0))
        .collect();
    Ok(Copy {
        dir,
        protected,
        source: root.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_of_the_isolation_package_is_written_out() {
        // A module missing from the list fails every isolated run at `import rgd_isolate`.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox/rgd_isolate");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".py"))
            .collect();
        on_disk.sort();
        let mut listed: Vec<String> = RGD_ISOLATE.iter().map(|(n, _)| n.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }

    #[test]
    fn a_missing_package_is_named_from_the_message() {
        assert_eq!(
            missing_module("ModuleNotFoundError: No module named 'numpy'").as_deref(),
            Some("numpy")
        );
        assert_eq!(missing_module("SyntaxError: bad"), None);
    }

    #[test]
    fn the_copy_imports_its_own_packages_first() {
        let root = tempfile::tempdir().unwrap();
        for f in [
            "src/pkg/__init__.py",
            "src/pkg/sub/__init__.py",
            "src/pkg/sub/mod.py",
            "flat/__init__.py",
            "flat/m.py",
        ] {
            let p = root.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let src = root.path().join("src");
        assert_eq!(import_roots(root.path(), Some("src/pkg/sub/mod.py")), std::slice::from_ref(&src));
        // A package at the root imports from the root, which pytest's `python -m` puts first.
        assert_eq!(import_roots(root.path(), Some("flat/m.py")), std::slice::from_ref(&src));
        assert_eq!(import_roots(root.path(), None), [src]);
    }
}
