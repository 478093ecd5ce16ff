//! What the shard and Slurm tests share: a script for the sample tasks that solves all but one,
//! and the results of an exported run.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::{Reply, Request, Script, fenced, sample_solutions};

/// Right for every sample task but reverse_words (whose answer stays wrong): solved and failed
/// tasks both. Each answer comes after `pause`.
pub fn all_but_reverse_words(pause: Duration) -> Script {
    let solutions = sample_solutions();
    Arc::new(move |req: &Request| {
        let reply = match req.purpose {
            "guide_init" | "guide_refine" => Reply::Text("1. Do what the docstring says.".into()),
            "feedback" => Reply::Text("It is wrong.".into()),
            _ => {
                let entry = req.entry_point().unwrap_or_default();
                match solutions.get(&entry) {
                    Some(code) if entry != "reverse_words" => Reply::Text(fenced(code)),
                    _ => Reply::Text(fenced(&format!("def {entry}(*args):\n    return None\n"))),
                }
            }
        };
        if pause.is_zero() {
            reply
        } else {
            Reply::Delayed(pause, Box::new(reply))
        }
    })
}

/// A command's stdout; its output in the failure message when it fails.
pub fn ok(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// task id -> (status, iterations, completion), from an exported results.jsonl.
pub fn results(dir: &std::path::Path) -> BTreeMap<String, (String, u64, String)> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("task_id"), (s("status"), r["iterations"].as_u64().unwrap(), s("completion")))
        })
        .collect()
}
