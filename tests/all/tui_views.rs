//! Every view drawn from a recorded event stream (a real 3-task run against a scripted endpoint,
//! `tests/fixtures/tui-run.jsonl`) into ratatui's TestBackend and compared with snapshots, at
//! ordinary, tiny and huge terminal sizes. Also: replay reaches the same state as the live path.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rgd::engine::Envelope;
use rgd::tui::model::RunModel;
use rgd::tui::{Action, App, Filter, Form, Modal, Pane, Replay, ReplayAction, RunRow, Screen, views};

use crate::support::recorded;
use recorded::{events, replay_app};

fn render(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| views::draw(f, app)).unwrap();
    terminal.backend().to_string()
}

#[test]
fn sweep_view_at_the_end_of_the_run() {
    let mut app = replay_app(Screen::Sweep);
    insta::assert_snapshot!(render(&mut app, 120, 30));
}

#[test]
fn every_table_keeps_its_headers_at_80x24_and_200x50() {
    for (w, h) in [(80, 24), (200, 50)] {
        let mut app = replay_app(Screen::Sweep);
        let sweep = render(&mut app, w, h);
        assert!(sweep.contains("task      status       iter visible  hidden   time"), "{sweep}");
        if w >= 90 {
            assert!(sweep.contains("agent          in      out calls    cost"), "{sweep}");
        }
        insta::assert_snapshot!(format!("sweep_{w}x{h}"), sweep);
        app.open_task("Sample/5".into());
        insta::assert_snapshot!(format!("task_{w}x{h}"), render(&mut app, w, h));
    }
}

#[test]
fn sweep_view_mid_run_filtered_and_sorted() {
    let mut app = replay_app(Screen::Sweep);
    app.handle(Action::Replay(ReplayAction::Start));
    for _ in 0..4 {
        app.handle(Action::Replay(ReplayAction::NextIteration));
    }
    app.handle(Action::CycleSort);
    insta::assert_snapshot!("mid_run", render(&mut app, 100, 20));
    app.handle(Action::StartFilter);
    for c in "sample/5".chars() {
        app.handle(Action::FilterChar(c));
    }
    app.handle(Action::EndFilter { keep: true });
    insta::assert_snapshot!("filtered", render(&mut app, 100, 14));
}

#[test]
fn task_view_failed_iteration_then_diff_of_the_fix() {
    let mut app = replay_app(Screen::Sweep);
    app.open_task("Sample/5".into());
    app.handle(Action::Left);
    insta::assert_snapshot!("iteration_1", render(&mut app, 140, 36));
    app.handle(Action::Right);
    app.handle(Action::ToggleDiff);
    insta::assert_snapshot!("iteration_2_diff", render(&mut app, 140, 36));
}

#[test]
fn task_view_streaming_mid_answer_and_zoomed() {
    let mut app = replay_app(Screen::Sweep);
    app.open_task("Sample/5".into());
    app.handle(Action::Replay(ReplayAction::Start));
    app.handle(Action::Replay(ReplayAction::NextIteration));
    for _ in 0..8 {
        app.handle(Action::Replay(ReplayAction::StepForward));
    }
    insta::assert_snapshot!("streaming", render(&mut app, 120, 24));
    app.task.focus = Pane::Guidance;
    app.handle(Action::Zoom);
    insta::assert_snapshot!("zoomed", render(&mut app, 60, 12));
}

#[test]
fn home_with_runs_and_the_form() {
    let mut app = App::new(Screen::Home);
    app.home_info = vec![
        ("endpoint".into(), "http://127.0.0.1:8799/v1".into()),
        ("model".into(), "gpt-4o-mini".into()),
    ];
    app.runs = vec![RunRow {
        run_id: "01M8144RG0QXEJ8GEZ84TD1ESC".into(),
        dataset: "sample".into(),
        model: "gpt-4o-mini".into(),
        strategy: "rgd".into(),
        tasks: 3,
        finished: 3,
        solved: 1,
        created: "2026-11-22 07:57".into(),
        state: "finished".into(),
        slurm: None,
    }];
    insta::assert_snapshot!("home", render(&mut app, 100, 16));
    let narrow = render(&mut app, 80, 24);
    assert!(
        narrow.contains("run        dataset     strategy pass@1  tasks     state       created"),
        "{narrow}"
    );
    insta::assert_snapshot!("home_80x24", narrow);
    insta::assert_snapshot!("home_200x50", render(&mut app, 200, 50));
    app.modals.push(Modal::Form(Box::new(Form::new(&app.home_info))));
    insta::assert_snapshot!("home_form", render(&mut app, 100, 24));
    app.modals.clear();
    // A Slurm sweep is one row: its id, and a mark for each shard (done, running, queued, failed).
    let mut sweep = app.runs[0].clone();
    sweep.run_id = "nightly-s0".into();
    sweep.state = "running".into();
    sweep.slurm = Some(rgd::tui::SlurmRow {
        sweep: "nightly".into(),
        shards: "✓▶·✗".into(),
    });
    app.runs.insert(0, sweep);
    let screen = render(&mut app, 100, 16);
    assert!(screen.contains("nightly ") && screen.contains("running ✓▶·✗"), "{screen}");
    assert!(!screen.contains("nightly-s0"), "{screen}");
    app.runs.remove(0);
    app.modals.push(Modal::Form(Box::new(Form::new(&app.home_info))));
    // The last field, focused on a short terminal, scrolls into view; the error stays visible.
    let form = app.form_mut().unwrap();
    form.focus = form.values.len() - 1;
    form.error = Some("Concurrency: \"x\" is not a number".into());
    insta::assert_snapshot!("home_form_scrolled", render(&mut app, 100, 24));
}

#[test]
fn overlays_help_and_stop_confirmation() {
    let mut app = replay_app(Screen::Sweep);
    app.handle(Action::Help);
    insta::assert_snapshot!("help", render(&mut app, 110, 30));
    app.handle(Action::Help);
    app.modals.push(Modal::ConfirmStop);
    insta::assert_snapshot!("confirm_stop", render(&mut app, 80, 20));
}

#[test]
fn tiny_and_huge_terminals_never_panic() {
    let sizes = [(1, 1), (5, 2), (19, 5), (20, 6), (33, 9), (61, 13), (89, 15), (400, 120)];
    for screen in [Screen::Home, Screen::Sweep, Screen::Task("Sample/5".into())] {
        for (w, h) in sizes {
            let mut app = replay_app(screen.clone());
            if screen == Screen::Home {
                app.modals.push(Modal::Form(Box::new(Form::new(&[]))));
            }
            app.handle(Action::Help);
            render(&mut app, w, h);
            app.handle(Action::Help);
            render(&mut app, w, h);
        }
    }
    let mut app = replay_app(Screen::Task("Sample/5".into()));
    insta::assert_snapshot!("tiny", render(&mut app, 30, 8));
    insta::assert_snapshot!("too_small", render(&mut app, 12, 4));
}

#[test]
fn replay_shows_what_the_live_view_showed_at_every_step() {
    let events = events();
    // Live: one event at a time, the way the TUI's subscriber applies them.
    let mut live = RunModel::new();
    let mut states = vec![live.clone()];
    for e in &events {
        live.apply(e);
        states.push(live.clone());
    }
    // Replay: jumps forward and backward in an awkward order.
    let mut replay = Replay::from_events("r".into(), events.clone());
    let mut model = RunModel::new();
    for target in [17, 3, 171, 90, 0, 91, 172, 40] {
        replay.seek(target, &mut model);
        assert_eq!(model, states[target.min(events.len())], "after seeking to {target}");
    }
    // Stepping by iteration lands right after an iteration boundary of the focused task.
    replay.seek(0, &mut model);
    replay.act(ReplayAction::NextIteration, Some("Sample/5"), &mut model);
    let last = &replay.events[replay.cursor - 1].event;
    assert!(
        matches!(last, rgd::engine::Event::IterationStarted { task_id, iteration: 1 } if task_id == "Sample/5"),
        "{last:?}"
    );
    // A duplicate of an applied event (live prefix read from the store, then the channel) is ignored.
    let before = live.clone();
    live.apply(&events[events.len() - 1]);
    assert_eq!(live, before);
}

#[test]
fn the_top_popup_takes_every_key_and_closing_it_gives_them_back() {
    let mut app = replay_app(Screen::Sweep);
    app.handle(Action::StartFilter);
    assert!(app.filtering(Filter::Tasks));
    // While typing, `?` and `q` are letters of the filter, not help and quit.
    for c in "q?5".chars() {
        app.handle(Action::FilterChar(c));
    }
    app.handle(Action::Help);
    assert!(
        matches!(app.modal(), Some(Modal::Filter(Filter::Tasks))),
        "Help is not for the filter"
    );
    assert_eq!(app.sweep.filter, "q?5");
    assert!(!app.quit);
    app.handle(Action::EndFilter { keep: true });
    assert!(app.modal().is_none());
    // Back on the screen, the same actions mean what they say again.
    app.handle(Action::Help);
    assert!(matches!(app.modal(), Some(Modal::Help)));
    app.handle(Action::Down);
    assert!(matches!(app.modal(), Some(Modal::Help)), "the help popup ignores movement");
    app.handle(Action::Back);
    assert!(app.modal().is_none());
    assert_eq!(app.sweep.filter, "q?5", "the kept filter stays");
}

#[test]
fn a_paused_task_shows_its_pending_effect_and_what_was_edited_by_hand() {
    // The recorded run up to Sample/5's first program, then the debugger's events.
    let mut events = events();
    let at = events
        .iter()
        .position(|e| serde_json::to_value(&e.event).unwrap()["type"] == "code_extracted" && e.event.task_id() == Some("Sample/5"))
        .unwrap();
    events.truncate(at + 1);
    let mut seq = events.last().unwrap().seq;
    let at_time = events.last().unwrap().at;
    let mut push = |event: serde_json::Value| {
        seq += 1;
        events.push(Envelope {
            seq,
            at: at_time,
            event: serde_json::from_value(event).unwrap(),
        });
    };
    let edited = "def count_vowels(word: str) -> int:\n    return sum(c in 'aeiouyAEIOUY' for c in word)\n";
    push(
        serde_json::json!({"type": "paused", "task_id": "Sample/5", "iteration": 1, "reason": "before:tests",
        "pending": {"kind": "tests", "suite": "visible", "code": "def count_vowels(word: str) -> int:\n    return 0\n", "tests": ["assert count_vowels('hello') == 2"]}}),
    );
    push(
        serde_json::json!({"type": "intervened", "task_id": "Sample/5", "iteration": 1, "field": "code", "diff": "-    return 0\n+    return sum(...)\n"}),
    );
    push(
        serde_json::json!({"type": "paused", "task_id": "Sample/5", "iteration": 1, "reason": "before:tests",
        "pending": {"kind": "tests", "suite": "visible", "code": edited, "tests": ["assert count_vowels('hello') == 2"]}}),
    );
    let model = rgd::tui::model_of(&events);
    let mut app = App::new(Screen::Task("Sample/5".into()));
    app.model = model;
    let screen = render(&mut app, 120, 40);
    for needle in [
        "paused",
        "before the visible tests (before:tests)",
        "c continue · s step · e edit the code",
        "assert count_vowels('hello') == 2",
        "aeiouyAEIOUY",
        "✎ by hand: code @1",
    ] {
        assert!(screen.contains(needle), "{needle:?} not on screen:\n{screen}");
    }
    // The sweep table says paused; going on restores the stage.
    let mut app = App::new(Screen::Sweep);
    app.model = rgd::tui::model_of(&events);
    assert!(render(&mut app, 120, 30).contains("paused"));
}

/// A repository run's code is the whole file: its task view opens the code pane at the target
/// function, not at the file's licence header, and scrolling goes on from there (Home goes to
/// line 1).
#[test]
fn a_whole_files_code_pane_opens_at_the_entry_point() {
    let header: String = (1..=40).map(|n| format!("# licence line {n}\n")).collect();
    let rest: String = (1..=30).map(|n| format!("\nCONSTANT_{n} = {n}\n")).collect();
    let events: Vec<Envelope> = events()
        .into_iter()
        .map(|mut e| {
            let mut v = serde_json::to_value(&e).unwrap();
            let event = &mut v["event"];
            if event["type"] == "code_extracted" && event["task_id"] == "Sample/5" {
                let code = event["code"].as_str().unwrap_or_default().to_string();
                event["code"] = serde_json::Value::String(format!("{header}import os\n\n{code}{rest}"));
                e = serde_json::from_value(v).unwrap();
            }
            e
        })
        .collect();
    let mut app = App::new(Screen::Sweep);
    app.model = rgd::tui::model_of(&events);
    app.open_task("Sample/5".into());
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("def count_vowels"), "{screen}");
    assert!(!screen.contains("licence line 1 "), "{screen}");
    assert!(screen.contains("licence line 41") || screen.contains("import os"), "{screen}");
    app.task.focus = Pane::Code;
    app.handle(Action::Down);
    let scrolled = render(&mut app, 80, 24);
    assert!(!scrolled.contains("import os"), "one line down from the anchor:\n{scrolled}");
    app.handle(Action::Top);
    let top = render(&mut app, 80, 24);
    assert!(top.contains("licence line 1 "), "{top}");
    assert!(!top.contains("def count_vowels"), "{top}");
    // At the end, the first key up moves the view (the scroll is taken from where it was drawn).
    app.handle(Action::Bottom);
    let bottom = render(&mut app, 80, 24);
    app.handle(Action::Up);
    assert_ne!(render(&mut app, 80, 24), bottom);
}
