//! `rgd doctor`: checks every part rgd needs and says what to do about each failure.
//! `--fix` fetches and builds what is missing (the same steps a first run takes).

use std::process::ExitCode;

use super::doctor_check::{Check, Status, fail, note, ok};
use crate::config::{FileConfig, LlmArgs, Settings};
use crate::dataset::resolve_dataset;
use crate::store::Home;

pub async fn doctor(
    home: &Home,
    data_dir: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
    llm: &LlmArgs,
    fix: bool,
) -> anyhow::Result<ExitCode> {
    let report = |line: &str| eprintln!("  {line}");
    let mut checks = vec![state_dir(home), data(data_dir), python()];
    let (file, file_path) = match FileConfig::load(config, &home.root) {
        Ok(loaded) => loaded,
        Err(e) => {
            checks.push(fail("config", e.to_string(), "fix the file or pass --config"));
            (FileConfig::default(), None)
        }
    };
    let settings = Settings::resolve(file, file_path.clone(), llm, None, None);
    checks.push(ok(
        "config",
        file_path.map_or("no rgd.toml (defaults)".to_string(), |p| p.display().to_string()),
    ));
    checks.push(endpoint(&settings).await);
    checks.push(super::doctor_parts::local_model(&settings, fix, &report).await);
    checks.push(super::doctor_parts::sandbox(fix, &report).await);
    checks.push(super::doctor_parts::embedding(fix, &report));
    checks.push(project_tests());

    let mut failed = 0;
    for c in &checks {
        match &c.status {
            Status::Ok(detail) => println!("ok    {:<16} {detail}", c.name),
            Status::Note(detail) => println!("note  {:<16} {detail}", c.name),
            Status::Fail { problem, fix } => {
                failed += 1;
                println!("FAIL  {:<16} {problem}", c.name);
                println!("      {:<16} fix: {fix}", "");
            }
        }
    }
    if failed == 0 {
        println!("\neverything rgd needs is in place");
        Ok(ExitCode::SUCCESS)
    } else {
        // Only some problems are ones `--fix` can fetch or build away (not an endpoint, say).
        let fixable = checks
            .iter()
            .any(|c| matches!(&c.status, Status::Fail { fix, .. } if fix.contains("doctor --fix")));
        if fixable && !fix {
            println!("\n{failed} problem(s); `rgd doctor --fix` fetches and builds what is missing");
        } else {
            println!("\n{failed} problem(s); see the fixes above");
        }
        Ok(ExitCode::from(1))
    }
}

fn state_dir(home: &Home) -> Check {
    let probe = home.root.join(".doctor-probe");
    let written = std::fs::create_dir_all(&home.root).and_then(|_| std::fs::write(&probe, b"ok"));
    let _ = std::fs::remove_file(&probe);
    match written {
        Ok(()) => ok("state dir", format!("{} (writable)", home.root.display())),
        Err(e) => fail(
            "state dir",
            format!("{}: {e}", home.root.display()),
            "make it writable, or point RGD_HOME (or --home) elsewhere",
        ),
    }
}

fn data(data_dir: Option<&std::path::Path>) -> Check {
    match resolve_dataset("sample", data_dir) {
        Ok((_, path)) => {
            let dir = path.parent().map(|p| p.display().to_string()).unwrap_or_default();
            match resolve_dataset("humaneval", data_dir) {
                Ok(_) => ok("data dir", format!("{dir} (sample and benchmark datasets)")),
                Err(_) => note("data dir", format!("{dir}: the bundled sample only; set RGD_DATA for benchmarks")),
            }
        }
        Err(e) => fail(
            "data dir",
            e.to_string(),
            "run from the repository, or set RGD_DATA to its datasets/ directory",
        ),
    }
}

fn python() -> Check {
    let python = crate::assets::python();
    let out = std::process::Command::new(&python).args(["-m", "pip", "--version"]).output();
    match out {
        Ok(o) if o.status.success() => ok("python + pip", String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => fail(
            "python + pip",
            format!("{python} -m pip does not run (needed once, to fetch pinned wheels)"),
            "Debian: apt-get install python3 python3-pip (or set RGD_PYTHON)",
        ),
    }
}

/// How `rgd solve --repo` would confine a project's tests here (`repo/confine.rs`).
fn project_tests() -> Check {
    use crate::repo::run::confine::{Confinement, Jail};
    match Jail::from_env(std::path::Path::new(&crate::assets::python())).map(|j| j.level) {
        Ok(level @ Confinement::Bubblewrap) => ok("project tests", isolation_line(level)),
        Ok(level) => note(
            "project tests",
            format!("{} (Debian: apt-get install bubblewrap)", isolation_line(level)),
        ),
        Err(e) => fail("project tests", format!("{e:#}"), "unset RGD_CONFINE, or make that level work"),
    }
}

/// The level in force and what the program's process can read there.
fn isolation_line(level: crate::repo::run::confine::Confinement) -> String {
    format!("{}; {}", level.describe(), level.program_reads())
}

/// What a run asks at its start (`/models`, llama-server's context), asked the same way.
async fn endpoint(settings: &Settings) -> Check {
    let Some(openai) = &settings.openai else {
        return note(
            "endpoint",
            "none configured: the agents use the embedded model (set OPENAI_BASE_URL for a real one)",
        );
    };
    let url = &openai.base_url;
    use crate::llm::ChatModel;
    match crate::llm::OpenAiChat::new(openai.clone()).describe().await {
        Ok(info) => {
            let context = info
                .context_size
                .map_or("context not reported (--context-size sets it)".to_string(), |n| {
                    format!("context {n} tokens")
                });
            let serves = if info.models.is_empty() {
                "no model list".to_string()
            } else {
                info.models.join(", ")
            };
            let missing = crate::launch::missing_models(&info, settings);
            if missing.is_empty() {
                ok("endpoint", format!("{url} serves {serves}; {context}"))
            } else {
                note(
                    "endpoint",
                    format!(
                        "{url} serves {serves}, not {}: answers will come from what it serves; {context}",
                        missing.join(", ")
                    ),
                )
            }
        }
        Err(e) if matches!(e.status, Some(401 | 403)) => fail(
            "endpoint",
            format!("{url} refused the key: {e}"),
            "set OPENAI_API_KEY (or [llm] api_key_env in rgd.toml)",
        ),
        // Some servers have no /models; they answered, which is what this checks.
        Err(e) if e.status.is_some() => ok("endpoint", format!("{url} reachable (/models: {e})")),
        Err(e) => fail(
            "endpoint",
            format!("{url}: {e}"),
            "start the server or fix OPENAI_BASE_URL; unset it to use the embedded model",
        ),
    }
}
