//! `rgd fix`: from a failing test to a repaired project. The scripted model repairs a function
//! only when it is asked to repair the faulty one (as `rgd bench fix`'s does), so what is fixed
//! says which candidates `rgd fix` tried, in which order, and how it judged each: the suspect
//! ranked first is tried and fails, the second fixes it; a fault in two functions is fixed by a
//! pair only after every single function failed. The regression tests (the passing ones) never
//! reach a prompt; nothing changes without `--write`. Needs an interpreter with pytest.

use crate::support;

use std::path::Path;

use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

/// `describe` ranks first (its "big" branch only the failing test takes); the fault is `scale`.
const SIZE: [(&str, &str); 4] = [
    ("pkg/__init__.py", ""),
    (
        "pkg/size.py",
        "def scale(x):\n    \"\"\"Twice x.\"\"\"\n    return x * 3\n\n\ndef describe(x):\n    \"\"\"'big' when twice x is over 10, else 'small'.\"\"\"\n    y = scale(x)\n    if y > 10:\n        return \"big\"\n    return \"small\"\n",
    ),
    ("tests/__init__.py", ""),
    (
        "tests/test_size.py",
        "from pkg.size import describe, scale\n\n\ndef test_describe_four():\n    assert describe(4) == \"small\"\n\n\ndef test_describe_one():\n    assert describe(1) == \"small\"\n\n\ndef test_scale_zero():\n    assert scale(0) == 0\n",
    ),
];

/// Two faults: `base` adds one, `extra` is one instead of nothing; either repair alone still fails.
const CALC: [(&str, &str); 4] = [
    ("pkg/__init__.py", ""),
    (
        "pkg/calc.py",
        "def base(xs):\n    \"\"\"The sum of xs.\"\"\"\n    return sum(xs) + 1\n\n\ndef extra(xs):\n    \"\"\"Nothing extra: always 0.\"\"\"\n    return 1\n\n\ndef total(xs):\n    \"\"\"base plus extra.\"\"\"\n    return base(xs) + extra(xs)\n\n\ndef count(xs):\n    return len(xs)\n",
    ),
    ("tests/__init__.py", ""),
    (
        "tests/test_calc.py",
        "from pkg.calc import count, total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\ndef test_count():\n    assert count([1, 2]) == 2\n",
    ),
];

/// A report whose tests hand the function a `zipfile.ZipFile` (no data, and nothing the tests
/// lend: it holds a finalizer): its repair can only be judged in the tests' process, so it is unverified.
const ARCHIVE: [(&str, &str); 4] = [
    ("pkg/__init__.py", ""),
    (
        "pkg/report.py",
        "def write_total(out, prices):\n    \"\"\"Writes the total of prices, to cents.\"\"\"\n    out.writestr(\"total\", \"%.2f\" % (sum(prices) + 1))\n",
    ),
    ("tests/__init__.py", ""),
    (
        "tests/test_report.py",
        "import io\nimport zipfile\n\nfrom pkg.report import write_total\n\n\ndef test_total():\n    buf = io.BytesIO()\n    with zipfile.ZipFile(buf, 'w') as out:\n        write_total(out, [1.0, 2.0])\n    assert zipfile.ZipFile(buf).read('total') == b'3.00'\n",
    ),
];

/// The right version of each function the script knows; any other is answered unchanged.
const RIGHT: [(&str, &str); 6] = [
    ("scale", "def scale(x):\n    \"\"\"Twice x.\"\"\"\n    return x * 2\n"),
    (
        "describe",
        "def describe(x):\n    \"\"\"'big' when twice x is over 10, else 'small'.\"\"\"\n    y = scale(x)\n    if y > 10:\n        return \"big\"\n    return \"small\"\n",
    ),
    ("base", "def base(xs):\n    \"\"\"The sum of xs.\"\"\"\n    return sum(xs)\n"),
    ("extra", "def extra(xs):\n    \"\"\"Nothing extra: always 0.\"\"\"\n    return 0\n"),
    (
        "total",
        "def total(xs):\n    \"\"\"base plus extra.\"\"\"\n    return base(xs) + extra(xs)\n",
    ),
    (
        "write_total",
        "def write_total(out, prices):\n    \"\"\"Writes the total of prices, to cents.\"\"\"\n    out.writestr(\"total\", \"%.2f\" % sum(prices))\n",
    ),
];

fn script() -> support::Script {
    std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "debug_init" | "debug_fix" => {
            let asked = RIGHT
                .iter()
                .find(|(name, _)| req.user.contains(&format!("write the function `{name}`")));
            match asked {
                Some((_, code)) => Reply::Text(fenced(code)),
                None => Reply::Text("I cannot tell.".into()),
            }
        }
        "feedback" => Reply::Text("The result is wrong.".into()),
        _ => Reply::Text("1. Compute the value.\n2. Return it.".into()),
    })
}

struct Fixed {
    ok: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
    requests: Vec<support::Request>,
}

async fn fix(home: &Path, project: &Path, python: &Path, args: &[&str]) -> Fixed {
    let server = ScriptedServer::start(script()).await;
    let mut cmd = rgd(home, &server.base_url());
    cmd.arg("fix")
        .arg("--repo")
        .arg(project)
        .args(["--no-memory", "--max-iters", "2", "--python"])
        .arg(python)
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    Fixed {
        ok: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        requests: server.requests(),
    }
}

fn asked_about(requests: &[support::Request]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in requests.iter().filter(|r| r.purpose == "debug_fix" || r.purpose == "debug_init") {
        if let Some((name, _)) = RIGHT
            .iter()
            .find(|(name, _)| r.user.contains(&format!("write the function `{name}`")))
            && out.last().is_none_or(|last| last != name)
        {
            out.push(name.to_string());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_suspect_fails_the_second_fixes_it_and_only_write_changes_the_project() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&SIZE);
    let before = support::snapshot(project.path());
    let failing = ["--failing", "tests/test_size.py::test_describe_four"];
    let run = fix(home.path(), project.path(), &python, &failing).await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    // The ranking, then the attempts in its order: describe (no change), then scale (fixed).
    let suspects = run.stdout.split("suspects:").nth(1).unwrap_or_default();
    let first = suspects.lines().find(|l| l.starts_with(" 1.")).unwrap_or_default();
    assert!(first.contains("describe"), "{}", run.stdout);
    assert_eq!(asked_about(&run.requests), ["describe", "scale"], "{}", run.stderr);
    assert!(run.stderr.contains("candidate pkg/size.py::describe: "), "{}", run.stderr);
    assert!(run.stderr.contains("fixed by repairing pkg/size.py::scale"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("1 failing tests (visible to the agents), 2 passing tests as the regression suite"),
        "{}",
        run.stderr
    );
    // One diff, for patch -p1.
    assert!(
        run.stdout.contains("--- a/pkg/size.py") && run.stdout.contains("+    return x * 2"),
        "{}",
        run.stdout
    );
    // The regression tests never reached a prompt.
    for r in &run.requests {
        for secret in ["test_scale_zero", "scale(0)", "test_describe_one", "describe(1)"] {
            assert!(!r.user.contains(secret), "{secret} reached a {} prompt:\n{}", r.purpose, r.user);
        }
    }
    assert_eq!(support::snapshot(project.path()), before, "the project changed without --write");
    // Each attempt is a run of its own, and the fix is recorded.
    assert!(run.stderr.contains("rgd replay "), "{}", run.stderr);
    let records: Vec<_> = std::fs::read_dir(home.path().join("fix")).unwrap().flatten().collect();
    assert_eq!(
        records.iter().filter(|e| e.path().extension().is_some_and(|x| x == "json")).count(),
        1
    );

    let mut args = failing.to_vec();
    args.push("--write");
    let run = fix(home.path(), project.path(), &python, &args).await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    let written = std::fs::read_to_string(project.path().join("pkg/size.py")).unwrap();
    assert!(written.contains("return x * 2") && written.contains("def describe"), "{written}");
    let kept = std::fs::read_to_string(project.path().join("pkg/size.py.orig")).unwrap();
    assert!(kept.contains("return x * 3"));
}

/// A repair that passes only with the function inside the tests' process is never "fixed": the fix
/// ends "0/1 fixed, 1 unverified" and exits 3, and `--write` leaves the project alone; with
/// `--allow-in-process` it is written, and still says (and exits) unverified.
#[tokio::test(flavor = "multi_thread")]
async fn a_repair_judged_in_the_tests_process_is_unverified_never_fixed() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&ARCHIVE);
    let before = support::snapshot(project.path());
    let args = ["--failing", "tests/test_report.py::test_total", "--write"];
    let run = fix(home.path(), project.path(), &python, &args).await;
    let all = format!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "{all}");
    assert!(run.stderr.contains("0/1 fixed, 1 unverified"), "{all}");
    assert!(run.stderr.contains("zipfile.ZipFile"), "the reason is said: {all}");
    assert!(!run.stderr.contains("fixed by repairing"), "{all}");
    assert_eq!(support::snapshot(project.path()), before, "an unverified repair was written");

    let mut allowed = args.to_vec();
    allowed.push("--allow-in-process");
    let run = fix(home.path(), project.path(), &python, &allowed).await;
    let all = format!("{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.code, Some(3), "{all}");
    assert!(run.stderr.contains("taken all the same (--allow-in-process)"), "{all}");
    let written = std::fs::read_to_string(project.path().join("pkg/report.py")).unwrap();
    assert!(written.contains("sum(prices))"), "{written}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fault_in_two_functions_is_fixed_by_a_pair_after_every_single_repair_failed() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&CALC);
    let before = support::snapshot(project.path());
    let run = fix(
        home.path(),
        project.path(),
        &python,
        &["--failing", "tests/test_calc.py::test_total", "--json"],
    )
    .await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    let record: serde_json::Value = serde_json::from_str(run.stdout.lines().last().unwrap_or_default()).unwrap();
    let tried: Vec<(String, Option<String>)> = record["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["target"].as_str().unwrap().to_string(),
                t["on_top_of"].as_str().map(str::to_string),
            )
        })
        .collect();
    let singles: Vec<&str> = tried.iter().filter(|t| t.1.is_none()).map(|t| t.0.as_str()).collect();
    assert_eq!(singles.len(), 3, "every single candidate first: {tried:?}");
    let last = tried.last().unwrap();
    assert!(last.1.is_some(), "the fix is a pair: {tried:?}");
    let by: Vec<&str> = record["fixed_by"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    let mut by_sorted = by.clone();
    by_sorted.sort();
    assert_eq!(by_sorted, ["pkg/calc.py::base", "pkg/calc.py::extra"], "{record}");
    // One change of the one file holding both repairs.
    let changes = record["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    let after = changes[0]["after"].as_str().unwrap();
    assert!(after.contains("return sum(xs)\n") && after.contains("return 0\n"), "{after}");
    assert!(run.stderr.contains("together (a pair"), "{}", run.stderr);
    for r in &run.requests {
        assert!(!r.user.contains("test_count"), "a regression test reached a {} prompt", r.purpose);
    }
    assert_eq!(support::snapshot(project.path()), before);
}

#[test]
fn what_cannot_be_fixed_is_named_before_any_agent_runs() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let mut files = SIZE.to_vec();
    files.push((
        "pkg/load.py",
        "def load():\n    import not_a_real_package_rgd\n    return not_a_real_package_rgd.data\n",
    ));
    files.push((
        "tests/test_load.py",
        "from pkg.load import load\n\n\ndef test_load():\n    assert load()\n",
    ));
    let project = support::project_with(&files);
    let before = support::snapshot(project.path());
    let run = |failing: &str| {
        let out = rgd(home.path(), "http://127.0.0.1:9")
            .args(["fix", "--repo"])
            .arg(project.path())
            .arg("--python")
            .arg(&python)
            .args(["--failing", failing, "--write"])
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = run("tests/test_size.py::test_scale_zero");
    assert!(e.contains("passes here"), "{e}");
    let e = run("tests/test_size.py::test_nothing");
    assert!(e.contains("no such test") || e.contains("selects no test"), "{e}");
    let e = run("tests/test_load.py::test_load");
    assert!(e.contains("missing package") && e.contains("not_a_real_package_rgd"), "{e}");
    assert_eq!(support::snapshot(project.path()), before);
}

/// `--tui`: the suspects in a panel, each attempt's run beside it as it happens, then the diff;
/// after the view closes the same diff is printed, and nothing was written.
#[tokio::test(flavor = "multi_thread")]
async fn the_tui_shows_the_suspects_each_attempt_live_and_the_diff() {
    use support::tmux::{Tmux, wait_for};
    let Some(python) = support::pytest_python() else { return };
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let project = support::project_with(&SIZE);
    let before = support::snapshot(project.path());
    let env = [
        ("RGD_HOME", home.path().display().to_string()),
        ("OPENAI_BASE_URL", server.base_url()),
        ("TERM", "xterm-256color".to_string()),
    ];
    let command = format!(
        "cd {} && {} fix --repo {} --failing tests/test_size.py::test_describe_four --no-memory --max-iters 2 --python {} --tui",
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_BIN_EXE_rgd"),
        project.path().display(),
        python.display()
    );
    let tmux = Tmux::start(&command, &env, (150, 45));
    // The ranking, describe first; its attempt failed (✗), scale's fixed it (✓); the diff pops up.
    wait_for(&tmux, &["fixed by repairing pkg/size.py::scale", "+    return x * 2"], 90).await;
    // Under the popup (q closes it), the panel and the attempt's own screens: the last run's task.
    tmux.keys(&["q"]);
    let task = wait_for(&tmux, &["fix: suspects, 2 tried", "task pkg/size.py::scale", "Visible tests"], 10).await;
    assert!(task.contains("✗  1. pkg/size.py::describe"), "{task}");
    assert!(task.contains("✓  2. pkg/size.py::scale"), "{task}");
    assert!(task.contains("test_size.py::test_describe_fo"), "{task}");
    assert!(!task.contains("test_scale_zero"), "a regression test on screen:\n{task}");
    tmux.keys(&["q"]);
    let printed = wait_for(&tmux, &["RGD-EXITED=0"], 20).await;
    assert!(printed.contains("--- a/pkg/size.py"), "{printed}");
    assert_eq!(support::snapshot(project.path()), before, "the project changed without --write");
}
