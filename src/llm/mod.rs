//! Chat models. Agents talk to a `ChatModel`; the OpenAI-compatible client is one implementation
//! (the embedded llama.cpp model, `local`, is the other). Retries, timeouts and the global concurrency
//! limit live here so that every caller gets them.

mod error;
mod http;
pub mod local;
mod openai;

pub use error::{LlmError, LlmErrorKind};
pub use openai::{OpenAiChat, OpenAiSettings};

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
}

/// Sampling parameters of one call (per agent, from config).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallParams {
    pub model: String,
    pub temperature: f32,
    pub max_tokens: u32,
    /// Sent to endpoints that honour it, and recorded so a run can be repeated.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seed: Option<i64>,
    /// Generation ends before any of these strings.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub stop: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// False when the endpoint sent no usage; the counts are then estimates (4 chars per token).
    pub reported: bool,
}

impl Usage {
    pub fn estimate(prompt_chars: usize, completion_chars: usize) -> Usage {
        Usage {
            prompt_tokens: prompt_chars.div_ceil(4) as u32,
            completion_tokens: completion_chars.div_ceil(4) as u32,
            reported: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub finish_reason: Option<String>,
    /// 1 when the first try succeeded.
    pub attempts: u32,
    pub latency_ms: u64,
    /// The model the server says answered (llama-server serves one model whatever name is asked).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub served_model: Option<String>,
}

/// What an endpoint says about itself (`/v1/models`; llama-server's `/props`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointInfo {
    /// Model ids it serves.
    pub models: Vec<String>,
    /// Its context (prompt + answer) in tokens, when it says.
    pub context_size: Option<u32>,
}

/// Hears about a call while it runs: streamed text and retries (after which streaming restarts).
pub trait CallObserver: Send + Sync {
    fn token(&self, delta: &str);
    fn retry(&self, attempt: u32, error: &LlmError, wait: Duration);
}

/// An observer for callers that only want the final answer.
pub struct Silent;

impl CallObserver for Silent {
    fn token(&self, _: &str) {}
    fn retry(&self, _: u32, _: &LlmError, _: Duration) {}
}

#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// Where answers come from, for manifests ("http://127.0.0.1:8000/v1").
    fn endpoint(&self) -> String;
    async fn chat(&self, messages: &[Message], params: &CallParams, observer: &dyn CallObserver) -> Result<ChatResponse, LlmError>;
    /// What the endpoint says about itself, or why it could not be asked.
    async fn describe(&self) -> Result<EndpointInfo, LlmError>;
}
