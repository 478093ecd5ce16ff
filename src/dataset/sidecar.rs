//! What ships beside a dataset file and is not part of it: the per-task time limits measured from
//! the reference solutions (`<stem>.limits.json`, written by `rgd datasets limits`) and the tasks
//! that are broken in the data (`<stem>.broken.toml`, written by hand, each with its reason).
//! The dataset file itself stays byte for byte as its source published it (runs record its sha256).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::DatasetError;

/// How long one task's tests may run: each test (and the program's module code), and the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaskLimit {
    /// Seconds per test.
    pub per_test: f64,
    /// Seconds for the whole run, however many tests.
    pub total: f64,
}

/// One task's measurement: the reference's slowest test and whole run (the slowest of the
/// repeats), and the limit made from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredTask {
    pub slowest_test_secs: f64,
    pub run_secs: f64,
    #[serde(flatten)]
    pub limit: TaskLimit,
}

/// `<stem>.limits.json`: per-task limits, valid for the dataset file with `dataset_sha256` only.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimeLimits {
    /// Which sidecar format this is.
    pub rgd_limits: u32,
    pub dataset_sha256: String,
    /// The command that measured them, so anyone can measure again.
    pub command: String,
    pub sandbox: String,
    /// limit = max(floor, factor x the reference's time) for each test; the same for the run
    /// against the default run limit.
    pub factor: f64,
    pub floor_secs: f64,
    pub repeat: u32,
    pub tasks: BTreeMap<String, MeasuredTask>,
    /// Tasks whose reference did not finish within the measuring cap (or failed): no limit of
    /// their own, so the default applies; each with what happened.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unmeasured: BTreeMap<String, String>,
}

pub const LIMITS_VERSION: u32 = 1;

/// A task no program can pass as the data stands (a wrong reference, a test that names an
/// undefined variable, an expected value written as a bare word), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokenTask {
    pub task: String,
    pub reason: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct BrokenFile {
    #[serde(default)]
    broken: Vec<BrokenTask>,
}

/// The sidecar of a dataset file: `dir/probs.jsonl` -> `dir/probs.<suffix>`.
pub fn sidecar_path(dataset: &Path, suffix: &str) -> PathBuf {
    let name = dataset.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.trim_end_matches(".gz").trim_end_matches(".jsonl").trim_end_matches(".json");
    dataset.with_file_name(format!("{stem}.{suffix}"))
}

pub const LIMITS_SUFFIX: &str = "limits.json";
pub const BROKEN_SUFFIX: &str = "broken.toml";
/// Beside an impossible variant of a dataset (`rgd datasets impossible`): what was changed in
/// each task. Its presence makes the dataset one whose visible tests contradict the specification.
pub const CONTRADICTIONS: &str = "impossible.jsonl";

/// The limits measured for this very file; a file measured for other bytes is set aside with a
/// note (its numbers belong to other tasks).
pub fn read_time_limits(dataset: &Path, sha256: &str, notes: &mut Vec<String>) -> Result<Option<TimeLimits>, DatasetError> {
    let path = sidecar_path(dataset, LIMITS_SUFFIX);
    let Some(text) = read_optional(&path)? else {
        return Ok(None);
    };
    let limits: TimeLimits = serde_json::from_str(&text).map_err(|e| DatasetError::Malformed {
        path: path.display().to_string(),
        line: e.line(),
        message: e.to_string(),
    })?;
    if limits.rgd_limits != LIMITS_VERSION {
        return Err(DatasetError::Malformed {
            path: path.display().to_string(),
            line: 0,
            message: format!(
                "rgd_limits {} is not a version this rgd reads ({LIMITS_VERSION})",
                limits.rgd_limits
            ),
        });
    }
    // A limit a deadline cannot be made from is the file's error, not a silent fallback later.
    if let Some((id, m)) = limits
        .tasks
        .iter()
        .find(|(_, m)| ![m.limit.per_test, m.limit.total].iter().all(|s| s.is_finite() && *s > 0.0))
    {
        return Err(DatasetError::Malformed {
            path: path.display().to_string(),
            line: 0,
            message: format!(
                "task {id}: limits must be positive seconds (per_test {}, total {})",
                m.limit.per_test, m.limit.total
            ),
        });
    }
    if limits.dataset_sha256 != sha256 {
        notes.push(format!(
            "{} was measured for other bytes of the dataset (sha256 {}); its time limits are not used: measure again with `rgd datasets limits`",
            path.display(),
            short(&limits.dataset_sha256)
        ));
        return Ok(None);
    }
    Ok(Some(limits))
}

/// The tasks listed as broken beside the dataset (none when there is no list).
pub fn read_broken(dataset: &Path) -> Result<Vec<BrokenTask>, DatasetError> {
    let path = sidecar_path(dataset, BROKEN_SUFFIX);
    let Some(text) = read_optional(&path)? else {
        return Ok(Vec::new());
    };
    let file: BrokenFile = toml::from_str(&text).map_err(|e| DatasetError::Malformed {
        path: path.display().to_string(),
        line: e.span().map(|s| text[..s.start].lines().count().max(1)).unwrap_or(0),
        message: e.message().to_string(),
    })?;
    Ok(file.broken)
}

/// The broken-task list as its file holds it, for `rgd datasets plus` to carry a base's list over.
pub fn write_broken(path: &Path, header: &str, broken: &[BrokenTask]) -> std::io::Result<()> {
    let body = toml::to_string(&BrokenFile { broken: broken.to_vec() }).map_err(std::io::Error::other)?;
    let header: String = header.lines().map(|l| format!("# {l}\n")).collect();
    std::fs::write(path, format!("{header}\n{body}"))
}

fn read_optional(path: &Path) -> Result<Option<String>, DatasetError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(DatasetError::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecars_sit_beside_the_file_under_its_stem() {
        let p = Path::new("/d/humaneval_openai/HumanEval.jsonl.gz");
        assert_eq!(
            sidecar_path(p, LIMITS_SUFFIX),
            Path::new("/d/humaneval_openai/HumanEval.limits.json")
        );
        assert_eq!(
            sidecar_path(Path::new("probs.jsonl"), BROKEN_SUFFIX),
            Path::new("probs.broken.toml")
        );
    }

    #[test]
    fn a_malformed_list_names_its_file_and_line_and_stale_limits_are_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("t.jsonl");
        std::fs::write(
            dir.path().join("t.broken.toml"),
            "[[broken]]\ntask = \"A/1\"\nreason = \"x\"\n\n[[broken]]\ntask = 3\n",
        )
        .unwrap();
        let err = read_broken(&data).unwrap_err().to_string();
        assert!(err.contains("t.broken.toml:6"), "{err}");

        let limits = TimeLimits {
            rgd_limits: LIMITS_VERSION,
            dataset_sha256: "aaaa".into(),
            command: "rgd datasets limits t".into(),
            sandbox: "wasm".into(),
            factor: 4.0,
            floor_secs: 4.0,
            repeat: 1,
            tasks: BTreeMap::new(),
            unmeasured: BTreeMap::new(),
        };
        std::fs::write(sidecar_path(&data, LIMITS_SUFFIX), serde_json::to_string(&limits).unwrap()).unwrap();
        let mut notes = Vec::new();
        assert!(read_time_limits(&data, "aaaa", &mut notes).unwrap().is_some());
        let mut bad = limits.clone();
        bad.tasks.insert(
            "A/1".into(),
            MeasuredTask {
                slowest_test_secs: 0.1,
                run_secs: 0.1,
                limit: TaskLimit {
                    per_test: -1.0,
                    total: 4.0,
                },
            },
        );
        std::fs::write(sidecar_path(&data, LIMITS_SUFFIX), serde_json::to_string(&bad).unwrap()).unwrap();
        let err = read_time_limits(&data, "aaaa", &mut notes).unwrap_err().to_string();
        assert!(err.contains("t.limits.json") && err.contains("task A/1"), "{err}");
        std::fs::write(sidecar_path(&data, LIMITS_SUFFIX), serde_json::to_string(&limits).unwrap()).unwrap();
        assert!(read_time_limits(&data, "bbbb", &mut notes).unwrap().is_none());
        assert!(notes[0].contains("other bytes"), "{notes:?}");
    }
}
