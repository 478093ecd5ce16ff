//! Sweeps on a real Slurm cluster: the test brings up a single-node cluster (Debian's slurmctld,
//! slurmd and munge, started directly by `deploy/slurm/start-single-node.sh`), submits sweeps with
//! `rgd slurm submit` against the loopback scripted server, and checks what the merge job made.
//! Where the machine cannot run the daemons (not root, no packages to be had) the tests say so
//! loudly and end without checking anything.

use crate::support;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::sweeps::{all_but_reverse_words, ok, results};
use support::{ScriptedServer, rgd, sample_solutions, temp_home};

/// One Slurm test at a time: they share the cluster's two cores.
static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Brings the cluster up; `false` (after a loud message) where this machine cannot run it.
fn cluster_up() -> bool {
    let skip = |why: &str| {
        eprintln!(
            "\n{}\nSKIPPED: the Slurm tests did not run: {why}\n{}\n",
            "!".repeat(78),
            "!".repeat(78)
        );
        false
    };
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if uid.as_deref().unwrap_or("") != "0" {
        return skip("starting slurmctld, slurmd and munged needs root");
    }
    let started = Instant::now();
    let out = Command::new("bash")
        .arg(repo().join("deploy/slurm/start-single-node.sh"))
        .env("SLURM_NICE", "5")
        .output()
        .expect("bash runs");
    if !out.status.success() {
        let installed = Command::new("sinfo").arg("--version").output().is_ok_and(|o| o.status.success());
        let log = String::from_utf8_lossy(&out.stderr);
        if !installed {
            return skip(&format!("the Slurm packages could not be installed:\n{log}"));
        }
        panic!("Slurm is installed but did not start:\n{log}");
    }
    eprintln!(
        "slurm up in {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.contains("slurm up"))
            .unwrap_or("")
    );
    true
}

const SWEEP: [&str; 8] = [
    "--dataset",
    "sample",
    "--no-memory",
    "--max-iters",
    "2",
    "--concurrency",
    "1",
    "--journal",
];

fn status(home: &Path, url: &str, id: &str) -> Value {
    serde_json::from_str(ok(rgd(home, url).args(["slurm", "status", id, "--json"])).trim()).unwrap()
}

/// Polls `rgd slurm status` until `done` holds (or fails after `limit`).
fn wait_for(home: &Path, url: &str, id: &str, limit: Duration, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let s = status(home, url, id);
        if done(&s) {
            eprintln!("{what} after {:.1}s", start.elapsed().as_secs_f64());
            return s;
        }
        if start.elapsed() > limit {
            let logs = std::fs::read_dir(home.join("slurm").join(id).join("logs"))
                .map(|d| {
                    d.flatten()
                        .map(|e| {
                            format!(
                                "== {}\n{}",
                                e.path().display(),
                                std::fs::read_to_string(e.path()).unwrap_or_default()
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            panic!("waited {limit:?} for {what}; status {s}\n{logs}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The whole sweep on this machine, exported.
fn single_machine(home: &Path, url: &str) -> BTreeMap<String, (String, u64, String)> {
    let whole = home.join("whole");
    ok(rgd(home, url)
        .arg("sweep")
        .args(SWEEP)
        .args(["--run-id", "whole", "--out"])
        .arg(&whole));
    results(&whole)
}

fn merged(home: &Path, url: &str, id: &str) -> BTreeMap<String, (String, u64, String)> {
    let out = home.join(format!("{id}-export"));
    ok(rgd(home, url).args(["runs", "export", id, "--out"]).arg(&out));
    results(&out)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_four_shard_slurm_sweep_merges_to_the_single_machine_sweep() {
    let _one = CLUSTER.lock().await;
    if !cluster_up() {
        return;
    }
    let server = ScriptedServer::start(all_but_reverse_words(Duration::ZERO)).await;
    let home = temp_home();
    let (h, url) = (home.path().to_path_buf(), server.base_url());
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let submitted = ok(rgd(&h, &url)
            .args([
                "slurm",
                "submit",
                "--shards",
                "4",
                "--name",
                "nightly",
                "--partition",
                "debug",
                "--time",
                "10",
            ])
            .args(SWEEP));
        eprint!("{submitted}");
        assert!(submitted.contains("submitted sweep nightly"), "{submitted}");
        let script = std::fs::read_to_string(h.join("slurm/nightly/shards.sbatch")).unwrap();
        assert!(script.contains("#SBATCH --array=0-3"), "{script}");
        assert!(
            script.contains("--shard \"$SLURM_ARRAY_TASK_ID/4\" --run-id \"nightly-s$SLURM_ARRAY_TASK_ID\""),
            "{script}"
        );

        let done = wait_for(&h, &url, "nightly", Duration::from_secs(180), "merge job done", |s| {
            s["merge"] == "done"
        });
        eprintln!("4 shards on Slurm, merged: {:.1}s", start.elapsed().as_secs_f64());
        assert!(done["shards"].as_array().unwrap().iter().all(|s| s["state"] == "done"), "{done}");
        assert_eq!(done["finished"], 6, "{done}");
        assert_eq!(done["solved"], 5, "{done}");

        let whole = single_machine(&h, &url);
        let from_slurm = merged(&h, &url, "nightly");
        assert_eq!(whole.len(), 6);
        assert_eq!(from_slurm, whole, "the merged Slurm sweep differs from the single-machine sweep");
        let shown = ok(rgd(&h, &url).args(["slurm", "status", "nightly"]));
        eprint!("{shown}");
        assert!(shown.contains("4 done, 0 failed") && shown.contains("6/6 tasks done"), "{shown}");
        // The home screen lists the sweep as one row (its merged run), a mark per shard, and
        // neither its shards nor the single-machine run under it.
        let rows = rgd::tui::load_runs(&rgd::store::Home::resolve(Some(&h)));
        let sweep: Vec<_> = rows.iter().filter(|r| r.slurm.is_some()).collect();
        assert_eq!(sweep.len(), 1, "{rows:?}");
        assert_eq!(sweep[0].run_id, "nightly");
        assert_eq!(sweep[0].slurm.as_ref().unwrap().shards, "✓✓✓✓");
        assert_eq!((sweep[0].finished, sweep[0].tasks, sweep[0].state.as_str()), (6, 6, "merged"));
        assert!(rows.iter().all(|r| !r.run_id.starts_with("nightly-s")), "{rows:?}");
        assert!(rows.iter().any(|r| r.run_id == "whole"));
    })
    .await
    .unwrap();
}

/// The tasks whose final result a shard's journal holds.
fn finished_in_journal(home: &Path, run: &str) -> Vec<String> {
    let text = std::fs::read_to_string(home.join("runs").join(run).join("events.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"]["type"] == "task_finished")
        .map(|e| e["event"]["result"]["task_id"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shard_cancelled_mid_run_and_resubmitted_loses_and_repeats_nothing() {
    let _one = CLUSTER.lock().await;
    if !cluster_up() {
        return;
    }
    // Slow answers: shard 1 (Sample/2, failed after two iterations, then Sample/3) takes about
    // five seconds, long enough to cancel it between its tasks.
    let server = ScriptedServer::start(all_but_reverse_words(Duration::from_millis(700))).await;
    let home = temp_home();
    let (h, url) = (home.path().to_path_buf(), server.base_url());
    let requests = {
        let server = &server;
        move || -> HashMap<String, usize> {
            let mut n = HashMap::new();
            for r in server.requests() {
                *n.entry(r.entry_point().unwrap_or_default()).or_default() += 1;
            }
            n
        }
    };
    let h2 = h.clone();
    let u2 = url.clone();
    let submitted = tokio::task::spawn_blocking(move || {
        ok(rgd(&h2, &u2)
            .args(["slurm", "submit", "--shards", "4", "--name", "killed"])
            .args(SWEEP))
    })
    .await
    .unwrap();
    eprint!("{submitted}");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(h.join("slurm/killed.json")).unwrap()).unwrap();
    let array = record["submissions"][0]["array_job"].as_str().unwrap().to_string();

    // Wait until shard 1 has finished its first task, then cancel that array element.
    let start = Instant::now();
    let first = loop {
        let done = finished_in_journal(&h, "killed-s1");
        if !done.is_empty() {
            break done;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "shard 1 never finished a task");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    ok(Command::new("scancel").arg(format!("{array}_1")));
    let at_cancel = requests();
    eprintln!("cancelled shard 1 after its task(s) {first:?}");
    assert_eq!(first.len(), 1, "shard 1 finished both tasks before the cancel");

    let (h3, u3) = (h.clone(), url.clone());
    let partial = tokio::task::spawn_blocking(move || {
        wait_for(&h3, &u3, "killed", Duration::from_secs(180), "partial merge", |s| {
            s["merge"] == "partial" && s["shards"][1]["state"] == "failed"
        })
    })
    .await
    .unwrap();
    assert_eq!(partial["shards"][1]["state"], "failed", "{partial}");
    assert_eq!(partial["shards"][1]["finished"], 1, "{partial}");
    let shown = tokio::task::spawn_blocking({
        let (h, u) = (h.clone(), url.clone());
        move || ok(rgd(&h, &u).args(["slurm", "status", "killed"]))
    })
    .await
    .unwrap();
    eprint!("{shown}");
    assert!(shown.contains("1 failed"), "{shown}");

    // Resubmitted, shard 1 goes on where it stopped; the merge job merges again.
    let (h4, u4) = (h.clone(), url.clone());
    let done = tokio::task::spawn_blocking(move || {
        let again = ok(rgd(&h4, &u4).args(["slurm", "resubmit", "killed"]));
        eprint!("{again}");
        assert!(again.contains("resubmitted shards 1 of killed"), "{again}");
        wait_for(&h4, &u4, "killed", Duration::from_secs(180), "merge after the resubmission", |s| {
            s["merge"] == "done"
        })
    })
    .await
    .unwrap();
    assert_eq!(done["finished"], 6, "{done}");
    let at_end = requests();
    let solutions = sample_solutions();
    // No finished task was worked on again: its requests stopped at the cancel.
    let task_entry: HashMap<String, String> = std::fs::read_to_string(repo().join("datasets/sample/tasks.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|t| {
            (
                t["task_id"].as_str().unwrap().to_string(),
                t["entry_point"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for task in &first {
        let entry = &task_entry[task];
        assert!(solutions.contains_key(entry));
        assert_eq!(
            at_end.get(entry),
            at_cancel.get(entry),
            "task {task} was run again after the resubmission"
        );
    }
    // Shard 1 finished each of its tasks exactly once, across both jobs.
    let mut finals = finished_in_journal(&h, "killed-s1");
    finals.sort();
    let mut unique = finals.clone();
    unique.dedup();
    assert_eq!(finals, unique, "a task of shard 1 finished twice");
    assert_eq!(finals.len(), 2);

    let (h5, u5) = (h.clone(), url.clone());
    tokio::task::spawn_blocking(move || {
        let from_slurm = merged(&h5, &u5, "killed");
        let whole = single_machine(&h5, &u5);
        assert_eq!(from_slurm, whole, "the resubmitted sweep differs from the single-machine sweep");
    })
    .await
    .unwrap();
}

/// Needs no cluster: what `--dry-run` prints is what would be submitted, with the sweep's flags
/// passed on, submit's own flags and the key left out, and paths quoted for the shell.
#[test]
fn a_dry_run_prints_both_scripts_without_secrets() {
    let home = temp_home();
    let out = rgd(home.path(), "http://127.0.0.1:9/v1")
        .args([
            "slurm",
            "submit",
            "--dataset",
            "sample",
            "--max-iters",
            "3",
            "--shards",
            "3",
            "--name",
            "dry",
        ])
        .args([
            "--partition",
            "gpu",
            "--time=2:00:00",
            "--cpus-per-task",
            "4",
            "--sbatch-arg=--mem=8G",
        ])
        .args(["--api-key", "sk-very-secret", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "#SBATCH --job-name=rgd-dry",
        "#SBATCH --partition=gpu",
        "#SBATCH --time=2:00:00",
        "#SBATCH --mem=8G",
        "#SBATCH --array=0-2",
        "#SBATCH --cpus-per-task=4",
        "#SBATCH --requeue",
        "#SBATCH --job-name=rgd-dry-merge",
        "# would run: sbatch --parsable --array=0-2 ",
        "# then:      sbatch --parsable --dependency=afterany:<array job> ",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    let shard_line = text.lines().find(|l| l.starts_with("exec ") && l.contains(" sweep ")).unwrap();
    assert!(
        shard_line.contains("sweep --dataset sample --max-iters 3 --shard \"$SLURM_ARRAY_TASK_ID/3\" --run-id \"dry-s$SLURM_ARRAY_TASK_ID\" --memory-snapshot "),
        "{shard_line}"
    );
    for gone in ["sk-very-secret", "--api-key", "--shards", "--partition gpu", "--dry-run", "--name"] {
        assert!(!shard_line.contains(gone), "{gone} in {shard_line}");
    }
    assert!(text.contains("slurm merge dry"), "{text}");
    // Nothing was written or recorded.
    assert!(!home.path().join("slurm").exists());
    // Flags that make no sense for a batch job are refused, naming the alternative.
    let out = rgd(home.path(), "http://127.0.0.1:9/v1")
        .args(["slurm", "submit", "--dataset", "sample", "--shards", "2", "--tui"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("rgd slurm submit does not take --tui"),
        "{err}"
    ); // A value that would end an #SBATCH line, or start a command in the script, is refused.
    for (flag, value, said) in [
        ("--partition", "gpu\nrm -rf /tmp/x", "one word, without spaces or line breaks"),
        ("--time", "1 2", "one word, without spaces or line breaks"),
        ("--state-dir", "/tmp/a b", "cannot hold a path with spaces"),
    ] {
        let out = rgd(home.path(), "http://127.0.0.1:9/v1")
            .args(["slurm", "submit", "--dataset", "sample", "--shards", "2", flag, value, "--dry-run"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(flag) && err.contains(said), "{flag}: {err}");
        assert!(out.stdout.is_empty(), "no script printed for {flag}");
    }
}

/// `rgd slurm bench-real`: two shards of a two-instance list measured as a job array on the
/// single-node cluster, merged by the job after them into what one machine measures.
#[tokio::test(flavor = "multi_thread")]
async fn a_two_shard_bench_real_on_slurm_merges_to_the_single_machine_measurement() {
    let _one = CLUSTER.lock().await;
    if !cluster_up() {
        return;
    }
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let h = home.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let (_, two) = crate::real::two_instance_lists(&h, &python);
        let url = "http://127.0.0.1:9";
        let bench = |extra: &[&str]| {
            let mut cmd = rgd(&h, url);
            cmd.args(extra)
                .arg("--")
                .args(["--instances"])
                .arg(&two)
                .arg("--python")
                .arg(&python);
            cmd
        };
        let submitted = ok(&mut bench(&[
            "slurm",
            "bench-real",
            "--shards",
            "2",
            "--name",
            "realbench",
            "--partition",
            "debug",
            "--time",
            "10",
        ]));
        assert!(submitted.contains("submitted bench realbench (2 instances, tuning)"), "{submitted}");
        let script = std::fs::read_to_string(h.join("slurm/realbench/shards.sbatch")).unwrap();
        assert!(
            script.contains("bench real --instances") && script.contains("--shard \"$SLURM_ARRAY_TASK_ID/2\" --resume"),
            "{script}"
        );
        let merged_file = h.join("slurm/realbench/merged.jsonl");
        let start = Instant::now();
        while !merged_file.exists() && start.elapsed() < Duration::from_secs(240) {
            std::thread::sleep(Duration::from_millis(500));
        }
        let logs = || {
            std::fs::read_dir(h.join("slurm/realbench/logs"))
                .map(|d| {
                    d.flatten()
                        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default()
        };
        assert!(merged_file.exists(), "no merged results after 240 s; logs:\n{}", logs());
        eprintln!("2 bench shards on Slurm, merged: {:.1}s", start.elapsed().as_secs_f64());
        let whole = Command::new(env!("CARGO_BIN_EXE_rgd"))
            .env("RGD_HOME", &h)
            .args(["bench", "real", "--json", "--instances"])
            .arg(&two)
            .arg("--python")
            .arg(&python)
            .output()
            .unwrap();
        assert!(whole.status.success(), "{}", String::from_utf8_lossy(&whole.stderr));
        let whole: Value = serde_json::from_slice(&whole.stdout).unwrap();
        let place = |m: &Value| (m["key"].as_str().unwrap().to_string(), m["combined"].clone());
        let from_slurm: Vec<_> = std::fs::read_to_string(&merged_file)
            .unwrap()
            .lines()
            .map(|l| place(&serde_json::from_str(l).unwrap()))
            .collect();
        let single: Vec<_> = whole["instances"].as_array().unwrap().iter().map(place).collect();
        assert_eq!(
            from_slurm,
            single,
            "the merged Slurm bench differs from the single-machine bench; logs:\n{}",
            logs()
        );
    })
    .await
    .unwrap();
}
