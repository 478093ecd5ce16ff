//! `rgd datasets plus`: generated hidden tests, made by the real binary with the real wasm
//! sandbox. Deterministic (the same bytes twice), the reference's rejections dropped (an input it
//! raises on, one it loops on), and a program that only knows the original tests' answers passes
//! the base dataset and fails the plus one.

mod support;

use std::path::Path;

use rgd::dataset::{Task, TestCase, load_dataset};
use rgd::sandbox::{Job, Limits, SandboxKind, make_executor};

/// Two tasks in LDB's format: `halve` raises on a negative number and loops forever past 1000;
/// `shout` upper-cases a word.
const DATASET: &str = r#"{"task_id": "T/1", "entry_point": "halve", "prompt": "def halve(n):\n    \"\"\"Half of n, rounded down.\"\"\"\n", "given_tests": ["assert halve(4) == 2"], "test": "def check(candidate):\n    assert candidate(4) == 2\n    assert candidate(10) == 5\n    assert candidate(7) == 3\n", "canonical_solution": "def halve(n):\n    if n < 0:\n        raise ValueError('negative')\n    while n > 1000:\n        pass\n    return n // 2\n"}
{"task_id": "T/2", "entry_point": "shout", "prompt": "def shout(word):\n    \"\"\"The word in capitals.\"\"\"\n", "given_tests": ["assert shout('hi') == 'HI'"], "test": "def check(candidate):\n    assert candidate('hi') == 'HI'\n    assert candidate('Rust') == 'RUST'\n", "canonical_solution": "def shout(word):\n    return word.upper()\n"}
"#;

fn plus(dir: &Path, out: &str) -> std::process::Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .current_dir(dir)
        .args(["datasets", "plus", "base.jsonl", "--per-task", "20", "--out", out])
        .env("RGD_HOME", dir.join("home"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn hidden_calls(task: &Task) -> Vec<String> {
    task.hidden
        .iter()
        .skip(1)
        .map(|t| match t {
            TestCase::Assert { src } | TestCase::Check { src } => src.clone(),
            other => panic!("a generated test is an assert: {other:?}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plus_tests_are_repeatable_keep_what_the_reference_answers_and_catch_a_lookup() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("base.jsonl"), DATASET).unwrap();
    let said = plus(dir.path(), "a/tasks.jsonl");
    plus(dir.path(), "b/tasks.jsonl");
    let (a, b) = (
        std::fs::read(dir.path().join("a/tasks.jsonl")).unwrap(),
        std::fs::read(dir.path().join("b/tasks.jsonl")).unwrap(),
    );
    assert!(a == b, "the same seed gave two different files");
    assert!(dir.path().join("a/README.txt").is_file());
    let stdout = String::from_utf8_lossy(&said.stdout);
    assert!(stdout.contains("before"), "{stdout}");

    let base = load_dataset("base", &dir.path().join("base.jsonl"), 1).unwrap();
    let extended = load_dataset("plus", &dir.path().join("a/tasks.jsonl"), 1).unwrap();
    let halve = &extended.tasks[0];
    assert_eq!(halve.visible, base.tasks[0].visible, "visible tests stay as they were");
    let generated = hidden_calls(halve);
    assert!(generated.len() >= 5, "{generated:?}");
    for src in &generated {
        // halve(-3) raises and halve(2000) never returns: neither may be a test.
        let arg: i64 = src["assert halve(".len()..src.find(')').unwrap()].parse().unwrap();
        assert!((0..=1000).contains(&arg), "{src}");
    }

    // A program that knows only the original tests' answers.
    let lookup = "def halve(n):\n    return {4: 2, 10: 5, 7: 3}[n]\n";
    let executor = make_executor(SandboxKind::Wasm, &|_| {}).unwrap();
    let passes = |task: &Task| {
        let executor = executor.clone();
        let task = task.clone();
        async move {
            let job = Job {
                code: lookup,
                kind: &task.kind,
                entry_point: &task.entry_point,
                tests: &task.hidden,
                limits: &Limits::default(),
            };
            executor.run(job).await.unwrap().all_passed()
        }
    };
    assert!(passes(&base.tasks[0]).await, "the base tests accept the lookup");
    assert!(!passes(halve).await, "the plus tests reject it");

    // Wrong variants of the references (rgd bench fix's mutants): some the base accepts, and the
    // plus tests reject some of those.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .current_dir(dir.path())
        .args(["datasets", "strength", "base.jsonl", "a/tasks.jsonl"])
        .env("RGD_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let count = |before: &str| -> usize {
        let at = said.find(before).unwrap_or_else(|| panic!("{said}")) + before.len();
        said[at..].split_whitespace().next().unwrap().parse().unwrap()
    };
    assert!(count("base.jsonl accepts ") >= 1 && count("a/tasks.jsonl rejects ") >= 1, "{said}");
}
