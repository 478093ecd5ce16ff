//! `rgd index DIR --verify`: a project's index read from a copy of its database (never changed),
//! every record checked (each file's parsed module, each cached vector's length, each written
//! description), and compared with the project. A damaged index is rebuilt from the project by
//! `rgd index DIR`; files changed since the last pass are stale, not damaged.

use std::path::{Path, PathBuf};

use crate::repo::index::{BUILT, Built, FileRecord, index_dir, python_project};

/// One check of an index.
#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexCheck {
    pub dir: PathBuf,
    pub files: usize,
    pub vectors: usize,
    /// The project's files the index has no record of, or an older one.
    pub stale: usize,
    pub damage: Vec<String>,
}

impl IndexCheck {
    pub fn line(&self) -> String {
        let stale = match self.stale {
            0 => String::new(),
            n => format!(" ({n} files changed since it was built; `rgd index` updates them)"),
        };
        match self.damage.is_empty() {
            true => format!(
                "index {}  ok: {} files, {} vectors{stale}",
                self.dir.display(),
                self.files,
                self.vectors
            ),
            false => format!(
                "index {}  damaged: {}; `rgd index PROJECT` rebuilds it from the project",
                self.dir.display(),
                self.damage.join("; ")
            ),
        }
    }
}

/// Looks at one record (key, value): what is wrong with it, if anything.
type RecordCheck<'a> = dyn FnMut(&[u8], &[u8]) -> Option<String> + 'a;

pub fn verify_index(home_root: &Path, root: &Path) -> anyhow::Result<IndexCheck> {
    let dir = index_dir(home_root, root)?;
    let mut check = IndexCheck {
        dir: dir.clone(),
        files: 0,
        vectors: 0,
        stale: 0,
        damage: Vec::new(),
    };
    let db_dir = dir.join("db");
    if !db_dir.exists() {
        anyhow::bail!("{} has no index yet: `rgd index {}` builds it", root.display(), root.display());
    }
    let copy = tempfile::tempdir()?;
    let copied = copy.path().join("db");
    crate::checked::copy_tree(&db_dir, &copied)?;
    let db = match sled::Config::new().path(&copied).open() {
        Ok(db) => db,
        Err(e) => {
            check.damage.push(format!("its database {} cannot be read ({e})", db_dir.display()));
            return Ok(check);
        }
    };
    let mut read = |tree: &str, each: &mut RecordCheck<'_>| -> usize {
        let mut n = 0;
        let tree = match db.open_tree(tree) {
            Ok(t) => t,
            Err(e) => {
                check.damage.push(format!("its database {} cannot be read ({e})", db_dir.display()));
                return 0;
            }
        };
        for item in tree.iter() {
            match item {
                Ok((k, v)) => {
                    n += 1;
                    if let Some(why) = each(&k, &v) {
                        check.damage.push(why);
                    }
                }
                Err(e) => {
                    check.damage.push(format!("its database {} cannot be read ({e})", db_dir.display()));
                    break;
                }
            }
        }
        n
    };
    let mut recorded = std::collections::HashMap::new();
    let files = read("files", &mut |k, v| {
        let name = String::from_utf8_lossy(k).into_owned();
        match serde_json::from_slice::<FileRecord>(v) {
            Ok(r) => {
                recorded.insert(name, r.sha256);
                None
            }
            Err(e) => Some(format!("the record of {name} is not whole ({e})")),
        }
    });
    let vectors = read("vectors", &mut |_, v| {
        (v.len() != crate::retrieval::DIM * 4).then(|| format!("a cached vector of {} bytes, not {}", v.len(), crate::retrieval::DIM * 4))
    });
    read("descriptions", &mut |_, v| {
        std::str::from_utf8(v)
            .is_err()
            .then(|| "a written description that is not text".to_string())
    });
    check.files = files;
    check.vectors = vectors;
    match crate::checked::read_json::<Built>(&dir.join(BUILT)) {
        Ok(built) if files < built.files || vectors < built.vectors => check.damage.push(format!(
            "its database {} holds {files} of the {} file records and {vectors} of the {} vectors the last `rgd index` left",
            db_dir.display(),
            built.files,
            built.vectors
        )),
        Ok(_) => {}
        Err(_) if !dir.join(BUILT).exists() => {}
        Err(what) => check.damage.push(what),
    }
    let (project, _) = python_project(root)?;
    check.stale = project
        .iter()
        .filter(|f| {
            let now = std::fs::read(root.join(f)).map(|b| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&b)));
            now.ok().as_ref() != recorded.get(*f)
        })
        .count();
    Ok(check)
}
