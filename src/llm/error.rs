use serde::{Deserialize, Serialize};

/// Why a call failed, in terms that decide whether to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmErrorKind {
    Timeout,
    RateLimited,
    /// 5xx from the endpoint.
    Server,
    /// Connection refused, reset, DNS...
    Transport,
    /// The answer could not be parsed (truncated JSON, broken event stream).
    Garbage,
    /// 4xx other than 429: bad request, auth, unknown model. Retrying cannot help.
    Rejected,
}

/// One line: what kind of failure, the HTTP status if any, the server's own message, and how many
/// attempts it took when more than one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error(
    "{}{}: {message}{}",
    kind.label(),
    status.map(|s| format!(" (HTTP {s})")).unwrap_or_default(),
    if *attempts > 1 { format!(" (after {attempts} attempts)") } else { String::new() }
)]
pub struct LlmError {
    pub kind: LlmErrorKind,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<u16>,
    pub attempts: u32,
}

impl LlmErrorKind {
    pub fn label(self) -> &'static str {
        match self {
            LlmErrorKind::Timeout => "timed out",
            LlmErrorKind::RateLimited => "rate limited",
            LlmErrorKind::Server => "server error",
            LlmErrorKind::Transport => "unreachable",
            LlmErrorKind::Garbage => "unreadable answer",
            LlmErrorKind::Rejected => "rejected",
        }
    }
}

impl LlmError {
    pub fn new(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        LlmError {
            kind,
            message: message.into(),
            status: None,
            attempts: 1,
        }
    }

    pub fn retryable(&self) -> bool {
        !matches!(self.kind, LlmErrorKind::Rejected)
    }

    /// By HTTP status first: 408, 429 and 5xx may pass (retried); any other 4xx will not.
    pub fn from_status(status: u16, message: &str) -> Self {
        let kind = match status {
            429 => LlmErrorKind::RateLimited,
            408 => LlmErrorKind::Timeout,
            500..=599 => LlmErrorKind::Server,
            _ => LlmErrorKind::Rejected,
        };
        LlmError {
            kind,
            message: clip(message),
            status: Some(status),
            attempts: 1,
        }
    }

    pub(crate) fn from_openai(err: async_openai::error::OpenAIError) -> Self {
        use async_openai::error::OpenAIError as E;
        match err {
            E::ApiError(resp) => LlmError::from_status(resp.status_code.as_u16(), &resp.api_error.message),
            E::Reqwest(e) => {
                let kind = if e.is_timeout() {
                    LlmErrorKind::Timeout
                } else if e.is_decode() || e.is_body() {
                    LlmErrorKind::Garbage
                } else {
                    LlmErrorKind::Transport
                };
                LlmError {
                    kind,
                    message: clip(&with_causes(&e)),
                    status: e.status().map(|s| s.as_u16()),
                    attempts: 1,
                }
            }
            // An error sent inside a stream (`data: {"error": {...}}`) is the server's, not garbage.
            E::JSONDeserialize(e, content) => match in_band_error(&content) {
                Some(err) => err,
                None => LlmError::new(LlmErrorKind::Garbage, clip(&format!("{e}: {content}"))),
            },
            E::StreamError(e) => LlmError::new(LlmErrorKind::Garbage, clip(&e.to_string())),
            E::InvalidArgument(m) => LlmError::new(LlmErrorKind::Rejected, m),
            other => LlmError::new(LlmErrorKind::Transport, clip(&other.to_string())),
        }
    }
}

/// An error object where an answer was expected, classified by its numeric code if it has one.
fn in_band_error(content: &str) -> Option<LlmError> {
    let value: serde_json::Value = serde_json::from_str(content).ok()?;
    value.get("error")?;
    let (message, _, code) = error_parts(content.as_bytes());
    Some(match code.and_then(|c| c.parse::<u16>().ok()) {
        Some(status) => LlmError::from_status(status, &message),
        None => LlmError::new(LlmErrorKind::Server, message),
    })
}

/// "error sending request" alone hides the reason (refused, reset, DNS): add the source chain.
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// At most 500 characters, "..." marking a cut.
fn clip(s: &str) -> String {
    crate::text::clip(s, 500, 500, "...")
}

/// (message, type, code) of an error body in any of the shapes servers use.
pub(super) fn error_parts(body: &[u8]) -> (String, Option<String>, Option<String>) {
    let text = String::from_utf8_lossy(body);
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return (one_line(&text, "the server answered with an error and no message"), None, None);
    };
    let error = match &value["error"] {
        serde_json::Value::Object(_) => &value["error"],
        _ => &value,
    };
    let as_text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let message = as_text(&error["message"])
        .or_else(|| as_text(&value["error"]))
        .or_else(|| as_text(&value["detail"]))
        .unwrap_or_else(|| text.to_string());
    (
        one_line(&message, "the server answered with an error and no message"),
        as_text(&error["type"]),
        as_text(&error["code"]),
    )
}

/// Whitespace runs (newlines included) become single spaces, clipped as every error message is.
fn one_line(text: &str, if_empty: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return if_empty.to_string();
    }
    clip(&line)
}

#[cfg(test)]
mod tests {
    use super::error_parts;

    #[test]
    fn every_shape_gives_the_servers_message() {
        let llama = br#"{"error":{"code":400,"message":"request (344 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":344,"n_ctx":256}}"#;
        let (message, kind, code) = error_parts(llama);
        assert!(message.starts_with("request (344 tokens) exceeds"), "{message}");
        assert_eq!((kind.as_deref(), code.as_deref()), (Some("exceed_context_size_error"), Some("400")));
        let vllm = br#"{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}"#;
        assert_eq!(error_parts(vllm).0, "The model `x` does not exist.");
        let openai = br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        assert_eq!(error_parts(openai).2.as_deref(), Some("invalid_api_key"));
        assert_eq!(error_parts(b"{\"error\": \"Unauthorized\"}").0, "Unauthorized");
        assert_eq!(error_parts(b"<html>\n502 Bad Gateway\n</html>").0, "<html> 502 Bad Gateway </html>");
        assert_eq!(error_parts(b"").0, "the server answered with an error and no message");
    }
}
