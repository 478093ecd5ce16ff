//! Two runs on one task, for the compare popup: how each iteration's tests went in each run, and
//! the diff between their final programs.

use crate::analysis::RunData;
use crate::record::Event;
use crate::store::{Home, RunStore};

/// Per iteration: "visible 1/2, hidden 0/1" (or what the iteration ended with).
fn iterations(home: &Home, run: &str, task: &str) -> anyhow::Result<Vec<String>> {
    let store = RunStore::open(home, run)?;
    let mut per: Vec<String> = Vec::new();
    for envelope in store.events() {
        match envelope?.event {
            Event::IterationStarted { task_id, .. } if task_id == task => per.push(String::new()),
            Event::TestsRun {
                task_id,
                suite,
                passed,
                total,
                ..
            } if task_id == task => {
                if let Some(last) = per.last_mut() {
                    let name = suite.name();
                    last.push_str(&format!("{}{name} {passed}/{total}", if last.is_empty() { "" } else { ", " }));
                }
            }
            Event::CodeExtracted { task_id, code: None, .. } if task_id == task => {
                if let Some(last) = per.last_mut() {
                    last.push_str("no code");
                }
            }
            _ => {}
        }
    }
    Ok(per)
}

/// The popup's lines for `task` in the two `runs`.
pub fn lines(home: &Home, runs: &[String; 2], task: &str) -> anyhow::Result<Vec<String>> {
    let [a, b] = runs;
    let (ra, rb) = (RunData::load(home, a)?, RunData::load(home, b)?);
    let status = |r: &RunData| match r.results.get(task) {
        Some(t) if t.status == crate::record::TaskStatus::Unverified || (t.passed && t.best_effort.is_some()) => {
            format!(
                "unverified (passed in the tests' process: {})",
                t.best_effort.as_deref().unwrap_or("?")
            )
        }
        Some(t) if t.passed => format!("solved at iteration {}", t.first_pass_iteration.unwrap_or(t.iterations)),
        Some(t) => format!(
            "failed after {} iteration{}{}",
            t.iterations,
            if t.iterations == 1 { "" } else { "s" },
            t.failure.as_ref().map(|f| format!(" ({})", f.label())).unwrap_or_default()
        ),
        None => "unfinished".into(),
    };
    let mut out = vec![
        task.to_string(),
        format!("A {} ({}): {}", &a[..a.len().min(10)], ra.manifest.method(), status(&ra)),
        format!("B {} ({}): {}", &b[..b.len().min(10)], rb.manifest.method(), status(&rb)),
        String::new(),
        format!("{:<10} {:<40} {}", "iteration", "A", "B"),
    ];
    let (ia, ib) = (iterations(home, a, task)?, iterations(home, b, task)?);
    for k in 0..ia.len().max(ib.len()) {
        let cell = |v: &[String]| v.get(k).cloned().unwrap_or_else(|| "-".into());
        out.push(format!("{:<10} {:<40} {}", k + 1, cell(&ia), cell(&ib)));
    }
    out.push(String::new());
    out.push("final programs, A → B:".into());
    let code = |r: &RunData| r.results.get(task).map(|t| t.completion.clone()).unwrap_or_default();
    let diff = crate::code::unified_diff(&code(&ra), &code(&rb));
    out.extend(diff.lines().map(str::to_string));
    Ok(out)
}
