//! `cargo bench --bench report`: how long `rgd report` takes for 6 runs x 164 HumanEval tasks
//! (target: under 2 s). The runs are made first against the scripted loopback server with the
//! learner model of `tests/support/learner.rs` (direct, cot, self-planning, self-debug, ldb, rgd;
//! max 3 iterations), then the report is timed three times, whole process, from the command line.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use support::{ScriptedServer, temp_home};

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let server = ScriptedServer::start(support::learner::script("humaneval", 164)).await;
    let home = temp_home();
    let strategies = ["direct", "cot", "self-planning", "self-debug", "ldb", "rgd"];
    let made = Instant::now();
    for s in strategies {
        let status = support::rgd(home.path(), &server.base_url())
            .args([
                "sweep",
                "--dataset",
                "humaneval",
                "--max-iters",
                "3",
                "--concurrency",
                "4",
                "--no-memory",
                "--strategy",
                s,
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("rgd runs");
        assert!(status.success(), "{s}");
    }
    println!("made 6 runs x 164 tasks in {:.0} s", made.elapsed().as_secs_f64());
    let ids: Vec<String> = {
        let out = support::rgd(home.path(), "http://127.0.0.1:9")
            .args(["runs", "list", "--json"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["run_id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(ids.len(), 6);
    let mut times = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let out = support::rgd(home.path(), "http://127.0.0.1:9")
            .arg("report")
            .args(&ids)
            .arg("--out")
            .arg(home.path().join("report"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        times.push(started.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let size = std::fs::metadata(home.path().join("report/report.html"))
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "rgd report, 6 runs x 164 tasks: median {:.2} s (runs {:.2} / {:.2} / {:.2} s; target < 2 s); report.html {} KB",
        times[1],
        times[0],
        times[1],
        times[2],
        size / 1024
    );
}
