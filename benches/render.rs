//! `cargo bench --bench render`: the TUI's render path. Frame time of the sweep view with 500 tasks
//! and of the task view with a 2,000-line code pane (TestBackend, so widgets, layout and the
//! buffer diff are measured, not the terminal), and the CPU the real binary uses while idle in
//! tmux (home screen and a replay), read from /proc.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rgd::engine::{Envelope, Event, Recorder};
use rgd::store::{Home, RunStore};
use rgd::tui::{Action, App, Replay, Screen, views};

#[path = "../tests/support/tmux.rs"]
mod tmux;
use tmux::Tmux;

const FRAMES: usize = 300;

fn fixture() -> Vec<Envelope> {
    include_str!("../tests/fixtures/tui-run.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The fixture's three tasks copied under new ids until there are `n` tasks, plus a 2,000-line
/// program in the first task's last iteration.
fn big_run(n: usize) -> Vec<Envelope> {
    let base = fixture();
    let mut out: Vec<Envelope> = Vec::new();
    let mut start = base[0].clone();
    let copies = n.div_ceil(3);
    if let Event::RunStarted { manifest } = &mut start.event {
        manifest.dataset.selected = (0..copies).flat_map(|c| [1, 5, 6].map(move |k| format!("T{c}/{k}"))).collect();
    }
    out.push(start);
    for c in 0..copies {
        for e in &base[1..] {
            if matches!(e.event, Event::RunStarted { .. } | Event::RunFinished { .. }) {
                continue;
            }
            let text = serde_json::to_string(e).unwrap().replace("Sample/", &format!("T{c}/"));
            out.push(serde_json::from_str(&text).unwrap());
        }
    }
    let long: String = (0..2000).map(|i| format!("    total += values[{i}] * {i}  # line {i}\n")).collect();
    let last_iteration = out
        .iter()
        .filter_map(|e| match &e.event {
            Event::IterationStarted { task_id, iteration } if task_id == "T0/5" => Some(*iteration),
            _ => None,
        })
        .max()
        .unwrap();
    out.push(Envelope {
        seq: 0,
        at: out.last().unwrap().at,
        event: Event::CodeExtracted {
            task_id: "T0/5".into(),
            iteration: last_iteration,
            code: Some(format!("def big(values):\n    total = 0\n{long}    return total\n")),
            diff: None,
            problem: None,
        },
    });
    for (i, e) in out.iter_mut().enumerate() {
        e.seq = i as u64;
    }
    out
}

fn frame_times(app: &mut App, w: u16, h: u16) -> (f64, f64) {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    let mut times = Vec::with_capacity(FRAMES);
    for i in 0..FRAMES + 10 {
        // Something changes every frame, as in a live sweep: the selection moves.
        app.handle(if i % 40 < 20 { Action::Down } else { Action::Up });
        let t = Instant::now();
        terminal.draw(|f| views::draw(f, app)).unwrap();
        if i >= 10 {
            times.push(t.elapsed());
        }
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(times[times.len() / 2]), ms(times[times.len() * 95 / 100]))
}

/// CPU seconds (user + system) of a process, from /proc.
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

fn idle_cpu(label: &str, args: &str, home: &std::path::Path) {
    let bin = env!("CARGO_BIN_EXE_rgd");
    let tmux = Tmux::start(&format!("{bin} {args}"), &[("RGD_HOME", home.display().to_string())], (160, 50));
    std::thread::sleep(Duration::from_secs(2));
    let pid = tmux.command_pid();
    let before = cpu_secs(pid);
    let window = Duration::from_secs(10);
    std::thread::sleep(window);
    let used = cpu_secs(pid) - before;
    println!(
        "  idle {label:<34} {:6.2}% of one core ({used:.2} s CPU in {} s; start-up used {before:.2} s)",
        used / window.as_secs_f64() * 100.0,
        window.as_secs()
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let events = big_run(500);
    println!("TUI render path, {FRAMES} frames each (TestBackend), median / p95 per frame:");
    let mut replay = Replay::from_events("bench".into(), events.clone());
    let mut app = App::new(Screen::Sweep);
    app.model = replay.model_at_end();
    app.replay = Some(replay);
    println!("  tasks in the sweep view: {}", app.model.tasks.len());
    for (w, h) in [(160, 50), (300, 100)] {
        let (med, p95) = frame_times(&mut app, w, h);
        println!("  sweep view, 500 tasks, {w}x{h}:            {med:6.3} ms  {p95:6.3} ms  (target < 4 ms)");
    }
    app.open_task("T0/5".into());
    app.handle(Action::NextPane);
    app.handle(Action::NextPane);
    let lines = app
        .current_task()
        .and_then(|t| t.iterations.last())
        .and_then(|i| i.code.as_ref())
        .map_or(0, |c| c.lines().count());
    for (w, h) in [(160, 50), (300, 100)] {
        let (med, p95) = frame_times(&mut app, w, h);
        println!("  task view, {lines}-line code pane, {w}x{h}: {med:6.3} ms  {p95:6.3} ms  (target < 4 ms)");
    }

    // Idle CPU of the real binary.
    let home = tempfile::tempdir().unwrap();
    let manifest = match &events[0].event {
        Event::RunStarted { manifest } => (**manifest).clone(),
        _ => unreachable!(),
    };
    let store = Arc::new(
        RunStore::create(
            &Home {
                root: home.path().to_path_buf(),
            },
            &manifest,
        )
        .unwrap(),
    );
    let events: Vec<std::sync::Arc<_>> = events.into_iter().map(std::sync::Arc::new).collect();
    store.record(&events).unwrap();
    store.flush().unwrap();
    drop(store);
    println!("CPU while idle (release binary in tmux, 10 s after 2 s of start-up):");
    idle_cpu("home screen", "", home.path());
    idle_cpu(
        "replay of the 500-task run, paused",
        &format!("replay {}", manifest.run_id),
        home.path(),
    );
}
