//! The benchmark files that ship inside the rgd binary, so an rgd started anywhere (an empty
//! directory, an installed binary) can sweep every catalog dataset without a checkout. On first
//! use they are written into rgd's cache (`$RGD_CACHE/datasets`, else `~/.cache/rgd/datasets`),
//! because runs record a dataset by path and sha256; a file already there with the same bytes is
//! left alone.

use std::path::{Path, PathBuf};

/// (path under a data directory, contents). The same files as the repository's `datasets/`,
/// each folder with a README.txt naming source, commit, licence and record count.
const FILES: &[(&str, &[u8])] = &[
    ("sample/tasks.jsonl", include_bytes!("../../datasets/sample/tasks.jsonl")),
    ("sample/README.txt", include_bytes!("../../datasets/sample/README.txt")),
    (
        "humaneval_ldb/tests.jsonl",
        include_bytes!("../../datasets/humaneval_ldb/tests.jsonl"),
    ),
    (
        "humaneval_ldb/README.txt",
        include_bytes!("../../datasets/humaneval_ldb/README.txt"),
    ),
    (
        "humaneval_openai/HumanEval.jsonl.gz",
        include_bytes!("../../datasets/humaneval_openai/HumanEval.jsonl.gz"),
    ),
    (
        "humaneval_openai/README.txt",
        include_bytes!("../../datasets/humaneval_openai/README.txt"),
    ),
    (
        "humaneval_et/HumanEval_ET.jsonl",
        include_bytes!("../../datasets/humaneval_et/HumanEval_ET.jsonl"),
    ),
    ("humaneval_et/README.txt", include_bytes!("../../datasets/humaneval_et/README.txt")),
    ("mbpp_ldb/probs.jsonl", include_bytes!("../../datasets/mbpp_ldb/probs.jsonl")),
    ("mbpp_ldb/README.txt", include_bytes!("../../datasets/mbpp_ldb/README.txt")),
    (
        "mbpp_et_subset397/MBPP_ET_397.jsonl",
        include_bytes!("../../datasets/mbpp_et_subset397/MBPP_ET_397.jsonl"),
    ),
    (
        "mbpp_et_subset397/README.txt",
        include_bytes!("../../datasets/mbpp_et_subset397/README.txt"),
    ),
    (
        "humaneval_plus/tasks.jsonl",
        include_bytes!("../../datasets/humaneval_plus/tasks.jsonl"),
    ),
    (
        "humaneval_plus/README.txt",
        include_bytes!("../../datasets/humaneval_plus/README.txt"),
    ),
    ("mbpp_plus/tasks.jsonl", include_bytes!("../../datasets/mbpp_plus/tasks.jsonl")),
    ("mbpp_plus/README.txt", include_bytes!("../../datasets/mbpp_plus/README.txt")),
    (
        "apps_mapcoder150/selected150.jsonl",
        include_bytes!("../../datasets/apps_mapcoder150/selected150.jsonl"),
    ),
    (
        "apps_mapcoder150/README.txt",
        include_bytes!("../../datasets/apps_mapcoder150/README.txt"),
    ),
];

/// Where the bundled copies are installed.
pub fn bundled_dir() -> PathBuf {
    crate::assets::cache_root().join("datasets")
}

/// The installed copy of a bundled file, writing it (and its folder's README) first if needed.
/// `None` when rgd does not bundle `file` or the cache cannot be written.
pub fn install(file: &str) -> Option<PathBuf> {
    let dir = bundled_dir();
    let folder = file.split('/').next().unwrap_or_default();
    let mut found = None;
    for (name, bytes) in FILES.iter().filter(|(name, _)| name.split('/').next() == Some(folder)) {
        let target = dir.join(name);
        if let Err(e) = write_if_changed(&target, bytes) {
            tracing::warn!("cannot install the bundled dataset file {}: {e}", target.display());
            return None;
        }
        if *name == file {
            found = Some(target);
        }
    }
    found
}

fn write_if_changed(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if std::fs::metadata(target).is_ok_and(|m| m.len() == bytes.len() as u64) && std::fs::read(target)? == bytes {
        return Ok(());
    }
    let parent = target.parent().ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(parent)?;
    // Whole files only: a concurrent reader never sees half of one.
    let tmp = tempfile::NamedTempFile::new_in(parent)?;
    std::fs::write(tmp.path(), bytes)?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

/// The licence line of a bundled folder's README, for `datasets list`.
pub fn provenance(file: &str) -> Option<String> {
    let folder = file.split('/').next()?;
    let readme = FILES.iter().find(|(name, _)| *name == format!("{folder}/README.txt"))?.1;
    let text = String::from_utf8_lossy(readme);
    let field = |key: &str| text.lines().find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()));
    let Some(source) = field("source repo:") else {
        return field("written by").map(|rest| format!("written by {rest}"));
    };
    let commit = field("commit:").map(|c| c.chars().take(7).collect::<String>());
    let licence = field("license (from repo):");
    Some(format!(
        "{source}{}{}",
        commit.map(|c| format!("@{c}")).unwrap_or_default(),
        licence
            .map(|l| format!(", licence: {}", l.split(" (").next().unwrap_or(&l)))
            .unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_file_is_bundled_with_a_readme() {
        for entry in super::super::CATALOG {
            assert!(
                entry.files.iter().any(|f| FILES.iter().any(|(name, _)| name == f)),
                "{} is not bundled",
                entry.name
            );
            let first = entry.files[0];
            assert!(provenance(first).is_some(), "{} has no README", entry.name);
        }
        assert!(provenance("humaneval_ldb/tests.jsonl").unwrap().contains("LLMDebugger@49ac191"));
    }
}
