//! `cargo bench --bench trace`: what tracing costs. For every HumanEval task, its canonical
//! solution runs its first visible test in the wasm sandbox twice, side by side: judged untraced
//! (candidate and checker interpreters, as every test runs), and traced (one interpreter under
//! `sys.settrace`, block mode). Per task: the ratio traced / untraced; the trace's text as a model
//! sees it (first 5 and last 5 blocks). Targets: median ratio <= 3x; that text <= 6,000
//! characters for every task.

use std::time::Instant;

use rgd::dataset::{DEFAULT_SPLIT_SEED, TestCase, load_dataset, resolve_dataset};
use rgd::sandbox::{Job, Limits, SandboxKind, TraceJob, TraceMode, make_executor, render_trace_window};

#[tokio::main]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let (name, path) = resolve_dataset("humaneval", None).expect("bundled");
    let dataset = load_dataset(&name, &path, DEFAULT_SPLIT_SEED).expect("loads");
    let executor = make_executor(SandboxKind::Wasm, &|l| eprintln!("{l}")).expect("the sandbox builds");
    let limits = Limits::default();
    let (mut ratios, mut plain_ms, mut traced_ms, mut chars) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut truncated = 0;
    for task in &dataset.tasks {
        let (Some(code), Some(TestCase::Assert { src })) = (task.canonical.as_deref(), task.visible.first()) else {
            continue;
        };
        let code = format!("{}{}", task.prompt, code);
        let test = [TestCase::Assert { src: src.clone() }];
        let started = Instant::now();
        executor
            .run(Job {
                code: &code,
                kind: &task.kind,
                entry_point: &task.entry_point,
                tests: &test,
                limits: &limits,
            })
            .await
            .expect("runs");
        let plain = started.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let trace = executor
            .trace(TraceJob {
                kind: &rgd::dataset::TaskKind::Function,
                code: &code,
                call: src,
                mode: TraceMode::Block,
                max_events: 20_000,
                limits: &limits,
            })
            .await
            .expect("traces");
        let traced = started.elapsed().as_secs_f64() * 1000.0;
        truncated += usize::from(trace.end.as_ref().is_some_and(|e| e.truncated.is_some()));
        chars.push(render_trace_window(&trace, 5, 5).chars().count());
        ratios.push(traced / plain);
        plain_ms.push(plain);
        traced_ms.push(traced);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let p90 = |v: &Vec<f64>| v[(v.len() * 9) / 10];
    let n = ratios.len();
    let (m_plain, m_traced, m_ratio) = (median(&mut plain_ms), median(&mut traced_ms), median(&mut ratios));
    chars.sort();
    println!("HumanEval canonical solutions, first visible test, wasm sandbox, {n} tasks");
    println!("  untraced (judged): median {m_plain:.1} ms");
    println!("  traced (blocks):   median {m_traced:.1} ms");
    println!(
        "  traced / untraced: median {m_ratio:.2}x, p90 {:.2}x (target: median <= 3x)",
        p90(&ratios)
    );
    println!(
        "  trace text shown to a model: median {} chars, max {} chars (target: <= 6000); {truncated} traces hit the event cap",
        chars[chars.len() / 2],
        chars[chars.len() - 1]
    );
}
