//! kill -9 at arbitrary points of a sweep, then `--resume`: every task finishes exactly once.

use crate::support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{ScriptedServer, rgd, temp_home};

#[tokio::test(flavor = "multi_thread")]
async fn killed_sweep_resumes_without_losing_or_repeating_tasks() {
    let server = ScriptedServer::start(support::solving_script(Duration::from_millis(250))).await;
    let home = temp_home();
    let home_path = home.path().to_path_buf();

    // Start, then kill -9 twice at different points, resuming in between.
    let mut finished_at_kill = Vec::new();
    for (round, kill_after) in [1usize, 3].into_iter().enumerate() {
        let mut cmd = rgd(&home_path, &server.base_url());
        if round == 0 {
            cmd.args(["sweep", "--dataset", "sample", "--concurrency", "2"]);
        } else {
            cmd.args(["sweep", "--resume", &support::only_run(&home_path)]);
        }
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while support::finished_in_statuses(&home_path) < kill_after {
            assert!(started.elapsed() < Duration::from_secs(60), "sweep made no progress");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        child.kill().unwrap(); // SIGKILL: no destructor, no flush, no goodbye
        child.wait().unwrap();
        finished_at_kill.push(support::finished_in_statuses(&home_path));
    }
    let list = rgd(&home_path, &server.base_url()).args(["runs", "list"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("interrupted"),
        "a killed run shows as interrupted"
    );

    let out_dir = home_path.join("out");
    let mut cmd = rgd(&home_path, &server.base_url());
    cmd.args(["sweep", "--resume", &support::only_run(&home_path), "--out"])
        .arg(&out_dir);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let events: Vec<Value> = String::from_utf8(
        rgd(&home_path, &server.base_url())
            .args(["runs", "show", &support::only_run(&home_path), "--events"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let mut finished: HashMap<String, usize> = HashMap::new();
    let mut started: HashMap<String, usize> = HashMap::new();
    let mut first_finish_seq: HashMap<String, u64> = HashMap::new();
    for e in &events {
        let ev = &e["event"];
        match ev["type"].as_str().unwrap() {
            "task_finished" => {
                let id = ev["result"]["task_id"].as_str().unwrap().to_string();
                first_finish_seq.entry(id.clone()).or_insert(e["seq"].as_u64().unwrap());
                *finished.entry(id).or_default() += 1;
            }
            "task_started" => *started.entry(ev["task_id"].as_str().unwrap().to_string()).or_default() += 1,
            _ => {}
        }
    }
    assert_eq!(finished.len(), 6, "no task lost: {finished:?}");
    assert!(finished.values().all(|&n| n == 1), "no task finished twice: {finished:?}");
    // A task that had finished was never started again after that.
    for e in &events {
        if e["event"]["type"] == "task_started" {
            let id = e["event"]["task_id"].as_str().unwrap();
            assert!(
                e["seq"].as_u64().unwrap() < first_finish_seq[id],
                "{id} restarted after it had finished"
            );
        }
    }
    assert!(finished_at_kill[0] >= 1 && finished_at_kill[1] >= 3, "{finished_at_kill:?}");
    assert_eq!(events.iter().filter(|e| e["event"]["type"] == "run_resumed").count(), 2);
    let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] > w[0]),
        "sequence numbers keep increasing across resumes"
    );

    let results = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 6);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["solved"], 6);
    assert!(summary["unfinished"].as_array().unwrap().is_empty());
}
