//! The pictures of the TUI in docs/img are drawn here, by the real views, from a recorded run
//! (`tests/fixtures/tui-run.jsonl`: a real 3-task sweep against a scripted endpoint). The test
//! fails when a picture in docs/ no longer matches what the views draw;
//! `RGD_UPDATE_PICTURES=1 cargo test --test all pictures::` draws them again.

use std::path::Path;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rgd::engine::Envelope;
use rgd::tui::{Action, App, AppEvent, ReplayAction, Screen, views};

use crate::support::recorded;
use recorded::{events, replay_app};

fn draw(app: &mut App, width: u16, height: u16, title: &str) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| views::draw(f, app)).unwrap();
    rgd::tui::picture::svg(terminal.backend().buffer(), title)
}

/// The sweep in the middle of the run: a task solved, one failed, one still working.
fn live_run() -> String {
    let mut app = replay_app(Screen::Sweep);
    app.handle(Action::Replay(ReplayAction::Start));
    for _ in 0..7 {
        app.handle(Action::Replay(ReplayAction::NextIteration));
    }
    draw(&mut app, 120, 30, "rgd: the sweep view in the middle of a run")
}

/// One task's iteration: guidance, code, visible tests and the Feedback agent's analysis.
fn task() -> String {
    let mut app = replay_app(Screen::Sweep);
    app.open_task("Sample/5".into());
    app.handle(Action::Left);
    draw(&mut app, 140, 36, "rgd: a task's iteration with the agents' panes")
}

/// The debugger holding Sample/5's first Guide call before it is sent: the exact prompt.
fn debugger() -> String {
    let mut events = events();
    let request = events
        .iter()
        .position(|e| {
            let v = serde_json::to_value(&e.event).unwrap();
            v["type"] == "agent_request" && v["task_id"] == "Sample/5"
        })
        .unwrap();
    let asked = serde_json::to_value(&events[request].event).unwrap();
    events.truncate(request);
    let last = events.last().unwrap();
    let paused = serde_json::json!({"type": "paused", "task_id": "Sample/5", "iteration": 1, "reason": "before:guide",
        "pending": {"kind": "agent", "agent": asked["agent"], "purpose": asked["purpose"],
                    "messages": asked["messages"], "params": asked["params"]}});
    events.push(Envelope {
        seq: last.seq + 1,
        at: last.at,
        event: serde_json::from_value(paused).unwrap(),
    });
    let mut app = App::new(Screen::Task("Sample/5".into()));
    app.model = rgd::tui::model_of(&events);
    draw(&mut app, 120, 36, "rgd: the debugger paused before the Guide agent's prompt")
}

/// Two runs of the same tasks compared (the popup `c` opens on the home screen): the recorded run,
/// and the same run with one solved task failed.
fn compare() -> String {
    let runs: Vec<rgd::analysis::RunData> = ["01M8144RG0QXEJ8GEZ84TD1ESC", "01M8155RG0QXEJ8GEZ84TD1ESD"]
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let mut manifest = None;
            let mut results = std::collections::BTreeMap::new();
            for e in events() {
                let mut v = serde_json::to_value(&e.event).unwrap();
                if v["type"] == "run_started" {
                    v["manifest"]["run_id"] = serde_json::json!(id);
                    manifest = Some(serde_json::from_value(v["manifest"].clone()).unwrap());
                } else if v["type"] == "task_finished" {
                    let mut result = v["result"].clone();
                    if i == 1 && result["passed"] == true {
                        result["passed"] = serde_json::json!(false);
                        result["status"] = serde_json::json!("failed");
                        result["first_pass_iteration"] = serde_json::Value::Null;
                    }
                    let result: rgd::record::TaskResult = serde_json::from_value(result).unwrap();
                    results.insert(result.task_id.clone(), result);
                }
            }
            rgd::analysis::RunData {
                manifest: manifest.unwrap(),
                results,
                state: rgd::record::RunState::Finished,
                plus: None,
            }
        })
        .collect();
    let mut app = App::new(Screen::Home);
    app.apply_event(AppEvent::Compared(rgd::analysis::compare(&runs).map_err(|e| e.to_string())));
    draw(&mut app, 120, 34, "rgd: two runs compared on their shared tasks")
}

#[test]
fn the_pictures_in_docs_show_what_the_views_draw() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/img");
    let update = std::env::var_os("RGD_UPDATE_PICTURES").is_some();
    let mut stale = Vec::new();
    for (name, svg) in [
        ("live-run", live_run()),
        ("task", task()),
        ("debugger", debugger()),
        ("compare", compare()),
    ] {
        let path = dir.join(format!("{name}.svg"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &svg).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(svg.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date with the views: {stale:?}\nRGD_UPDATE_PICTURES=1 cargo test --test all pictures:: draws them again"
    );
}

/// The pictures hold what each screen is for (a picture of an error screen would also be
/// "up to date").
#[test]
fn each_picture_shows_its_screen() {
    let text = |svg: String| svg.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let live = text(live_run());
    assert!(live.contains("Sample/5") && live.contains("solved"), "{live}");
    let task = text(task());
    assert!(task.contains("count_vowels"), "{task}");
    let debugger = text(debugger());
    assert!(debugger.contains("paused") && debugger.contains("Guide agent"), "{debugger}");
    let compare = text(compare());
    assert!(compare.contains("McNemar") || compare.contains("pass@1"), "{compare}");
}
