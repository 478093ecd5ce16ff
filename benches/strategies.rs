//! `cargo bench --bench strategies`: every strategy on HumanEval tasks 0-19 against the scripted
//! loopback server with a model whose behaviour is known (`tests/support/learner.rs`: its first
//! program for a task is wrong, every repair right). The table shows each method's mechanics and
//! cost: who repairs, at which iteration, with how many calls and how much prompt text. It says
//! nothing about any real model.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use support::{ScriptedServer, temp_home};

const STRATEGIES: [&str; 8] = [
    "direct",
    "cot",
    "self-planning",
    "self-debug",
    "ldb",
    "reflexion",
    "mapcoder",
    "rgd",
];

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let server = ScriptedServer::start(support::learner::script("humaneval", 20)).await;
    println!("every strategy on HumanEval 0-19, scripted model (first program wrong, repairs right), --max-iters 3");
    println!("| strategy | solved | first solved at iteration | LLM calls | prompt characters sent | unsolved | wall |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for strategy in STRATEGIES {
        let home = temp_home();
        let out = home.path().join("out");
        let mut cmd = support::rgd(home.path(), &server.base_url());
        cmd.args([
            "sweep",
            "--dataset",
            "humaneval",
            "--limit",
            "20",
            "--max-iters",
            "3",
            "--concurrency",
            "2",
            "--strategy",
            strategy,
        ])
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        let asked_before = server.requests().len();
        let started = Instant::now();
        let status = cmd.status().expect("rgd runs");
        let wall = started.elapsed().as_secs_f64();
        assert!(status.success(), "{strategy}: rgd failed");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).expect("summary.json")).expect("json");
        let results = std::fs::read_to_string(out.join("results.jsonl")).expect("results.jsonl");
        let mut at: std::collections::BTreeMap<u64, usize> = Default::default();
        let mut unsolved = Vec::new();
        for line in results.lines() {
            let r: serde_json::Value = serde_json::from_str(line).expect("json line");
            match r["first_pass_iteration"].as_u64() {
                Some(k) => *at.entry(k).or_default() += 1,
                None => unsolved.push(r["task_id"].as_str().unwrap_or("?").to_string()),
            }
        }
        let requests = server.requests();
        let sent: usize = requests[asked_before..]
            .iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .map(|m| m["content"].as_str().map_or(0, |c| c.chars().count()))
            .sum();
        let tokens = summary["tokens"].as_object().expect("tokens per agent");
        let calls: u64 = tokens.values().map(|t| t["calls"].as_u64().unwrap_or(0)).sum();
        let at: Vec<String> = at.iter().map(|(k, n)| format!("{n} at {k}")).collect();
        let unsolved = match unsolved.len() {
            0 => "-".to_string(),
            n if n <= 3 => unsolved.join(", "),
            n => format!("{n} tasks"),
        };
        println!(
            "| {strategy} | {}/{} | {} | {calls} | {sent} | {unsolved} | {wall:.1} s |",
            summary["solved"],
            summary["tasks"],
            if at.is_empty() { "-".to_string() } else { at.join(", ") },
        );
    }
}
