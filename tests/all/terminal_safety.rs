//! Text from models and programs never reaches the terminal as control sequences: the headless
//! printer shows an escape as `␛`. (The TUI cleans every cell of a frame; see `src/terminal.rs`.)

use crate::support;

use std::sync::Arc;

use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_from_the_model_and_the_program_are_shown_not_obeyed() {
    let solutions = support::sample_solutions();
    let script = Arc::new(move |req: &support::Request| {
        Reply::Text(match req.purpose {
            // The program prints a clipboard-writing OSC 52 sequence; the guidance clears the screen.
            "debug_init" | "debug_fix" => fenced(&format!(
                "{}\nprint('\\x1b]52;c;aGVsbG8=\\x07')\n",
                solutions[&req.entry_point().unwrap()]
            )),
            _ => "Guidance \x1b[2J\x1b[H with a wiped screen\u{9b}31m".to_string(),
        })
    });
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let out = rgd(home.path(), &server.base_url())
        .args(["run", "--dataset", "sample", "--task", "Sample/1", "--max-iters", "1"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !stdout.contains('\x1b') && !stdout.contains('\u{9b}') && !stdout.contains('\x07'),
        "{stdout}"
    );
    assert!(stdout.contains("␛[2J"), "the guidance is shown, made visible: {stdout}");
}
