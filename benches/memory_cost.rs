//! `cargo bench --bench memory_cost`: what the memory pool costs a sweep. All 500 MBPP tasks
//! through the real binary against the scripted loopback server, which answers at once with each
//! task's canonical code (every task is solved in its first iteration, so the run measures rgd),
//! concurrency 8, once with `--no-memory` and once with the pool on (each solved task is stored:
//! keywords, embedding, sled, BM25), side by side. Wall time and peak RSS (`/usr/bin/time`).
//! Targets: memory on <= 1.5x the wall time of memory off; peak RSS <= 250 MB.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Instant;

use support::{Reply, ScriptedServer, temp_home};

/// (wall seconds, peak RSS in MB)
async fn sweep(memory: bool, solutions: Arc<Vec<(String, String)>>) -> (f64, f64) {
    let script = Arc::new(move |req: &support::Request| {
        Reply::Text(match req.purpose {
            "debug_init" | "debug_fix" => support::canonical_answer(&solutions, req),
            "keywords" => "list, loop, string".to_string(),
            _ => "Implement the function as described.".to_string(),
        })
    });
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let rss = home.path().join("rss");
    let mut cmd = support::rgd_timed(home.path(), &server.base_url(), &rss);
    cmd.args(["sweep", "--dataset", "mbpp", "--concurrency", "8", "--max-iters", "1", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if !memory {
        cmd.arg("--no-memory");
    }
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    let kb: f64 = std::fs::read_to_string(&rss)
        .unwrap()
        .trim()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    (secs, kb / 1024.0)
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let solutions = Arc::new(support::canonical_by_prompt("mbpp"));
    // The embedding model is fetched once, outside the measurement.
    rgd::memory::assets::ensure(&|l| eprintln!("{l}")).expect("the embedding model installs");
    println!("MBPP sweep, {} tasks, instant scripted model, concurrency 8", solutions.len());
    let (off_secs, off_rss) = sweep(false, solutions.clone()).await;
    println!("  --no-memory:  {off_secs:6.1} s wall, peak RSS {off_rss:6.0} MB");
    let (on_secs, on_rss) = sweep(true, solutions.clone()).await;
    println!("  memory on:    {on_secs:6.1} s wall, peak RSS {on_rss:6.0} MB");
    println!(
        "  memory on / off: {:.2}x wall (target <= 1.5x), peak RSS {on_rss:.0} MB (target <= 250 MB)",
        on_secs / off_secs
    );
}
