//! The recorded run the TUI's views are drawn from (`tests/fixtures/tui-run.jsonl`: a real 3-task
//! sweep against a scripted endpoint), for the view tests and the pictures in docs/.
#![allow(dead_code)]

use rgd::engine::Envelope;
use rgd::tui::{App, Replay, Screen};

pub const RUN_ID: &str = "01M8144RG0QXEJ8GEZ84TD1ESC";

pub fn events() -> Vec<Envelope> {
    include_str!("../fixtures/tui-run.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture events parse"))
        .collect()
}

/// An app replaying the recorded run, at its end, on `screen`.
pub fn replay_app(screen: Screen) -> App {
    let mut replay = Replay::from_events(RUN_ID.into(), events());
    let mut app = App::new(screen);
    app.model = replay.model_at_end();
    app.replay = Some(replay);
    app
}
