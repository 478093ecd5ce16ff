//! Shards and merge on one machine: a sweep split in four, merged, equals the same sweep run
//! whole, task by task; runs of other sweeps, duplicates and missing parts are refused or named.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, sample_solutions, temp_home};

/// Right for every task but reverse_words (whose answer stays wrong): solved and failed tasks both.
fn script() -> support::Script {
    let solutions = sample_solutions();
    Arc::new(move |req: &support::Request| match req.purpose {
        "guide_init" | "guide_refine" => Reply::Text("1. Do what the docstring says.".into()),
        "feedback" => Reply::Text("It is wrong.".into()),
        _ => {
            let entry = req.entry_point().unwrap_or_default();
            match solutions.get(&entry) {
                Some(code) if entry != "reverse_words" => Reply::Text(fenced(code)),
                _ => Reply::Text(fenced(&format!("def {entry}(*args):\n    return None\n"))),
            }
        }
    })
}

fn ok(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// task id -> (status, iterations, completion), from an exported results.jsonl.
fn results(dir: &std::path::Path) -> BTreeMap<String, (String, u64, String)> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            (
                r["task_id"].as_str().unwrap().to_string(),
                (
                    r["status"].as_str().unwrap().to_string(),
                    r["iterations"].as_u64().unwrap(),
                    r["completion"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

const SWEEP: [&str; 8] = [
    "sweep",
    "--dataset",
    "sample",
    "--no-memory",
    "--max-iters",
    "2",
    "--concurrency",
    "1",
];

#[tokio::test(flavor = "multi_thread")]
async fn four_shards_merged_equal_the_whole_sweep_task_by_task() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let url = server.base_url();
    let (h, u) = (home.path().to_path_buf(), url.clone());
    tokio::task::spawn_blocking(move || {
        let whole = h.join("whole");
        ok(rgd(&h, &u).args(SWEEP).args(["--run-id", "whole", "--out"]).arg(&whole));
        for k in 0..4 {
            ok(rgd(&h, &u)
                .args(SWEEP)
                .args(["--shard", &format!("{k}/4"), "--run-id", &format!("part-{k}")]));
        }
        // Each shard holds its part and knows the whole sweep.
        let m: Value = serde_json::from_str(&std::fs::read_to_string(h.join("runs/part-1/manifest.json")).unwrap()).unwrap();
        assert_eq!(
            m["dataset"]["selected"].as_array().unwrap().len(),
            2,
            "6 tasks in 4 shards: 1, 2, 1, 2"
        );
        assert_eq!(m["shard"]["sweep_tasks"].as_array().unwrap().len(), 6);
        assert_eq!((m["shard"]["index"].as_u64(), m["shard"]["count"].as_u64()), (Some(1), Some(4)));

        let merged = h.join("merged");
        let said = ok(rgd(&h, &u)
            .args(["runs", "merge", "part-0", "part-1", "part-2", "part-3", "--into", "merged", "--out"])
            .arg(&merged));
        assert!(said.contains("6 of 6 tasks"), "{said}");
        assert_eq!(results(&merged), results(&whole));
        let whole_summary: Value = serde_json::from_str(&std::fs::read_to_string(whole.join("summary.json")).unwrap()).unwrap();
        let merged_summary: Value = serde_json::from_str(&std::fs::read_to_string(merged.join("summary.json")).unwrap()).unwrap();
        for key in ["solved", "failed", "pass_at_1", "solved_per_iteration", "tokens"] {
            assert_eq!(merged_summary[key], whole_summary[key], "{key}");
        }
        // The merged run is a run like any other: it shows, and compares with the whole sweep.
        let shown = ok(rgd(&h, &u).args(["runs", "show", "merged"]));
        assert!(shown.contains("Finished · 6/6 finished"), "{shown}");
        let compared = ok(rgd(&h, &u).args(["compare", "whole", "merged", "--json"]));
        let c: Value = serde_json::from_str(&compared).unwrap();
        let p = &c["paired"][0];
        assert_eq!(
            (p["only_first"].as_array().map(Vec::len), p["only_other"].as_array().map(Vec::len)),
            (Some(0), Some(0)),
            "{compared}"
        );

        // Three of four shards: merged, and named partial.
        let said = ok(rgd(&h, &u).args(["runs", "merge", "part-0", "part-1", "part-2"]));
        assert!(
            said.contains("partial: 4 of 6 tasks") && said.contains("missing shards: 3"),
            "{said}"
        );
        // The same task from two runs: refused, unless told which to keep.
        let err = fails(rgd(&h, &u).args(["runs", "merge", "part-0", "whole"]));
        assert!(err.contains("was finished by 2 runs") && err.contains("--prefer"), "{err}");
        let said = ok(rgd(&h, &u).args(["runs", "merge", "part-0", "whole", "--prefer", "newest"]));
        assert!(said.contains("6 of 6 tasks"), "{said}");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_of_other_sweeps_are_refused_and_a_shard_run_again_resumes() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let url = server.base_url();
    let (h, u) = (home.path().to_path_buf(), url.clone());
    let counts = tokio::task::spawn_blocking(move || {
        ok(rgd(&h, &u).args(SWEEP).args(["--shard", "0/2", "--run-id", "a-0"]));
        let calls = || -> usize { std::fs::read_dir(h.join("runs")).map(|d| d.count()).unwrap_or(0) };
        let runs_before = calls();
        // Run again under the same id: resumed, nothing repeated.
        let again = rgd(&h, &u)
            .args(SWEEP)
            .args(["--shard", "0/2", "--run-id", "a-0"])
            .output()
            .unwrap();
        assert!(again.status.success());
        assert!(
            String::from_utf8_lossy(&again.stderr).contains("resuming run a-0"),
            "{}",
            String::from_utf8_lossy(&again.stderr)
        );
        assert_eq!(calls(), runs_before);
        // Another configuration (more iterations) is another sweep.
        ok(rgd(&h, &u).args([
            "sweep",
            "--dataset",
            "sample",
            "--no-memory",
            "--max-iters",
            "3",
            "--shard",
            "1/2",
            "--run-id",
            "b-1",
        ]));
        let err = fails(rgd(&h, &u).args(["runs", "merge", "a-0", "b-1"]));
        assert!(err.contains("are not parts of one sweep: their configuration"), "{err}");
        let err = fails(rgd(&h, &u).args(["sweep", "--dataset", "sample", "--shard", "2/2"]));
        assert!(err.contains("K counts from 0 and is below N"), "{err}");
    })
    .await;
    counts.unwrap();
    // The resumed shard made no LLM call: 3 tasks' calls only, once.
    let first_shard_calls = server.requests().iter().filter(|r| r.purpose != "unknown").count();
    assert!(first_shard_calls > 0);
}
