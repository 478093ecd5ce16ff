//! `cargo bench --bench local_model`: the embedded model, for real.
//!
//! Speed and memory: prompt and generation tokens/s and resident memory, each model in a fresh
//! process (this bench re-runs itself with `--child MODEL THREADS`), at 1 and 2 threads; and two
//! calls at once served by one model (queued) vs two models of one thread each.
//!
//! Quality: pass@1 of Direct (one answer from the task) vs RGD (the three agents, at most
//! `RGD_BENCH_ITERS` rounds, default 3) on the bundled sample and the first 20 HumanEval tasks,
//! through the real binary with no endpoint configured (RGD starts each sweep with an empty
//! memory pool, which fills as tasks are solved; Direct has none). `RGD_BENCH_MODELS` (comma-separated,
//! default `smollm2-135m,gemma3-270m`) picks the models; RGD runs for the first one only, as it
//! takes several times longer. `RGD_BENCH_PART=speed|quality` runs one half.

use std::process::Command;
use std::time::Instant;

use rgd::llm::local::{LocalChat, LocalSettings};
use rgd::llm::{CallParams, Message, Silent};

const PROMPT: &str = include_str!("../assets/prompts/rgd/debug_init.md");

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn messages() -> Vec<Message> {
    // A Debug-agent-sized request: the prompt file's text plus a HumanEval task, ~400 tokens.
    let task = "from typing import List\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n    \"\"\" Check if in given list of numbers, are any two numbers closer to each other than\n    given threshold.\n    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n    False\n    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n    True\n    \"\"\"\n";
    vec![
        Message::system("You are the Debug agent of a small team that writes Python code."),
        Message::user(format!(
            "{PROMPT}\n\n## Task\n{task}\nWrite the complete program in one ```python block."
        )),
    ]
}

fn params(max_tokens: u32) -> CallParams {
    CallParams {
        model: "bench".into(),
        temperature: 0.0,
        max_tokens,
        seed: Some(1),
        stop: Vec::new(),
    }
}

/// In a fresh process: load, then 3 generations of 128 tokens; one JSON line on stdout.
fn child(model: &str, threads: i32) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let before = rss_mb();
    let settings = LocalSettings {
        model: model.into(),
        threads,
        contexts: 1,
        context: 4096,
    };
    let local = LocalChat::load(&settings, &|l| eprintln!("{l}")).unwrap();
    let loaded = rss_mb();
    let (mut prompt_tps, mut gen_tps) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let g = rt.block_on(local.generate(&messages(), &params(128), &Silent)).unwrap();
        prompt_tps.push(g.prompt_tokens as f64 / g.prompt_secs);
        gen_tps.push(g.completion_tokens as f64 / g.generation_secs);
    }
    prompt_tps.sort_by(f64::total_cmp);
    gen_tps.sort_by(f64::total_cmp);

    // Two calls at once: one context serves them in turn. Compare with two contexts of one
    // thread each taking calls from the same queue (what a sweep with concurrency gets).
    let pair = |m: &LocalChat| {
        let t = Instant::now();
        rt.block_on(async {
            let (msgs, p) = (messages(), params(64));
            let (x, y) = tokio::join!(m.generate(&msgs, &p, &Silent), m.generate(&msgs, &p, &Silent));
            x.unwrap();
            y.unwrap();
        });
        t.elapsed().as_secs_f64()
    };
    let queued = pair(&local);
    let two = LocalSettings {
        model: model.into(),
        threads: 1,
        contexts: 2,
        context: 4096,
    };
    let parallel = pair(&LocalChat::load_private(&two, &|_| {}).unwrap());
    println!(
        "{}",
        serde_json::json!({
            "model": model, "threads": threads,
            "prompt_tps": prompt_tps[1], "gen_tps": gen_tps[1],
            "rss_mb": loaded - before, "rss_total_mb": rss_mb(),
            "load_secs": local.info().load_secs, "params": local.info().parameters,
            "format": format!("{:?}", local.info().format),
            "pair_queued_secs": queued, "pair_two_models_secs": parallel,
        })
    );
}

fn sweep(model: &str, dataset: &str, limit: Option<usize>, strategy: &str, iters: u32) -> (f64, usize, f64) {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rgd"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("RGD_HOME", home.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["sweep", "--dataset", dataset, "--model", model, "--strategy", strategy])
        .args(["--max-iters", &iters.to_string()])
        .arg("--out")
        .arg(&out);
    if let Some(n) = limit {
        cmd.args(["--limit", &n.to_string()]);
    }
    let t = Instant::now();
    let status = cmd.output().unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    (
        summary["pass_at_1"].as_f64().unwrap_or(0.0),
        summary["tasks"].as_u64().unwrap_or(0) as usize,
        t.elapsed().as_secs_f64(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], args[i + 2].parse().unwrap());
        return;
    }
    let models: Vec<String> = std::env::var("RGD_BENCH_MODELS")
        .unwrap_or_else(|_| "smollm2-135m,gemma3-270m".into())
        .split(',')
        .map(String::from)
        .collect();
    let part = std::env::var("RGD_BENCH_PART").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    if part != "quality" {
        println!("embedded model speed ({cores} cores; a Debug-agent prompt, 128 generated tokens, greedy; median of 3):");
        println!(
            "{:<14} {:>7} {:>12} {:>12} {:>9} {:>7}   two calls of 64 tokens at once",
            "model", "threads", "prompt tok/s", "gen tok/s", "RSS MB", "load s"
        );
        for model in &models {
            for threads in [1, 2.min(cores as i32)] {
                let out = Command::new(std::env::current_exe().unwrap())
                    .args(["--child", model, &threads.to_string()])
                    .output()
                    .unwrap();
                let Ok(r) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
                    println!("{model}: failed: {}", String::from_utf8_lossy(&out.stderr));
                    continue;
                };
                println!(
                    "{:<14} {:>7} {:>12.0} {:>12.1} {:>9.0} {:>7.2}   one context, in turn {:.1} s; two 1-thread contexts {:.1} s",
                    model,
                    threads,
                    r["prompt_tps"].as_f64().unwrap_or(0.0),
                    r["gen_tps"].as_f64().unwrap_or(0.0),
                    r["rss_mb"].as_f64().unwrap_or(0.0),
                    r["load_secs"].as_f64().unwrap_or(0.0),
                    r["pair_queued_secs"].as_f64().unwrap_or(0.0),
                    r["pair_two_models_secs"].as_f64().unwrap_or(0.0),
                );
            }
        }
    }
    if part == "speed" {
        return;
    }
    let iters: u32 = std::env::var("RGD_BENCH_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    println!("\npass@1 through `rgd sweep` with no endpoint (embedded model; RGD with a fresh memory pool per sweep):");
    println!(
        "{:<14} {:<24} {:>16} {:>16}",
        "model",
        "tasks",
        "Direct",
        format!("RGD ({iters} rounds)")
    );
    for (n, model) in models.iter().enumerate() {
        for (dataset, limit, label) in [
            ("sample", None, "bundled sample (6)"),
            ("humaneval", Some(20), "HumanEval/0-19 (20)"),
        ] {
            let (direct, tasks, direct_secs) = sweep(model, dataset, limit, "direct", 1);
            let rgd = if n == 0 {
                let (p, _, secs) = sweep(model, dataset, limit, "rgd", iters);
                format!("{:.1}% ({:.0} s)", p * 100.0, secs)
            } else {
                "not run".into()
            };
            println!(
                "{:<14} {:<24} {:>16} {:>16}",
                model,
                format!("{label} [{tasks}]"),
                format!("{:.1}% ({:.0} s)", direct * 100.0, direct_secs),
                rgd
            );
        }
    }
}
