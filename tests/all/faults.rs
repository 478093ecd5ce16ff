//! A misbehaving endpoint: 429, 500s, a hanging answer, an answer without code, truncated JSON,
//! and an endpoint that never recovers. The sweep completes and records each.

use crate::support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

#[tokio::test(flavor = "multi_thread")]
async fn sweep_survives_a_misbehaving_endpoint() {
    let solutions = support::sample_solutions();
    let calls: Arc<Mutex<HashMap<(String, &'static str), usize>>> = Arc::default();
    let script = {
        let calls = calls.clone();
        Arc::new(move |req: &support::Request| {
            let entry = req.entry_point().unwrap_or_default();
            let n = {
                let mut calls = calls.lock().unwrap();
                let n = calls.entry((entry.clone(), req.purpose)).or_default();
                *n += 1;
                *n
            };
            let normal = || match req.purpose {
                "debug_init" | "debug_fix" => Reply::Text(fenced(&solutions[&entry])),
                _ => Reply::Text("Follow the docstring exactly.".into()),
            };
            match (entry.as_str(), req.purpose, n) {
                ("add", "guide_init", 1) => Reply::Status(429, "slow down".into()),
                ("reverse_words", "debug_init", 1 | 2) => Reply::Status(500, "internal error".into()),
                ("is_palindrome", "guide_init", 1) => Reply::Hang,
                ("running_max", "debug_init", _) => Reply::Text("I am not able to write code today.".into()),
                ("count_vowels", "guide_init", 1) => Reply::Truncated,
                ("fizzbuzz", "guide_init", _) => Reply::Status(503, "overloaded".into()),
                _ => normal(),
            }
        })
    };
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let config = home.path().join("rgd.toml");
    std::fs::write(
        &config,
        "[llm]\nretries = 3\nbackoff_min_ms = 20\nbackoff_max_ms = 100\ntimeout_secs = 1.5\n",
    )
    .unwrap();
    let out_dir = home.path().join("out");
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["sweep", "--dataset", "sample", "--concurrency", "3", "--json", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out_dir);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    // The sweep completes; fizzbuzz, which the endpoint never answered, is left for --resume,
    // and the status says so.
    assert_eq!(out.status.code(), Some(75), "{}", String::from_utf8_lossy(&out.stderr));

    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let results: HashMap<String, Value> = std::fs::read_to_string(out_dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["task_id"].as_str().unwrap().to_string(), v))
        .collect();
    assert_eq!(results.len(), 6, "every task is recorded");
    let status = |id: &str| results[id]["status"].as_str().unwrap().to_string();

    // Recovered faults: each task solved, each retry recorded with the kind of failure.
    let retries_of = |task: &str| -> Vec<String> {
        events
            .iter()
            .map(|e| &e["event"])
            .filter(|e| e["type"] == "agent_retry" && e["task_id"] == task)
            .map(|e| e["error"]["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(status("Sample/1"), "solved");
    assert_eq!(retries_of("Sample/1"), ["rate_limited"]);
    assert_eq!(status("Sample/2"), "solved");
    assert_eq!(retries_of("Sample/2"), ["server", "server"]);
    assert_eq!(status("Sample/3"), "solved");
    assert_eq!(retries_of("Sample/3"), ["timeout"]);
    assert_eq!(status("Sample/5"), "solved");
    assert_eq!(retries_of("Sample/5"), ["garbage"]);
    let attempts: Vec<u64> = events
        .iter()
        .map(|e| &e["event"])
        .filter(|e| e["type"] == "agent_response" && e["task_id"] == "Sample/2" && e["purpose"] == "debug_init")
        .map(|e| e["attempts"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [3]);

    // An answer without code is an iteration outcome: the Feedback agent hears of it and the
    // repaired attempt (debug_fix) solves the task.
    assert_eq!(status("Sample/4"), "solved");
    assert_eq!(results["Sample/4"]["first_pass_iteration"], 2);
    let no_code = events
        .iter()
        .map(|e| &e["event"])
        .find(|e| e["type"] == "code_extracted" && e["task_id"] == "Sample/4")
        .unwrap();
    assert_eq!(no_code["problem"]["problem"], "no_code");
    let feedback = server
        .requests()
        .into_iter()
        .find(|r| r.purpose == "feedback" && r.user.contains("running_max"));
    assert!(feedback.unwrap().user.contains("contained no Python code block"));

    // An endpoint that never recovers for one task: after 1 + 3 attempts the task is left
    // unfinished (the endpoint failed, not the method), for a resume to run again.
    assert_eq!(status("Sample/6"), "endpoint_failed");
    let error = results["Sample/6"]["error"].as_str().unwrap();
    assert!(
        error.contains("guide agent: server error (HTTP 503): overloaded (after 4 attempts)"),
        "{error}"
    );
    assert_eq!(calls.lock().unwrap()[&("fizzbuzz".to_string(), "guide_init")], 4);

    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!((summary["solved"].as_u64(), summary["errors"].as_u64()), (Some(5), Some(0)));
    assert_eq!(summary["unfinished"], serde_json::json!(["Sample/6"]));
}
