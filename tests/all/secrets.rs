//! No secret on disk: an API key given with `--api-key`, and a password in the endpoint URL, appear
//! in no file a run writes (manifest, status, sled database, journal, exports, logs), nor on the
//! command line of a detached sweep, even when the server echoes the key in an error message.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use support::{Reply, ScriptedServer, rgd, temp_home};

const KEY: &str = "sk-rgd-test-4f9d2c7e1b";
const PASSWORD: &str = "pw-rgd-test-83hd62";

/// Every file under `dir` (recursively) whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                hits.push(path.display().to_string());
            }
        }
    }
    hits
}

/// Files under `dir`, recursively.
fn file_count(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| if e.path().is_dir() { file_count(&e.path()) } else { 1 })
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn no_file_a_run_writes_holds_the_api_key_or_the_url_password() {
    let solutions = support::sample_solutions();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let script = Arc::new(move |req: &support::Request| {
        // The first call fails with a server message that quotes the key (some proxies do).
        if counter.fetch_add(1, Ordering::SeqCst) == 0 {
            return Reply::Status(500, format!("upstream rejected key {KEY} for user bob:{PASSWORD}"));
        }
        support::solving_reply(&solutions, req, Duration::from_millis(150))
    });
    let server = ScriptedServer::start(script).await;
    let url = server.base_url().replace("http://", &format!("http://bob:{PASSWORD}@"));
    let home = temp_home();
    let out = tempfile::tempdir().unwrap();

    // A sweep in the foreground, with a journal, debug logs and exports.
    let done = rgd(home.path(), &url)
        .env("RGD_LOG", "debug")
        .args(["sweep", "--dataset", "sample", "--limit", "2", "--journal", "--api-key", KEY])
        .args(["--base-url", &url, "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!stderr.contains(KEY) && !stderr.contains(PASSWORD), "{stderr}");
    assert!(calls.load(Ordering::SeqCst) > 1, "the run reached the server");

    // A detached sweep: the key and URL go to the child by environment, not on its command line.
    let detached = rgd(home.path(), &url)
        .env("RGD_LOG", "debug")
        .args([
            "sweep",
            "--dataset",
            "sample",
            "--limit",
            "2",
            "--detach",
            &format!("--api-key={KEY}"),
        ])
        .args(["--base-url", &url])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&detached.stderr).into_owned();
    assert!(detached.status.success(), "{said}");
    let pid: u32 = said
        .split("(pid ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {said}"));
    if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) {
        let cmdline = String::from_utf8_lossy(&cmdline);
        assert!(!cmdline.contains(KEY) && !cmdline.contains(PASSWORD), "{cmdline}");
    }
    let started = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && started.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Exports of both runs, from a process that was never told the key.
    let list = rgd(home.path(), &url).args(["runs", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    for run_id in std::fs::read_dir(home.path().join("runs")).unwrap().flatten() {
        let run_id = run_id.file_name().to_string_lossy().into_owned();
        let export = out.path().join(&run_id);
        let status = rgd(home.path(), &url)
            .args(["runs", "export", &run_id, "--out"])
            .arg(&export)
            .status()
            .unwrap();
        assert!(status.success(), "export of {run_id} ({list})");
    }

    assert!(file_count(home.path()) > 10 && file_count(out.path()) > 5);
    for dir in [home.path(), out.path()] {
        for secret in [KEY, PASSWORD] {
            let hits = files_containing(dir, secret);
            assert!(hits.is_empty(), "{secret} written to {hits:?}");
        }
    }
    // What was recorded in their place says so.
    let manifests = files_containing(&home.path().join("runs"), "<redacted>");
    assert!(manifests.iter().any(|p| p.ends_with("manifest.json")), "{manifests:?}");
}
