//! `cargo bench --bench memory_hits`: how often RGD's Guide gets a memory hit in a whole HumanEval
//! and a whole MBPP sweep, at the old threshold (0.5) and the measured one (0.8). The model is the
//! scripted one of `tests/support/learner.rs` (first program wrong, the repair right), so every
//! task fails its first iteration, queries the pool once (holding every task solved before it in
//! the sweep, concurrency 1 as the paper's sequential loop), and is remembered once solved. The
//! pool starts empty; the real embedder, sled and tantivy serve it. Printed per sweep: queries,
//! hits, the hits' cosine, and a few hits so a reader can judge whether they are related.

#[path = "../tests/support/mod.rs"]
mod support;

use support::{ScriptedServer, temp_home};

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("| dataset | threshold | tasks solved | memory queries | hits | hit rate | median hit cosine |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut examples = Vec::new();
    for (dataset, tasks) in [("humaneval", 164), ("mbpp", 500)] {
        let server = ScriptedServer::start(support::learner::script(dataset, tasks)).await;
        for threshold in ["0.5", "0.8"] {
            let home = temp_home();
            let mut cmd = support::rgd(home.path(), &server.base_url());
            cmd.args(["sweep", "--dataset", dataset, "--max-iters", "3", "--concurrency", "1", "--json"])
                .args(["--memory-threshold", threshold])
                .stderr(std::process::Stdio::null());
            let out = cmd.output().expect("rgd runs");
            assert!(out.status.success(), "{dataset} at {threshold}: rgd failed");
            let (mut queries, mut cosines, mut solved) = (0, Vec::new(), 0);
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                let event = &v["event"];
                match event["type"].as_str() {
                    Some("memory_hit") => {
                        queries += 1;
                        if let Some(hit) = event["hit"].as_object() {
                            cosines.push(hit["sbert"].as_f64().unwrap_or(0.0));
                            if threshold == "0.8" && examples.len() < 8 && cosines.len() % 7 == 1 {
                                examples.push(format!(
                                    "{} -> {} (cosine {:.2})",
                                    event["task_id"].as_str().unwrap_or("?"),
                                    hit["task_id"].as_str().unwrap_or("?"),
                                    hit["sbert"].as_f64().unwrap_or(0.0)
                                ));
                            }
                        }
                    }
                    Some("task_finished") if event["result"]["passed"] == true => solved += 1,
                    _ => {}
                }
            }
            cosines.sort_by(f64::total_cmp);
            let median = cosines.get(cosines.len() / 2).map_or("-".to_string(), |c| format!("{c:.2}"));
            println!(
                "| {dataset} | {threshold} | {solved} | {queries} | {} | {:.0}% | {median} |",
                cosines.len(),
                100.0 * cosines.len() as f64 / queries.max(1) as f64
            );
        }
    }
    println!("\nsome hits at 0.8 (query task -> remembered task):");
    for e in examples {
        println!("  {e}");
    }
}
