//! `cargo bench --bench memory_cost`: what the memory pool costs a sweep. All 500 MBPP tasks
//! through the real binary against the scripted loopback server, which answers at once with each
//! task's canonical code (every task is solved in its first iteration, so the run measures rgd),
//! concurrency 8, with `--no-memory` and with the pool on (each solved task is stored: keywords,
//! embedding, sled, BM25), alternated for `RGD_BENCH_ROUNDS` rounds (5) so the machine's noise
//! falls on both. Wall time and peak RSS (`/usr/bin/time`): medians and ranges.
//! `RGD_BENCH_BEFORE=/path/to/an/earlier/rgd` adds that binary's memory-on sweep to each round.
//! Targets (issue 33): memory on <= 1.5x memory off, in wall time and in peak RSS.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::Instant;

use support::{Reply, ScriptedServer, temp_home};

/// (wall seconds, peak RSS in MB)
async fn sweep(bin: &std::path::Path, memory: bool, solutions: Arc<Vec<(String, String)>>) -> (f64, f64) {
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
    let mut cmd = support::rgd_timed_bin(bin, home.path(), &server.base_url(), &rss);
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
    (secs, support::peak_rss_mb(&rss))
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let solutions = Arc::new(support::canonical_by_prompt("mbpp"));
    // The embedding model is fetched once, outside the measurement.
    rgd::memory::assets::ensure(&|l| eprintln!("{l}")).expect("the embedding model installs");
    let rounds: usize = std::env::var("RGD_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    println!(
        "MBPP sweep, {} tasks, instant scripted model, concurrency 8, {rounds} rounds alternated",
        solutions.len()
    );
    let this = std::path::PathBuf::from(env!("CARGO_BIN_EXE_rgd"));
    let before = std::env::var_os("RGD_BENCH_BEFORE").map(std::path::PathBuf::from);
    let (mut off, mut on, mut earlier) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=rounds {
        off.push(sweep(&this, false, solutions.clone()).await);
        on.push(sweep(&this, true, solutions.clone()).await);
        let (o, m) = (off[round - 1], on[round - 1]);
        print!(
            "  round {round}: --no-memory {:.1} s {:.0} MB, memory on {:.1} s {:.0} MB",
            o.0, o.1, m.0, m.1
        );
        if let Some(bin) = &before {
            let b = sweep(bin, true, solutions.clone()).await;
            print!(", the earlier binary's memory on {:.1} s {:.0} MB", b.0, b.1);
            earlier.push(b);
        }
        println!();
    }
    let summary = |runs: &[(f64, f64)], pick: fn(&(f64, f64)) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(pick).collect();
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let (off_secs, off_rss) = (summary(&off, |r| r.0), summary(&off, |r| r.1));
    let (on_secs, on_rss) = (summary(&on, |r| r.0), summary(&on, |r| r.1));
    println!(
        "  --no-memory: wall {:.1} s ({:.1}-{:.1}), peak RSS {:.0} MB ({:.0}-{:.0})",
        off_secs.0, off_secs.1, off_secs.2, off_rss.0, off_rss.1, off_rss.2
    );
    println!(
        "  memory on:   wall {:.1} s ({:.1}-{:.1}), peak RSS {:.0} MB ({:.0}-{:.0})",
        on_secs.0, on_secs.1, on_secs.2, on_rss.0, on_rss.1, on_rss.2
    );
    if !earlier.is_empty() {
        let (secs, rss) = (summary(&earlier, |r| r.0), summary(&earlier, |r| r.1));
        println!(
            "  earlier binary, memory on: wall {:.1} s ({:.1}-{:.1}), peak RSS {:.0} MB ({:.0}-{:.0}): {:.2}x memory off",
            secs.0,
            secs.1,
            secs.2,
            rss.0,
            rss.1,
            rss.2,
            rss.0 / off_rss.0
        );
    }
    println!(
        "  memory on / off (medians): {:.2}x wall, {:.2}x peak RSS (targets <= 1.5x each)",
        on_secs.0 / off_secs.0,
        on_rss.0 / off_rss.0
    );
}
