//! `rgd datasets plus`: generated hidden tests, made by the real binary with the real wasm
//! sandbox. Deterministic (the same bytes twice), the reference's rejections dropped (an input it
//! raises on, one it loops on), and a program that only knows the original tests' answers passes
//! the base dataset and fails the plus one.

use crate::support;

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

/// Three tasks: `slow` whose reference busy-waits 0.4 s per call, `shout`, and `neg` whose
/// reference is wrong (its tests are right).
const TIMED: &str = r#"{"task_id": "L/1", "entry_point": "slow", "prompt": "def slow(n):\n    \"\"\"n, after a while.\"\"\"\n", "given_tests": ["assert slow(1) == 1"], "test": "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 2\n", "canonical_solution": "import time\ndef slow(n):\n    end = time.perf_counter() + 0.4\n    while time.perf_counter() < end:\n        pass\n    return n\n"}
{"task_id": "L/2", "entry_point": "shout", "prompt": "def shout(word):\n    \"\"\"The word in capitals.\"\"\"\n", "given_tests": ["assert shout('hi') == 'HI'"], "test": "def check(candidate):\n    assert candidate('hi') == 'HI'\n", "canonical_solution": "def shout(word):\n    return word.upper()\n"}
{"task_id": "L/3", "entry_point": "neg", "prompt": "def neg(xs):\n    \"\"\"The negative numbers of xs, as a tuple.\"\"\"\n", "given_tests": ["assert neg([-1, 2, -3]) == (-1, -3)"], "test": "def check(candidate):\n    assert candidate([-1, 2, -3]) == (-1, -3)\n", "canonical_solution": "def neg(xs):\n    for x in xs:\n        if x < 0:\n            return x\n"}
"#;

/// The manifest of the newest run in `dir/home`.
fn newest_manifest(dir: &Path) -> serde_json::Value {
    let runs = support::rgd(&dir.join("home"), "http://127.0.0.1:9")
        .args(["runs", "list", "--json"])
        .output()
        .unwrap();
    let run: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&runs.stdout).lines().next().unwrap()).unwrap();
    let path = dir.join("home/runs").join(run["run_id"].as_str().unwrap()).join("manifest.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn rgd_in(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .current_dir(dir)
        .args(args)
        .env("RGD_HOME", dir.join("home"))
        .env_remove("RGD_DATA")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limits_come_from_the_reference_and_broken_tasks_are_set_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("base.jsonl"), TIMED).unwrap();

    // Measured: the slow reference's limit is about 3 x 0.4 s; the quick ones sit at the floor.
    let (ok, said) = rgd_in(
        d,
        &[
            "datasets",
            "limits",
            "base.jsonl",
            "--factor",
            "3",
            "--floor",
            "0.5",
            "--repeat",
            "1",
        ],
    );
    assert!(ok, "{said}");
    let limits: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("base.limits.json")).unwrap()).unwrap();
    let per_test = |id: &str| limits["tasks"][id]["per_test"].as_f64().unwrap();
    assert!((1.2..4.0).contains(&per_test("L/1")), "{limits}");
    assert_eq!(per_test("L/2"), 0.5, "{limits}");

    // A general limit below the reference's time fails it; the measured one passes it.
    let (ok, said) = rgd_in(d, &["datasets", "verify", "base.jsonl", "--timeout", "0.2"]);
    assert!(!ok && said.contains("L/1"), "{said}");
    let (ok, said) = rgd_in(d, &["datasets", "verify", "base.jsonl"]);
    assert!(!ok, "L/3's wrong reference fails verify while it is not listed: {said}");
    assert!(said.contains("not passing: L/3") && !said.contains("L/1 ("), "{said}");

    // Listed as broken, with its reason: reported apart, and verify passes.
    std::fs::write(
        d.join("base.broken.toml"),
        "[[broken]]\ntask = \"L/3\"\nreason = \"the reference returns the first negative only\"\n",
    )
    .unwrap();
    let (ok, said) = rgd_in(d, &["datasets", "verify", "base.jsonl"]);
    assert!(ok, "{said}");
    assert!(
        said.contains("excluded, broken in the data") && said.contains("L/3: the reference returns the first negative only"),
        "{said}"
    );

    // eval: a sample of a broken task is written but not judged with --exclude-broken.
    let samples = d.join("samples.jsonl");
    std::fs::write(
        &samples,
        "{\"task_id\": \"L/2\", \"completion\": \"def shout(word):\\n    return word.upper()\\n\"}\n{\"task_id\": \"L/3\", \"completion\": \"def neg(xs):\\n    return tuple(x for x in xs if x < 0)\\n\"}\n",
    )
    .unwrap();
    let (ok, said) = rgd_in(
        d,
        &["eval", samples.to_str().unwrap(), "--dataset", "base.jsonl", "--exclude-broken"],
    );
    assert!(ok, "{said}");
    assert!(
        said.contains("1 samples of 1 tasks") && said.contains("excluded, broken in the data: 1 samples of L/3"),
        "{said}"
    );
    let written = std::fs::read_to_string(d.join("samples.jsonl_results.jsonl")).unwrap();
    let l3: serde_json::Value = serde_json::from_str(written.lines().find(|l| l.contains("L/3")).unwrap()).unwrap();
    assert!(
        l3["passed"].is_null() && l3["result"].as_str().unwrap().starts_with("excluded"),
        "{l3}"
    );
    let (ok, said) = rgd_in(d, &["eval", samples.to_str().unwrap(), "--dataset", "base.jsonl"]);
    assert!(ok && said.contains("note: 1 judged tasks are listed as broken"), "{said}");

    // A sweep: the broken task left out and recorded so, the measured limits recorded and used
    // (a program 4 s slow per call overruns L/1's limit; with --test-timeout it does not).
    let slower =
        "import time\ndef slow(n):\n    end = time.perf_counter() + 4\n    while time.perf_counter() < end:\n        pass\n    return n\n";
    let server = support::ScriptedServer::start(std::sync::Arc::new(move |req: &support::Request| {
        support::Reply::Text(support::fenced(match req.entry_point().unwrap_or_default().as_str() {
            "slow" => slower,
            _ => "def shout(word):\n    return word.upper()\n",
        }))
    }))
    .await;
    let sweep = |extra: &'static [&'static str]| {
        let mut cmd = support::rgd(&d.join("home"), &server.base_url());
        cmd.current_dir(d)
            .args([
                "sweep",
                "--dataset",
                "base.jsonl",
                "--strategy",
                "direct",
                "--exclude-broken",
                "--out",
                "out",
            ])
            .args(extra);
        cmd
    };
    let mut cmd = sweep(&[]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = std::fs::read_to_string(d.join("out/results.jsonl")).unwrap();
    assert!(!results.contains("L/3"), "{results}");
    let slow: serde_json::Value = serde_json::from_str(results.lines().find(|l| l.contains("L/1")).unwrap()).unwrap();
    assert_eq!(slow["status"], "failed", "{slow}");
    let manifest = newest_manifest(d);
    assert_eq!(manifest["dataset"]["excluded_broken"], serde_json::json!(["L/3"]), "{manifest}");
    assert_eq!(manifest["dataset"]["selected"], serde_json::json!(["L/1", "L/2"]));
    assert!(
        manifest["limits"]["per_task"]["L/1"]["per_test"].as_f64().unwrap() < 4.0,
        "{manifest}"
    );
    // Named by file, not by this machine's path: shards elsewhere must record the same limits.
    assert!(
        manifest["limits"]["per_task_from"]
            .as_str()
            .unwrap()
            .starts_with("base.limits.json (factor 3"),
        "{manifest}"
    );

    let mut cmd = sweep(&["--test-timeout", "10"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = std::fs::read_to_string(d.join("out/results.jsonl")).unwrap();
    let slow: serde_json::Value = serde_json::from_str(results.lines().find(|l| l.contains("L/1")).unwrap()).unwrap();
    assert_eq!(slow["status"], "solved", "{slow}");

    // Only the broken tasks this selection would have taken are recorded as left out.
    let mut cmd = sweep(&["--tasks", "L/2"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let manifest = newest_manifest(d);
    assert_eq!(manifest["dataset"]["selected"], serde_json::json!(["L/2"]), "{manifest}");
    assert!(manifest["dataset"].get("excluded_broken").is_none(), "none left out: {manifest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_and_report_judge_the_recorded_programs_again_on_the_plus_tests() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("base.jsonl"), DATASET).unwrap();
    plus(d, "plus/tasks.jsonl");
    // Run A answers halve with a lookup of the original tests' answers, run B with the reference.
    let base = load_dataset("base", &d.join("base.jsonl"), 1).unwrap();
    let reference = base.tasks[0].canonical.clone().unwrap();
    let mut runs = Vec::new();
    for halve in ["def halve(n):\n    return {4: 2, 10: 5, 7: 3}[n]\n".to_string(), reference] {
        let server = support::ScriptedServer::start(std::sync::Arc::new(move |req: &support::Request| {
            support::Reply::Text(support::fenced(match req.entry_point().unwrap_or_default().as_str() {
                "halve" => &halve,
                _ => "def shout(word):\n    return word.upper()\n",
            }))
        }))
        .await;
        let mut cmd = support::rgd(&d.join("home"), &server.base_url());
        cmd.current_dir(d)
            .args(["sweep", "--dataset", "base.jsonl", "--strategy", "direct", "--json"]);
        let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let listed = support::rgd(&d.join("home"), "http://127.0.0.1:9")
            .args(["runs", "list", "--json"])
            .output()
            .unwrap();
        let newest: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&listed.stdout).lines().next().unwrap()).unwrap();
        runs.push(newest["run_id"].as_str().unwrap().to_string());
    }
    // No endpoint at all: judging again calls no model.
    let compare = || {
        let out = support::rgd(&d.join("home"), "http://127.0.0.1:9")
            .current_dir(d)
            .args(["compare", &runs[0], &runs[1], "--json", "--plus-dataset", "plus/tasks.jsonl"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let c = compare();
    let (a, b) = (&c["runs"][0], &c["runs"][1]);
    assert_eq!((a["solved"].as_u64(), a["plus"]["solved"].as_u64()), (Some(2), Some(1)), "{c}");
    assert_eq!(a["plus"]["rejected"], serde_json::json!(["T/1"]));
    assert_eq!((b["solved"].as_u64(), b["plus"]["solved"].as_u64()), (Some(2), Some(2)), "{c}");
    let kept = d.join("home/runs").join(&runs[0]).join("plus");
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 1, "the verdicts are kept in the run");
    assert_eq!(compare()["runs"][0]["plus"], a["plus"], "the kept verdicts give the same column");
    // A catalog name is looked up in --data-dir first, as everywhere else (not the bundled copy,
    // whose tasks are HumanEval's, not these).
    std::fs::create_dir_all(d.join("data/humaneval_plus")).unwrap();
    std::fs::copy(d.join("plus/tasks.jsonl"), d.join("data/humaneval_plus/tasks.jsonl")).unwrap();
    let out = support::rgd(&d.join("home"), "http://127.0.0.1:9")
        .current_dir(d)
        .args([
            "--data-dir",
            "data",
            "compare",
            &runs[0],
            &runs[1],
            "--json",
            "--plus-dataset",
            "humaneval-plus",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let by_name: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(by_name["runs"][0]["plus"]["solved"].as_u64(), Some(1), "{by_name}");

    let out = support::rgd(&d.join("home"), "http://127.0.0.1:9")
        .current_dir(d)
        .args(["report", &runs[1], "--out", "report", "--plus-dataset", "plus/tasks.jsonl"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(d.join("report/report.md")).unwrap();
    assert!(
        md.contains("Judged on the plus tests") && md.contains("100.0% (+0.0; 2 of 2 kept"),
        "{md}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reduced_suite_is_smaller_repeatable_and_kills_every_mutant_the_whole_one_kills() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("base.jsonl"), DATASET).unwrap();
    plus(d, "full/tasks.jsonl");
    for out in ["r1/tasks.jsonl", "r2/tasks.jsonl"] {
        let (ok, said) = rgd_in(d, &["datasets", "plus", "base.jsonl", "--per-task", "20", "--reduce", "--out", out]);
        assert!(ok, "{said}");
        assert!(said.contains("reduced by mutant killing"), "{said}");
    }
    assert_eq!(
        std::fs::read(d.join("r1/tasks.jsonl")).unwrap(),
        std::fs::read(d.join("r2/tasks.jsonl")).unwrap()
    );
    let full = load_dataset("full", &d.join("full/tasks.jsonl"), 1).unwrap();
    let reduced = load_dataset("reduced", &d.join("r1/tasks.jsonl"), 1).unwrap();
    let count = |ds: &rgd::dataset::LoadedDataset| ds.tasks.iter().map(|t| t.hidden.len()).sum::<usize>();
    assert!(
        count(&reduced) < count(&full),
        "{} tests reduced, {} whole",
        count(&reduced),
        count(&full)
    );
    // The same 20 mutants per task (the reduction's default): the reduced suite rejects exactly
    // as many of those the base accepts as the whole suite does.
    let rejects = |plus: &str| {
        let (ok, said) = rgd_in(d, &["datasets", "strength", "base.jsonl", plus, "--per-task", "20"]);
        assert!(ok, "{said}");
        let at = said.find(&format!("{plus} rejects ")).unwrap_or_else(|| panic!("{said}")) + plus.len() + 9;
        said[at..].split_whitespace().next().unwrap().parse::<usize>().unwrap()
    };
    assert_eq!(rejects("r1/tasks.jsonl"), rejects("full/tasks.jsonl"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_run_only_in_the_sandbox_whatever_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A reference that tries to leave a mark on the host at import and at every call, and still
    // answers: where it ran, the mark would be.
    let mark = d.join("ran-on-the-host");
    let reference = format!(
        "try:\n    open({mark:?}, 'w').write('import')\nexcept OSError:\n    pass\ndef inc(n):\n    try:\n        open({mark:?}, 'w').write('call')\n    except OSError:\n        pass\n    return n + 1\n",
        mark = mark.display().to_string()
    );
    let task = serde_json::json!({
        "task_id": "M/1", "entry_point": "inc", "prompt": "def inc(n):\n    \"\"\"n plus one.\"\"\"\n",
        "given_tests": ["assert inc(1) == 2"],
        "test": "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(41) == 42\n",
        "canonical_solution": reference,
    });
    std::fs::write(d.join("base.jsonl"), format!("{task}\n")).unwrap();
    let (ok, said) = rgd_in(d, &["datasets", "plus", "base.jsonl", "--out", "p/tasks.jsonl"]);
    assert!(ok, "{said}");
    let extended = load_dataset("p", &d.join("p/tasks.jsonl"), 1).unwrap();
    assert!(extended.tasks[0].hidden.len() > 1, "the reference ran and answered: {said}");
    for args in [
        &["datasets", "plus", "base.jsonl", "--out", "r/tasks.jsonl", "--reduce"][..],
        &["datasets", "limits", "base.jsonl", "--repeat", "1"],
        &["datasets", "verify", "base.jsonl"],
        &["datasets", "strength", "base.jsonl", "p/tasks.jsonl"],
    ] {
        let (ok, said) = rgd_in(d, args);
        assert!(ok, "{args:?}: {said}");
    }
    assert!(!mark.exists(), "a reference ran on the host");
}
