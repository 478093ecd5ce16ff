//! The HTTP transport under async-openai: reqwest, plus one repair. Servers word their errors
//! differently: llama-server sends `{"error": {"code": 400, "message": ..., "type":
//! "exceed_context_size_error"}}` (a numeric code), vLLM `{"object": "error", "message": ...,
//! "code": 400}` (no `error` wrapper), proxies plain text. async-openai expects OpenAI's shape
//! (`code` a string), and on anything else reports a deserialisation error that loses the HTTP
//! status, so a wrong key or an overlong prompt looked like garbage and was retried. Every error
//! response is rewritten here into OpenAI's shape, keeping its status, with the server's message
//! as one clean line; classification (`LlmError::from_openai`) then goes by the status.

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use serde_json::{Value, json};

/// A tower service for `Client::with_http_service`.
pub fn service(
    client: reqwest::Client,
) -> impl tower::Service<
    HttpRequestFactory,
    Response = reqwest::Response,
    Error = OpenAIError,
    Future = impl Future<Output = Result<reqwest::Response, OpenAIError>> + Send + 'static,
> + Clone
+ Send
+ Sync
+ 'static {
    tower::service_fn(move |factory: HttpRequestFactory| {
        let client = client.clone();
        async move {
            let request = factory.build().await?;
            let response = client.execute(request).await.map_err(OpenAIError::Reqwest)?;
            normalise(response).await
        }
    })
}

async fn normalise(response: reqwest::Response) -> Result<reqwest::Response, OpenAIError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.bytes().await.map_err(OpenAIError::Reqwest)?;
    let (message, kind, code) = error_parts(&body);
    // async-openai takes a 5xx body as the message itself, and any other as OpenAI's JSON.
    let rewritten = if status.is_server_error() {
        message
    } else {
        json!({"error": {"message": message, "type": kind, "code": code}}).to_string()
    };
    let mut rebuilt = http::Response::new(rewritten);
    *rebuilt.status_mut() = status;
    Ok(reqwest::Response::from(rebuilt))
}

/// (message, type, code) of an error body in any of the shapes servers use.
pub fn error_parts(body: &[u8]) -> (String, Option<String>, Option<String>) {
    let text = String::from_utf8_lossy(body);
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return (one_line(&text, "the server answered with an error and no message"), None, None);
    };
    let error = match &value["error"] {
        Value::Object(_) => &value["error"],
        _ => &value,
    };
    let as_text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
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
    super::error::clip(&line)
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
