//! `cargo bench --bench sweep`: the full HumanEval sweep through the real binary against the
//! scripted loopback server (answers are the canonical solutions, so every task is solved in one
//! iteration and the run measures rgd, not a model). Three runs, side by side:
//!   1. no answer latency, concurrency 16  (target: < 60 s wall for 164 tasks)
//!   2. 100 ms per answer, concurrency 1
//!   3. 100 ms per answer, concurrency 16  (target: >= 10x faster than 2)

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Reply, ScriptedServer, rgd, temp_home};

async fn sweep(latency: Duration, concurrency: usize, solutions: Arc<Vec<(String, String)>>) -> (f64, Value) {
    let script = Arc::new(move |req: &support::Request| {
        let text = match req.purpose {
            "debug_init" | "debug_fix" => support::canonical_answer(&solutions, req),
            _ => "Implement the function as the docstring says.".to_string(),
        };
        if latency.is_zero() {
            Reply::Text(text)
        } else {
            Reply::Delayed(latency, Box::new(Reply::Text(text)))
        }
    });
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let out = home.path().join("out");
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args([
        "sweep",
        "--dataset",
        "humaneval",
        "--concurrency",
        &concurrency.to_string(),
        "--out",
    ])
    .arg(&out)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    let started = Instant::now();
    let status = tokio::task::spawn_blocking(move || cmd.status().unwrap()).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert!(status.success());
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (secs, summary)
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks; there is nothing to list here
    }
    let solutions = Arc::new(support::canonical_by_prompt("humaneval"));
    println!(
        "HumanEval sweep, {} tasks, scripted loopback endpoint, default (wasm) sandbox, {} cores",
        solutions.len(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let (fast, summary) = sweep(Duration::ZERO, 16, solutions.clone()).await;
    println!(
        "  no latency,  concurrency 16: {fast:7.1} s wall  pass@1 {}  (target < 60 s)",
        summary["pass_at_1"]
    );
    let (serial, s1) = sweep(Duration::from_millis(100), 1, solutions.clone()).await;
    println!("  100 ms/answer, concurrency 1: {serial:7.1} s wall  pass@1 {}", s1["pass_at_1"]);
    let (parallel, s16) = sweep(Duration::from_millis(100), 16, solutions.clone()).await;
    println!(
        "  100 ms/answer, concurrency 16: {parallel:6.1} s wall  pass@1 {}",
        s16["pass_at_1"]
    );
    println!("  speed-up concurrency 16 vs 1: {:.1}x (target >= 10x)", serial / parallel);
}
