//! `rgd sweep --detach`: the same sweep in a background process of its own session, so closing the
//! terminal (or the TUI) leaves it running. It writes a journal of its events that `rgd replay
//! --follow` (and the TUI's home screen) can follow, since its database stays locked while it runs.

use std::os::unix::process::CommandExt;
use std::process::{ExitCode, Stdio};

use anyhow::Context;

use super::run::SweepArgs;
use crate::store::Home;

pub async fn detach(home: &Home, args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let run_id = match &args.resume {
        Some(prefix) => home.find_run(prefix)?,
        None => ulid::Ulid::generate().to_string(),
    };
    // The same command line without the flags that concern this terminal, and without secrets.
    let super::relaunch::Relaunch {
        args: mut child_args,
        env: secret_env,
    } = super::relaunch::relaunch(std::env::args().skip(1), &["--detach", "--tui"], &[]);
    child_args.push("--journal".into());
    if args.resume.is_none() {
        child_args.extend(["--run-id".into(), run_id.clone()]);
    }
    let logs = home.root.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let log_path = logs.join(format!("{run_id}.log"));
    let log = std::fs::File::create(&log_path).with_context(|| format!("creating {}", log_path.display()))?;
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.args(&child_args)
        .envs(secret_env)
        .env("RGD_HOME", &home.root)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    // SAFETY: setsid is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(std::io::Error::from));
    }
    let mut child = cmd.spawn().context("starting the background sweep")?;
    // Return once the run is recorded, so its id works at once; or say why it never started.
    let manifest = home.run_dir(&run_id).join("manifest.json");
    while args.resume.is_none() && !manifest.is_file() {
        if let Some(status) = child.try_wait()? {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            anyhow::bail!("the background sweep ended ({status}) before it started:\n{}", log.trim_end());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    eprintln!(
        "run {run_id} is running in the background (pid {}); its output goes to {}",
        child.id(),
        log_path.display()
    );
    if !args.common.tui {
        eprintln!(
            "watch it with `rgd replay {run_id} --follow`; stop it with `kill {}` (then `rgd sweep --resume {run_id}`)",
            child.id()
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::tui::follow_run(home, &run_id).await?;
    eprintln!("run {run_id} goes on in the background (pid {})", child.id());
    Ok(ExitCode::SUCCESS)
}
