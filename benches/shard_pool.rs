//! `cargo bench --bench shard_pool`: what sharding changes in RGD's memory pool. The scripted model
//! of `tests/support/learner.rs` (first program wrong, the repair right) makes every task query
//! the pool once and be remembered once solved. A whole HumanEval and MBPP sweep, sequential
//! (concurrency 1, the paper's loop: each task sees every task solved before it), against the same
//! sweep in 4 shards, each starting from the same snapshot of the pool (empty here) and seeing
//! only its own shard's solutions; then `rgd runs merge` folds the shards' entries into the pool.
//! Printed: memory queries, hits, hits per task, and the pool's size after the merge (and after
//! merging again: nothing is folded twice).

#[path = "../tests/support/mod.rs"]
mod support;

use support::{ScriptedServer, temp_home};

/// (queries, hits, solved) from `--json` event lines.
fn count(stdout: &[u8]) -> (usize, usize, usize) {
    let (mut queries, mut hits, mut solved) = (0, 0, 0);
    for line in String::from_utf8_lossy(stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let event = &v["event"];
        match event["type"].as_str() {
            Some("memory_hit") => {
                queries += 1;
                hits += usize::from(event["hit"].is_object());
            }
            Some("task_finished") if event["result"]["passed"] == true => solved += 1,
            _ => {}
        }
    }
    (queries, hits, solved)
}

fn pool_size(home: &std::path::Path, url: &str) -> usize {
    let out = support::rgd(home, url).args(["memory", "stats"]).output().expect("rgd runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("entries"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no entry count in {text}"))
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("| dataset | sweep | tasks solved | memory queries | hits | hits per task | pool after merge | after merging again |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (dataset, tasks) in [("humaneval", 164), ("mbpp", 500)] {
        let server = ScriptedServer::start(support::learner::script(dataset, tasks)).await;
        let url = server.base_url();
        let sweep = ["sweep", "--dataset", dataset, "--max-iters", "3", "--concurrency", "1", "--json"];

        let home = temp_home();
        let out = support::rgd(home.path(), &url).args(sweep).output().expect("rgd runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (q, h, s) = count(&out.stdout);
        let pool = pool_size(home.path(), &url);
        println!(
            "| {dataset} | sequential | {s} | {q} | {h} | {:.2} | {pool} | - |",
            h as f64 / tasks as f64
        );

        let home = temp_home();
        let children: Vec<_> = (0..4)
            .map(|k| {
                support::rgd(home.path(), &url)
                    .args(sweep)
                    .args(["--shard", &format!("{k}/4"), "--run-id", &format!("p-s{k}")])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("rgd starts")
            })
            .collect();
        let (mut q, mut h, mut s) = (0, 0, 0);
        for child in children {
            let out = child.wait_with_output().expect("rgd runs");
            assert!(out.status.success());
            let c = count(&out.stdout);
            (q, h, s) = (q + c.0, h + c.1, s + c.2);
        }
        let shards: Vec<String> = (0..4).map(|k| format!("p-s{k}")).collect();
        let merge = |replace: bool| {
            let mut cmd = support::rgd(home.path(), &url);
            cmd.args(["runs", "merge", "--into", "p"]).args(&shards);
            if replace {
                cmd.arg("--replace");
            }
            let out = cmd.output().expect("rgd runs");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            pool_size(home.path(), &url)
        };
        let (once, twice) = (merge(false), merge(true));
        println!(
            "| {dataset} | 4 shards | {s} | {q} | {h} | {:.2} | {once} | {twice} |",
            h as f64 / tasks as f64
        );
    }
}
