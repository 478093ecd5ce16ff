//! A real OpenAI-compatible HTTP server on loopback whose answers a test scripts. Requests go
//! through async-openai and reqwest exactly as they would to vLLM or OpenAI.
#![allow(dead_code)]

pub mod learner;
pub mod one_module;
pub mod recorded;
pub mod sandbox;
pub mod sweeps;
pub mod tmux;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Value, json};

/// What the server answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A normal answer (streamed in small chunks when the request asked for a stream).
    Text(String),
    /// An HTTP error with an OpenAI-style error body.
    Status(u16, String),
    /// Never answers (the client's timeout must fire).
    Hang,
    /// A truncated JSON body / a broken event stream.
    Truncated,
    /// The same reply after a pause.
    Delayed(Duration, Box<Reply>),
    /// This status and body, as a server other than OpenAI words its errors.
    Raw(u16, String),
    /// A normal answer that the length limit ended (`finish_reason: length`).
    CutOff(String),
    /// Streams this text, then falls silent for an hour without closing.
    Stall(String),
}

/// How the server presents itself.
#[derive(Debug, Clone)]
pub struct Served {
    /// The `model` of every answer and the one id of `/v1/models`.
    pub model: String,
    /// `meta.n_ctx` in `/v1/models`, as llama-server reports its context.
    pub n_ctx: Option<u32>,
}

impl Default for Served {
    fn default() -> Self {
        Served {
            model: "scripted".into(),
            n_ctx: None,
        }
    }
}

/// A request as the script sees it.
#[derive(Debug, Clone)]
pub struct Request {
    pub body: Value,
    pub system: String,
    pub user: String,
    pub stream: bool,
    /// Which prompt produced it: guide_init, guide_refine, debug_init, debug_fix, feedback, keywords.
    pub purpose: &'static str,
}

impl Request {
    /// The entry point named in the prompt ("Define the function `f`" / "defines `f`").
    pub fn entry_point(&self) -> Option<String> {
        for marker in ["Define the function `", "must define the function `", "The solution defines `"] {
            if let Some(at) = self.user.find(marker) {
                let rest = &self.user[at + marker.len()..];
                return rest.split('`').next().map(str::to_string);
            }
        }
        None
    }
}

pub type Script = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

#[derive(Clone)]
struct AppState {
    script: Script,
    log: Arc<Mutex<Vec<Request>>>,
    served: Served,
}

pub struct ScriptedServer {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Request>>>,
    state: AppState,
    handle: tokio::task::JoinHandle<()>,
}

impl ScriptedServer {
    pub async fn start(script: Script) -> ScriptedServer {
        ScriptedServer::start_as(script, Served::default()).await
    }

    /// A server that names itself (and its context) as `served` says.
    pub async fn start_as(script: Script, served: Served) -> ScriptedServer {
        let log = Arc::new(Mutex::new(Vec::new()));
        let state = AppState {
            script,
            log: log.clone(),
            served,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let handle = serve(listener, state.clone());
        ScriptedServer { addr, log, state, handle }
    }

    /// The server goes away: connections are refused until `restart`.
    pub async fn stop(&mut self) {
        self.handle.abort();
        let _ = (&mut self.handle).await;
    }

    /// Back on the same port, with the same script.
    pub async fn restart(&mut self) {
        let listener = tokio::net::TcpListener::bind(self.addr).await.expect("rebind the same port");
        self.handle = serve(listener, self.state.clone());
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

fn serve(listener: tokio::net::TcpListener, state: AppState) -> tokio::task::JoinHandle<()> {
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/models", axum::routing::get(models))
        .with_state(state);
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("server runs");
    })
}

async fn models(State(state): State<AppState>) -> Response {
    let mut model = json!({"id": state.served.model, "object": "model", "owned_by": "scripted"});
    if let Some(n) = state.served.n_ctx {
        model["meta"] = json!({"n_ctx": n, "n_ctx_train": 8192});
    }
    Json(json!({"object": "list", "data": [model]})).into_response()
}

fn classify(system: &str, user: &str) -> &'static str {
    if system.contains("extract search keywords") {
        "keywords"
    } else if system.contains("You are the Guide agent") {
        if user.contains("Your previous guidance") {
            "guide_refine"
        } else {
            "guide_init"
        }
    } else if system.contains("You are the Debug agent") {
        if user.contains("Your previous program") {
            "debug_fix"
        } else {
            "debug_init"
        }
    } else if system.contains("You are the Feedback agent") {
        "feedback"
    } else if system.contains("debugs code by reading its execution") {
        if user.contains("Now fix the code") {
            "ldb_fix"
        } else if user.contains("say whether it is correct or wrong") {
            "ldb_verdict"
        } else {
            "ldb_seed"
        }
    } else if system.contains("who debugs your own code") {
        if user.contains("## Task") && (user.contains("The code above") || user.contains("Your answer has a problem")) {
            "self_debug_fix"
        } else {
            "self_debug_seed"
        }
    } else if system.contains("writes unit tests for a function") {
        "self_tests"
    } else if system.contains("writes a full implementation") {
        if user.contains("## Your previous implementation") {
            "reflexion_fix"
        } else {
            "reflexion_implement"
        }
    } else if system.contains("You are a Python programming assistant") {
        "reflect"
    } else if system.contains("recalling similar problems") {
        "recall"
    } else if system.contains("plans a solution from a similar problem") {
        "map_plan"
    } else if system.contains("You check plans") {
        "confidence"
    } else if system.contains("plans by recalling one example problem") {
        "sim_plan"
    } else if system.contains("You simulate a plan by hand") {
        "simulate"
    } else if system.contains("You revise a plan") {
        "sim_refine"
    } else if system.contains("writes code from a verified plan") {
        "sim_code"
    } else if system.contains("debugs code by simulating it") {
        "sim_debug"
    } else if system.contains("You write a solution plan in numbered steps") {
        "lpw_plan"
    } else if system.contains("You verify a solution plan by hand") {
        "lpw_verify"
    } else if system.contains("You check a verification of a plan") {
        "lpw_check"
    } else if system.contains("You implement a solution plan whose verification") {
        "lpw_code"
    } else if system.contains("You add print statements") {
        "lpw_print"
    } else if system.contains("You explain code line by line") {
        "lpw_explain"
    } else if system.contains("You compare a program's printed intermediate values") {
        "lpw_analyse"
    } else if system.contains("You rewrite a failing Python program") {
        "lpw_fix"
    } else if system.contains("You refactor Python code into a tree") {
        "mg_decompose"
    } else if system.contains("You derive unit tests for one function") {
        "mg_tests"
    } else if system.contains("You debug one Python function") {
        "mg_debug"
    } else if system.contains("turns a plan into code") {
        if user.contains("## Test report") { "map_debug" } else { "map_code" }
    } else if system.contains("Think through the problem step by step") {
        "cot"
    } else if system.contains("plans before coding") {
        "plan"
    } else if system.contains("by following the given plan") {
        "implement"
    } else if system.contains("You are a Python programmer") {
        "direct"
    } else {
        "unknown"
    }
}

async fn chat(State(state): State<AppState>, Json(body): Json<Value>) -> Response {
    let (system, user) = rgd::repo::bench::real::oracle::system_and_user(&body);
    let request = Request {
        stream: body["stream"] == true,
        purpose: classify(&system, &user),
        system,
        user,
        body: body.clone(),
    };
    state.log.lock().unwrap().push(request.clone());
    let reply = (state.script)(&request);
    respond(reply, request.stream, state.served.model.clone()).await
}

fn respond(reply: Reply, stream: bool, model: String) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>> {
    Box::pin(async move {
        let (reply, finish) = match reply {
            Reply::CutOff(text) => (Reply::Text(text), "length"),
            other => (other, "stop"),
        };
        match reply {
            Reply::Delayed(wait, inner) => {
                tokio::time::sleep(wait).await;
                respond(*inner, stream, model).await
            }
            Reply::Raw(code, body) => (StatusCode::from_u16(code).unwrap(), [("content-type", "application/json")], body).into_response(),
            Reply::CutOff(_) => unreachable!("taken apart above"),
            Reply::Stall(text) => {
                let first = Ok::<_, Infallible>(SseEvent::default().data(chunk(
                    &model,
                    json!({"index": 0, "delta": {"content": text}, "finish_reason": null}),
                    Value::Null,
                )));
                let silence = futures::stream::once(async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    Ok::<_, Infallible>(SseEvent::default().data("[DONE]"))
                });
                Sse::new(futures::stream::iter(vec![first]).chain(silence)).into_response()
            }
            Reply::Hang => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                StatusCode::GATEWAY_TIMEOUT.into_response()
            }
            Reply::Status(code, message) => {
                let body = json!({"error": {"message": message, "type": "scripted", "param": null, "code": null}});
                (StatusCode::from_u16(code).unwrap(), Json(body)).into_response()
            }
            Reply::Truncated if stream => {
                let events = vec![Ok::<_, Infallible>(SseEvent::default().data(
                    r#"{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"par"#,
                ))];
                Sse::new(futures::stream::iter(events)).into_response()
            }
            Reply::Truncated => (
                [("content-type", "application/json")],
                r#"{"id":"x","object":"chat.completion","choi"#,
            )
                .into_response(),
            Reply::Text(text) if stream => {
                let prompt_tokens = 50;
                let completion_tokens = (text.len() / 4) as u32 + 1;
                let mut events = Vec::new();
                let chars: Vec<char> = text.chars().collect();
                for piece in chars.chunks(24) {
                    let content: String = piece.iter().collect();
                    events.push(chunk(
                        &model,
                        json!({"index": 0, "delta": {"content": content}, "finish_reason": null}),
                        Value::Null,
                    ));
                }
                events.push(chunk(
                    &model,
                    json!({"index": 0, "delta": {}, "finish_reason": finish}),
                    Value::Null,
                ));
                let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens});
                events.push(
                    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [], "usage": usage})
                        .to_string(),
                );
                events.push("[DONE]".to_string());
                let events: Vec<Result<SseEvent, Infallible>> = events.into_iter().map(|d| Ok(SseEvent::default().data(d))).collect();
                Sse::new(futures::stream::iter(events)).into_response()
            }
            Reply::Text(text) => {
                let completion_tokens = (text.len() / 4) as u32 + 1;
                Json(json!({
                    "id": "c", "object": "chat.completion", "created": 1, "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 50, "completion_tokens": completion_tokens, "total_tokens": 50 + completion_tokens}
                }))
                .into_response()
            }
        }
    })
}

fn chunk(model: &str, choice: Value, usage: Value) -> String {
    json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": model, "choices": [choice], "usage": usage}).to_string()
}

/// Wraps code in the fenced block the Debug prompt asks for.
pub fn fenced(code: &str) -> String {
    format!("Here is the program.\n\n```python\n{code}\n```\n")
}

/// A fresh state directory for the binary under test.
pub fn temp_home() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// The rgd binary with a private home and the loopback endpoint.
pub fn rgd(home: &std::path::Path, base_url: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"));
    test_env(&mut cmd, home, base_url);
    cmd
}

/// `rgd run` of the bundled sample's first task, without memory: the run most tests script.
pub fn sample_run(home: &std::path::Path, base_url: &str) -> std::process::Command {
    let mut cmd = rgd(home, base_url);
    cmd.args(["run", "--dataset", "sample", "--task", "Sample/1", "--no-memory"]);
    cmd
}

/// A private home and the loopback endpoint, nothing of the caller's LLM settings, the checkout
/// as working directory.
fn test_env(cmd: &mut std::process::Command, home: &std::path::Path, base_url: &str) {
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("RGD_MODEL")
        .env_remove("RGD_DATA")
        .env("RGD_HOME", home)
        .env("OPENAI_BASE_URL", base_url)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
}

/// What a model that solves every task answers: the task's canonical solution to the Debug
/// agent, a word to every other agent, after `delay`.
pub fn solving_reply(solutions: &std::collections::HashMap<String, String>, req: &Request, delay: std::time::Duration) -> Reply {
    let answer = match req.purpose {
        "debug_init" | "debug_fix" => fenced(&solutions[&req.entry_point().unwrap()]),
        _ => "guidance".to_string(),
    };
    Reply::Delayed(delay, Box::new(Reply::Text(answer)))
}

/// A server script that solves the bundled sample tasks (`solving_reply`).
pub fn solving_script(delay: std::time::Duration) -> Script {
    let solutions = sample_solutions();
    Arc::new(move |req: &Request| solving_reply(&solutions, req, delay))
}

/// The run in `home` (the only one there).
pub fn only_run(home: &std::path::Path) -> String {
    std::fs::read_dir(home.join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned()
}

/// Finished tasks, summed over the status files of `home`'s runs (what a killer waits for).
pub fn finished_in_statuses(home: &std::path::Path) -> usize {
    let Ok(runs) = std::fs::read_dir(home.join("runs")) else { return 0 };
    runs.flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("status.json")).ok())
        .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
        .map(|s| s["finished"].as_u64().unwrap_or(0) as usize)
        .sum()
}

/// Canonical solutions of the bundled sample tasks, by entry point.
pub fn sample_solutions() -> std::collections::HashMap<String, String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sample/tasks.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["entry_point"].as_str().unwrap().to_string(),
                v["canonical_solution"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// (prompt, canonical program) of every task of a catalog dataset, prompts whitespace-squashed.
/// Keyed by prompt: HumanEval reuses entry point names (`sort_array` is both /88 and /116).
pub fn canonical_by_prompt(dataset: &str) -> Vec<(String, String)> {
    let (_, path) = rgd::dataset::resolve_dataset(dataset, None).expect("the dataset is bundled");
    let ds = rgd::dataset::load_dataset(dataset, &path, 0).expect("the dataset loads");
    ds.tasks
        .into_iter()
        .filter_map(|t| Some((squash(&t.prompt), t.canonical.clone()?)))
        .collect()
}

/// Whitespace-insensitive text: prompts reach the server with blank-line runs collapsed.
pub fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The canonical program of the task a Debug-agent request is about, fenced as an answer
/// ("" when no task's prompt is in the request).
pub fn canonical_answer(solutions: &[(String, String)], req: &Request) -> String {
    let user = squash(&req.user);
    let code = solutions
        .iter()
        .find(|(prompt, _)| user.contains(prompt.as_str()))
        .map(|(_, code)| code.as_str())
        .unwrap_or_default();
    fenced(code)
}

/// The rgd binary under `/usr/bin/time`, which writes its peak RSS (kB) to `rss`; private home,
/// the loopback endpoint, run from the checkout.
pub fn rgd_timed(home: &std::path::Path, base_url: &str, rss: &std::path::Path) -> std::process::Command {
    rgd_timed_bin(std::path::Path::new(env!("CARGO_BIN_EXE_rgd")), home, base_url, rss)
}

/// The same with another rgd binary (an earlier build, measured side by side).
pub fn rgd_timed_bin(bin: &std::path::Path, home: &std::path::Path, base_url: &str, rss: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("/usr/bin/time");
    cmd.arg("-o").arg(rss).args(["-f", "%M"]).arg(bin);
    test_env(&mut cmd, home, base_url);
    cmd
}

/// The peak RSS in MB that `/usr/bin/time` wrote for `rgd_timed`.
pub fn peak_rss_mb(rss: &std::path::Path) -> f64 {
    let text = std::fs::read_to_string(rss).expect("/usr/bin/time wrote the peak RSS");
    text.trim().lines().last().and_then(|l| l.trim().parse::<f64>().ok()).unwrap_or(0.0) / 1024.0
}

/// A project directory holding these files (path, text).
pub fn project_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("a file has a parent")).expect("creating the project's directories");
        std::fs::write(p, text).expect("writing the project's file");
    }
    dir
}

/// An interpreter with pytest: $RGD_TEST_PYTHON (`.ci/test` installs pytest into its venv), else
/// python3 if it has pytest; without one, a loud SKIPPED line and `None` (the caller checks
/// nothing).
pub fn pytest_python() -> Option<std::path::PathBuf> {
    let candidates = [std::env::var("RGD_TEST_PYTHON").ok(), Some("python3".to_string())];
    for c in candidates.into_iter().flatten() {
        let ok = std::process::Command::new(&c)
            .args(["-m", "pytest", "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(std::path::PathBuf::from(c));
        }
    }
    // Under CI a missing interpreter is a broken set-up, not a reason to pass: `.ci/test` makes one.
    assert!(
        std::env::var_os("CI").is_none(),
        "no interpreter with pytest under CI (RGD_TEST_PYTHON={:?}): the repository-mode tests cannot run",
        std::env::var_os("RGD_TEST_PYTHON")
    );
    eprintln!(
        "\n{0}\nSKIPPED: no interpreter with pytest (set RGD_TEST_PYTHON)\n{0}\n",
        "!".repeat(70)
    );
    None
}

/// Every file under `dir` with its bytes, sorted: equal snapshots mean nothing changed.
pub fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).expect("reading a project file")))
        .collect();
    v.sort();
    v
}

/// A copy of the directory `from` at `to` (files and folders; links as what they point at).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    for entry in walkdir::WalkDir::new(from).into_iter().flatten() {
        let target = to.join(entry.path().strip_prefix(from).expect("under the copied folder"));
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).expect("making a folder of the copy");
        } else {
            std::fs::copy(entry.path(), &target).expect("copying a file");
        }
    }
}
