//! `cargo bench --bench sandbox`: per-program latency of the wasm and native executors, side by
//! side in one run, one program at a time (median and p95), plus throughput with both cores busy.

use std::time::{Duration, Instant};

use rgd::dataset::{TaskKind, TestCase};
use rgd::sandbox::{Executor, Job, Limits, SandboxKind, make_executor};

const RUNS: usize = 60;

fn humaneval_sized() -> (String, Vec<TestCase>) {
    let code = "from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n    for idx, elem in enumerate(numbers):\n        for idx2, elem2 in enumerate(numbers):\n            if idx != idx2 and abs(elem - elem2) < threshold:\n                return True\n    return False\n";
    let tests = [
        "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True",
        "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False",
        "assert has_close_elements([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True",
        "assert has_close_elements([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == False",
        "assert has_close_elements([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True",
        "assert has_close_elements([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True",
        "assert has_close_elements([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False",
        "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False",
    ];
    (
        code.to_string(),
        tests.iter().map(|s| TestCase::Assert { src: s.to_string() }).collect(),
    )
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

async fn latency(executor: &dyn Executor, code: &str, kind: &TaskKind, entry: &str, tests: &[TestCase]) -> (f64, f64) {
    let limits = Limits::default();
    let mut times = Vec::with_capacity(RUNS);
    for i in 0..RUNS + 3 {
        let started = Instant::now();
        let report = executor
            .run(Job {
                code,
                kind,
                entry_point: entry,
                tests,
                limits: &limits,
            })
            .await
            .unwrap();
        assert!(report.all_passed(), "{report:?}");
        if i >= 3 {
            times.push(started.elapsed()); // the first runs warm caches
        }
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.95))
}

async fn throughput(executor: std::sync::Arc<dyn Executor>, code: &str, tests: &[TestCase]) -> f64 {
    let started = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..RUNS {
        let (executor, code, tests) = (executor.clone(), code.to_string(), tests.to_vec());
        handles.push(tokio::spawn(async move {
            let limits = Limits::default();
            executor
                .run(Job {
                    code: &code,
                    kind: &TaskKind::Function,
                    entry_point: "has_close_elements",
                    tests: &tests,
                    limits: &limits,
                })
                .await
                .unwrap()
        }));
    }
    for h in handles {
        assert!(h.await.unwrap().all_passed());
    }
    RUNS as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (code, tests) = humaneval_sized();
    let print1 = vec![TestCase::Io {
        input: String::new(),
        output: "1\n".into(),
    }];
    println!("per-program latency, {RUNS} runs each, one at a time (ms)        median     p95");
    for kind in [SandboxKind::Wasm, SandboxKind::Native] {
        let executor = make_executor(kind, &|l| eprintln!("{l}")).unwrap();
        let (m, p) = latency(&*executor, "print(1)\n", &TaskKind::Stdio, "", &print1).await;
        println!(
            "  {:<7} print(1)                                        {m:7.2} {p:7.2}",
            executor.name()
        );
        let (m, p) = latency(&*executor, &code, &TaskKind::Function, "has_close_elements", &tests).await;
        println!(
            "  {:<7} HumanEval/0 canonical, 8 asserts                {m:7.2} {p:7.2}",
            executor.name()
        );
        let rate = throughput(executor.clone(), &code, &tests).await;
        println!(
            "  {:<7} throughput, {RUNS} programs submitted at once       {rate:7.1} programs/s",
            executor.name()
        );
    }
}
