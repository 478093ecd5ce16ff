//! Command-line behaviour a user meets first: clear errors for bad input, dataset commands.

use crate::support;

use support::temp_home;

fn rgd(home: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RGD_DATA")
        .env("RGD_HOME", home)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// Without an endpoint the embedded model runs; an API model name then means the user forgot
/// the endpoint, and the error says both ways out.
#[test]
fn an_api_model_without_an_endpoint_is_a_clear_error() {
    let home = temp_home();
    let out = rgd(home.path())
        .args(["run", "--dataset", "sample", "--task", "Sample/1", "--model", "gpt-4o-mini"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "rgd failed: an error, not a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`gpt-4o-mini` is not an embedded model") && err.contains("OPENAI_BASE_URL") && err.contains("smollm2-135m"),
        "{err}"
    );
    assert!(
        !home.path().join("runs").exists(),
        "nothing is recorded for a run that never started"
    );
}

#[test]
fn malformed_dataset_line_names_file_and_line() {
    let home = temp_home();
    let path = home.path().join("mine.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"task_id":"A/1","prompt":"def f():\n","entry_point":"f","test":"def check(c): pass","given_tests":["assert f() == 1"]}"#,
            "\n",
            r#"{"task_id":"A/2","prompt":"def g():\n","entry_point":"g","test":"def check(c): pass","given_tests":"assert g()"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = rgd(home.path())
        .args(["sweep", "--base-url", "http://127.0.0.1:9/v1", "--dataset"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "rgd failed: an error, not a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2: field \"given_tests\" should be a list", path.display())),
        "{err}"
    );
}

#[test]
fn unknown_dataset_lists_known_names() {
    let home = temp_home();
    let out = rgd(home.path()).args(["datasets", "verify", "humaneval-xl"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no dataset named \"humaneval-xl\"") && err.contains("mbpp-et"),
        "{err}"
    );
}

#[test]
fn verify_and_list_work_without_an_endpoint() {
    let home = temp_home();
    let out = rgd(home.path()).args(["datasets", "verify", "sample"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("hidden tests:  6 passed, 0 failed, 0 errored"),
        "{text}"
    );
    let out = rgd(home.path()).args(["runs", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("no runs in"));
}

/// A binary started outside any checkout still has every benchmark: the copies bundled in it are
/// installed into its cache, and `datasets list` says where each comes from.
#[test]
fn an_rgd_started_in_an_empty_directory_has_every_benchmark() {
    let home = temp_home();
    let cache = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let list = || {
        let out = rgd(home.path())
            .env("RGD_CACHE", cache.path())
            .current_dir(empty.path())
            .args(["datasets", "list"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}");
        text
    };
    let text = list();
    for (name, tasks) in [
        ("sample", 6),
        ("humaneval", 164),
        ("humaneval-openai", 164),
        ("humaneval-et", 164),
        ("mbpp", 500),
        ("mbpp-et", 397),
        ("apps", 150),
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        assert!(line.contains(&format!("{tasks} tasks")), "{line}");
        assert!(line.contains(&cache.path().display().to_string()), "not the bundled copy: {line}");
    }
    assert!(
        text.contains("source: github.com/FloridSleeves/LLMDebugger@49ac191, licence: Apache-2.0"),
        "{text}"
    );
    assert!(cache.path().join("datasets/mbpp_ldb/README.txt").is_file());

    // A copy installed by an earlier rgd (other tasks, no broken list beside it) is replaced by
    // this binary's own, not used as it is.
    let installed = cache.path().join("datasets/mbpp_plus");
    let first = std::fs::read_to_string(installed.join("tasks.jsonl")).unwrap();
    std::fs::write(installed.join("tasks.jsonl"), first.lines().next().unwrap()).unwrap();
    std::fs::remove_file(installed.join("tasks.broken.toml")).unwrap();
    let text = list();
    let line = text.lines().find(|l| l.starts_with("mbpp-plus")).unwrap();
    assert!(line.contains("500 tasks"), "{line}");
    assert_eq!(std::fs::read_to_string(installed.join("tasks.jsonl")).unwrap(), first);
    assert!(installed.join("tasks.broken.toml").is_file());
}

/// A run whose manifest lost fields (hand-edited, truncated) cannot be resumed, and says why;
/// rgd does not panic over it.
#[test]
fn resuming_a_run_with_a_broken_manifest_is_an_error_not_a_panic() {
    let home = temp_home();
    let run = home.path().join("runs/01BROKENRUN0000000000000000");
    std::fs::create_dir_all(&run).unwrap();
    for manifest in [
        "{\"run_id\": \"01BROKENRUN0000000000000000\"}",
        "{\"limits\": {\"per_test\": -1}}",
        "{",
        "",
    ] {
        std::fs::write(run.join("manifest.json"), manifest).unwrap();
        let out = rgd(home.path()).args(["sweep", "--resume", "01BROKEN"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{manifest}: {err}");
        assert!(err.contains("manifest") && !err.contains("panicked"), "{manifest}: {err}");
    }
}

/// Each command lists only the options it uses: the LLM flags belong to the commands that call a
/// model, not to `rgd` itself.
#[test]
fn commands_that_never_call_a_model_do_not_offer_llm_flags() {
    let home = temp_home();
    for cmd in [
        &["--help"][..],
        &["compare", "--help"],
        &["eval", "--help"],
        &["datasets", "verify", "--help"],
        &["memory", "search", "--help"],
        &["runs", "list", "--help"],
    ] {
        let out = rgd(home.path()).args(cmd).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{cmd:?}");
        // The options, not the commands' descriptions (`fork` names the flags it changes).
        let options = help.split_once("Options:").map_or(&*help, |(_, o)| o);
        for flag in ["--model", "--llm-timeout", "--base-url", "--api-key", "--threads"] {
            assert!(!options.contains(flag), "{cmd:?} offers {flag}:\n{help}");
        }
    }
    for cmd in [
        &["run"][..],
        &["sweep"],
        &["fork"],
        &["solve"],
        &["fix"],
        &["demo"],
        &["doctor"],
        &["tui"],
        &["replay"],
        &["experiment", "run"],
        &["experiment", "resume"],
        &["index"],
        &["context"],
        &["locate"],
        &["bench", "repo"],
    ] {
        let out = rgd(home.path()).args(cmd).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--model") && help.contains("--llm-timeout"), "{cmd:?}:\n{help}");
    }
}

/// Completions come from the parser's own definition: bash accepts the script, and every shell's
/// script knows the commands and their flags. A shell rgd has no completions for is a usage error
/// that names the ones it has.
#[test]
fn completions_for_each_shell_and_a_clear_error_for_others() {
    let home = temp_home();
    let script = |shell: &str| {
        let out = rgd(home.path()).args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let bash = script("bash");
    let path = home.path().join("rgd.bash");
    std::fs::write(&path, &bash).unwrap();
    let checked = std::process::Command::new("bash").arg("-n").arg(&path).status().unwrap();
    assert!(checked.success(), "bash -n rejects the script");
    for (shell, text, marker) in [
        ("bash", bash.clone(), "complete -F"),
        ("zsh", script("zsh"), "#compdef rgd"),
        ("fish", script("fish"), "complete -c rgd"),
    ] {
        assert!(text.contains(marker), "{shell}: no {marker}");
        for word in ["sweep", "exclude-broken", "completions", "llm-timeout"] {
            assert!(text.contains(word), "{shell} completions lack {word}");
        }
    }
    let out = rgd(home.path()).args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an unknown shell is a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tcsh") && err.contains("bash, zsh, fish"), "{err}");
}

/// `rgd man DIR` writes a page per command where `man -M DIR` finds them; a directory that cannot
/// be made is an error naming it, not a panic.
#[test]
fn man_pages_per_command_and_an_unwritable_directory() {
    let home = temp_home();
    let dir = home.path().join("pages");
    let out = rgd(home.path()).arg("man").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for page in ["rgd.1", "rgd-sweep.1", "rgd-runs-list.1", "rgd-completions.1"] {
        let text = std::fs::read_to_string(dir.join("man1").join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page} is not a man page");
    }
    let sweep = std::fs::read_to_string(dir.join("man1/rgd-sweep.1")).unwrap();
    assert!(sweep.contains("exclude\\-broken"), "the sweep page lists its flags");

    let file = home.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = rgd(home.path()).arg("man").arg(file.join("pages")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a-file/pages/man1") && !err.contains("panicked"), "{err}");
}
