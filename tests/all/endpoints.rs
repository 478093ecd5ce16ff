//! Real endpoints' habits, played by the loopback server made to answer like llama-server:
//! numeric error codes and context overflows, a wrong key, a lone closing fence, a served model
//! other than the one asked for, a small context, answers cut by the length limit, a stalled
//! stream, and a server that goes away and comes back.

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Reply, ScriptedServer, Served, fenced, rgd, sample_run, temp_home};

const LLAMA_OVERFLOW: &str = r#"{"error":{"code":400,"message":"request (344 tokens) exceeds the available context size (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":344,"n_ctx":256}}"#;
const LLAMA_BAD_KEY: &str = r#"{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}"#;

/// Every task solved by its canonical code, unless `special` says otherwise for (entry, purpose).
fn script(special: impl Fn(&str, &str, usize) -> Option<Reply> + Send + Sync + 'static) -> support::Script {
    let solutions = support::sample_solutions();
    let calls: Arc<Mutex<HashMap<(String, String), usize>>> = Arc::default();
    Arc::new(move |req: &support::Request| {
        let entry = req.entry_point().unwrap_or_default();
        let n = {
            let mut calls = calls.lock().unwrap();
            let n = calls.entry((entry.clone(), req.purpose.to_string())).or_default();
            *n += 1;
            *n
        };
        if let Some(reply) = special(&entry, req.purpose, n) {
            return reply;
        }
        match req.purpose {
            "debug_init" | "debug_fix" => Reply::Text(fenced(&solutions[&entry])),
            "keywords" => Reply::Text("numbers, strings".into()),
            _ => Reply::Text("Follow the docstring exactly.".into()),
        }
    })
}

fn config(home: &Path, extra: &str) -> std::path::PathBuf {
    let path = home.join("rgd.toml");
    std::fs::write(
        &path,
        format!("[llm]\nretries = 2\nbackoff_min_ms = 20\nbackoff_max_ms = 50\n{extra}"),
    )
    .unwrap();
    path
}

fn results(out: &Path) -> HashMap<String, Value> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["task_id"].as_str().unwrap().to_string(), v))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn llama_server_errors_are_read_by_status_and_never_retried_in_vain() {
    let server = ScriptedServer::start(script(|entry, purpose, _| match (entry, purpose) {
        ("add", "guide_init") => Some(Reply::Raw(400, LLAMA_OVERFLOW.into())),
        ("reverse_words", "guide_init") => Some(Reply::Raw(401, LLAMA_BAD_KEY.into())),
        // A lone closing fence, as SmolLM2 under llama-server answered.
        ("is_palindrome", "debug_init") => Some(Reply::Text(
            "def is_palindrome(s):\n    s = ''.join(c.lower() for c in s if c.isalnum())\n    return s == s[::-1]\n```".into(),
        )),
        _ => None,
    }))
    .await;
    let home = temp_home();
    let cfg = config(home.path(), "");
    let out_dir = home.path().join("out");
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["sweep", "--dataset", "sample", "--tasks", "Sample/1,Sample/2,Sample/3", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out_dir);
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(started.elapsed() < Duration::from_secs(60), "no retry storm");

    // Each refused request was asked once: 400 and 401 are not retried.
    let asked = |entry: &str| {
        server
            .requests()
            .iter()
            .filter(|r| r.purpose == "guide_init" && r.entry_point().as_deref() == Some(entry))
            .count()
    };
    assert_eq!((asked("add"), asked("reverse_words")), (1, 1));

    let results = results(&out_dir);
    // The overflow is this task's own error (finished); the bad key is the endpoint's (unfinished).
    assert_eq!(results["Sample/1"]["status"], "error");
    let message = results["Sample/1"]["error"].as_str().unwrap();
    assert!(
        message.contains("rejected (HTTP 400): request (344 tokens) exceeds the available context size"),
        "{message}"
    );
    assert!(!message.contains('\n') && !message.contains("deserializ"), "{message}");
    assert_eq!(results["Sample/2"]["status"], "endpoint_failed");
    assert!(
        results["Sample/2"]["error"]
            .as_str()
            .unwrap()
            .contains("(HTTP 401): Invalid API Key")
    );
    // The lone fence kept its code.
    assert_eq!(results["Sample/3"]["status"], "solved", "{stdout}");
    // No library log lines, and no colour codes when stderr is not a terminal.
    assert!(!stderr.contains("async_openai") && !stderr.contains('\u{1b}'), "{stderr}");
    assert!(stdout.contains("unfinished, the endpoint failed"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_served_model_and_a_small_context_are_learnt_and_respected() {
    let long_analysis = "The code is wrong because it does the wrong thing. ".repeat(150);
    let server = ScriptedServer::start_as(
        script(move |entry, purpose, n| match (entry, purpose, n) {
            ("add", "debug_init", _) => Some(Reply::Text(fenced("def add(a, b):\n    return a - b\n"))),
            // The feedback prompt names no entry point; this run has one task.
            (_, "feedback", _) => Some(Reply::CutOff(long_analysis.clone())),
            _ => None,
        }),
        Served {
            model: "SmolLM2-135M-Instruct-Q8_0.gguf".into(),
            n_ctx: Some(1536),
        },
    )
    .await;
    let home = temp_home();
    let cfg = config(home.path(), "");
    let out_dir = home.path().join("out");
    let mut cmd = sample_run(home.path(), &server.base_url());
    cmd.args(["--config"]).arg(&cfg).arg("--out").arg(&out_dir);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stderr}");

    // Warned at the start: the endpoint serves another model than the one configured.
    assert!(
        stderr.contains("warning: the endpoint serves SmolLM2-135M-Instruct-Q8_0.gguf, not gpt-4o-mini"),
        "{stderr}"
    );
    // Recorded: in the manifest, per answer, in the result and the summary.
    let run_dir = std::fs::read_dir(home.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["served"]["models"][0], "SmolLM2-135M-Instruct-Q8_0.gguf");
    assert_eq!(manifest["served"]["context_size"], 1536);
    assert_eq!(results(&out_dir)["Sample/1"]["served_models"][0], "SmolLM2-135M-Instruct-Q8_0.gguf");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["served_models"][0], "SmolLM2-135M-Instruct-Q8_0.gguf");

    // Every request fits the context: max_tokens is what the prompt leaves (by rgd's estimate of
    // 3 characters a token), never the agent's default 1024/2048.
    for r in server.requests() {
        let chars: usize = r.system.chars().count() + r.user.chars().count();
        let max_tokens = r.body["max_tokens"].as_u64().unwrap() as usize;
        assert!(
            max_tokens + chars / 4 <= 1536,
            "{} asks {max_tokens} after {chars} chars",
            r.purpose
        );
    }
    // The rambling analysis is cut before it goes into the refinement, and the cut is reported.
    let refine = server.requests().into_iter().find(|r| r.purpose == "guide_refine").unwrap();
    assert!(refine.user.contains("characters cut to fit the model's context"), "{}", refine.user);
    assert!(
        stdout.contains("✂ fitted to the 1536-token context") && stdout.contains("cut analysis"),
        "{stdout}"
    );
    // An answer the length limit ended is flagged.
    assert!(stdout.contains("cut off by its length limit"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_stream_times_out_on_silence_and_the_retry_says_which_attempt() {
    let server = ScriptedServer::start(script(|entry, purpose, n| match (entry, purpose, n) {
        ("add", "guide_init", 1) => Some(Reply::Stall("1. Add the".into())),
        _ => None,
    }))
    .await;
    let home = temp_home();
    let cfg = config(home.path(), "timeout_secs = 120\n");
    let mut cmd = sample_run(home.path(), &server.base_url());
    cmd.args(["--llm-idle-timeout", "1", "--config"]).arg(&cfg);
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "silence ends the attempt, not the 120 s deadline"
    );
    assert!(
        stdout.contains("↻ attempt 1 failed: timed out: the answer stalled: no token for 1 s"),
        "{stdout}"
    );
    assert!(stdout.contains("solved at iteration 1"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_outage_stops_the_sweep_and_resume_runs_what_the_endpoint_failed() {
    let mut server = ScriptedServer::start(script(|_, _, _| None)).await;
    let home = temp_home();
    let cfg = config(home.path(), "[run]\nhalt_after_endpoint_failures = 2\n");
    let out_dir = home.path().join("out");
    let url = server.base_url();
    server.stop().await;

    let mut cmd = rgd(home.path(), &url);
    cmd.args(["sweep", "--dataset", "sample", "--no-memory", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out_dir);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(75), "a stopped sweep is not a success: {stderr}");
    assert!(
        stderr.contains(&format!("the endpoint {url} failed 2 tasks in a row")) && stderr.contains("rgd sweep --resume"),
        "{stderr}"
    );
    // Nothing is finished and no empty completion is exported.
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["finished"], 0);
    assert_eq!(summary["unfinished"].as_array().unwrap().len(), 6);
    assert_eq!(std::fs::read_to_string(out_dir.join("samples.jsonl")).unwrap(), "");
    let failed = results(&out_dir);
    assert_eq!(failed.len(), 2, "stopped after two: {failed:?}");
    assert!(failed.values().all(|r| r["status"] == "endpoint_failed"));

    // The endpoint is back: the resume runs every task, the failed ones included.
    server.restart().await;
    let run_id = std::fs::read_dir(home.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    let mut cmd = rgd(home.path(), &url);
    cmd.args(["sweep", "--resume", &run_id, "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out_dir);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        (summary["solved"].as_u64(), summary["unfinished"].as_array().map(Vec::len)),
        (Some(6), Some(0))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_list_and_show_read_well_and_a_piped_sweep_speaks_from_its_first_second() {
    let server = ScriptedServer::start(script(|_, purpose, _| match purpose {
        "direct" => Some(Reply::Text(fenced("def wrong():\n    pass\n"))),
        _ => None,
    }))
    .await;
    let home = temp_home();
    let long = "organisation/a-model-name-long-enough-to-break-any-column-2026";
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args([
        "sweep",
        "--dataset",
        "sample",
        "--limit",
        "2",
        "--strategy",
        "direct",
        "--model",
        long,
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Piped: no bar, so a line per task start; and "1 iteration", singular.
    assert!(stdout.contains("Sample/1       started"), "{stdout}");
    assert!(stdout.contains("failed after 1 iteration ("), "{stdout}");

    let run = |args: &[&str]| {
        let out = rgd(home.path(), &server.base_url()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let list = tokio::task::block_in_place(|| run(&["runs", "list"]));
    let lines: Vec<&str> = list.lines().collect();
    // The long name is cut, and the columns after it line up with the header's.
    // The last column: "created" in the header, a 16-character date ("2026-11-23 19:12") in a row.
    let last_column = |line: &str, width: usize| line.chars().count() - width;
    assert!(
        lines[1].contains("organisation/a-model-name-l…") && lines[1].contains("direct"),
        "{list}"
    );
    assert_eq!(last_column(lines[0], "created".len()), last_column(lines[1], 16), "{list}");

    let id = lines[1].split_whitespace().next().unwrap();
    let show = tokio::task::block_in_place(|| run(&["runs", "show", id]));
    assert!(show.contains("strategy   direct") && show.contains("split seed -"), "{show}");
    assert!(
        show.contains("debug      organisation/") && !show.contains("guide      "),
        "only the agent Direct calls: {show}"
    );
    assert!(!show.contains("None") && !show.contains("Some("), "{show}");
}
