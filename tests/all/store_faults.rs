//! A recorded run damaged the ways disks, copies and kills damage files: no command shows fewer
//! tasks than were finished and exits 0, none panics, `rgd runs verify` names the damage, and
//! `rgd runs repair` gives back every finished task whose journal lines survive.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{ScriptedServer, rgd, temp_home};

const TASKS: usize = 3;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

struct Ran {
    code: Option<i32>,
    out: String,
}

fn run(home: &Path, args: &[&str]) -> Ran {
    let out = rgd(home, "http://127.0.0.1:9")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let all = format!("{stdout}\n{stderr}");
    assert!(!all.contains("panicked"), "rgd {args:?} panicked: {all}");
    assert!(!all.contains("backtrace ()"), "sled's words reached the user: rgd {args:?}: {all}");
    Ran {
        code: out.status.code(),
        out: all,
    }
}

/// The finished tasks whose journal line is whole.
fn finished_in_journal(run_dir: &Path) -> usize {
    let text = std::fs::read(run_dir.join("events.jsonl")).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let whole = if text.ends_with('\n') {
        text.as_ref()
    } else {
        &text[..text.rfind('\n').map_or(0, |i| i + 1)]
    };
    let mut tasks: Vec<String> = whole
        .lines()
        .filter_map(|l| rgd::store::parse_line(l).ok())
        .filter_map(|e| serde_json::to_value(&e).ok())
        .filter(|e| e["event"]["type"] == "task_finished")
        .map(|e| e["event"]["result"]["task_id"].as_str().unwrap().to_string())
        .collect();
    tasks.sort();
    tasks.dedup();
    tasks.len()
}

fn flip(path: &Path, at: u64, n: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = (at as usize).min(bytes.len().saturating_sub(n));
    for b in &mut bytes[at..at + n] {
        *b ^= 0xA5;
    }
    std::fs::write(path, bytes).unwrap();
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new().write(true).open(path).unwrap().set_len(len).unwrap();
}

type Fault = (String, Box<dyn Fn(&Path)>);

fn faults(pristine: &Path) -> Vec<Fault> {
    let db_len = std::fs::metadata(pristine.join("db/db")).unwrap().len();
    let mut faults: Vec<Fault> = Vec::new();
    for i in 0..20u64 {
        let at = db_len * (2 * i + 1) / 40;
        faults.push((
            format!("16 bytes flipped at {at} of db/db"),
            Box::new(move |d: &Path| flip(&d.join("db/db"), at, 16)),
        ));
    }
    for i in 0..10u64 {
        let len = db_len * i / 10;
        faults.push((
            format!("db/db truncated to {len} bytes"),
            Box::new(move |d: &Path| truncate(&d.join("db/db"), len)),
        ));
    }
    faults.push((
        "the snapshot deleted".into(),
        Box::new(|d: &Path| {
            for e in std::fs::read_dir(d.join("db")).unwrap().flatten() {
                if e.file_name().to_string_lossy().starts_with("snap.") {
                    std::fs::remove_file(e.path()).unwrap();
                }
            }
        }),
    ));
    for file in ["manifest.json", "status.json"] {
        faults.push((
            format!("{file} truncated"),
            Box::new(move |d: &Path| {
                let len = std::fs::metadata(d.join(file)).unwrap().len();
                truncate(&d.join(file), len / 2);
            }),
        ));
        faults.push((
            format!("{file} not JSON"),
            Box::new(move |d: &Path| std::fs::write(d.join(file), "{\"state\": fin").unwrap()),
        ));
        faults.push((
            format!("{file} with a digit changed"),
            Box::new(move |d: &Path| {
                let text = std::fs::read_to_string(d.join(file)).unwrap();
                let at = text.rfind(|c: char| c.is_ascii_digit()).unwrap();
                let digit = text.as_bytes()[at];
                let changed = if digit == b'9' { '8' } else { (digit + 1) as char };
                std::fs::write(d.join(file), format!("{}{changed}{}", &text[..at], &text[at + 1..])).unwrap();
            }),
        ));
        // Unreadable even by root, which permissions do not stop: a folder where the file was.
        faults.push((
            format!("{file} unreadable"),
            Box::new(move |d: &Path| {
                std::fs::remove_file(d.join(file)).unwrap();
                std::fs::create_dir(d.join(file)).unwrap();
            }),
        ));
    }
    faults.push((
        "the journal's last line cut in half".into(),
        Box::new(|d: &Path| {
            let text = std::fs::read(d.join("events.jsonl")).unwrap();
            let last = text[..text.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
            truncate(&d.join("events.jsonl"), (last + (text.len() - last) / 2) as u64);
        }),
    ));
    faults.push((
        "db/db emptied and the journal's last line cut".into(),
        Box::new(|d: &Path| {
            truncate(&d.join("db/db"), 0);
            let text = std::fs::read(d.join("events.jsonl")).unwrap();
            let last = text[..text.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
            truncate(&d.join("events.jsonl"), (last + (text.len() - last) / 2) as u64);
        }),
    ));
    faults
}

/// How many of the run's tasks a `runs show` prints as finished ("state ... · N/3 finished").
fn shown_finished(out: &str) -> Option<usize> {
    let at = out.find("/3 finished")?;
    out[..at].rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_damage_is_named_never_read_as_fewer_tasks_and_repair_gives_back_the_journalled_tasks() {
    let server = ScriptedServer::start(support::solving_script(Duration::ZERO)).await;
    let made = temp_home();
    let limit = TASKS.to_string();
    let out = rgd(made.path(), &server.base_url())
        .args(["sweep", "--dataset", "sample", "--limit", &limit, "--no-memory"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = support::only_run(made.path());
    let pristine: PathBuf = made.path().join("runs").join(&id);
    let whole = run(made.path(), &["runs", "verify", &id]);
    assert_eq!(whole.code, Some(0), "a whole run verifies: {}", whole.out);
    assert!(whole.out.contains(&format!("{id}  ok: 3/3")), "{}", whole.out);
    // Reading a run changes none of its files' contents (its seal still holds after).
    run(made.path(), &["runs", "show", &id]);
    let after_show = run(made.path(), &["runs", "verify", &id]);
    assert_eq!(after_show.code, Some(0), "after show: {}", after_show.out);
    run(made.path(), &["replay", &id]);
    let again = run(made.path(), &["runs", "verify", &id]);
    assert_eq!(again.code, Some(0), "{}", again.out);

    let mut problems = Vec::new();
    for (name, damage) in faults(&pristine) {
        let home = temp_home();
        let dir = home.path().join("runs").join(&id);
        copy_dir(&pristine, &dir);
        damage(&dir);
        let survive = finished_in_journal(&dir);
        let mut problem = |what: String| problems.push(format!("{name}: {what}"));

        let list = run(home.path(), &["runs", "list"]);
        let row = list.out.lines().find(|l| l.starts_with(id.as_str())).unwrap_or("");
        if row.is_empty() {
            problem(format!("`runs list` dropped the run: {}", list.out));
        } else if !row.contains("damaged") && !row.contains(" 3/3 ") && !name.contains("journal") {
            problem(format!("`runs list` shows it neither whole nor damaged: {row}"));
        }
        let show = run(home.path(), &["runs", "show", &id]);
        if show.code == Some(0) && shown_finished(&show.out) != Some(TASKS) {
            problem(format!("`runs show` exits 0 showing fewer tasks: {}", show.out));
        }
        if show.code != Some(0) && !show.out.contains("repair") {
            problem(format!("`runs show` fails without pointing to repair: {}", show.out));
        }
        let report_dir = home.path().join("report");
        let report = run(home.path(), &["report", &id, "--out", report_dir.to_str().unwrap()]);
        if report.code == Some(0) && show.code != Some(0) {
            problem(format!("`report` exits 0 on a run `show` cannot read: {}", report.out));
        }
        run(home.path(), &["replay", &id]);
        let verify = run(home.path(), &["runs", "verify", &id]);
        if verify.code != Some(1) || !verify.out.contains("damaged") {
            problem(format!("`runs verify` does not name the damage: {}", verify.out));
        }
        let repair = run(home.path(), &["runs", "repair", &id]);
        if repair.code != Some(0) {
            problem(format!("`runs repair` failed: {}", repair.out));
            continue;
        }
        let after = run(home.path(), &["runs", "show", &id]);
        if after.code != Some(0) || shown_finished(&after.out) != Some(survive) {
            problem(format!(
                "after repair `runs show` does not give back the {survive} journalled tasks: {}",
                after.out
            ));
        }
        let verified = run(home.path(), &["runs", "verify", &id]);
        if verified.code != Some(0) {
            problem(format!("after repair `runs verify` still fails: {}", verified.out));
        }
        let kept: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".damaged-"))
            .collect();
        if kept.is_empty() {
            problem("repair kept no damaged file beside the new ones".into());
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sweep_killed_mid_run_verifies_as_resumable_and_finishes_whole() {
    let server = ScriptedServer::start(support::solving_script(Duration::from_millis(250))).await;
    let home = temp_home();
    let h = home.path();
    let mut child = rgd(h, &server.base_url())
        .args(["sweep", "--dataset", "sample", "--no-memory"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while support::finished_in_statuses(h) < 2 {
        assert!(started.elapsed() < Duration::from_secs(60), "the sweep made no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let id = support::only_run(h);
    let verify = run(h, &["runs", "verify", &id]);
    assert_eq!(verify.code, Some(0), "{}", verify.out);
    assert!(
        verify.out.contains("resumable") && !verify.out.contains("damaged"),
        "{}",
        verify.out
    );
    let list = run(h, &["runs", "list"]);
    assert!(!list.out.contains("damaged"), "{}", list.out);

    let mut resume = rgd(h, &server.base_url());
    resume.args(["sweep", "--resume", &id]);
    let out = tokio::task::spawn_blocking(move || resume.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let verify = run(h, &["runs", "verify", &id]);
    assert_eq!(verify.code, Some(0), "{}", verify.out);
    assert!(verify.out.contains("ok: 6/6"), "{}", verify.out);
}
