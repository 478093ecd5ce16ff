//! The memory pool inside the RGD loop, with the real model and index, through the real binary and
//! the loopback server: a solved task is stored; a later similar task has that task's guidance in
//! its Guide refinement request; an unrelated task is told nothing similar was found; the run's
//! manifest records the pool it started with; `--no-memory` neither asks nor stores.

use crate::support;

use std::sync::Arc;

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

const GUIDANCE: &str = "1. Count a, e, i, o, u in any case.\n2. Add one if the last letter is y or Y.";

fn script() -> support::Script {
    Arc::new(|req| {
        let entry = req.entry_point().unwrap_or_default();
        match (req.purpose, entry.as_str()) {
            ("guide_init", _) => Reply::Text("1. Do what the docstring says.".into()),
            ("feedback", _) => Reply::Text("The code is wrong for the failing test.".into()),
            ("guide_refine", _) => Reply::Text(GUIDANCE.into()),
            ("keywords", _) => Reply::Text("vowels, counting, string, final y".into()),
            ("debug_init", "count_vowels" | "vowel_total") => Reply::Text(fenced(&format!(
                "def {entry}(word):\n    return sum(c in 'aeiouAEIOU' for c in word)\n"
            ))),
            ("debug_fix", "count_vowels" | "vowel_total") => Reply::Text(fenced(&format!(
                "def {entry}(word):\n    n = sum(c in 'aeiouAEIOU' for c in word)\n    return n + (word != '' and word[-1] in 'yY')\n"
            ))),
            ("debug_init", "add") => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a - b\n")),
            ("debug_fix", "add") => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a + b\n")),
            (other, _) => Reply::Status(400, format!("unexpected {other} for {entry}")),
        }
    })
}

fn run(home: &std::path::Path, server: &ScriptedServer, args: &[&str]) -> String {
    let out = rgd(home, &server.base_url()).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{args:?}\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// Runs rgd; returns its output and the Guide refinement request it made.
fn run_and_refinement(home: &std::path::Path, server: &ScriptedServer, args: &[&str]) -> (String, support::Request) {
    let before = server.requests().len();
    let out = tokio::task::block_in_place(|| run(home, server, args));
    let refine = server.requests()[before..]
        .iter()
        .find(|r| r.purpose == "guide_refine")
        .cloned()
        .expect("a refinement");
    (out, refine)
}

fn manifests(home: &std::path::Path) -> Vec<Value> {
    let mut ids: Vec<_> = std::fs::read_dir(home.join("runs")).unwrap().flatten().map(|e| e.path()).collect();
    ids.sort();
    ids.iter()
        .map(|d| serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap()).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_solved_task_guides_a_similar_one_and_not_an_unrelated_one() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let h = home.path().to_path_buf();

    // 1. Sample/5 (count_vowels) is solved at iteration 2 and remembered.
    let out = tokio::task::block_in_place(|| run(&h, &server, &["run", "--dataset", "sample", "--task", "Sample/5"]));
    assert!(out.contains("solved at iteration 2") && out.contains("remembered as"), "{out}");
    assert!(
        out.contains("memory: nothing similar enough"),
        "an empty pool offers nothing: {out}"
    );
    let listed = tokio::task::block_in_place(|| run(&h, &server, &["memory", "list", "--json"]));
    let entries: Vec<Value> = listed.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["task_id"], "Sample/5");
    let shown = tokio::task::block_in_place(|| run(&h, &server, &["memory", "show", entries[0]["id"].as_str().unwrap()]));
    assert!(
        shown.contains("Add one if the last letter is y or Y") && shown.contains("vowels") && shown.contains("sum"),
        "{shown}"
    );

    // 2. A similar task of another dataset: its refinement is offered Sample/5's guidance.
    let data = home.path().join("similar.jsonl");
    std::fs::write(
        &data,
        serde_json::json!({
            "task_id": "Mine/1",
            "entry_point": "vowel_total",
            "prompt": "def vowel_total(word):\n    \"\"\"Count the vowels of a word. a, e, i, o, u are vowels, and y too, but only as the last letter.\"\"\"\n",
            "given_tests": ["assert vowel_total('ACEDY') == 3"],
            "test": "def check(candidate):\n    assert candidate('xyz') == 0\n",
            "canonical_solution": ""
        })
        .to_string()
            + "\n",
    )
    .unwrap();
    let (out, refine) = run_and_refinement(&h, &server, &["run", "--dataset", data.to_str().unwrap(), "--task", "Mine/1"]);
    assert!(out.contains("memory: past guidance of Sample/5"), "{out}");
    assert!(
        refine.user.contains("Past task:") && refine.user.contains("Add one if the last letter is y or Y"),
        "{}",
        refine.user
    );

    // 3. An unrelated task is told that nothing similar is in memory.
    let (out, refine) = run_and_refinement(&h, &server, &["run", "--dataset", "sample", "--task", "Sample/1"]);
    assert!(out.contains("memory: nothing similar enough"), "{out}");
    assert!(
        refine.user.contains("No sufficiently similar solved task") && !refine.user.contains("Past task:"),
        "{}",
        refine.user
    );

    // Each manifest records the pool it started with.
    let m = manifests(home.path());
    let sizes: Vec<u64> = m.iter().map(|m| m["memory"]["entries"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [0, 1, 2]);
    assert!(
        m.iter()
            .all(|m| m["memory"]["enabled"] == true && m["memory"]["content_hash"].is_string())
    );

    // 4. The ablation: no query, no keywords call, nothing stored.
    let before = server.requests().len();
    let out = tokio::task::block_in_place(|| run(&h, &server, &["run", "--dataset", "sample", "--task", "Sample/5", "--no-memory"]));
    assert!(!out.contains("memory:") && !out.contains("remembered"), "{out}");
    assert!(server.requests()[before..].iter().all(|r| r.purpose != "keywords"));
    let listed = tokio::task::block_in_place(|| run(&h, &server, &["memory", "list", "--json"]));
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert_eq!(manifests(home.path()).last().unwrap()["memory"]["enabled"], false);
}
