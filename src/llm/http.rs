//! The HTTP transport under async-openai: reqwest, plus one repair. Servers word their errors
//! differently: llama-server sends `{"error": {"code": 400, "message": ..., "type":
//! "exceed_context_size_error"}}` (a numeric code), vLLM `{"object": "error", "message": ...,
//! "code": 400}` (no `error` wrapper), proxies plain text. async-openai expects OpenAI's shape
//! (`code` a string), and on anything else reports a deserialisation error that loses the HTTP
//! status, so a wrong key or an overlong prompt looked like garbage and was retried. Every error
//! response is rewritten here into OpenAI's shape, keeping its status, with the server's message
//! as one clean line (`error::error_parts`); classification (`LlmError::from_openai`) then goes by
//! the status.

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use serde_json::json;

use super::error::error_parts;

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
