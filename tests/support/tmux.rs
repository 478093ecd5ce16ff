//! A private tmux server running one command in a terminal of a given size: the real binary in a
//! real terminal, for the TUI's end-to-end test and the idle-CPU benchmark.
#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` (a shell line) with `env`; when it ends the pane prints `RGD-EXITED=<code>`.
    pub fn start(command: &str, env: &[(&str, String)], size: (u16, u16)) -> Tmux {
        let socket = format!("rgd-{}-{}", std::process::id(), ulid::Ulid::generate());
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &socket, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x"])
            .arg(size.0.to_string())
            .arg("-y")
            .arg(size.1.to_string());
        for (k, v) in env {
            cmd.args(["-e", &format!("{k}={v}")]);
        }
        cmd.arg(format!("{command}; echo RGD-EXITED=$?; sleep 600"));
        let status = cmd.status().expect("tmux is installed (.ci/test installs it)");
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types keys (tmux key names or literal text), a little apart as a person would.
    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.tmux(&["send-keys", "-t", "t", k]);
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// The process running in the pane: the shell's child (the shell runs the command first).
    pub fn command_pid(&self) -> u32 {
        let shell = self.tmux(&["display", "-p", "-t", "t", "#{pane_pid}"]);
        let shell = shell.trim();
        let children = Command::new("pgrep").args(["-P", shell]).output().expect("pgrep runs").stdout;
        let children = String::from_utf8_lossy(&children);
        children.split_whitespace().next().unwrap_or(shell).parse().expect("a pid")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// Waits until every needle is on screen; panics with the screen after `secs`.
pub async fn wait_for(tmux: &Tmux, needles: &[&str], secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = tmux.screen();
        if needles.iter().all(|n| screen.contains(n)) {
            return screen;
        }
        if Instant::now() > deadline {
            panic!("waited {secs}s for {needles:?}; the screen shows:\n{screen}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
