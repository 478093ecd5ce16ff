//! Where rgd's log lines go: stderr, scrubbed of secrets, or a file in the state directory while a
//! terminal UI is open (lines would write over it); `RGD_LOG` filters them.

use super::{Cli, Command};

pub fn start(cli: &Cli) {
    // async-openai logs each failed answer it cannot parse; rgd records every failed attempt as an
    // event with the server's own message, so its lines would only repeat that, badly.
    let filter = tracing_subscriber::EnvFilter::try_from_env("RGD_LOG").unwrap_or_else(|_| "warn,async_openai=off,sled=off".into());
    // Log lines would write over a terminal UI: while one is open they go to a file instead.
    let log_file = cli
        .opens_tui()
        .then(|| {
            let dir = crate::store::Home::resolve(cli.home.as_deref()).root.join("logs");
            std::fs::create_dir_all(&dir).ok()?;
            std::fs::OpenOptions::new().create(true).append(true).open(dir.join("tui.log")).ok()
        })
        .flatten();
    match log_file {
        Some(file) => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(std::sync::Mutex::new(crate::secrets::ScrubWriter(file)))
            .init(),
        None => tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_writer(|| crate::secrets::ScrubWriter(std::io::stderr()))
            .init(),
    }
}

impl Cli {
    /// Whether a full-screen view opens (log lines then go to a file).
    fn opens_tui(&self) -> bool {
        match &self.command {
            None | Some(Command::Tui { .. } | Command::Replay { .. }) => true,
            Some(Command::Run(a)) => a.common.tui,
            Some(Command::Sweep(a)) => a.common.tui,
            Some(Command::Fork(a)) => a.tui,
            Some(Command::Solve(a)) => a.common.tui,
            Some(Command::Fix(a)) => a.common.tui,
            Some(Command::Demo(a)) => !a.headless && std::io::IsTerminal::is_terminal(&std::io::stdout()),
            _ => false,
        }
    }
}
