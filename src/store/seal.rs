//! The seal of a run's database: sha256 of each of its files, written when the process that
//! wrote them closes them (`seal.json`, checksummed). Reading a run leaves its files' bytes as
//! they were, so a seal that no longer matches means they changed underneath rgd: a byte flipped
//! where sled would not look (free space of a segment), a file cut short or gone. A run being
//! written again (a resume) has no seal until it ends.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::StoreError;
use super::status::write_checked_json;

pub const SEAL: &str = "seal.json";

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Seal {
    /// Path under the run's folder ("db/db", "db/snap.…") -> sha256.
    files: BTreeMap<String, String>,
}

/// Every file under `db/` of the run in `dir`, by its path under `dir`.
fn files(dir: &Path) -> std::io::Result<BTreeMap<String, std::path::PathBuf>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.join("db")];
    while let Some(folder) = todo.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                todo.push(entry.path());
            } else if let Ok(rel) = entry.path().strip_prefix(dir) {
                out.insert(rel.display().to_string(), entry.path());
            }
        }
    }
    Ok(out)
}

fn sha256_of(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 256 << 10];
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            return Ok(hex::encode(hasher.finalize()));
        }
        hasher.update(&chunk[..n]);
    }
}

/// Seals the database of the run in `dir` as its files are now.
pub fn write(dir: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: dir.join("db").display().to_string(),
        source,
    };
    let mut seal = Seal { files: BTreeMap::new() };
    for (name, path) in files(dir).map_err(io)? {
        seal.files.insert(name, sha256_of(&path).map_err(io)?);
    }
    write_checked_json(&dir.join(SEAL), &seal)
}

/// Breaks the seal: the files are about to change.
pub fn remove(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(dir.join(SEAL)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What no longer matches the seal, one sentence per file; `None` when the run has no seal (one
/// written before seals were kept, or not yet ended).
pub fn check(dir: &Path) -> Option<Vec<String>> {
    let path = dir.join(SEAL);
    if !path.exists() {
        return None;
    }
    let seal: Seal = match crate::checked::read_json(&path) {
        Ok(s) => s,
        Err(what) => return Some(vec![what]),
    };
    let mut damage = Vec::new();
    for (name, want) in &seal.files {
        let file = dir.join(name);
        match sha256_of(&file) {
            Ok(got) if &got == want => {}
            Ok(_) => damage.push(format!(
                "{} changed after the run ended (it no longer matches the run's seal)",
                file.display()
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => damage.push(format!("{} is missing", file.display())),
            Err(e) => damage.push(format!("{} cannot be read ({e})", file.display())),
        }
    }
    Some(damage)
}
