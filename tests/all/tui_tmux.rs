//! The real binary in a real terminal (tmux), against the loopback OpenAI-compatible server: start
//! a 3-task sweep from the home form, watch it finish, open a task and find the diff, the test
//! table and the analysis on screen; quit; reopen the run with `rgd replay` and step to the same
//! screens. `.ci/test` installs tmux when it is missing.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use support::tmux::{Tmux, wait_for};
use support::{Reply, ScriptedServer, fenced, rgd, sample_run, sample_solutions, temp_home};

const ANALYSIS: &str = "ANALYSIS: the program subtracts where the task asks to add.";

#[tokio::test(flavor = "multi_thread")]
async fn sweep_from_the_home_form_then_replay_it() {
    let solutions = sample_solutions();
    let server = ScriptedServer::start(Arc::new(move |req| match req.purpose {
        "guide_init" => Reply::Text("1. Read the docstring.\n2. Return the result.".into()),
        "debug_init" if req.entry_point().as_deref() == Some("add") => {
            Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a - b\n"))
        }
        "debug_init" | "debug_fix" => {
            let entry = req.entry_point().unwrap_or_default();
            Reply::Text(fenced(solutions.get(&entry).map(String::as_str).unwrap_or("pass")))
        }
        "feedback" => Reply::Text(ANALYSIS.into()),
        "guide_refine" => Reply::Text("1. Add a and b.".into()),
        other => Reply::Status(400, format!("unexpected {other}")),
    }))
    .await;
    let home = temp_home();
    let bin = env!("CARGO_BIN_EXE_rgd");
    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("OPENAI_BASE_URL", server.base_url()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let cd = format!("cd {}", env!("CARGO_MANIFEST_DIR"));

    // Home → form → a 3-task sweep.
    let tmux = Tmux::start(&format!("{cd} && {bin}"), &env, (140, 45));
    wait_for(&tmux, &["recorded runs: none yet", "endpoint"], 20).await;
    tmux.keys(&["n"]);
    wait_for(&tmux, &["start a run", "Dataset"], 10).await;
    tmux.keys(&["Tab", "Sample/1,Sample/2,Sample/3", "Enter"]);
    let sweep = wait_for(&tmux, &["3/3 tasks", "finished"], 60).await;
    assert!(sweep.contains("Sample/1") && sweep.contains("solved @2"), "{sweep}");
    assert!(sweep.contains("pass@1 100.0%"), "{sweep}");

    // Sample/1: iteration 1 failed with the real value, iteration 2 fixed it.
    tmux.keys(&["Enter"]);
    let task = wait_for(&tmux, &["task Sample/1", "Visible tests", "Feedback analysis"], 10).await;
    tmux.keys(&["h"]);
    let first = wait_for(
        &tmux,
        &["✗ assert add(2, 3) == 5", "got -1; expected 5", "ANALYSIS: the program"],
        10,
    )
    .await;
    tmux.keys(&["l", "d"]);
    let diff = wait_for(&tmux, &["diff vs previous iteration", "-    return a - b", "+    return a + b"], 10).await;
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
    drop(tmux);
    assert!(task.contains("Solved after 2 iteration(s)"), "{task}");

    // The same screens from the recording.
    let run_id = std::fs::read_dir(home.path().join("runs"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .file_name();
    let run_id = run_id.to_string_lossy();
    let tmux = Tmux::start(&format!("{cd} && {bin} replay {run_id}"), &env, (140, 45));
    wait_for(&tmux, &["replay", "3/3 tasks"], 20).await;
    tmux.keys(&["Enter", "0"]);
    wait_for(&tmux, &["replay 0/"], 10).await;
    // Iteration by iteration through Sample/1: its first iteration, then its second.
    tmux.keys(&["]"]);
    wait_for(&tmux, &["task Sample/1", "▸  1"], 10).await;
    tmux.keys(&["]"]);
    wait_for(&tmux, &["▸  2"], 10).await;
    tmux.keys(&["$", "h"]);
    let replay_first = wait_for(
        &tmux,
        &["✗ assert add(2, 3) == 5", "got -1; expected 5", "ANALYSIS: the program"],
        10,
    )
    .await;
    tmux.keys(&["l", "d"]);
    let replay_diff = wait_for(&tmux, &["-    return a - b", "+    return a + b"], 10).await;
    // Between the title and hint lines (which say live or replay) the screens are identical.
    let body = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[1..lines.len().saturating_sub(1)].join("\n")
    };
    assert_eq!(body(&first), body(&replay_first));
    assert_eq!(body(&diff), body(&replay_diff));
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_detached_sweep_outlives_the_view_that_follows_it() {
    let solutions = sample_solutions();
    // Slow answers, so the sweep is still going when the view closes.
    let server = ScriptedServer::start(Arc::new(move |req| {
        let reply = match req.purpose {
            "guide_init" => Reply::Text("1. Read the docstring.".into()),
            _ => Reply::Text(fenced(
                solutions
                    .get(&req.entry_point().unwrap_or_default())
                    .map(String::as_str)
                    .unwrap_or("pass"),
            )),
        };
        Reply::Delayed(Duration::from_millis(400), Box::new(reply))
    }))
    .await;
    let home = temp_home();
    let out = support::rgd(home.path(), &server.base_url())
        .args(["sweep", "--dataset", "sample", "--limit", "3", "--concurrency", "1", "--detach"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stderr);
    let run_id = said.split_whitespace().nth(1).unwrap().to_string();
    assert!(said.contains("running in the background"), "{said}");

    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let bin = env!("CARGO_BIN_EXE_rgd");
    let tmux = Tmux::start(&format!("{bin} replay {run_id} --follow"), &env, (120, 30));
    wait_for(&tmux, &["● live", "Sample/1"], 20).await;
    // Quitting a followed run asks nothing and stops nothing.
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 10).await;
    drop(tmux);
    let status = || std::fs::read_to_string(home.path().join("runs").join(&run_id).join("status.json")).unwrap();
    assert!(status().contains("\"running\""), "{}", status());

    // While it runs, `runs show` reads its status, and `--events` its journal, as JSON lines.
    let show = |extra: &[&str]| {
        let out = support::rgd(home.path(), &server.base_url())
            .args(["runs", "show", &run_id])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let live = show(&[]);
    assert!(live.contains("is live in process") && live.contains("tasks finished"), "{live}");
    let events = show(&["--events"]);
    let first: serde_json::Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    assert_eq!(first["event"]["type"], "run_started", "{events}");
    assert!(events.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));

    // It finishes on its own; following it again shows the end.
    let tmux = Tmux::start(&format!("{bin} replay {run_id} --follow"), &env, (120, 30));
    let done = wait_for(&tmux, &["3/3 tasks", "finished"], 60).await;
    assert!(done.contains("pass@1 100.0%"), "{done}");
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 10).await;
    assert!(status().contains("\"finished\""), "{}", status());
}

#[tokio::test(flavor = "multi_thread")]
async fn sweep_tui_out_writes_its_files_when_the_run_ends_while_the_view_stays_open() {
    let solutions = sample_solutions();
    let server = ScriptedServer::start(Arc::new(move |req| {
        Reply::Text(fenced(
            solutions
                .get(&req.entry_point().unwrap_or_default())
                .map(String::as_str)
                .unwrap_or("pass"),
        ))
    }))
    .await;
    let home = temp_home();
    let out = home.path().join("out");
    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("OPENAI_BASE_URL", server.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_string()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let bin = env!("CARGO_BIN_EXE_rgd");
    let tmux = Tmux::start(
        &format!(
            "{bin} sweep --dataset sample --limit 2 --strategy direct --tui --out {}",
            out.display()
        ),
        &env,
        (120, 30),
    );
    wait_for(&tmux, &["Sample/1"], 20).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !out.join("summary.json").is_file() {
        assert!(
            std::time::Instant::now() < deadline,
            "no summary.json while the view is open:\n{}",
            tmux.screen()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!tmux.screen().contains("RGD-EXITED"), "the view is still open");
    let samples = std::fs::read_to_string(out.join("samples.jsonl")).unwrap();
    assert_eq!(samples.lines().count(), 2);
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn break_before_the_guide_show_the_pending_prompt_edit_it_in_the_editor_and_continue() {
    let server = ScriptedServer::start(Arc::new(|req: &support::Request| match req.purpose {
        "guide_init" => Reply::Text("1. Return a + b.".into()),
        _ => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    return a + b\n")),
    }))
    .await;
    let home = temp_home();
    // The "editor": a script that changes the text it is given, as a person would in vi.
    let editor = home.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/Write generation guidance/Write SHORT generation guidance/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("OPENAI_BASE_URL", server.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_string()),
        ("TERM", "xterm-256color".to_string()),
        ("EDITOR", editor.display().to_string()),
    ];
    let bin = env!("CARGO_BIN_EXE_rgd");
    let tmux = Tmux::start(
        &format!("{bin} run --dataset sample --task Sample/1 --no-memory --tui --break before:guide"),
        &env,
        (120, 40),
    );
    // The task view opens paused, with the Guide's exact prompt in the debugger panel.
    let screen = wait_for(
        &tmux,
        &["paused", "before the guide call (rgd/guide_init)", "Write generation guidance"],
        30,
    )
    .await;
    assert!(screen.contains("[user]") && screen.contains("c continue"), "{screen}");
    assert!(server.requests().is_empty(), "nothing was sent while paused");
    tmux.keys(&["e"]);
    // The edit is an event: the panel shows the prompt as edited, still paused.
    wait_for(&tmux, &["Write SHORT generation guidance"], 20).await;
    assert!(server.requests().is_empty());
    tmux.keys(&["c"]);
    wait_for(&tmux, &["solved @1"], 30).await;
    let requests = server.requests();
    assert_eq!(requests[0].purpose, "guide_init");
    assert!(requests[0].user.contains("Write SHORT generation guidance"), "{}", requests[0].user);
    tmux.keys(&["q"]);
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
    // The run's result says a person helped.
    let runs = std::fs::read_dir(home.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let out = rgd(home.path(), &server.base_url())
        .args(["runs", "show"])
        .arg(runs.file_name().unwrap())
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("intervened"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn f_in_a_replay_forks_the_shown_task_at_the_shown_iteration_and_watches_it_live() {
    const WRONG: &str = "def add(a: int, b: int) -> int:\n    return a - b\n";
    const RIGHT: &str = "def add(a: int, b: int) -> int:\n    return a + b\n";
    let parent = ScriptedServer::start(Arc::new(|req: &support::Request| match req.purpose {
        "guide_init" | "guide_refine" => Reply::Text("1. Subtract.".into()),
        "feedback" => Reply::Text("Wrong sign.".into()),
        _ => Reply::Text(fenced(WRONG)),
    }))
    .await;
    let home = temp_home();
    let out = sample_run(home.path(), &parent.base_url())
        .args(["--max-iters", "2", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run_id = std::fs::read_dir(home.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let run_id = run_id.to_string_lossy().to_string();

    let fork = ScriptedServer::start(Arc::new(|req: &support::Request| match req.purpose {
        "debug_fix" => Reply::Text(fenced(RIGHT)),
        other => Reply::Status(500, format!("the fork asked for {other}")),
    }))
    .await;
    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("OPENAI_BASE_URL", fork.base_url()),
        ("OPENAI_API_KEY", "sk-test".to_string()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let bin = env!("CARGO_BIN_EXE_rgd");
    let tmux = Tmux::start(&format!("{bin} replay {run_id}"), &env, (120, 40));
    wait_for(&tmux, &["Sample/1", "replay"], 20).await;
    tmux.keys(&["Enter"]);
    wait_for(&tmux, &["entry point add"], 20).await;
    tmux.keys(&["f"]);
    // The fork runs (here in a moment) and is shown as a run of its own, not the replayed one.
    let screen = wait_for(&tmux, &["solved @2", "run finished"], 30).await;
    assert!(!screen.contains(&run_id[..10]), "{screen}");
    assert_eq!(fork.requests().iter().map(|r| r.purpose).collect::<Vec<_>>(), ["debug_fix"]);
    tmux.keys(&["q"]);
    wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
    let listed = rgd(home.path(), &fork.base_url())
        .args(["runs", "list", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).lines().count(),
        2,
        "the fork is a run of its own"
    );
}
