//! `cargo bench --bench debugger`: what the debugger costs, on the real binary against the
//! scripted loopback server, driven through `--control stdio` as a script would drive it.
//! 1. Latency from `continue` (written to stdin) to the held effect starting (its `agent_request`
//!    event read from stdout), over every pause of a sweep with `--break before:agent`.
//! 2. CPU of a sweep whose tasks are all paused, over 10 s (target: about 0).
//! 3. The same sweep without breakpoints, with and without the debugger attached, side by side.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ScriptedServer, temp_home};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// CPU seconds (user + system) of a process so far, from /proc.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc");
    let fields: Vec<&str> = stat.rsplit_once(')').expect("stat").1.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn sweep(home: &std::path::Path, url: &str, args: &[&str]) -> std::process::Child {
    let mut cmd = support::rgd(home, url);
    cmd.args([
        "sweep",
        "--dataset",
        "humaneval",
        "--limit",
        "10",
        "--no-memory",
        "--max-iters",
        "2",
        "--json",
    ])
    .args(args)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    cmd.spawn().expect("rgd runs")
}

fn event(line: &str) -> Value {
    serde_json::from_str::<Value>(line).expect("json")["event"].clone()
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let server = ScriptedServer::start(support::learner::script("humaneval", 10)).await;
    let url = server.base_url();

    // 1. continue -> agent_request, every agent call of 10 tasks held once.
    let home = temp_home();
    let (home_path, url1) = (home.path().to_path_buf(), url.clone());
    let latencies = tokio::task::spawn_blocking(move || {
        let mut child = sweep(
            &home_path,
            &url1,
            &["--concurrency", "1", "--control", "stdio", "--break", "before:agent"],
        );
        let mut stdin = child.stdin.take().unwrap();
        let mut sent: Option<Instant> = None;
        let mut latencies = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let e = event(&line.unwrap());
            match e["type"].as_str() {
                Some("paused") => {
                    sent = Some(Instant::now());
                    writeln!(stdin, "{{\"cmd\":\"continue\"}}").unwrap();
                }
                Some("agent_request") => {
                    if let Some(t) = sent.take() {
                        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                    }
                }
                _ => {}
            }
        }
        child.wait().unwrap();
        latencies
    })
    .await
    .unwrap();
    let mut sorted = latencies.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "continue -> the held agent call starts: {} pauses, median {:.2} ms, p95 {:.2} ms, max {:.2} ms",
        sorted.len(),
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.95),
        sorted.last().unwrap()
    );

    // 2. Four tasks held before their Guide call: the process's CPU over 10 s.
    let home = temp_home();
    let (home_path, url2) = (home.path().to_path_buf(), url.clone());
    let (cpu, wall) = tokio::task::spawn_blocking(move || {
        let mut child = sweep(
            &home_path,
            &url2,
            &["--concurrency", "4", "--control", "stdio", "--break", "before:guide"],
        );
        let pid = child.id();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut paused = 0;
        while paused < 4 {
            let e = event(&lines.next().unwrap().unwrap());
            paused += usize::from(e["type"] == "paused");
        }
        std::thread::sleep(Duration::from_secs(1));
        let (c0, t0) = (cpu_seconds(pid), Instant::now());
        std::thread::sleep(Duration::from_secs(10));
        let (cpu, wall) = (cpu_seconds(pid) - c0, t0.elapsed().as_secs_f64());
        writeln!(stdin, "{{\"cmd\":\"break\",\"set\":\"\"}}").unwrap();
        writeln!(stdin, "{{\"cmd\":\"continue\"}}").unwrap();
        for _ in lines.by_ref() {}
        child.wait().unwrap();
        (cpu, wall)
    })
    .await
    .unwrap();
    println!(
        "4 tasks paused: {:.3} s of CPU in {wall:.1} s ({:.2}% of one core)",
        cpu,
        100.0 * cpu / wall
    );

    // 3. No breakpoint: the debugger attached or not, alternated, 3 runs each.
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for round in 0..6 {
        let home = temp_home();
        let (home_path, url3) = (home.path().to_path_buf(), url.clone());
        let attached = round % 2 == 0;
        let secs = tokio::task::spawn_blocking(move || {
            let args: &[&str] = if attached { &["--control", "stdio"] } else { &[] };
            let started = Instant::now();
            let mut child = sweep(&home_path, &url3, args);
            for _ in BufReader::new(child.stdout.take().unwrap()).lines() {}
            child.wait().unwrap();
            started.elapsed().as_secs_f64()
        })
        .await
        .unwrap();
        if attached { with.push(secs) } else { without.push(secs) }
    }
    with.sort_by(f64::total_cmp);
    without.sort_by(f64::total_cmp);
    println!(
        "10 tasks, no breakpoint: with the debugger {:.2} s, without {:.2} s (medians of 3, alternated)",
        with[1], without[1]
    );
}
