//! The benchmark files that ship inside the rgd binary, so an rgd started anywhere (an empty
//! directory, an installed binary) can sweep every catalog dataset without a checkout. On first
//! use they are written into rgd's cache (`$RGD_CACHE/datasets`, else `~/.cache/rgd/datasets`),
//! because runs record a dataset by path and sha256; a file already there with the same bytes is
//! left alone.

use std::path::{Path, PathBuf};

/// One file of the repository's `datasets/`, by its path there.
macro_rules! bundle {
    ($path:literal) => {
        ($path, include_bytes!(concat!("../../datasets/", $path)))
    };
}

/// (path under a data directory, contents). The same files as the repository's `datasets/`,
/// each folder with a README.txt naming source, commit, licence and record count, and beside a
/// dataset its measured time limits (`<stem>.limits.json`), tasks broken in the data
/// (`<stem>.broken.toml`) and, for an impossible variant, what was changed (`impossible.jsonl`).
const FILES: &[(&str, &[u8])] = &[
    bundle!("sample/tasks.jsonl"),
    bundle!("sample/README.txt"),
    bundle!("sample/tasks.limits.json"),
    bundle!("humaneval_ldb/tests.jsonl"),
    bundle!("humaneval_ldb/README.txt"),
    bundle!("humaneval_ldb/tests.limits.json"),
    bundle!("humaneval_openai/HumanEval.jsonl.gz"),
    bundle!("humaneval_openai/README.txt"),
    bundle!("humaneval_openai/HumanEval.limits.json"),
    bundle!("humaneval_openai/HumanEval.broken.toml"),
    bundle!("humaneval_et/HumanEval_ET.jsonl"),
    bundle!("humaneval_et/README.txt"),
    bundle!("humaneval_et/HumanEval_ET.limits.json"),
    bundle!("humaneval_et/HumanEval_ET.broken.toml"),
    bundle!("mbpp_ldb/probs.jsonl"),
    bundle!("mbpp_ldb/README.txt"),
    bundle!("mbpp_ldb/probs.limits.json"),
    bundle!("mbpp_ldb/probs.broken.toml"),
    bundle!("mbpp_et_subset397/MBPP_ET_397.jsonl"),
    bundle!("mbpp_et_subset397/README.txt"),
    bundle!("mbpp_et_subset397/MBPP_ET_397.limits.json"),
    bundle!("mbpp_et_subset397/MBPP_ET_397.broken.toml"),
    bundle!("humaneval_plus/tasks.jsonl"),
    bundle!("humaneval_plus/README.txt"),
    bundle!("humaneval_plus/tasks.limits.json"),
    bundle!("mbpp_plus/tasks.jsonl"),
    bundle!("mbpp_plus/README.txt"),
    bundle!("mbpp_plus/tasks.limits.json"),
    bundle!("mbpp_plus/tasks.broken.toml"),
    bundle!("humaneval_impossible_one_off/tasks.jsonl"),
    bundle!("humaneval_impossible_one_off/README.txt"),
    bundle!("humaneval_impossible_one_off/impossible.jsonl"),
    bundle!("humaneval_impossible_conflicting/tasks.jsonl"),
    bundle!("humaneval_impossible_conflicting/README.txt"),
    bundle!("humaneval_impossible_conflicting/impossible.jsonl"),
    bundle!("mbpp_impossible_one_off/tasks.jsonl"),
    bundle!("mbpp_impossible_one_off/README.txt"),
    bundle!("mbpp_impossible_one_off/impossible.jsonl"),
    bundle!("mbpp_impossible_one_off/tasks.broken.toml"),
    bundle!("mbpp_impossible_conflicting/tasks.jsonl"),
    bundle!("mbpp_impossible_conflicting/README.txt"),
    bundle!("mbpp_impossible_conflicting/impossible.jsonl"),
    bundle!("mbpp_impossible_conflicting/tasks.broken.toml"),
    bundle!("apps_mapcoder150/selected150.jsonl"),
    bundle!("apps_mapcoder150/README.txt"),
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

    /// A limits file or broken-task list beside a shipped dataset ships with it, and says
    /// something about tasks the dataset has (for the limits: measured for these very bytes).
    #[test]
    fn every_sidecar_of_the_checkout_is_bundled_and_fits_its_dataset() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
        let mut seen = 0;
        for entry in super::super::CATALOG {
            let Some(dataset) = entry.files.iter().map(|f| root.join(f)).find(|p| p.is_file()) else {
                continue;
            };
            let loaded = crate::dataset::load_dataset(entry.name, &dataset, crate::dataset::DEFAULT_SPLIT_SEED).unwrap();
            let contradictions = dataset.with_file_name(super::super::CONTRADICTIONS);
            let sidecars = [super::super::LIMITS_SUFFIX, super::super::BROKEN_SUFFIX]
                .map(|suffix| super::super::sidecar_path(&dataset, suffix))
                .into_iter()
                .chain([contradictions]);
            for sidecar in sidecars {
                if !sidecar.is_file() {
                    continue;
                }
                seen += 1;
                let name = sidecar.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
                assert!(FILES.iter().any(|(f, _)| *f == name), "{name} is not bundled");
            }
            assert!(
                loaded
                    .notes
                    .iter()
                    .all(|n| !n.contains("no such task") && !n.contains("other bytes")),
                "{}: {:?}",
                entry.name,
                loaded.notes
            );
            if super::super::sidecar_path(&dataset, super::super::LIMITS_SUFFIX).is_file() {
                assert!(loaded.time_limits.is_some(), "{}'s limits were not read", entry.name);
            }
        }
        assert!(seen >= 5, "only {seen} sidecar files found");
    }
}
