//! `cargo bench --bench fix [-- --per-project N] [--project NAME ...] [--held-out]`: `rgd fix` end to
//! end on faults no one here wrote. The mutants of `rgd bench locate` (single faults planted by
//! `code::mutate` in the bench projects, each making some originally passing test fail) are put
//! one at a time in a copy of their project, and the real binary runs `rgd fix --failing <the
//! tests the mutant broke>` against the scripted loopback server. The script is an oracle for one
//! function only: asked to repair the mutated function, it answers the original; asked to repair
//! any other, it has nothing to offer. So a mutant is fixed exactly when `rgd fix` brings the
//! agents to the faulty function within its candidates, and the fix breaks none of the tests that
//! passed (rgd fix's own rule). Reported per project: mutants, fixed, the attempt that fixed it,
//! the share fixed only because of the combined ranking (Ochiai alone would have put the faulty
//! function below the candidates tried), and seconds per mutant. It says nothing about a real
//! model's repairs; it measures localisation and rgd fix's loop.
//!
//! The same on real regressions, with an oracle that answers the released fix, is `rgd bench real
//! --fix oracle`.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

/// Candidates `rgd fix` tries (its --candidates), pairs off: the mutants are single faults.
const CANDIDATES: usize = 5;

/// The function the oracle can repair, and how.
#[derive(Default)]
struct Oracle {
    /// `write the function `f`` or `write the method `m` of the class `C``, as the task says it.
    asked: String,
    answer: String,
}

struct Outcome {
    project: String,
    fixed: bool,
    /// Which attempt fixed it (1-based), and the faulty function's place by Ochiai alone in
    /// rgd fix's ranking (None: not among the 20 kept).
    attempt: Option<usize>,
    ochiai_place: Option<usize>,
    /// Not fixed only because the repair's verdict was reached in-process (best effort: the tests
    /// hand the function something that is not data), which `rgd fix` does not write without
    /// `--allow-in-process`: the agents reached the faulty function and repaired it.
    in_process: bool,
    seconds: f64,
}

fn ochiai_place(ranking: &[Value], file: &str, name: &str) -> Option<usize> {
    let mut by: Vec<&Value> = ranking.iter().collect();
    by.sort_by(|a, b| {
        let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_default();
        f(b, "ochiai")
            .total_cmp(&f(a, "ochiai"))
            .then(f(a, "passing").total_cmp(&f(b, "passing")))
    });
    by.iter().position(|c| c["file"] == file && c["name"] == name).map(|p| p + 1)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let Some(python) = support::pytest_python() else { return };
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let per_project: usize = value("--per-project").and_then(|v| v.parse().ok()).unwrap_or(10);
    let only: Vec<String> = args.windows(2).filter(|w| w[0] == "--project").map(|w| w[1].clone()).collect();
    let set: &'static [rgd::repo::bench::Project] = if args.iter().any(|a| a == "--held-out") {
        &rgd::repo::bench::HELD_OUT
    } else {
        &rgd::repo::bench::PROJECTS
    };
    let cache = rgd::store::Home::resolve(None).root.join("bench").join("repo");
    let runner = rgd::repo::run::testrun::ProjectTests::new(&python).expect("pytest runner");
    let say = |s: &str| eprintln!("{s}");
    // Half again as many tried as wanted: some mutants survive every test.
    let projects = rgd::repo::bench::locate::run(&cache, set, &only, &runner, per_project * 3 / 2, &say).expect("mutants");
    let cases = mutant_cases(&cache, set, &projects, per_project, &say);

    let oracle = Arc::new(Mutex::new(Oracle::default()));
    let script = {
        let oracle = oracle.clone();
        Arc::new(move |req: &support::Request| match req.purpose {
            "debug_init" | "debug_fix" => {
                let o = oracle.lock().unwrap();
                if !o.asked.is_empty() && req.user.contains(&o.asked) {
                    Reply::Text(fenced(&o.answer))
                } else {
                    Reply::Text("I cannot tell what is wrong here.".into())
                }
            }
            "feedback" => Reply::Text("A test fails.".into()),
            _ => Reply::Text("1. Read the function.\n2. Repair it.".into()),
        })
    };
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let mut outcomes = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for m in &cases {
        if !names.contains(&m.project) {
            names.push(m.project.clone());
        }
        // One copy per project, reused: rgd fix's index of it stays warm (one changed file).
        let work = home.path().join("work").join(m.project.replace(' ', "-"));
        if !work.is_dir() {
            std::fs::create_dir_all(&work).unwrap();
            rgd::repo::run::testrun::copy_project(&m.source, &work).expect("copy");
        }
        {
            let path = work.join(&m.file);
            let before = std::fs::read_to_string(&path).unwrap();
            *oracle.lock().unwrap() = Oracle {
                asked: rgd::repo::task::writing(&m.function),
                answer: m.answer.clone(),
            };
            if m.failing.is_empty() {
                eprintln!(
                    "{} {}::{}: no test ran to its failure (the run was cut at its time limit); left out",
                    m.project, m.file, m.function
                );
                continue;
            }
            std::fs::write(&path, &m.text).unwrap();
            let started = Instant::now();
            let mut cmd = rgd(home.path(), &server.base_url());
            cmd.args(["fix", "--repo"])
                .arg(&work)
                .args(["--no-memory", "--max-iters", "2", "--pairs-of", "0", "--json"])
                .args(["--candidates", &CANDIDATES.to_string()])
                .arg("--python")
                .arg(&python);
            for f in &m.failing {
                cmd.args(["--failing", f]);
            }
            let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
            let seconds = started.elapsed().as_secs_f64();
            std::fs::write(&path, &before).unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let record: Option<Value> = stdout.lines().last().and_then(|l| serde_json::from_str(l).ok());
            let Some(record) = record else {
                let stderr = String::from_utf8_lossy(&out.stderr);
                eprintln!(
                    "{} {}::{}: rgd fix ended without a record: {}",
                    m.project,
                    m.file,
                    m.function,
                    stderr.lines().last().unwrap_or_default()
                );
                outcomes.push(Outcome {
                    project: m.project.clone(),
                    fixed: false,
                    attempt: None,
                    ochiai_place: None,
                    in_process: false,
                    seconds,
                });
                continue;
            };
            let target = format!("{}::{}", m.file, m.function);
            let fixed = record["fixed_by"]
                .as_array()
                .is_some_and(|b| b.len() == 1 && b[0] == target.as_str());
            let attempt = record["tried"]
                .as_array()
                .and_then(|t| t.iter().position(|t| t["target"] == target.as_str()))
                .map(|p| p + 1);
            let ranking = record["ranking"].as_array().cloned().unwrap_or_default();
            // What became of the faulty function's own attempts, when it was among those tried.
            let own: Vec<&str> = record["tried"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| t["target"] == target.as_str())
                .filter_map(|t| t["outcome"].as_str())
                .collect();
            let in_process = !fixed && own.iter().any(|o| o.contains("--allow-in-process"));
            let outcome = Outcome {
                project: m.project.clone(),
                fixed,
                attempt: if fixed { attempt } else { None },
                ochiai_place: ochiai_place(&ranking, &m.file, &m.function),
                in_process,
                seconds,
            };
            eprintln!(
                "{} {target} ({}): {} in {seconds:.1}s",
                m.project,
                m.label,
                if fixed {
                    format!("fixed at attempt {}", attempt.unwrap_or(0))
                } else if in_process {
                    "repaired, but judged in-process (not written)".into()
                } else {
                    let why = own
                        .first()
                        .map_or("not among the functions tried".to_string(), |o| o.chars().take(160).collect());
                    format!("not fixed ({why})")
                }
            );
            outcomes.push(outcome);
        }
    }
    println!(
        "| project | faults | fixed | at attempt 1 | fixed only with the combined ranking | repaired, judged in-process (not written) | s per mutant |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let row = |name: &str, o: &[&Outcome]| {
        let n = o.len().max(1) as f64;
        let fixed = o.iter().filter(|o| o.fixed).count();
        let first = o.iter().filter(|o| o.attempt == Some(1)).count();
        let only = o
            .iter()
            .filter(|o| o.fixed && o.ochiai_place.is_none_or(|p| p > CANDIDATES))
            .count();
        let in_process = o.iter().filter(|o| o.in_process).count();
        let secs = o.iter().map(|o| o.seconds).sum::<f64>() / n;
        println!(
            "| {name} | {} | {fixed} ({:.2}) | {first} ({:.2}) | {only} ({:.2}) | {in_process} ({:.2}) | {secs:.1} |",
            o.len(),
            fixed as f64 / n,
            first as f64 / n,
            only as f64 / n,
            in_process as f64 / n
        );
    };
    for name in &names {
        row(name, &outcomes.iter().filter(|o| &o.project == name).collect::<Vec<_>>());
    }
    row("all", &outcomes.iter().collect::<Vec<_>>());
    drop(server);
}

/// One fault to repair: the project's source, the faulty module, the failing tests, and what the
/// oracle answers for the faulty function.
struct Case {
    project: String,
    source: std::path::PathBuf,
    file: String,
    function: String,
    /// The module with the fault.
    text: String,
    answer: String,
    failing: Vec<String>,
    /// The mutation operator, or the releases.
    label: String,
}

/// The first `per_project` located mutants of each project; the oracle answers the original.
fn mutant_cases(
    cache: &std::path::Path,
    set: &'static [rgd::repo::bench::Project],
    projects: &[rgd::repo::bench::locate::ProjectLocated],
    per_project: usize,
    say: &dyn Fn(&str),
) -> Vec<Case> {
    let fetched = rgd::repo::bench::fetch(cache, set, say).expect("fetched");
    let mut cases = Vec::new();
    for p in projects {
        let source = fetched
            .iter()
            .find(|(proj, _)| p.name.starts_with(proj.name))
            .map(|(_, dir)| dir.clone())
            .expect("project dir");
        for m in p.located.iter().take(per_project) {
            let before = std::fs::read_to_string(source.join(&m.file)).unwrap();
            let Some(answer) = rgd::code::align::definition(&before, &m.function) else {
                continue;
            };
            cases.push(Case {
                project: p.name.clone(),
                source: source.clone(),
                file: m.file.clone(),
                function: m.function.clone(),
                text: m.text.clone(),
                answer,
                failing: m.failing.clone(),
                label: m.operator.clone(),
            });
        }
    }
    cases
}
