//! The debugger, headless: `--break` and `--control stdio` on a real run against the loopback
//! scripted server. The test reads the JSON events as they come and answers pauses with commands,
//! as a script or an editor's plugin would.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};
use support::{Reply, ScriptedServer, fenced, rgd, sample_run, temp_home};

const WRONG: &str = "def add(a: int, b: int) -> int:\n    return a - b\n";
const RIGHT: &str = "def add(a: int, b: int) -> int:\n    return a + b\n";

fn script() -> support::Script {
    std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "guide_init" | "guide_refine" => Reply::Text("1. Subtract b from a.".into()),
        "feedback" => Reply::Text("The result has the wrong sign.".into()),
        _ => Reply::Text(fenced(WRONG)),
    })
}

/// Runs `rgd run` on Sample/1 with `args`; `answer` sees every event and returns the command
/// lines to send. Returns all events and the exit status.
async fn drive(
    server: &ScriptedServer,
    args: &[&str],
    mut answer: impl FnMut(&Value) -> Vec<Value> + Send + 'static,
) -> (Vec<Value>, bool) {
    let home = temp_home();
    let mut cmd = sample_run(home.path(), &server.base_url());
    cmd.args(["--max-iters", "2", "--json", "--control", "stdio"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tokio::task::spawn_blocking(move || {
        let _home = home;
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut events = Vec::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let envelope: Value = serde_json::from_str(&line.unwrap()).unwrap();
            let event = envelope["event"].clone();
            for command in answer(&event) {
                writeln!(stdin, "{command}").unwrap();
            }
            events.push(event);
        }
        let status = child.wait().unwrap();
        (events, status.success())
    })
    .await
    .unwrap()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .filter(|t| *t != "agent_tokens")
        .collect()
}

fn result(events: &[Value]) -> &Value {
    &events.iter().find(|e| e["type"] == "task_finished").expect("the task finished")["result"]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_before_tests_takes_an_edited_program_and_the_task_ends_solved_by_hand() {
    let server = ScriptedServer::start(script()).await;
    let (events, ok) = drive(&server, &["--break", "before:tests"], |event| {
        if event["type"] != "paused" {
            return vec![];
        }
        let pending = &event["pending"];
        assert_eq!(pending["kind"], "tests");
        match pending["suite"].as_str() {
            // The program the Debug agent wrote is shown in full, and the visible tests with it.
            Some("visible") if pending["code"] == WRONG => {
                assert_eq!(pending["tests"], json!(["assert add(2, 3) == 5", "assert add(-1, 1) == 0"]));
                vec![
                    json!({"cmd": "fly"}),
                    json!({"cmd": "edit", "field": "query", "value": "x"}),
                    json!({"cmd": "edit", "field": "code", "value": RIGHT}),
                ]
            }
            Some("visible") => {
                assert_eq!(pending["code"], RIGHT, "the pause is shown again with the edit");
                vec![json!({"cmd": "continue"})]
            }
            // Hidden tests are counted, never shown, even to the person at the debugger.
            Some("hidden") => {
                assert_eq!(pending["tests"], json!(["(1 hidden test)"]));
                vec![json!({"cmd": "continue"})]
            }
            other => panic!("paused before {other:?}"),
        }
    })
    .await;
    assert!(ok);
    let errors: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "error")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("bad command"), "{errors:?}");
    assert!(errors[1].contains("before a memory lookup"), "{errors:?}");
    let edit = events.iter().find(|e| e["type"] == "intervened").unwrap();
    assert_eq!(edit["field"], "code");
    assert!(
        edit["diff"].as_str().unwrap().contains("-    return a - b\n+    return a + b"),
        "{edit}"
    );
    let result = result(&events);
    assert_eq!(result["status"], "solved");
    assert_eq!(result["iterations"], 1);
    assert_eq!(result["intervened"], true);
    assert_eq!(result["completion"], RIGHT);
    // Two LLM calls only (guide, debug): the edit made the repair rounds unnecessary.
    assert_eq!(server.requests().len(), 2);
    // A hand-helped result never counts for the method.
    let summary = &events.iter().find(|e| e["type"] == "run_finished").unwrap()["summary"];
    assert_eq!(
        (summary["solved"].as_u64(), summary["solved_with_help"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(summary["pass_at_1"], 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_step_runs_exactly_one_effect_and_pauses_again() {
    let server = ScriptedServer::start(script()).await;
    let mut steps = 0;
    let (events, ok) = drive(&server, &["--break", "before:guide"], move |event| {
        if event["type"] != "paused" {
            return vec![];
        }
        steps += 1;
        match steps {
            1 | 2 => vec![json!({"cmd": "step"})],
            _ => vec![json!({"cmd": "break", "set": ""}), json!({"cmd": "continue"})],
        }
    })
    .await;
    assert!(ok);
    let k = kinds(&events);
    let paused: Vec<usize> = k.iter().enumerate().filter(|(_, t)| **t == "paused").map(|(i, _)| i).collect();
    assert_eq!(paused.len(), 3, "{k:?}");
    // Guide call, then the Debug call, then the visible tests: one effect between pauses.
    assert_eq!(
        &k[paused[0]..paused[2] + 1],
        [
            "paused",
            "resumed",
            "agent_request",
            "agent_response",
            "paused",
            "resumed",
            "agent_request",
            "agent_response",
            "code_extracted",
            "paused"
        ]
    );
    let reasons: Vec<&str> = paused
        .iter()
        .map(|&i| {
            events.iter().filter(|e| e["type"] != "agent_tokens").nth(i).unwrap()["reason"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(reasons, ["before:guide", "step", "step"]);
    // Stepping changes nothing: the result is the method's own.
    assert!(result(&events).get("intervened").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn guidance_edited_before_the_debug_call_is_what_the_debug_agent_receives() {
    let server = ScriptedServer::start(script()).await;
    let (events, ok) = drive(&server, &["--break", "before:debug,on:visible-fail"], |event| {
        match event["type"].as_str() {
            Some("paused") if event["reason"] == "before:debug" && event["pending"]["messages"].to_string().contains("Subtract") => {
                vec![json!({"cmd": "edit", "field": "guidance", "value": "1. Add a and b, carefully."})]
            }
            Some("paused") if event["reason"] == "on:visible-fail" => vec![json!({"cmd": "abort"})],
            Some("paused") => vec![json!({"cmd": "continue"})],
            _ => vec![],
        }
    })
    .await;
    assert!(ok);
    let requests = server.requests();
    assert_eq!(requests[1].purpose, "debug_init");
    assert!(requests[1].user.contains("Add a and b, carefully."), "{}", requests[1].user);
    assert!(!requests[1].user.contains("Subtract"));
    let result = result(&events);
    assert_eq!(
        (result["status"].as_str(), result["intervened"].as_bool()),
        (Some("error"), Some(true))
    );
    assert_eq!(result["error"], "aborted by hand");
    // The visible tests failed and the task was stopped before the Feedback agent was asked.
    assert_eq!(requests.len(), 2);
}

/// The events of a `--json` run's stdout.
fn events_of(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .filter(|e| e["type"] != "agent_tokens")
        .collect()
}

/// The task's events from its start up to (not including) the start of iteration `k`.
fn before_iteration(events: &[Value], k: u64) -> Vec<Value> {
    let start = events.iter().position(|e| e["type"] == "task_started").unwrap();
    let end = events
        .iter()
        .position(|e| e["type"] == "iteration_started" && e["iteration"] == k)
        .unwrap();
    events[start..end].to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_at_iteration_two_replays_the_first_without_an_llm_call_and_goes_on_live() {
    let parent_server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let mut cmd = rgd(home.path(), &parent_server.base_url());
    cmd.args([
        "run",
        "--dataset",
        "sample",
        "--task",
        "Sample/1",
        "--max-iters",
        "3",
        "--no-memory",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let parent = events_of(&out.stdout);
    let parent_id = parent[0]["manifest"]["run_id"].as_str().unwrap().to_string();
    assert_eq!(result(&parent)["status"], "failed");

    // Another endpoint (another model) from iteration 2: it answers right.
    let fork_server = ScriptedServer::start(std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "debug_fix" => Reply::Text(fenced(RIGHT)),
        other => panic!("the fork asked for {other}"),
    }))
    .await;
    let mut cmd = rgd(home.path(), &fork_server.base_url());
    cmd.args([
        "fork",
        &parent_id[..10],
        "--task",
        "Sample/1",
        "--at",
        "2",
        "--model",
        "other-model",
        "--temperature",
        "0.7",
        "--json",
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fork = events_of(&out.stdout);

    // One LLM call, the first of iteration 2, with the parent's refined guidance in it.
    let requests = fork_server.requests();
    assert_eq!(requests.iter().map(|r| r.purpose).collect::<Vec<_>>(), ["debug_fix"]);
    assert_eq!(requests[0].body["model"], "other-model");
    assert_eq!(requests[0].body["temperature"].as_f64().map(|t| (t * 10.0).round()), Some(7.0));
    assert!(requests[0].user.contains("Subtract b from a."));
    // Iteration 1 (and the refinement that ends it) is the parent's, event for event.
    assert_eq!(before_iteration(&fork, 2), before_iteration(&parent, 2));
    let result = result(&fork);
    assert_eq!(
        (result["status"].as_str(), result["iterations"].as_u64()),
        (Some("solved"), Some(2))
    );
    // Tokens of the replayed calls are counted: the guide's two calls and the first debug call.
    assert!(result["tokens"]["guide"]["calls"].as_u64() >= Some(2), "{result}");
    let manifest = &fork[0]["manifest"];
    assert_eq!(
        manifest["fork"],
        json!({"parent_run": parent_id, "task_id": "Sample/1", "at_iteration": 2})
    );
    assert_eq!(manifest["agents"]["debug"]["model"], "other-model");

    // A fork point past the parent's last iteration is refused, naming the range.
    let mut cmd = rgd(home.path(), &fork_server.base_url());
    cmd.args(["fork", &parent_id, "--task", "Sample/1", "--at", "4"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("fork at 1..=3"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const GEOMETRY: &str = r#""""Small geometry helpers."""
import math


def _square(x):
    return x * x


def circle_area(r):
    """Area of a circle of radius r; a negative radius raises ValueError."""
    if r < 0:
        raise ValueError("negative radius")
    return math.pi * r * 2


def describe(r):
    return f"circle of radius {r}: area {circle_area(r):.2f}"
"#;

const VISIBLE: &str = "import math\nfrom geometry import circle_area\n\n\ndef test_unit():\n    assert math.isclose(circle_area(1), math.pi)\n\n\nassert circle_area(0) == 0\n";

const HIDDEN: &str = "import math\n\n\ndef test_two():\n    assert math.isclose(circle_area(2), 4 * math.pi)\n\n\ndef test_negative():\n    try:\n        circle_area(-1)\n    except ValueError:\n        return\n    raise AssertionError(\"no ValueError\")\n";

const FIXED: &str = "def circle_area(r):\n    \"\"\"Area of a circle of radius r; a negative radius raises ValueError.\"\"\"\n    if r < 0:\n        raise ValueError(\"negative radius\")\n    return math.pi * _square(r)\n";

#[tokio::test(flavor = "multi_thread")]
async fn solve_repairs_a_function_of_a_users_file_against_its_tests_and_writes_it_back() {
    let server = ScriptedServer::start(std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "feedback" => Reply::Text("circle_area doubles r instead of squaring it.".into()),
        "guide_refine" => Reply::Text("1. Return math.pi * _square(r).".into()),
        "debug_fix" => Reply::Text(fenced(FIXED)),
        other => panic!("unexpected call {other}"),
    }))
    .await;
    let home = temp_home();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("geometry.py");
    std::fs::write(&file, GEOMETRY).unwrap();
    std::fs::write(work.path().join("test_geometry.py"), VISIBLE).unwrap();
    std::fs::write(work.path().join("hidden_geometry.py"), HIDDEN).unwrap();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.arg("solve")
        .arg(&file)
        .args(["--entry", "circle_area", "--no-memory", "--write"])
        .arg("--tests")
        .arg(work.path().join("test_geometry.py"))
        .arg("--hidden")
        .arg(work.path().join("hidden_geometry.py"));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stderr}");
    // The file's own code was the first program: its visible test failed with the real value.
    assert!(stdout.contains("visible tests: 1/2 passed"), "{stdout}");
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    // The fix went into the module, next to the helper it uses; the rest is untouched.
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("return math.pi * _square(r)"), "{written}");
    assert!(written.contains("def describe(r):") && written.starts_with("\"\"\"Small geometry helpers.\"\"\"\nimport math\n"));
    assert_eq!(std::fs::read_to_string(work.path().join("geometry.py.orig")).unwrap(), GEOMETRY);
    assert!(
        stdout.contains("-    return math.pi * r * 2\n+    return math.pi * _square(r)"),
        "{stdout}"
    );
    // No agent saw a hidden test.
    for req in server.requests() {
        assert!(
            !req.user.contains("test_negative") && !req.user.contains("4 * math.pi"),
            "{}",
            req.user
        );
    }
    let fix = server.requests().into_iter().find(|r| r.purpose == "debug_fix").unwrap();
    assert!(fix.user.contains("def test_unit():"), "the visible tests are shown: {}", fix.user);
}

#[tokio::test(flavor = "multi_thread")]
async fn solve_names_the_file_and_line_of_bad_input() {
    let home = temp_home();
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("geometry.py");
    std::fs::write(&file, GEOMETRY).unwrap();
    let tests = work.path().join("t.py");
    std::fs::write(&tests, VISIBLE).unwrap();
    let run = |args: &[&str]| {
        let out = rgd(home.path(), "http://127.0.0.1:9")
            .arg("solve")
            .arg(&file)
            .args(args)
            .arg("--tests")
            .arg(&tests)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&["--entry", "volume"]);
    assert!(
        err.contains("geometry.py: no function `volume` (defined here: _square, circle_area, describe)"),
        "{err}"
    );
    std::fs::write(&tests, "import math\n\ndef test_a():\n    assert circle_area(1 ==\n").unwrap();
    let err = run(&["--entry", "circle_area"]);
    assert!(err.contains("t.py line 4: syntax error"), "{err}");
}
