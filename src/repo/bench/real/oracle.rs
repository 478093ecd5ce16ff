//! The oracle model of `rgd bench real --fix oracle`: an OpenAI-compatible endpoint on loopback
//! that knows one answer, the function its authors released as the fix. Asked by the Debug agent
//! to write that function, it answers the released definition; asked anything else (another
//! function, the Guide, the Feedback agent) it has nothing to offer. `rgd fix` reaches it exactly
//! as it reaches vLLM or OpenAI (async-openai over HTTP), so what the oracle fixes is the ceiling of
//! the pipeline itself: localisation, the attempts, the splice and the verdict, with a perfect
//! repair wherever the agents reach the faulty function.

use std::sync::{Arc, Mutex};

use anyhow::Context;
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The model name the oracle answers as (recorded in each run's manifest).
pub const MODEL: &str = "oracle";

/// The one function the oracle can write: the Debug agent's task names it this way.
#[derive(Debug, Clone, Default)]
struct Answer {
    asked: String,
    definition: String,
}

/// The oracle, serving until dropped.
pub struct Oracle {
    base_url: String,
    answer: Arc<Mutex<Answer>>,
    server: tokio::task::JoinHandle<()>,
}

impl Oracle {
    pub async fn start() -> anyhow::Result<Oracle> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("the oracle's loopback port")?;
        let base_url = format!("http://{}/v1", listener.local_addr()?);
        let answer = Arc::new(Mutex::new(Answer::default()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .route("/v1/models", axum::routing::get(models))
            .with_state(answer.clone());
        let server = tokio::spawn(async move {
            // Only a failed accept loop ends it; the fix then reports an unreachable endpoint.
            let _ = axum::serve(listener, app).await;
        });
        Ok(Oracle { base_url, answer, server })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// From now on the oracle writes `qualname` as `definition` (at column 0).
    pub fn knows(&self, qualname: &str, definition: &str) {
        *self.answer.lock().unwrap_or_else(|e| e.into_inner()) = Answer {
            asked: crate::repo::task::writing(qualname),
            definition: definition.to_string(),
        };
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn models() -> Response {
    Json(json!({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "rgd"}]})).into_response()
}

/// The system and the user text of a chat completion request's body (each role's messages joined).
pub fn system_and_user(body: &Value) -> (String, String) {
    let text_of = |role: &str| -> String {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == role)
            .filter_map(|m| m["content"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    (text_of("system"), text_of("user"))
}

async fn chat(State(answer): State<Arc<Mutex<Answer>>>, Json(body): Json<Value>) -> Response {
    let (system, user) = system_and_user(&body);
    let text = {
        let a = answer.lock().unwrap_or_else(|e| e.into_inner());
        if system.contains("You are the Debug agent") && !a.asked.is_empty() && user.contains(&a.asked) {
            format!("```python\n{}```", a.definition)
        } else if system.contains("You are the Debug agent") {
            "I cannot tell what is wrong here.".to_string()
        } else {
            "1. Read the function.\n2. Repair it.".to_string()
        }
    };
    // Tokens as a server counts them would need its tokenizer; a rough count keeps the columns
    // comparable between oracle runs.
    let (prompt, completion) = ((system.len() + user.len()) / 4, text.len() / 4 + 1);
    let usage = json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion});
    if body["stream"] == true {
        let chunk = json!({"id": "oracle", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": usage});
        let events = format!("data: {chunk}\n\ndata: [DONE]\n\n");
        return ([("content-type", "text/event-stream")], events).into_response();
    }
    Json(json!({
        "id": "oracle", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage
    }))
    .into_response()
}
