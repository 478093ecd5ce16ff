//! Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through async-openai.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, ChatCompletionStreamOptions, CreateChatCompletionRequest, StopConfiguration,
};
use backon::{ExponentialBuilder, Retryable};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use super::{CallObserver, CallParams, ChatModel, ChatResponse, EndpointInfo, LlmError, LlmErrorKind, Message, Role, Usage};

/// One attempt's answer: text, usage, finish reason, the model the server named.
type Answer = (String, Usage, Option<String>, Option<String>);

/// Connection and robustness settings for one endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpenAiSettings {
    pub base_url: String,
    /// Never written to manifests.
    #[serde(skip_serializing)]
    pub api_key: String,
    /// Stream answers token by token (the TUI shows them as they arrive).
    pub stream: bool,
    /// Deadline for one attempt, from request to last token.
    pub timeout_secs: f64,
    /// Longest silence between two streamed tokens (a stalled server is noticed well before the
    /// whole call's deadline).
    pub idle_timeout_secs: f64,
    /// The endpoint's context (prompt + answer) in tokens, if known: from the configuration, or
    /// learnt from the server.
    pub context_size: Option<u32>,
    /// Retries after the first attempt, on 429, 5xx, timeouts, broken connections and garbage.
    pub retries: usize,
    pub backoff_min_ms: u64,
    pub backoff_max_ms: u64,
    /// Requests in flight at once across all tasks and agents.
    pub max_in_flight: usize,
}

impl Default for OpenAiSettings {
    fn default() -> Self {
        OpenAiSettings {
            base_url: "https://api.openai.com/v1".into(),
            api_key: String::new(),
            stream: true,
            timeout_secs: 180.0,
            idle_timeout_secs: 60.0,
            context_size: None,
            retries: 5,
            backoff_min_ms: 500,
            backoff_max_ms: 30_000,
            max_in_flight: 16,
        }
    }
}

pub struct OpenAiChat {
    client: Client<OpenAIConfig>,
    /// For what async-openai does not cover: llama-server's `/props`, `/v1/models`' extra fields.
    http: reqwest::Client,
    settings: OpenAiSettings,
    gate: Arc<Semaphore>,
}

impl OpenAiChat {
    pub fn new(settings: OpenAiSettings) -> Self {
        // An empty key is fine for local servers; OpenAI itself will answer 401 (not retried).
        let config = OpenAIConfig::new()
            .with_api_base(settings.base_url.trim_end_matches('/'))
            .with_api_key(settings.api_key.clone());
        let gate = Arc::new(Semaphore::new(settings.max_in_flight.max(1)));
        // async-openai retries 429/5xx on its own by default, unseen; rgd replaces that with one
        // policy whose every attempt is an event, so its own transport (which also reads every
        // server's error bodies) is installed here.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        let client = Client::with_config(config).with_http_service(super::http::service(http.clone()));
        OpenAiChat {
            client,
            http,
            settings,
            gate,
        }
    }

    fn request(&self, messages: &[Message], params: &CallParams) -> CreateChatCompletionRequest {
        let messages = messages
            .iter()
            .map(|m| match m.role {
                Role::System => ChatCompletionRequestMessage::from(ChatCompletionRequestSystemMessage::from(m.content.as_str())),
                Role::User => ChatCompletionRequestUserMessage::from(m.content.as_str()).into(),
                Role::Assistant => ChatCompletionRequestAssistantMessage::from(m.content.clone()).into(),
            })
            .collect();
        // `max_tokens` is deprecated by OpenAI in favour of `max_completion_tokens`, but it is the
        // one field vLLM, Ollama and llama.cpp all honour.
        #[allow(deprecated)]
        CreateChatCompletionRequest {
            model: params.model.clone(),
            messages,
            temperature: Some(params.temperature),
            max_tokens: Some(params.max_tokens),
            seed: params.seed,
            stop: (!params.stop.is_empty()).then(|| StopConfiguration::StringArray(params.stop.clone())),
            stream_options: self.settings.stream.then_some(ChatCompletionStreamOptions {
                include_usage: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// One attempt, streaming or not.
    async fn attempt(&self, messages: &[Message], params: &CallParams, observer: &dyn CallObserver) -> Result<Answer, LlmError> {
        let request = self.request(messages, params);
        let prompt_chars: usize = messages.iter().map(|m| m.content.len()).sum();
        if !self.settings.stream {
            let resp = self.client.chat().create(request).await.map_err(LlmError::from_openai)?;
            let choice = resp
                .choices
                .into_iter()
                .next()
                .ok_or_else(|| LlmError::new(LlmErrorKind::Garbage, "the answer has no choices"))?;
            let text = choice.message.content.unwrap_or_default();
            observer.token(&text);
            let usage = resp.usage.map_or_else(
                || Usage::estimate(prompt_chars, text.len()),
                |u| Usage {
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: u.completion_tokens,
                    reported: true,
                },
            );
            let finish = choice.finish_reason.map(|f| format!("{f:?}").to_lowercase());
            return Ok((text, usage, finish, Some(resp.model)));
        }
        let mut stream = self.client.chat().create_stream(request).await.map_err(LlmError::from_openai)?;
        let mut text = String::new();
        let mut usage = None;
        let mut finish = None;
        let mut served = None;
        // Once tokens flow, a silence this long is a stalled server (the first token may take
        // longer: a long prompt is read first, within the attempt's deadline).
        let idle = Duration::from_secs_f64(self.settings.idle_timeout_secs);
        let mut started = false;
        loop {
            let next = if started {
                tokio::time::timeout(idle, stream.next()).await.map_err(|_| {
                    LlmError::new(
                        LlmErrorKind::Timeout,
                        format!("the answer stalled: no token for {:.0} s", idle.as_secs_f64()),
                    )
                })?
            } else {
                stream.next().await
            };
            let Some(chunk) = next else { break };
            started = true;
            let chunk = chunk.map_err(LlmError::from_openai)?;
            if served.is_none() && !chunk.model.is_empty() {
                served = Some(chunk.model.clone());
            }
            for choice in chunk.choices {
                if let Some(delta) = choice.delta.content.filter(|d| !d.is_empty()) {
                    observer.token(&delta);
                    text.push_str(&delta);
                }
                if let Some(f) = choice.finish_reason {
                    finish = Some(format!("{f:?}").to_lowercase());
                }
            }
            if let Some(u) = chunk.usage {
                usage = Some(Usage {
                    prompt_tokens: u.prompt_tokens,
                    completion_tokens: u.completion_tokens,
                    reported: true,
                });
            }
        }
        let usage = usage.unwrap_or_else(|| Usage::estimate(prompt_chars, text.len()));
        Ok((text, usage, finish, served))
    }
}

#[async_trait::async_trait]
impl ChatModel for OpenAiChat {
    fn endpoint(&self) -> String {
        crate::secrets::redact_url(&self.settings.base_url)
    }

    async fn chat(&self, messages: &[Message], params: &CallParams, observer: &dyn CallObserver) -> Result<ChatResponse, LlmError> {
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let timeout = Duration::from_secs_f64(self.settings.timeout_secs);
        let once = || async {
            attempts.fetch_add(1, Ordering::SeqCst);
            // The permit is held for the request only, not while backing off.
            let _permit = self
                .gate
                .acquire()
                .await
                .map_err(|_| LlmError::new(LlmErrorKind::Transport, "the client is shutting down"))?;
            match tokio::time::timeout(timeout, self.attempt(messages, params, observer)).await {
                Ok(result) => result,
                Err(_) => Err(LlmError::new(
                    LlmErrorKind::Timeout,
                    format!("no complete answer within {:.1}s", timeout.as_secs_f64()),
                )),
            }
        };
        let backoff = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(self.settings.backoff_min_ms))
            .with_max_delay(Duration::from_millis(self.settings.backoff_max_ms))
            .with_max_times(self.settings.retries)
            .with_jitter();
        let result = once
            .retry(backoff)
            .sleep(tokio::time::sleep)
            .when(LlmError::retryable)
            .notify(|err, wait| observer.retry(attempts.load(Ordering::SeqCst), err, wait))
            .await;
        let attempts = attempts.load(Ordering::SeqCst);
        match result {
            Ok((text, usage, finish_reason, served_model)) => Ok(ChatResponse {
                text,
                usage,
                finish_reason,
                attempts,
                latency_ms: started.elapsed().as_millis() as u64,
                served_model,
            }),
            Err(mut err) => {
                err.attempts = attempts;
                Err(err)
            }
        }
    }

    /// `GET /models`: the ids served, and the context where the server tells it (llama-server's
    /// `meta.n_ctx`, or its `/props` beside `/v1`). A configured `context_size` wins.
    async fn describe(&self) -> Result<EndpointInfo, LlmError> {
        let base = self.settings.base_url.trim_end_matches('/');
        let models: serde_json::Value = self.get_json(&format!("{base}/models")).await?;
        let data = models["data"].as_array().cloned().unwrap_or_default();
        let ids = data.iter().filter_map(|m| m["id"].as_str().map(str::to_string)).collect();
        let n_ctx = |v: &serde_json::Value| v.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0);
        let mut context_size = data.iter().find_map(|m| n_ctx(&m["meta"]["n_ctx"]));
        if context_size.is_none()
            && let Some(root) = base.strip_suffix("/v1")
            && let Ok(props) = self.get_json(&format!("{root}/props")).await
        {
            context_size = n_ctx(&props["default_generation_settings"]["n_ctx"]).or_else(|| n_ctx(&props["n_ctx"]));
        }
        Ok(EndpointInfo {
            models: ids,
            context_size: self.settings.context_size.or(context_size),
        })
    }
}

impl OpenAiChat {
    async fn get_json(&self, url: &str) -> Result<serde_json::Value, LlmError> {
        let mut request = self.http.get(url).timeout(Duration::from_secs(10));
        if !self.settings.api_key.is_empty() {
            request = request.bearer_auth(&self.settings.api_key);
        }
        let response = request.send().await.map_err(|e| LlmError::from_openai(e.into()))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| LlmError::from_openai(e.into()))?;
        if !status.is_success() {
            return Err(LlmError::from_status(status.as_u16(), &super::error::error_parts(&body).0));
        }
        serde_json::from_slice(&body).map_err(|e| LlmError::new(LlmErrorKind::Garbage, format!("{url}: {e}")))
    }
}
