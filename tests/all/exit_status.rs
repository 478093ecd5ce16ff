//! The exit status a script, a CI job or a Slurm array element reads (the table in docs/commands.md):
//! 0 every task finished, 1 rgd failed, 2 usage, 75 tasks left that `--resume` finishes.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

const RIGHT: &str = "def add(a: int, b: int) -> int:\n    return a + b\n";

/// Retries that end fast, so an endpoint failure is one quickly.
fn config(home: &Path) -> PathBuf {
    let path = home.join("rgd.toml");
    std::fs::write(&path, "[llm]\nretries = 1\nbackoff_min_ms = 10\nbackoff_max_ms = 20\n").unwrap();
    path
}

/// One task of the sample set (reverse_words) always fails at the endpoint; the rest answer.
fn one_task_fails() -> support::Script {
    Arc::new(|req| {
        if req.user.contains("reverse_words") {
            Reply::Status(503, "overloaded".into())
        } else {
            Reply::Text(fenced(RIGHT))
        }
    })
}

fn code_of(mut cmd: std::process::Command) -> (Option<i32>, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn usage_is_2_help_is_0_and_shows_the_table() {
    let home = temp_home();
    let url = "http://127.0.0.1:9/v1";
    let (code, _, err) = code_of({
        let mut c = rgd(home.path(), url);
        c.args(["sweep", "--dataset", "sample", "--no-such-flag"]);
        c
    });
    assert_eq!(code, Some(2), "{err}");
    for args in [
        vec!["--help"],
        vec!["sweep", "--help"],
        vec!["eval", "--help"],
        vec!["solve", "--help"],
    ] {
        let (code, out, _) = code_of({
            let mut c = rgd(home.path(), url);
            c.args(&args);
            c
        });
        assert_eq!(code, Some(0), "{args:?}");
        assert!(
            out.contains("Exit status:") && out.contains("75   tasks left unfinished"),
            "{args:?}: {out}"
        );
    }
}

#[test]
fn an_error_is_1() {
    let home = temp_home();
    let url = "http://127.0.0.1:9/v1";
    let (code, _, err) = code_of({
        let mut c = rgd(home.path(), url);
        c.args(["sweep", "--resume", "01NOSUCHRUN"]);
        c
    });
    assert_eq!(code, Some(1), "{err}");
    let samples = home.path().join("samples.jsonl");
    std::fs::write(&samples, "not json\n").unwrap();
    let (code, _, err) = code_of({
        let mut c = rgd(home.path(), url);
        c.args(["eval", "--dataset", "sample"]).arg(&samples);
        c
    });
    assert_eq!(code, Some(1), "{err}");
    std::fs::write(&samples, "{\"task_id\": \"Sample/1\", \"completion\": \"    return a + b\\n\"}\n").unwrap();
    let (code, _, err) = code_of({
        let mut c = rgd(home.path(), url);
        c.args(["eval", "--dataset", "sample"]).arg(&samples);
        c
    });
    assert_eq!(code, Some(0), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn one_task_left_by_the_endpoint_is_75_and_the_resume_that_finishes_it_is_0() {
    let server = ScriptedServer::start(one_task_fails()).await;
    let home = temp_home();
    let cfg = config(home.path());
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args([
        "sweep",
        "--dataset",
        "sample",
        "--no-memory",
        "--strategy",
        "direct",
        "--run-id",
        "partly",
        "--config",
    ])
    .arg(&cfg);
    let (code, _, err) = tokio::task::spawn_blocking(move || code_of(cmd)).await.unwrap();
    assert_eq!(code, Some(75), "one task unfinished is not a success: {err}");
    assert!(err.contains("1 unfinished (rgd sweep --resume partly)"), "{err}");

    let healthy = ScriptedServer::start(Arc::new(|_| Reply::Text(fenced(RIGHT)))).await;
    let mut cmd = rgd(home.path(), &healthy.base_url());
    cmd.args(["sweep", "--resume", "partly", "--config"]).arg(&cfg);
    let (code, _, err) = tokio::task::spawn_blocking(move || code_of(cmd)).await.unwrap();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(healthy.requests().len(), 1, "only the unfinished task ran again");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_experiment_and_a_solve_with_work_left_are_75() {
    let server = ScriptedServer::start(one_task_fails()).await;
    let home = temp_home();
    let cfg = config(home.path());
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["experiment", "run", "--datasets", "sample", "--strategies", "direct", "--config"])
        .arg(&cfg);
    let (code, _, err) = tokio::task::spawn_blocking(move || code_of(cmd)).await.unwrap();
    assert_eq!(code, Some(75), "{err}");
    assert!(err.contains("rgd experiment resume"), "{err}");

    // A function of one's own file, with the endpoint failing its only task.
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("words.py");
    std::fs::write(&file, "def reverse_words(s):\n    return s\n").unwrap();
    std::fs::write(work.path().join("test_words.py"), "assert reverse_words('a b') == 'b a'\n").unwrap();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.arg("solve")
        .arg(&file)
        .args(["--entry", "reverse_words", "--no-memory", "--strategy", "direct", "--config"])
        .arg(&cfg)
        .arg("--tests")
        .arg(work.path().join("test_words.py"));
    let (code, _, err) = tokio::task::spawn_blocking(move || code_of(cmd)).await.unwrap();
    assert_eq!(code, Some(75), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_sweep_is_130() {
    let server = ScriptedServer::start(Arc::new(|_| Reply::Hang)).await;
    let home = temp_home();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["sweep", "--dataset", "sample", "--no-memory", "--strategy", "direct"]);
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Interrupted once the first request is in flight.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while server.requests().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("rgd sweep --resume"), "{err}");
}
