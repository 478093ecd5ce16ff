//! `cargo bench --bench merge`: `rgd runs merge` of 4 shards holding 10,000 synthetic task
//! results between them (each task: started, an iteration, a Guide and a Debug call with a
//! 1 KB prompt, extracted code, visible and hidden test reports, finished), whole process, three
//! times (target: under 5 s). The shards are written through the real run store.

use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use rgd::record::{Envelope, Manifest, Recorder};
use rgd::store::{Home, RunStore};
use serde_json::{Value, json};

const TASKS: usize = 10_000;
const SHARDS: usize = 4;

fn manifest_template() -> Value {
    json!({
        "run_id": "template", "created_at": "2026-11-24T00:00:00Z", "rgd_version": "bench", "command": ["rgd"],
        "strategy": "rgd",
        "dataset": {"name": "synthetic", "path": "/dev/null", "format": "ldb", "sha256": "0", "split_seed": null,
            "tasks_in_file": TASKS, "selected": []},
        "endpoint": "http://127.0.0.1:9/v1",
        "agents": {"guide": {"model": "m", "temperature": 0.7, "max_tokens": 1024}, "debug": {"model": "m", "temperature": 0.0, "max_tokens": 2048}},
        "prompts_source": "built-in", "prompts": {}, "max_iters": 10, "concurrency": 2, "sandbox": "wasm",
        "limits": {"per_test": 5.0, "max_total": 120.0, "memory_mb": 1024, "output_cap": 8192},
        "memory": {"enabled": false, "note": "off"}
    })
}

fn task_events(task: &str, seq: &mut u64) -> Vec<Arc<Envelope>> {
    let prompt = "x".repeat(1000);
    let code = format!("def f_{}(a, b):\n    return a + b\n", seq);
    let report = json!({"executor": "wasm", "setup": "ok", "tests": [{"index": 0, "status": "passed", "secs": 0.001}], "wall_ms": 5});
    let result = json!({"task_id": task, "passed": true, "status": "solved", "iterations": 1, "first_pass_iteration": 1,
        "tokens": {"guide": {"input": 300, "output": 50, "calls": 1}, "debug": {"input": 400, "output": 80, "calls": 1}},
        "seconds": 1.5, "error": null, "completion": code});
    let events = [
        json!({"type": "task_started", "task_id": task, "attempt": 1, "entry_point": "f", "prompt": prompt, "visible_tests": ["assert f(1, 2) == 3"], "hidden_tests": 1}),
        json!({"type": "iteration_started", "task_id": task, "iteration": 1}),
        json!({"type": "agent_request", "task_id": task, "iteration": 1, "call_id": 0, "agent": "guide", "purpose": "guide_init",
            "params": {"model": "m", "temperature": 0.7, "max_tokens": 1024}, "messages": [{"role": "user", "content": prompt}]}),
        json!({"type": "agent_response", "task_id": task, "iteration": 1, "call_id": 0, "agent": "guide", "purpose": "guide_init",
            "text": "1. Add.", "usage": {"prompt_tokens": 300, "completion_tokens": 50, "reported": true}, "latency_ms": 900, "attempts": 1}),
        json!({"type": "agent_request", "task_id": task, "iteration": 1, "call_id": 1, "agent": "debug", "purpose": "debug_init",
            "params": {"model": "m", "temperature": 0.0, "max_tokens": 2048}, "messages": [{"role": "user", "content": prompt}]}),
        json!({"type": "agent_response", "task_id": task, "iteration": 1, "call_id": 1, "agent": "debug", "purpose": "debug_init",
            "text": code, "usage": {"prompt_tokens": 400, "completion_tokens": 80, "reported": true}, "latency_ms": 700, "attempts": 1}),
        json!({"type": "code_extracted", "task_id": task, "iteration": 1, "code": code, "diff": null, "problem": null}),
        json!({"type": "tests_run", "task_id": task, "iteration": 1, "suite": "visible", "passed": 1, "total": 1, "report": report}),
        json!({"type": "tests_run", "task_id": task, "iteration": 1, "suite": "hidden", "passed": 1, "total": 1, "report": report}),
        json!({"type": "task_finished", "result": result}),
    ];
    events
        .into_iter()
        .map(|event| {
            *seq += 1;
            Arc::new(serde_json::from_value(json!({"seq": *seq, "at": "2026-11-24T00:00:00Z", "event": event})).unwrap())
        })
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let template = manifest_template();
    let home_dir = tempfile::tempdir().unwrap();
    let home = Home::resolve(Some(home_dir.path()));
    let ids: Vec<String> = (0..TASKS).map(|i| format!("Synthetic/{i}")).collect();
    let made = Instant::now();
    for k in 0..SHARDS {
        let part = &ids[k * TASKS / SHARDS..(k + 1) * TASKS / SHARDS];
        let mut m = template.clone();
        m["run_id"] = json!(format!("shard-{k}"));
        m["dataset"]["selected"] = json!(part);
        m["shard"] = json!({"index": k, "count": SHARDS, "sweep_tasks": ids, "config_hash": "synthetic"});
        let manifest: Manifest = serde_json::from_value(m).unwrap();
        let store = RunStore::create(&home, &manifest).unwrap();
        let mut seq = 0;
        let mut batch = Vec::new();
        for task in part {
            batch.extend(task_events(task, &mut seq));
            if batch.len() >= 1000 {
                store.record(&batch).unwrap();
                batch.clear();
            }
        }
        store.record(&batch).unwrap();
        store.flush().unwrap();
    }
    println!(
        "{SHARDS} shards, {TASKS} tasks, {} events written in {:.1} s",
        TASKS * 10,
        made.elapsed().as_secs_f64()
    );
    let mut times = Vec::new();
    for round in 0..3 {
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_rgd"))
            .args([
                "runs",
                "merge",
                "shard-0",
                "shard-1",
                "shard-2",
                "shard-3",
                "--into",
                &format!("merged-{round}"),
            ])
            .env("RGD_HOME", home_dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        times.push(started.elapsed().as_secs_f64());
        if round == 0 {
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "rgd runs merge, whole process: median {:.2} s {:?} (target under 5 s)",
        sorted[1],
        times.iter().map(|t| format!("{t:.2}")).collect::<Vec<_>>()
    );
}
