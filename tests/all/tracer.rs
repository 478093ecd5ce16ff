//! The tracer in the real sandboxes: block traces and call trees of loops, recursion, exceptions,
//! generators, huge values, a hostile `__repr__`, and an infinite loop (its budget ends it and the
//! partial trace is kept).

use std::time::Duration;

use rgd::sandbox::{Limits, SandboxKind, Trace, TraceJob, TraceMode, TraceRecord, make_executor, render_trace};

async fn trace(sandbox: SandboxKind, code: &str, call: &str, mode: TraceMode, secs: f64) -> Trace {
    let executor = make_executor(sandbox, &|line| eprintln!("{line}")).expect("the sandbox can be built");
    let limits = Limits {
        per_test: Duration::from_secs_f64(secs),
        ..Limits::default()
    };
    executor
        .trace(TraceJob {
            kind: &rgd::dataset::TaskKind::Function,
            code,
            call,
            mode,
            max_events: 20_000,
            limits: &limits,
        })
        .await
        .expect("the tracer runs")
}

type Vars = std::collections::BTreeMap<String, String>;

/// (function, first line, variables before, variables after) of each block.
fn blocks(t: &Trace) -> Vec<(&str, u32, &Vars, &Vars)> {
    t.records
        .iter()
        .filter_map(|r| match r {
            TraceRecord::Block {
                function,
                first_line,
                before,
                after,
                ..
            } => Some((function.as_str(), *first_line, before, after)),
            _ => None,
        })
        .collect()
}

const LOOP: &str = "def total(xs):\n    s = 0\n    for x in xs:\n        if x > 0:\n            s += x\n    return s\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_loop_is_traced_block_by_block_with_real_values_in_both_sandboxes() {
    for sandbox in [SandboxKind::Wasm, SandboxKind::Native] {
        let t = trace(sandbox, LOOP, "total([3, -1, 4])", TraceMode::Block, 5.0).await;
        let end = t.end.as_ref().expect("the call ended");
        assert_eq!(end.result.as_deref(), Some("7"), "{sandbox:?}");
        let b = blocks(&t);
        // s = 0; then per item the loop header, the test, and the addition when positive.
        assert_eq!((b[0].1, b[0].3.get("s").map(String::as_str)), (2, Some("0")), "{sandbox:?} {b:?}");
        let additions: Vec<(&str, &str)> = b
            .iter()
            .filter(|(_, line, _, _)| *line == 5)
            .map(|(_, _, before, after)| (before["s"].as_str(), after["s"].as_str()))
            .collect();
        assert_eq!(additions, [("0", "3"), ("3", "7")], "{sandbox:?}");
        let text = render_trace(&t);
        assert!(text.contains("[BLOCK-1] total, lines 2-2") && text.contains("returned 7"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn recursion_gives_a_call_tree_in_call_order() {
    let code = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n";
    let t = trace(SandboxKind::Wasm, code, "fib(3)", TraceMode::Calls, 5.0).await;
    let calls: Vec<String> = t
        .records
        .iter()
        .map(|r| match r {
            TraceRecord::Call { depth, args, returned, .. } => format!("{depth}:{}->{}", args["n"], returned.as_deref().unwrap_or("?")),
            _ => String::new(),
        })
        .collect();
    assert_eq!(calls, ["0:3->2", "1:2->1", "2:1->1", "2:0->0", "1:1->1"]);
    assert!(render_trace(&t).contains("fib(n=3) -> 2\n  fib(n=2) -> 1\n    fib(n=1) -> 1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exception_keeps_the_trace_up_to_the_raise_with_its_type_and_line() {
    let code = "def f(d):\n    k = 'a'\n    v = d[k]\n    return v\n";
    let t = trace(SandboxKind::Wasm, code, "f({'b': 1})", TraceMode::Block, 5.0).await;
    let end = t.end.expect("the tracer ended");
    let e = end.exception.expect("it raised");
    assert_eq!((e.kind.as_str(), e.line), ("KeyError", Some(3)));
    match &t.records[0] {
        TraceRecord::Block { raised, after, .. } => {
            assert_eq!(raised.as_deref(), Some("KeyError"));
            assert_eq!(after["k"], "'a'");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn generators_huge_values_and_a_hostile_repr_are_shown_safely() {
    let code = r#"
class Evil:
    def __repr__(self):
        while True:
            pass
    def __str__(self):
        raise RuntimeError("no")

def gen(n):
    for i in range(n):
        yield i * i

def f():
    big = list(range(100000))
    text = "x" * 10000
    nested = [[[[[1]]]]]
    e = Evil()
    return sum(gen(3)) + len(big)
"#;
    let t = trace(SandboxKind::Wasm, code, "f()", TraceMode::Block, 5.0).await;
    let end = t.end.as_ref().expect("the call ended, not hung in __repr__");
    assert_eq!(end.result.as_deref(), Some("100005"));
    let last_f = blocks(&t).into_iter().rev().find(|b| b.0 == "f").unwrap();
    let after = last_f.3;
    assert_eq!(after["e"], "<Evil>");
    assert!(
        after["big"].starts_with("[0, 1, 2, 3, 4, 5, 6, 7, ... (100000 items)]"),
        "{}",
        after["big"]
    );
    assert!(after["text"].len() <= 62, "{}", after["text"]);
    assert_eq!(after["nested"], "[[[[...]]]]");
    assert!(blocks(&t).iter().any(|b| b.0 == "gen"), "the generator's frames are traced");
    assert!(render_trace(&t).len() < 20_000);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_infinite_loop_ends_by_budget_and_keeps_its_partial_trace() {
    let code = "def spin():\n    x = 0\n    while True:\n        x += 1\n";
    for sandbox in [SandboxKind::Wasm, SandboxKind::Native] {
        let t = trace(sandbox, code, "spin()", TraceMode::Block, 1.0).await;
        assert!(t.records.len() > 10, "{sandbox:?}: partial trace kept");
        let truncated = t.end.as_ref().and_then(|e| e.truncated.clone()).or(t.stopped.clone());
        assert!(truncated.is_some(), "{sandbox:?}: says why it stopped");
    }
    // A loop that never reaches a traced line again (inside a C call) is stopped by the host.
    let t = trace(
        SandboxKind::Wasm,
        "def hang():\n    sum(range(10**12))\n",
        "hang()",
        TraceMode::Block,
        1.0,
    )
    .await;
    assert!(t.end.is_none() && t.stopped.is_some(), "{t:?}");
    assert!(render_trace(&t).contains("stopped"));
}
