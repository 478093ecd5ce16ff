//! What a new user meets first: `rgd demo` and `rgd doctor`, through the real binary. With an
//! endpoint configured the demo uses it (not the embedded model) and ends by saying where the run
//! is recorded; in a terminal it shows the run in the TUI first. The doctor names each broken
//! part together with what to do about it.

use crate::support;

use std::sync::Arc;

use serde_json::Value;
use support::tmux::{Tmux, wait_for};
use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

/// Sample/1 (`add`): wrong at first, repaired after the Feedback agent's analysis.
fn script() -> support::Script {
    Arc::new(|req| match req.purpose {
        "guide_init" => Reply::Text("1. Return the sum of the two numbers.".into()),
        "debug_init" => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a - b\n")),
        "feedback" => Reply::Text("add(2, 3) returned -1: the code subtracts instead of adding.".into()),
        "guide_refine" => Reply::Text("1. Return a + b.".into()),
        "debug_fix" => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a + b\n")),
        "keywords" => Reply::Text("sum, addition, integers".into()),
        other => Reply::Status(400, format!("unexpected {other}")),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_uses_a_configured_endpoint_and_says_where_the_run_is() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let out = tokio::task::block_in_place(|| {
        rgd(home.path(), &server.base_url())
            .args(["demo", "--headless", "--limit", "1"])
            .output()
            .unwrap()
    });
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // Every part was made ready, and the embedded model was not touched.
    assert!(
        stderr.contains("sandbox ready") && stderr.contains("embedding model ready"),
        "{stderr}"
    );
    assert!(!stderr.contains("embedded model"), "an endpoint is configured: {stderr}");
    // The three agents ran against the loopback endpoint, repair included.
    let purposes: Vec<&str> = server.requests().iter().map(|r| r.purpose).collect();
    for p in ["guide_init", "debug_init", "feedback", "guide_refine", "debug_fix"] {
        assert!(purposes.contains(&p), "no {p} request: {purposes:?}");
    }

    // The summary names the recorded run, and that run is there: one task, solved.
    let run_id = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("recorded as run "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run id in the summary: {stderr}"))
        .to_string();
    assert!(stderr.contains(&format!("rgd replay {run_id}")), "{stderr}");
    let dir = home.path().join("runs").join(&run_id);
    let read = |name: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap() };
    let manifest = read("manifest.json");
    assert_eq!(manifest["dataset"]["name"], "sample", "{manifest}");
    assert_eq!(manifest["endpoint"], server.base_url(), "{manifest}");
    assert_ne!(manifest["agents"]["debug"]["model"], "smollm2-135m", "{manifest}");
    let status = read("status.json");
    assert_eq!(
        (status["state"].as_str(), status["tasks"].as_u64(), status["solved"].as_u64()),
        (Some("finished"), Some(1), Some(1)),
        "{status}"
    );
}

fn doctor(home: &std::path::Path, base_url: &str) -> (Option<i32>, String) {
    let out = rgd(home, base_url).arg("doctor").output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The line of check `name`, and the line after it (where a failure's fix is).
fn check<'a>(report: &'a str, name: &str) -> (&'a str, &'a str) {
    let lines: Vec<&str> = report.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.get(6..).is_some_and(|rest| rest.starts_with(name)))
        .unwrap_or_else(|| panic!("no {name} check in:\n{report}"));
    (lines[i], lines.get(i + 1).copied().unwrap_or(""))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_doctor_names_each_broken_part_and_its_fix() {
    // An endpoint that is not there: a port that was just free, and a state dir that cannot
    // be created (its parent is a file, which stops root too).
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let scratch = temp_home();
    let blocked = scratch.path().join("a-file");
    std::fs::write(&blocked, "not a directory").unwrap();
    let (code, report) = tokio::task::block_in_place(|| doctor(&blocked.join("home"), &dead));
    assert_eq!(code, Some(1), "{report}");
    let (line, fix) = check(&report, "endpoint");
    // The cause is named (refused), and `--fix`, which cannot start a server or make a
    // directory writable, is not offered.
    assert!(
        line.starts_with("FAIL") && line.contains("Connection refused") && fix.contains("fix: start the server or fix OPENAI_BASE_URL"),
        "{report}"
    );
    let (line, fix) = check(&report, "state dir");
    assert!(line.starts_with("FAIL") && fix.contains("RGD_HOME"), "{report}");
    assert!(report.contains("2 problem(s); see the fixes above"), "{report}");

    // A live endpoint: reachable, and the embedded model is left alone.
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let (_, report) = tokio::task::block_in_place(|| doctor(home.path(), &server.base_url()));
    // It answers, and serves another model than the configured one: a warning, not a failure.
    let endpoint = check(&report, "endpoint").0;
    assert!(
        endpoint.starts_with("note") && endpoint.contains("serves scripted, not gpt-4o-mini"),
        "{report}"
    );
    assert!(report.contains("everything rgd needs is in place"), "{report}");
    assert!(check(&report, "state dir").0.starts_with("ok"), "{report}");
    assert!(check(&report, "embedded model").0.contains("not used"), "{report}");
}

/// In a terminal the demo opens the TUI on its run, and the summary follows when the view closes.
#[tokio::test(flavor = "multi_thread")]
async fn in_a_terminal_the_demo_shows_the_run_in_the_tui_then_the_summary() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("OPENAI_BASE_URL", server.base_url()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let line = format!("cd {} && {} demo --limit 1", env!("CARGO_MANIFEST_DIR"), env!("CARGO_BIN_EXE_rgd"));
    let tmux = Tmux::start(&line, &env, (120, 40));
    // A one-task run opens on that task: both iterations, the repair, the run finished.
    let view = wait_for(&tmux, &["task Sample/1", "finished", "run finished"], 60).await;
    assert!(
        view.contains("Solved after 2 iteration(s)") && view.contains("return a + b"),
        "{view}"
    );
    tmux.keys(&["q"]);
    let after = wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
    assert!(after.contains("recorded as run") && after.contains("rgd replay"), "{after}");
}
