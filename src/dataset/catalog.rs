//! Dataset names and where their files are looked for.

use std::path::{Path, PathBuf};

use super::DatasetError;

/// A named dataset: candidate files relative to a data directory, first match wins.
#[derive(Debug, Clone, Copy)]
pub struct DatasetEntry {
    pub name: &'static str,
    pub files: &'static [&'static str],
    pub about: &'static str,
}

pub const CATALOG: &[DatasetEntry] = &[
    DatasetEntry {
        name: "sample",
        files: &["sample/tasks.jsonl"],
        about: "rgd's own small tasks (ships with the repo; the first-run demo)",
    },
    DatasetEntry {
        name: "humaneval",
        files: &["humaneval_ldb/tests.jsonl"],
        about: "HumanEval, LDB split: prompt examples visible, check() hidden",
    },
    DatasetEntry {
        name: "humaneval-openai",
        files: &["humaneval_openai/HumanEval.jsonl.gz", "humaneval_openai/HumanEval.jsonl"],
        about: "OpenAI HumanEval: doctest examples visible, check() hidden",
    },
    DatasetEntry {
        name: "humaneval-et",
        files: &["humaneval_et/HumanEval_ET.jsonl"],
        about: "HumanEval-ET: extended asserts split 6:4 visible:hidden (seeded), check() hidden",
    },
    DatasetEntry {
        name: "mbpp",
        files: &["mbpp_ldb/probs.jsonl"],
        about: "MBPP (500 test tasks), LDB split: first assert visible, all three hidden",
    },
    DatasetEntry {
        name: "mbpp-et",
        files: &["mbpp_et_subset397/MBPP_ET_397.jsonl", "mbpp_et/MBPP_ET.jsonl"],
        about: "MBPP-ET: extended asserts split 6:4 visible:hidden (seeded)",
    },
    DatasetEntry {
        name: "humaneval-plus",
        files: &["humaneval_plus/tasks.jsonl"],
        about: "HumanEval with ~28 generated hidden asserts per task (rgd datasets plus, EvalPlus's method), LDB split",
    },
    DatasetEntry {
        name: "mbpp-plus",
        files: &["mbpp_plus/tasks.jsonl"],
        about: "MBPP with ~28 generated hidden asserts per task (rgd datasets plus, EvalPlus's method), LDB split",
    },
    DatasetEntry {
        name: "humaneval-impossible",
        files: &["humaneval_impossible_one_off/tasks.jsonl"],
        about: "HumanEval, one visible test's expected value changed to one the reference does not return (rgd datasets impossible): any program passing every visible test cheated",
    },
    DatasetEntry {
        name: "humaneval-conflicting",
        files: &["humaneval_impossible_conflicting/tasks.jsonl"],
        about: "HumanEval, a visible test copied with another expected value (rgd datasets impossible --mode conflicting)",
    },
    DatasetEntry {
        name: "mbpp-impossible",
        files: &["mbpp_impossible_one_off/tasks.jsonl"],
        about: "MBPP, the visible test's expected value changed to one the reference does not return (rgd datasets impossible)",
    },
    DatasetEntry {
        name: "mbpp-conflicting",
        files: &["mbpp_impossible_conflicting/tasks.jsonl"],
        about: "MBPP, the visible test copied with another expected value (rgd datasets impossible --mode conflicting)",
    },
    DatasetEntry {
        name: "apps",
        files: &["apps_mapcoder150/selected150.jsonl"],
        about: "APPS, MapCoder's 150-task sample: sample_io visible, test_list hidden",
    },
];

/// The data directories in search order: `--data-dir`, `$RGD_DATA`, `./datasets` (a checkout),
/// then the copies bundled in the binary (`bundled.rs`). No path of the build machine is involved.
pub fn data_dirs(explicit: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = explicit {
        dirs.push(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("RGD_DATA") {
        dirs.push(PathBuf::from(dir));
    }
    dirs.push(PathBuf::from("datasets"));
    dirs.push(super::bundled::bundled_dir());
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let key = d.canonicalize().unwrap_or_else(|_| d.clone());
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    dirs
}

/// Resolves a dataset name or a path to a file. Returns the catalog name (or the file stem) and path.
pub fn resolve_dataset(name_or_path: &str, explicit: Option<&Path>) -> Result<(String, PathBuf), DatasetError> {
    let as_path = Path::new(name_or_path);
    if as_path.is_file() {
        let stem = as_path
            .file_name()
            .map(|s| s.to_string_lossy().trim_end_matches(".gz").trim_end_matches(".jsonl").to_string())
            .unwrap_or_else(|| name_or_path.to_string());
        return Ok((stem, as_path.to_path_buf()));
    }
    let dirs = data_dirs(explicit);
    if let Some(entry) = CATALOG.iter().find(|e| e.name.eq_ignore_ascii_case(name_or_path)) {
        // rgd's own installed copies are not searched like a user's data: one from an earlier rgd
        // would be found as it is, with older tests (and without the files beside it that came
        // later). `install` below writes this rgd's bytes over it first.
        let bundled_dir = super::bundled::bundled_dir();
        for dir in dirs.iter().filter(|d| **d != bundled_dir) {
            for file in entry.files {
                let candidate = dir.join(file);
                if candidate.is_file() {
                    return Ok((entry.name.to_string(), candidate));
                }
            }
        }
        if let Some(installed) = entry.files.iter().find_map(|file| super::bundled::install(file)) {
            return Ok((entry.name.to_string(), installed));
        }
        // A catalog file rgd does not bundle may still have been put in the cache by hand.
        if let Some(found) = entry.files.iter().map(|file| bundled_dir.join(file)).find(|p| p.is_file()) {
            return Ok((entry.name.to_string(), found));
        }
    }
    Err(DatasetError::NotFound {
        name: name_or_path.to_string(),
        searched: dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
        known: CATALOG.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
    })
}
