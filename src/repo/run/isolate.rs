//! Repository verdicts the program cannot reach (`sandbox/rgd_isolate/`): each test run of a
//! candidate has two processes. The tests' process holds pytest, the project's modules, the
//! selected tests and rgd's plugin, with the target's body a stub that forwards each call; the
//! program's process holds the project's modules with the agents' function spliced in and no test
//! file at all, and answers the calls. Only data crosses. Where the tests hand the target
//! something that is not data, the run is judged in one process instead and labelled
//! **in-process (best effort)**: the record, the printed verdict and `rgd report` say so, and
//! `--write` and the memory pool take such a verdict only when the user names the weaker
//! guarantee (`--allow-in-process`).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What either side of `rgd_isolate` is handed first: its end of the socket, the copy it runs in
/// and the project's modules there.
#[derive(Debug, Serialize)]
pub struct Channel<'a> {
    pub fd: i32,
    pub root: &'a Path,
    pub project: &'a [String],
}

/// What the tests' side is handed (`RGD_ISOLATE`, JSON, flat): `TestsConfig` in
/// `sandbox/rgd_isolate/config.py` reads exactly these fields, and a test checks the two agree.
#[derive(Debug, Serialize)]
pub struct TestsConfig<'a> {
    #[serde(flatten)]
    pub channel: Channel<'a>,
    /// Seconds one call may take.
    pub timeout: f64,
    /// The temporary folder both processes share.
    pub tmp: &'a Path,
}

/// What the program's side is handed (the copy holds no test file): `ProgramConfig` there.
#[derive(Debug, Serialize)]
pub struct ProgramConfig<'a> {
    #[serde(flatten)]
    pub channel: Channel<'a>,
    /// The target's module and qualified name.
    pub module: String,
    pub qualname: &'a str,
    /// The tests' copy: a path into it that crosses names the same file of the program's copy
    /// there, and back (the program cannot open the tests' copy).
    pub tests_root: &'a Path,
}

/// How a run's verdict was reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "isolation", rename_all = "snake_case")]
pub enum Isolation {
    /// The program ran in a process of its own; only data reached the tests.
    Isolated,
    /// The program ran inside the tests' process, watched by the plugin's checks (`why` it could
    /// not be isolated, and that cause's key: `FALLBACK_CAUSES` in `sandbox/rgd_isolate/refusals.py`, or
    /// one of rgd's own, `Isolation::RGD_CAUSES`).
    InProcess {
        why: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cause: Option<String>,
    },
    /// No program of the agents' was in the run (collection, the original code).
    #[default]
    NoProgram,
}

impl Isolation {
    /// The label every place that shows an in-process verdict carries: such a verdict never
    /// counts as solved, fixed or passed.
    pub const BEST_EFFORT: &'static str = "in-process, unverified";

    /// rgd's own reasons to run a candidate in the tests' process (the rest are the tests':
    /// `FALLBACK_CAUSES`): no target named, the spectrum collector, a target the forwarding stub
    /// cannot stand in for, and the parity bench asking for it.
    pub const RGD_CAUSES: [&'static str; 4] = ["no_target", "spectra", "no_stub", "asked"];

    /// In the tests' process for `why`, of the cause `cause`.
    pub fn in_process(why: String, cause: &str) -> Isolation {
        Isolation::InProcess {
            why,
            cause: Some(cause.to_string()),
        }
    }

    /// Why the verdict is only best effort, when it is.
    pub fn best_effort(&self) -> Option<&str> {
        match self {
            Isolation::InProcess { why, .. } => Some(why),
            _ => None,
        }
    }

    /// The key of the cause that kept the run in the tests' process, when it was and is known.
    pub fn cause(&self) -> Option<&str> {
        match self {
            Isolation::InProcess { cause, .. } => cause.as_deref(),
            _ => None,
        }
    }
}

/// The two halves of one candidate: the text of the target's file in the tests' copy (the
/// project's own module with the target forwarding) and in the program's (the agents' module as
/// it is: its own code calls the target decorated, and the program's process unwraps the
/// decorators for the tests' calls, which are decorated on their side), and the names "the
/// program" holds for the in-process fallback.
#[derive(Debug, Clone)]
pub struct Halves {
    pub tests_text: String,
    pub program_text: String,
    pub program_names: Vec<String>,
}

impl Halves {
    /// From the project's file (`original`) and the candidate's (`program`), or why the target
    /// cannot be isolated.
    pub fn new(original: &str, program: &str, qualname: &str) -> Result<Halves, String> {
        Ok(Halves {
            tests_text: crate::code::forwarding_stub_for(original, program, qualname)?,
            program_text: program.to_string(),
            program_names: crate::code::program_names(original, program, qualname),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_best_effort_verdict_says_why() {
        let why = Isolation::in_process("a file".into(), "own_file");
        assert_eq!(why.best_effort(), Some("a file"));
        assert_eq!(Isolation::Isolated.best_effort(), None);
        let json = serde_json::to_string(&why).unwrap();
        assert!(json.contains("in_process"), "{json}");
    }
}

#[cfg(test)]
mod config_tests {
    use super::*;

    /// The Python side reads exactly the fields the Rust side writes, for each side, and refuses
    /// the other side's (a field renamed on one side only fails here, not in a run).
    #[test]
    fn each_sides_configuration_is_read_by_the_python_side_field_for_field() {
        let project = vec!["pkg/m.py".to_string()];
        let tests = serde_json::to_string(&TestsConfig {
            channel: Channel {
                fd: 3,
                root: Path::new("/copy"),
                project: &project,
            },
            timeout: 1.5,
            tmp: Path::new("/tmp/x"),
        })
        .unwrap();
        let program = serde_json::to_string(&ProgramConfig {
            channel: Channel {
                fd: 4,
                root: Path::new("/program"),
                project: &project,
            },
            module: "pkg.m".into(),
            qualname: "C.f",
            tests_root: Path::new("/copy"),
        })
        .unwrap();
        let script = "import sys\nsys.path.insert(0, sys.argv[1])\nfrom rgd_isolate.config import read, TestsConfig, ProgramConfig\n\
            t = read(TestsConfig, sys.argv[2]); p = read(ProgramConfig, sys.argv[3])\n\
            print(t.fd, t.timeout, p.module, p.qualname, p.project, p.tests_root)\n\
            for cls, text in ((TestsConfig, sys.argv[3]), (ProgramConfig, sys.argv[2])):\n\
            \ttry:\n\t\tread(cls, text); print('read')\n\texcept ValueError:\n\t\tprint('refused')\n";
        let out = std::process::Command::new("python3")
            .args(["-c", script, concat!(env!("CARGO_MANIFEST_DIR"), "/sandbox"), &tests, &program])
            .output()
            .expect("python3 runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout, "3 1.5 pkg.m C.f ['pkg/m.py'] /copy\nrefused\nrefused\n");
    }
}
