//! `cargo bench --bench recording`: what recording a run costs. The 164 HumanEval tasks through the
//! binary against the scripted loopback server, which streams every answer in small chunks
//! (canonical code, so every task is solved in one iteration), concurrency 8. Wall time, events
//! recorded per second, the run database's size on disk (and the share of token events), and peak
//! RSS (`/usr/bin/time`). Target: the store's size for token events falls at least 5x when streamed
//! tokens are coalesced in the record.

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use support::{Reply, ScriptedServer, temp_home};

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let solutions = Arc::new(support::canonical_by_prompt("humaneval"));
    let script = Arc::new(move |req: &support::Request| {
        Reply::Text(match req.purpose {
            "debug_init" | "debug_fix" => support::canonical_answer(&solutions, req),
            _ => "Implement the function as the docstring says, step by step, with care for the edge cases.".to_string(),
        })
    });
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let rss = home.path().join("rss");
    let mut cmd = support::rgd_timed(home.path(), &server.base_url(), &rss);
    cmd.args(["sweep", "--dataset", "humaneval", "--concurrency", "8", "--no-memory", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert!(out.status.success());
    // The live stream (every event, tokens one by one) against what was recorded.
    let live = String::from_utf8_lossy(&out.stdout);
    let live_events = live.lines().count();
    let live_tokens = live.lines().filter(|l| l.contains("\"type\":\"agent_tokens\"")).count();
    let peak = support::peak_rss_mb(&rss);
    let runs = home.path().join("runs");
    let run = std::fs::read_dir(&runs).unwrap().flatten().next().unwrap().path();
    let db = dir_size(&run.join("db"));
    let run_id = run.file_name().unwrap().to_string_lossy().into_owned();
    let store = rgd::store::RunStore::open(
        &rgd::store::Home {
            root: home.path().to_path_buf(),
        },
        &run_id,
    )
    .unwrap();
    let (mut recorded, mut token_records, mut token_bytes, mut all_bytes) = (0usize, 0usize, 0usize, 0usize);
    for envelope in store.events() {
        let envelope = envelope.unwrap();
        let bytes = serde_json::to_vec(&envelope).unwrap().len();
        recorded += 1;
        all_bytes += bytes;
        if matches!(envelope.event, rgd::engine::Event::AgentTokens { .. }) {
            token_records += 1;
            token_bytes += bytes;
        }
    }
    println!("HumanEval sweep, 164 tasks, streamed answers, concurrency 8, memory off");
    println!("  wall {secs:.1} s, peak RSS {peak:.0} MB");
    println!(
        "  live events {live_events} ({live_tokens} token events), {:.0} events/s",
        live_events as f64 / secs
    );
    println!(
        "  recorded {recorded} events ({token_records} token records), {:.0} recorded/s",
        recorded as f64 / secs
    );
    println!(
        "  record payload {:.2} MB, of which token records {:.2} MB; database on disk {:.1} MB",
        all_bytes as f64 / 1e6,
        token_bytes as f64 / 1e6,
        db as f64 / 1e6
    );
}
