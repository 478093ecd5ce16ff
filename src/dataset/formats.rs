//! JSONL(.gz) loaders. The format is detected from the fields of the first record.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::sidecar::{BROKEN_SUFFIX, BrokenTask, TaskLimit, TimeLimits, read_broken, read_time_limits, sidecar_path};
use super::{DatasetError, Task, TaskKind, TestCase, doctest, split_visible_hidden};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// LDB files (`given_tests` visible, `test` hidden); also rgd's own sample format.
    Ldb,
    /// OpenAI HumanEval (visible tests from the prompt's doctests).
    OpenaiHumaneval,
    /// HumanEval-ET (`test_case_list` split 6:4, `test` hidden).
    HumanevalEt,
    /// MBPP schema (`text`, `code`, `test_list`), e.g. MBPP-ET: `test_list` split 6:4.
    Mbpp,
    /// APPS as sampled by MapCoder (`sample_io` visible, `test_list` hidden).
    Apps,
    /// rgd's own: each record a task as rgd holds it (`"rgd": 1`), tests already split; what
    /// `rgd datasets plus` writes.
    Rgd,
}

impl Format {
    fn detect(record: &Map<String, Value>) -> Option<Format> {
        let has = |k: &str| record.contains_key(k);
        if has("rgd") && has("hidden") {
            Some(Format::Rgd)
        } else if has("sample_io") && has("test_list") {
            Some(Format::Apps)
        } else if has("test_case_list") && has("prompt") {
            Some(Format::HumanevalEt)
        } else if has("given_tests") && has("prompt") {
            Some(Format::Ldb)
        } else if has("text") && has("code") && has("test_list") {
            Some(Format::Mbpp)
        } else if has("prompt") && has("test") && has("entry_point") {
            Some(Format::OpenaiHumaneval)
        } else {
            None
        }
    }

    fn uses_split(self) -> bool {
        matches!(self, Format::HumanevalEt | Format::Mbpp)
    }
}

/// A parsed dataset file with everything a manifest needs to reproduce the task list.
#[derive(Debug, Clone)]
pub struct LoadedDataset {
    pub name: String,
    pub path: PathBuf,
    pub format: Format,
    /// sha256 of the file's bytes as stored (before decompression).
    pub sha256: String,
    /// The split seed, for formats whose visible/hidden split is derived.
    pub split_seed: Option<u64>,
    pub tasks: Vec<Task>,
    /// Things a user should know: tasks without visible tests, duplicate ids renamed.
    pub notes: Vec<String>,
    /// Per-task time limits measured for this file (`<stem>.limits.json`), when there are some.
    pub time_limits: Option<TimeLimits>,
    /// Tasks broken in the data (`<stem>.broken.toml`).
    pub broken: Vec<BrokenTask>,
    /// Its visible tests contradict its specification: `impossible.jsonl` beside it says how
    /// (`rgd datasets impossible`).
    pub impossible: bool,
}

impl LoadedDataset {
    /// Why a task is listed as broken, if it is.
    pub fn broken_reason(&self, id: &str) -> Option<&str> {
        self.broken.iter().find(|b| b.task == id).map(|b| b.reason.as_str())
    }

    /// Where its measured limits come from, as a run records them: the file by name (not this
    /// machine's path: the limits enter the configuration every shard of a sweep must share),
    /// its factor, floor and sandbox.
    pub fn limits_source(&self) -> Option<String> {
        let m = self.time_limits.as_ref()?;
        let file = sidecar_path(&self.path, super::sidecar::LIMITS_SUFFIX);
        Some(format!(
            "{} (factor {}, floor {} s, {} sandbox)",
            file.file_name().unwrap_or_default().to_string_lossy(),
            m.factor,
            m.floor_secs,
            m.sandbox
        ))
    }

    /// The per-task limits of these tasks, when the dataset has measured ones.
    pub fn limits_of<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> std::collections::BTreeMap<String, TaskLimit> {
        let Some(measured) = &self.time_limits else {
            return Default::default();
        };
        ids.into_iter()
            .filter_map(|id| measured.tasks.get(id).map(|m| (id.to_string(), m.limit)))
            .collect()
    }
}

pub fn load_dataset(name: &str, path: &Path, split_seed: u64) -> Result<LoadedDataset, DatasetError> {
    let shown = path.display().to_string();
    let raw = std::fs::read(path).map_err(|source| DatasetError::Io {
        path: shown.clone(),
        source,
    })?;
    let sha256 = hex::encode(Sha256::digest(&raw));
    let text = if path.extension().is_some_and(|e| e == "gz") {
        let mut out = String::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_string(&mut out)
            .map_err(|source| DatasetError::Io {
                path: shown.clone(),
                source,
            })?;
        out
    } else {
        String::from_utf8(raw).map_err(|e| DatasetError::Malformed {
            path: shown.clone(),
            line: 0,
            message: format!("not UTF-8: {e}"),
        })?
    };

    let mut format = None;
    let mut tasks: Vec<Task> = Vec::new();
    let mut notes = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let lineno = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |message: String| DatasetError::Malformed {
            path: shown.clone(),
            line: lineno,
            message,
        };
        let record: Map<String, Value> = serde_json::from_str(line).map_err(|e| malformed(format!("invalid JSON: {e}")))?;
        let fmt = match format {
            Some(f) => f,
            None => {
                let detected = Format::detect(&record).ok_or_else(|| DatasetError::UnknownFormat {
                    path: shown.clone(),
                    fields: record.keys().cloned().collect::<Vec<_>>().join(", "),
                })?;
                format = Some(detected);
                detected
            }
        };
        let mut task = convert(fmt, &Record(&record), split_seed).map_err(malformed)?;
        if tasks.iter().any(|t| t.id == task.id) {
            let mut n = 2;
            while tasks.iter().any(|t| t.id == format!("{}-{n}", task.id)) {
                n += 1;
            }
            notes.push(format!("line {lineno}: duplicate id {} renamed {}-{n}", task.id, task.id));
            task.id = format!("{}-{n}", task.id);
        }
        if task.visible.is_empty() {
            notes.push(format!("{}: no visible tests (the agents get no test feedback)", task.id));
        }
        tasks.push(task);
    }
    let format = format.ok_or_else(|| DatasetError::Empty { path: shown.clone() })?;
    let time_limits = read_time_limits(path, &sha256, &mut notes)?;
    let broken = read_broken(path)?;
    for b in broken.iter().filter(|b| !tasks.iter().any(|t| t.id == b.task)) {
        notes.push(format!(
            "{} lists {} as broken, but the dataset has no such task",
            sidecar_path(path, BROKEN_SUFFIX).display(),
            b.task
        ));
    }
    Ok(LoadedDataset {
        name: name.to_string(),
        path: path.to_path_buf(),
        format,
        sha256,
        split_seed: format.uses_split().then_some(split_seed),
        tasks,
        notes,
        time_limits,
        broken,
        impossible: path.with_file_name(super::CONTRADICTIONS).is_file(),
    })
}

/// The version of rgd's own task records.
pub const RGD_RECORD: u64 = 1;

/// A task as one line of rgd's own format.
pub fn rgd_record(task: &Task) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(task)?;
    if let Value::Object(m) = &mut v {
        m.insert("rgd".into(), Value::from(RGD_RECORD));
    }
    serde_json::to_string(&v)
}

/// Typed access to one JSON record, with errors that name the field.
struct Record<'a>(&'a Map<String, Value>);

impl Record<'_> {
    fn str(&self, key: &str) -> Result<String, String> {
        match self.0.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(other) => Err(format!("field {key:?} should be a string, found {}", kind_of(other))),
            None => Err(format!("missing field {key:?}")),
        }
    }

    fn opt_str(&self, key: &str) -> Option<String> {
        self.str(key).ok().filter(|s| !s.trim().is_empty())
    }

    fn list(&self, key: &str) -> Result<&Vec<Value>, String> {
        match self.0.get(key) {
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(format!("field {key:?} should be a list, found {}", kind_of(other))),
            None => Err(format!("missing field {key:?}")),
        }
    }

    fn str_list(&self, key: &str) -> Result<Vec<String>, String> {
        self.list(key)?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{key}[{i}] should be a string"))
            })
            .collect()
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Where a project task's program and tests are (`rgd solve --repo` writes it).
#[derive(Debug, Deserialize)]
struct ProjectRecord {
    root: String,
    file: String,
    python: String,
    /// The function's qualified name in `file` (older records: the entry point).
    #[serde(default)]
    target: Option<String>,
    visible: Vec<PytestRecord>,
    #[serde(default)]
    hidden: Vec<PytestRecord>,
}

#[derive(Debug, Deserialize)]
struct PytestRecord {
    node: String,
    #[serde(default)]
    src: String,
}

/// A task of a project (an LDB record with a `project` object): the tests are pytest node ids.
fn project_task(r: &Record) -> Result<Task, String> {
    let value = r.0.get("project").cloned().unwrap_or_default();
    let p: ProjectRecord = serde_json::from_value(value).map_err(|e| format!("field \"project\": {e}"))?;
    let tests =
        |list: Vec<PytestRecord>| -> Vec<TestCase> { list.into_iter().map(|t| TestCase::Pytest { node: t.node, src: t.src }).collect() };
    if p.visible.is_empty() && p.hidden.is_empty() {
        return Err("field \"project\" has no tests".into());
    }
    let entry_point = r.str("entry_point")?;
    Ok(Task {
        id: r.str("task_id")?,
        prompt: r.str("prompt")?,
        kind: TaskKind::Project {
            root: p.root,
            file: p.file,
            python: p.python,
            target: p.target.unwrap_or_else(|| entry_point.clone()),
            hidden: p.hidden.iter().map(|t| t.node.clone()).collect(),
        },
        entry_point,
        visible: tests(p.visible),
        hidden: tests(p.hidden),
        canonical: None,
        module: r.opt_str("module"),
    })
}

fn asserts(srcs: Vec<String>) -> Vec<TestCase> {
    srcs.into_iter().map(|src| TestCase::Assert { src }).collect()
}

/// A canonical solution is either a whole program or a body to append to the prompt.
fn full_program(prompt: &str, solution: String, entry: &str) -> String {
    if solution.contains(&format!("def {entry}")) {
        solution
    } else {
        format!("{prompt}{solution}")
    }
}

fn convert(fmt: Format, r: &Record, seed: u64) -> Result<Task, String> {
    match fmt {
        Format::Rgd => match r.0.get("rgd") {
            Some(Value::Number(n)) if n.as_u64() == Some(RGD_RECORD) => {
                serde_json::from_value(Value::Object(r.0.clone())).map_err(|e| format!("not an rgd task: {e}"))
            }
            other => Err(format!("rgd record version {other:?}: this rgd reads version {RGD_RECORD}")),
        },
        Format::Ldb if r.0.contains_key("project") => project_task(r),
        Format::Ldb => {
            let prompt = r.str("prompt")?;
            let entry_point = r.str("entry_point")?;
            let canonical = r.opt_str("canonical_solution").map(|s| full_program(&prompt, s, &entry_point));
            Ok(Task {
                id: r.str("task_id")?,
                visible: asserts(r.str_list("given_tests")?),
                hidden: vec![TestCase::Check { src: r.str("test")? }],
                prompt,
                entry_point,
                kind: TaskKind::Function,
                canonical,
                module: r.opt_str("module"),
            })
        }
        Format::OpenaiHumaneval => {
            let prompt = r.str("prompt")?;
            let entry_point = r.str("entry_point")?;
            let canonical = r.opt_str("canonical_solution").map(|s| full_program(&prompt, s, &entry_point));
            Ok(Task {
                id: r.str("task_id")?,
                visible: asserts(doctest::examples_as_asserts(&prompt)),
                hidden: vec![TestCase::Check { src: r.str("test")? }],
                prompt,
                entry_point,
                kind: TaskKind::Function,
                canonical,
                module: None,
            })
        }
        Format::HumanevalEt => {
            let id = r.str("task_id")?;
            let prompt = r.str("prompt")?;
            let entry_point = r.str("entry_point")?;
            let (visible, mut hidden) = split_visible_hidden(&r.str_list("test_case_list")?, &id, seed);
            let mut hidden_tests = asserts(std::mem::take(&mut hidden));
            hidden_tests.push(TestCase::Check { src: r.str("test")? });
            let canonical = r.opt_str("canonical_solution").map(|s| full_program(&prompt, s, &entry_point));
            Ok(Task {
                id,
                visible: asserts(visible),
                hidden: hidden_tests,
                prompt,
                entry_point,
                kind: TaskKind::Function,
                canonical,
                module: None,
            })
        }
        Format::Mbpp => {
            let raw_id = r.str("task_id")?;
            let id = if raw_id.contains('/') { raw_id } else { format!("MBPP/{raw_id}") };
            let code = r.str("code")?.replace("\r\n", "\n");
            let entry_point = match r.opt_str("entry_point") {
                Some(e) => e,
                None => first_def(&code).ok_or("no entry_point field and no `def` in code")?,
            };
            let setup = r.opt_str("test_setup_code").map(|s| format!("{s}\n")).unwrap_or_default();
            let tests: Vec<String> = r.str_list("test_list")?.into_iter().map(|t| format!("{setup}{t}")).collect();
            let (visible, mut hidden) = split_visible_hidden(&tests, &id, seed);
            if let Ok(challenge) = r.str_list("challenge_test_list") {
                hidden.extend(challenge.into_iter().map(|t| format!("{setup}{t}")));
            }
            Ok(Task {
                id,
                prompt: r.str("text")?,
                entry_point,
                kind: TaskKind::Function,
                visible: asserts(visible),
                hidden: asserts(hidden),
                canonical: Some(code),
                module: None,
            })
        }
        Format::Apps => {
            let id = format!("APPS/{}", r.str("id")?);
            let starter = r.opt_str("starter_code");
            let (kind, entry_point) = match starter.as_deref().and_then(first_def) {
                Some(entry) => (TaskKind::CallBased, entry),
                None => (TaskKind::Stdio, String::new()),
            };
            let mut prompt = r.str("description")?;
            if let Some(code) = &starter {
                prompt.push_str(&format!("\n\nStarter code:\n```python\n{}\n```\n", code.trim_end()));
            }
            let io = |key: &str| -> Result<Vec<TestCase>, String> {
                r.list(key)?
                    .iter()
                    .enumerate()
                    .map(|(i, v)| io_test(v, &kind).map_err(|e| format!("{key}[{i}]: {e}")))
                    .collect()
            };
            Ok(Task {
                id,
                prompt,
                entry_point,
                visible: io("sample_io")?,
                hidden: io("test_list")?,
                kind,
                canonical: None,
                module: None,
            })
        }
    }
}

fn io_test(v: &Value, kind: &TaskKind) -> Result<TestCase, String> {
    let input = v
        .get("input")
        .and_then(Value::as_str)
        .ok_or("missing string \"input\"")?
        .to_string();
    let raw = v.get("output").ok_or("missing \"output\"")?;
    // MapCoder wraps the expected output in a one-element list.
    let first = match raw {
        Value::Array(items) => items.first().ok_or("empty \"output\" list")?,
        other => other,
    };
    let output = match (kind, first) {
        (TaskKind::Stdio, Value::String(s)) => s.clone(),
        (TaskKind::Stdio, other) => other.to_string(),
        // Call-based: keep the exact JSON value so the runner compares typed results.
        (_, other) => other.to_string(),
    };
    Ok(TestCase::Io { input, output })
}

fn first_def(code: &str) -> Option<String> {
    code.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix("def ")?;
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        (!name.is_empty()).then_some(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(content: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::Builder::new().suffix(".jsonl").tempfile().unwrap();
        std::io::Write::write_all(&mut f, content.as_bytes()).unwrap();
        f
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let f = write(concat!(
            r#"{"task_id":"A/1","prompt":"def f():\n","entry_point":"f","test":"def check(c): pass","given_tests":["assert f() == 1"]}"#,
            "\n\n{not json}\n"
        ));
        let err = load_dataset("x", f.path(), 1).unwrap_err().to_string();
        assert!(err.contains(&format!("{}:3:", f.path().display())), "{err}");
        assert!(err.contains("invalid JSON"), "{err}");
    }

    #[test]
    fn missing_field_is_named() {
        let f = write(r#"{"task_id":"A/1","prompt":"p","entry_point":"f","given_tests":["assert f()"]}"#);
        let err = load_dataset("x", f.path(), 1).unwrap_err().to_string();
        assert!(err.contains(":1: missing field \"test\""), "{err}");
        let f = write(r#"{"question":"q"}"#);
        assert!(matches!(load_dataset("x", f.path(), 1), Err(DatasetError::UnknownFormat { .. })));
        let f = write(r#"{"task_id":"A/1","prompt":"p","entry_point":"f","test":"t","given_tests":[3]}"#);
        let err = load_dataset("x", f.path(), 1).unwrap_err().to_string();
        assert!(err.contains(":1: given_tests[0] should be a string"), "{err}");
    }

    #[test]
    fn apps_call_based_and_stdio_and_duplicates() {
        let f = write(concat!(
            r#"{"name":"1","description":"d","difficulty":"x","id":7,"sample_io":[{"input":"[1, 2]","output":[3]}],"test_list":[{"input":"[5]","output":["Zonk"]}],"starter_code":"\ndef score(d):\n\t"}"#,
            "\n",
            r#"{"name":"2","description":"e","difficulty":"x","id":7,"sample_io":[],"test_list":[{"input":"1 2\n","output":["3\n"]}],"starter_code":""}"#,
        ));
        let ds = load_dataset("apps", f.path(), 1).unwrap();
        assert_eq!(ds.format, Format::Apps);
        let (a, b) = (&ds.tasks[0], &ds.tasks[1]);
        assert_eq!((a.kind.clone(), a.entry_point.as_str()), (TaskKind::CallBased, "score"));
        assert_eq!(
            a.hidden[0],
            TestCase::Io {
                input: "[5]".into(),
                output: "\"Zonk\"".into()
            }
        );
        assert_eq!((b.id.as_str(), b.kind.clone()), ("APPS/7-2", TaskKind::Stdio));
        assert_eq!(
            b.hidden[0],
            TestCase::Io {
                input: "1 2\n".into(),
                output: "3\n".into()
            }
        );
        assert!(ds.notes.iter().any(|n| n.contains("APPS/7-2: no visible tests")), "{:?}", ds.notes);
        assert!(ds.notes.iter().any(|n| n.contains("duplicate id")), "{:?}", ds.notes);
    }
}
