//! One memory pool for several rgd processes on one `RGD_HOME`, through the real binary, the real
//! pool (sled, tantivy, the embedding model) and the loopback server: two sweeps with memory on at
//! the same time, `memory list` and `memory search` while they run, the first sweep's exit handing
//! the pool to the second; afterwards every solved task of both is in the pool exactly once. And
//! when the owner holds the pool but never answers, the error names its pid.

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Reply, ScriptedServer, rgd, temp_home};

/// Every Debug request gets its task's canonical code after a pause, so that both sweeps are
/// still running while the other starts and while the pool is read.
fn script() -> support::Script {
    let mut solutions = support::canonical_by_prompt("humaneval");
    solutions.extend(support::canonical_by_prompt("mbpp"));
    let solutions = Arc::new(solutions);
    Arc::new(move |req: &support::Request| match req.purpose {
        "debug_init" | "debug_fix" => Reply::Delayed(
            Duration::from_millis(400),
            Box::new(Reply::Text(support::canonical_answer(&solutions, req))),
        ),
        "keywords" => Reply::Text("list, loop, numbers".into()),
        _ => Reply::Text("1. Do what the description says.".into()),
    })
}

fn sweep(home: &Path, base_url: &str, dataset: &str, limit: usize, out: &Path) -> Command {
    let mut cmd = rgd(home, base_url);
    cmd.args([
        "sweep",
        "--dataset",
        dataset,
        "--limit",
        &limit.to_string(),
        "--max-iters",
        "2",
        "--out",
    ])
    .arg(out)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    cmd
}

/// The pid written in the pool's owner lock, once there is one.
fn owner_pid(home: &Path) -> Option<u32> {
    std::fs::read_to_string(home.join("memory/owner.lock")).ok()?.trim().parse().ok()
}

fn solved(out: &Path) -> Vec<String> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["passed"] == true)
        .map(|r| r["task_id"].as_str().unwrap().to_string())
        .collect()
}

fn memory(home: &Path, base_url: &str, args: &[&str]) -> std::process::Output {
    rgd(home, base_url).arg("memory").args(args).output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sweeps_share_one_pool_and_store_every_solved_task_once() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let (h, url) = (home.path().to_path_buf(), server.base_url());
    let (out_a, out_b) = (h.join("out-a"), h.join("out-b"));

    tokio::task::block_in_place(|| {
        // A: 3 HumanEval tasks. B, started once A owns the pool: 8 MBPP tasks, so B outlives A
        // and takes the pool over when A exits.
        let a = sweep(&h, &url, "humaneval", 3, &out_a).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while owner_pid(&h) != Some(a.id()) {
            assert!(Instant::now() < deadline, "sweep A never opened the pool");
            std::thread::sleep(Duration::from_millis(50));
        }
        let b = sweep(&h, &url, "mbpp", 8, &out_b).spawn().unwrap();

        // While both run: the pool lists and searches from a third process.
        std::thread::sleep(Duration::from_millis(1500));
        let listed = memory(&h, &url, &["list", "--json"]);
        assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
        let searched = memory(&h, &url, &["search", "sum of a list of numbers", "--json"]);
        assert!(searched.status.success(), "{}", String::from_utf8_lossy(&searched.stderr));

        let a = a.wait_with_output().unwrap();
        assert!(a.status.success(), "A: {}", String::from_utf8_lossy(&a.stderr));
        let b = b.wait_with_output().unwrap();
        let b_said = String::from_utf8_lossy(&b.stderr);
        assert!(b.status.success(), "B: {b_said}");
        assert!(b_said.contains("owned by another rgd process"), "B started as A's guest: {b_said}");
    });

    // Every solved task of both sweeps, exactly once; nothing else.
    let mut expected = solved(&out_a);
    let from_b = solved(&out_b);
    assert_eq!(expected.len(), 3, "A solves its tasks");
    assert!(from_b.len() >= 7, "B solves its tasks: {from_b:?}");
    expected.extend(from_b);
    expected.sort();
    let listed = memory(&h, &url, &["list", "--json"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let mut stored: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["task_id"].as_str().unwrap().to_string())
        .collect();
    stored.sort();
    assert_eq!(stored, expected);
    let mut counts: HashMap<&str, usize> = HashMap::new();
    stored.iter().for_each(|t| *counts.entry(t).or_default() += 1);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
}

#[test]
fn an_owner_that_never_answers_is_named_by_its_pid() {
    let home = temp_home();
    let dir = home.path().join("memory");
    std::fs::create_dir_all(&dir).unwrap();
    // This test process plays an owner that hung: it holds the lock, writes its pid, and never
    // listens on the pool's socket.
    let mut lock = std::fs::File::create(dir.join("owner.lock")).unwrap();
    lock.try_lock().unwrap();
    use std::io::Write;
    writeln!(lock, "{}", std::process::id()).unwrap();
    let out = memory(home.path(), "http://127.0.0.1:9/v1", &["list"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        said.contains(&format!("owned by rgd process {}", std::process::id())) && said.contains("does not answer"),
        "{said}"
    );
    drop(lock);
    // Once it is gone, the next process owns the pool.
    let out = memory(home.path(), "http://127.0.0.1:9/v1", &["list"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
