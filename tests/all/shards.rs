//! Shards and merge on one machine: a sweep split in four, merged, equals the same sweep run
//! whole, task by task; runs of other sweeps, duplicates and missing parts are refused or named.

use crate::support;

use serde_json::Value;
use support::sweeps::{all_but_reverse_words, ok, results};
use support::{ScriptedServer, rgd, temp_home};

fn script() -> support::Script {
    all_but_reverse_words(std::time::Duration::ZERO)
}

fn fails(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
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

fn pool_entries(home: &std::path::Path, url: &str) -> usize {
    let stats = ok(rgd(home, url).args(["memory", "stats"]));
    stats
        .lines()
        .find_map(|l| l.strip_prefix("entries"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{stats}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn shards_start_from_a_pool_snapshot_and_merge_folds_their_entries_in_once() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let url = server.base_url();
    let (h, u) = (home.path().to_path_buf(), url.clone());
    tokio::task::spawn_blocking(move || {
        // The pool holds one entry before the sweep.
        let seed = h.join("seed.jsonl");
        let entry = serde_json::json!({"id": "SEED", "task_id": "Other/1", "entry_point": "other",
            "question": "Return the product of a and b.", "guidance": "Multiply.", "keywords": ["product"],
            "code": "def other(a, b):\n    return a * b\n", "run_id": null, "created_at": "2026-11-24T00:00:00Z"});
        std::fs::write(&seed, format!("{entry}\n")).unwrap();
        ok(rgd(&h, &u).args(["memory", "import"]).arg(&seed));
        let memory_sweep = ["sweep", "--dataset", "sample", "--max-iters", "2", "--concurrency", "1"];
        for k in 0..2 {
            let mut cmd = rgd(&h, &u);
            cmd.args(memory_sweep)
                .args(["--shard", &format!("{k}/2"), "--run-id", &format!("m-{k}")]);
            // The second starts from a snapshot file (as `rgd slurm submit` writes one), the
            // first from the main pool as it is.
            if k == 1 {
                cmd.arg("--memory-snapshot").arg(&seed);
            }
            ok(&mut cmd);
            let m: Value = serde_json::from_str(&std::fs::read_to_string(h.join(format!("runs/m-{k}/manifest.json"))).unwrap()).unwrap();
            assert_eq!(m["memory"]["entries"], 1, "the shard started from the snapshot: {}", m["memory"]);
            assert!(m["memory"]["note"].as_str().unwrap().contains("shard pool"), "{}", m["memory"]);
            assert!(h.join(format!("runs/m-{k}/pool-snapshot.jsonl")).is_file());
        }
        // The shards stored their solutions in their own pools, not the main one.
        assert_eq!(pool_entries(&h, &u), 1);
        let said = ok(rgd(&h, &u).args(["runs", "merge", "m-0", "m-1", "--into", "m"]));
        assert!(said.contains("5 solved"), "{said}");
        assert!(
            said.contains("the shards added 5 entries; 5 were new to the pool, which now holds 6"),
            "{said}"
        );
        assert_eq!(pool_entries(&h, &u), 6);
        // Merging again folds nothing twice.
        let said = ok(rgd(&h, &u).args(["runs", "merge", "m-0", "m-1", "--into", "m", "--replace"]));
        assert!(said.contains("0 were new to the pool, which now holds 6"), "{said}");
        // --replace never replaces a run that no merge made.
        let err = fails(rgd(&h, &u).args(["runs", "merge", "m-0", "m-1", "--into", "m-0", "--replace"]));
        assert!(err.contains("exists already"), "{err}");
    })
    .await
    .unwrap();
}
