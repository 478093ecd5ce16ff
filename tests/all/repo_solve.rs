//! `rgd solve --repo`: a function of a project whose right answer needs a helper from another
//! module is solved when retrieval put the helper in the agents' context, and not when the agents
//! got no context (the scripted model writes what its prompt makes possible, as a real one would).
//! The project's own pytest tests judge, in a throw-away copy; the hidden ones never reach a
//! prompt; only `--write` changes the project, and then only the target file, with a backup. With
//! `--trace calls`, the Feedback agent reads the failing test's call tree across the project's
//! modules, with the source of the functions it entered. Needs an interpreter with pytest (see
//! `support::pytest_python`).

use crate::support;

use std::path::Path;

use support::{Reply, ScriptedServer, fenced, rgd, temp_home};

const FILES: [(&str, &str); 6] = [
    ("pkg/__init__.py", ""),
    (
        "pkg/money.py",
        "from decimal import ROUND_HALF_UP, Decimal\n\n\ndef round_cents(amount):\n    \"\"\"Round an amount of money to whole cents, halves away from zero (not to even).\"\"\"\n    return float(Decimal(str(amount)).quantize(Decimal(\"0.01\"), rounding=ROUND_HALF_UP))\n",
    ),
    (
        "pkg/cart.py",
        "\"\"\"A shopping cart.\"\"\"\n\n\ndef total(prices, tax_rate):\n    \"\"\"The total of `prices` with tax at `tax_rate`, rounded to cents the way the project rounds money.\"\"\"\n    ...\n\n\ndef count(prices):\n    return len(prices)\n",
    ),
    (
        "tests/test_cart.py",
        "from pkg.cart import total\n\n\ndef test_total_simple():\n    assert total([1.0, 2.0], 0.0) == 3.0\n\n\ndef test_total_rounds_half_up():\n    assert total([0.125], 0.0) == 0.13\n",
    ),
    (
        "tests/test_cart_hidden.py",
        "from pkg.cart import total\n\n\ndef test_total_secret_case():\n    assert total([2.675], 0.0) == 2.68\n",
    ),
    ("tests/__init__.py", ""),
];

const WITH_HELPER: &str =
    "from .money import round_cents\n\n\ndef total(prices, tax_rate):\n    return round_cents(sum(prices) * (1 + tax_rate))\n";
const NAIVE: &str = "def total(prices, tax_rate):\n    return round(sum(prices) * (1 + tax_rate), 2)\n";

/// A model that uses the project's helper only when its prompt shows it.
fn server() -> support::Script {
    std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "debug_init" | "debug_fix" if req.user.contains("def round_cents") => Reply::Text(fenced(WITH_HELPER)),
        "debug_init" | "debug_fix" => Reply::Text(fenced(NAIVE)),
        "feedback" => Reply::Text("The rounding of halves is wrong.".into()),
        _ => Reply::Text("1. Sum the prices.\n2. Add the tax.\n3. Round to cents.".into()),
    })
}

struct Solved {
    ok: bool,
    stdout: String,
    stderr: String,
    requests: Vec<support::Request>,
}

async fn solve(home: &Path, project: &Path, python: &Path, extra: &[&str]) -> Solved {
    let server = ScriptedServer::start(server()).await;
    let mut cmd = rgd(home, &server.base_url());
    cmd.arg("solve")
        .arg("--repo")
        .arg(project)
        .args(["--target", "pkg/cart.py::total", "--tests", "tests/test_cart.py"])
        .args(["--hidden", "tests/test_cart_hidden.py", "--no-memory", "--max-iters", "2"])
        .arg("--python")
        .arg(python)
        .args(extra);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    Solved {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        requests: server.requests(),
    }
}

fn no_hidden_test_in(requests: &[support::Request]) {
    assert!(!requests.is_empty());
    for r in requests {
        for secret in ["test_total_secret_case", "2.675", "test_cart_hidden"] {
            assert!(!r.user.contains(secret), "{secret} reached a {} prompt:\n{}", r.purpose, r.user);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_function_needing_another_modules_helper_is_solved_only_with_that_helper_retrieved() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&FILES);
    let before = support::snapshot(project.path());

    // No context: the model cannot know the project's rounding; the visible half-up test fails
    // however often it tries, and nothing in the project changes (no --write anyway).
    let bare = solve(home.path(), project.path(), &python, &["--no-context", "--trace", "calls"]).await;
    assert!(bare.stderr.contains("context: none"), "{}", bare.stderr);
    assert!(bare.stderr.contains("tests: 2 visible, 1 hidden"), "{}", bare.stderr);
    assert!(!bare.stdout.contains("solved at"), "{}\n{}", bare.stdout, bare.stderr);
    let debug = bare.requests.iter().find(|r| r.purpose == "debug_init").unwrap();
    assert!(!debug.user.contains("round_cents"), "{}", debug.user);
    // The visible tests are shown with their source.
    assert!(debug.user.contains("def test_total_rounds_half_up():"), "{}", debug.user);
    // Kamiya: the Feedback agent read the failing test's call tree across the project's modules
    // (the test, then the function under test) with the source of the functions entered.
    let feedback = bare.requests.iter().find(|r| r.purpose == "feedback").unwrap();
    assert!(
        feedback.user.contains("tests/test_cart.py::test_total_rounds_half_up("),
        "{}",
        feedback.user
    );
    assert!(
        feedback.user.contains("pkg/cart.py::total(prices=[0.125], tax_rate=0.0) -> 0.12"),
        "{}",
        feedback.user
    );
    assert!(
        feedback.user.contains("Source of the functions the test entered"),
        "{}",
        feedback.user
    );
    // Only the project's own files: no standard library, no pytest, no frozen modules.
    for foreign in ["<frozen", "_pytest", "site-packages"] {
        assert!(!feedback.user.contains(foreign), "{foreign} in the call tree:\n{}", feedback.user);
    }
    // pytest's message in full, not cut to a terminal's width.
    assert!(feedback.user.contains("assert 0.12 == 0.13"), "{}", feedback.user);
    no_hidden_test_in(&bare.requests);
    assert_eq!(support::snapshot(project.path()), before, "the project changed without --write");

    // With context: the graph and the embeddings bring pkg/money.py's helper (with why), the model
    // uses it, the visible and the hidden tests pass, and --write puts it in pkg/cart.py alone.
    let with = solve(home.path(), project.path(), &python, &["--write"]).await;
    assert!(with.ok, "{}\n{}", with.stdout, with.stderr);
    assert!(with.stdout.contains("solved at iteration 1"), "{}\n{}", with.stdout, with.stderr);
    assert!(with.stderr.contains("pkg/money.py::round_cents"), "{}", with.stderr);
    let debug = with.requests.iter().find(|r| r.purpose == "debug_init").unwrap();
    assert!(debug.user.contains("## pkg/money.py:4-6 round_cents ("), "{}", debug.user);
    // Test files never go into the context (the hidden tests live there).
    assert!(!debug.user.contains("## tests/"), "{}", debug.user);
    no_hidden_test_in(&with.requests);
    let written = std::fs::read_to_string(project.path().join("pkg/cart.py")).unwrap();
    assert!(
        written.contains("from .money import round_cents") && written.contains("def count(prices):"),
        "{written}"
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("pkg/cart.py.orig")).unwrap(),
        FILES[2].1
    );
    let after: Vec<_> = support::snapshot(project.path())
        .into_iter()
        .filter(|(p, _)| !p.ends_with("pkg/cart.py") && !p.ends_with("pkg/cart.py.orig"))
        .collect();
    let untouched: Vec<_> = before.into_iter().filter(|(p, _)| !p.ends_with("pkg/cart.py")).collect();
    assert_eq!(after, untouched, "--write changed more than the target file");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_repo_input_is_named() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&FILES);
    let run = |args: Vec<String>| {
        let out = rgd(home.path(), "http://127.0.0.1:9")
            .arg("solve")
            .args(args)
            .arg("--python")
            .arg(&python)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let repo = project.path().display().to_string();
    let args = |rest: &[&str]| -> Vec<String> { ["--repo", repo.as_str()].iter().chain(rest).map(|s| s.to_string()).collect() };
    let err = run(args(&["--target", "pkg/cart.py::grand_total"]));
    assert!(err.contains("no function `grand_total` (defined here: total, count)"), "{err}");
    let err = run(args(&["--target", "pkg/nothing.py::f"]));
    assert!(err.contains("pkg/nothing.py: no such Python file"), "{err}");
    let err = run(args(&[
        "--target",
        "pkg/cart.py::total",
        "--tests",
        "tests/test_cart.py -k nothing_like_this",
    ]));
    assert!(err.contains("selects no test"), "{err}");
    let err = run(args(&[
        "--target",
        "pkg/cart.py::total",
        "--tests",
        "tests/test_cart.py",
        "--hidden",
        "tests/test_cart.py::test_total_simple",
    ]));
    assert!(err.contains("both visible and hidden"), "{err}");
    // A test file outside the project.
    let err = run(args(&["--target", "pkg/cart.py::total", "--tests", "../elsewhere/test_x.py"]));
    assert!(err.contains("not a test file or directory inside the project"), "{err}");
    // A nested function is no target; a test file that does not import is named.
    std::fs::write(
        project.path().join("pkg/nest.py"),
        "def outer():\n    def inner():\n        return 1\n    return inner\n",
    )
    .unwrap();
    let err = run(args(&["--target", "pkg/nest.py::inner"]));
    assert!(err.contains("inside the function `outer`"), "{err}");
    std::fs::write(project.path().join("tests/test_broken.py"), "def test_x(:\n    pass\n").unwrap();
    let err = run(args(&["--target", "pkg/cart.py::total", "--tests", "tests/test_broken.py"]));
    assert!(err.contains("pytest cannot collect tests/test_broken.py"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("notes.txt"), "no python here").unwrap();
    let err = run(vec![
        "--repo".into(),
        empty.path().display().to_string(),
        "--target".into(),
        "a.py::f".into(),
    ]);
    assert!(err.contains("Python"), "{err}");
    // Nothing was written anywhere in the project.
    assert!(!project.path().join("pkg/cart.py.orig").exists());
}

/// A static method as the target: the agents see its class with the method as its spec, answer it as
/// a plain top-level `def` without its decorator (as models do), and the splice puts it back in
/// its class at its indentation with `@staticmethod`; a hidden test file shares the visible one's
/// directory and never reaches a prompt; `--write` writes the class.
#[tokio::test(flavor = "multi_thread")]
async fn a_static_method_is_repaired_in_its_class() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&[
        ("shop/__init__.py", ""),
        (
            "shop/prices.py",
            "class Prices:\n    \"\"\"Price rules.\"\"\"\n\n    def __init__(self, base):\n        self.base = base\n\n    @staticmethod\n    def discounted(amount, percent):\n        \"\"\"`amount` less `percent` per cent, rounded to cents.\"\"\"\n        return amount\n\n    def total(self):\n        return self.base\n",
        ),
        (
            "tests/test_prices.py",
            "from shop.prices import Prices\n\n\ndef test_ten_percent():\n    assert Prices.discounted(10.0, 10) == 9.0\n",
        ),
        (
            "tests/test_prices_hidden.py",
            "from shop.prices import Prices\n\n\ndef test_secret_discount():\n    assert Prices(1).discounted(19.99, 15) == 16.99\n",
        ),
    ]);
    let answer = "def discounted(amount, percent):\n    return round(amount * (100 - percent) / 100, 2)\n";
    let server = ScriptedServer::start(std::sync::Arc::new(move |req: &support::Request| match req.purpose {
        "debug_init" | "debug_fix" => Reply::Text(fenced(answer)),
        _ => Reply::Text("1. Take the percentage off.\n2. Round.".into()),
    }))
    .await;
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.arg("solve")
        .arg("--repo")
        .arg(project.path())
        .args(["--target", "shop/prices.py::Prices.discounted", "--tests", "tests/test_prices.py"])
        .args([
            "--hidden",
            "tests/test_prices_hidden.py",
            "--no-memory",
            "--max-iters",
            "2",
            "--write",
        ])
        .arg("--python")
        .arg(&python);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // The method has code: the file as it is was the first iteration's program (wrong), the
    // agents' repair the second.
    assert!(
        out.status.success() && stdout.contains("solved at iteration 2"),
        "{stdout}\n{stderr}"
    );
    let requests = server.requests();
    let debug = requests.iter().find(|r| r.purpose == "debug_fix").unwrap();
    assert!(
        debug.user.contains("write the method `discounted` of the class `Prices`"),
        "{}",
        debug.user
    );
    assert!(
        debug.user.contains("    @staticmethod\n    def discounted(amount, percent):"),
        "{}",
        debug.user
    );
    for r in &requests {
        assert!(!r.user.contains("19.99") && !r.user.contains("test_secret_discount"), "{}", r.user);
    }
    let written = std::fs::read_to_string(project.path().join("shop/prices.py")).unwrap();
    assert!(
        written.contains(
            "    @staticmethod\n    def discounted(amount, percent):\n        return round(amount * (100 - percent) / 100, 2)\n\n    def total(self):"
        ),
        "{written}"
    );
}

/// Every refusal that needs no index comes before it (a cold index of a real project takes
/// a while): the index directory is never made.
#[tokio::test(flavor = "multi_thread")]
async fn refusals_that_need_no_index_come_before_it() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let project = support::project_with(&FILES);
    let repo = project.path().display().to_string();
    // A module inside the project that is a link to one outside it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "def f():\n    return 1\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.py"), project.path().join("pkg/link.py")).unwrap();
    for (target, extra, said) in [
        ("pkg/nothing.py::f", None, "no such Python file"),
        ("pkg/link.py::f", None, "pkg/link.py is a symbolic link"),
        ("pkg/cart.py::grand_total", None, "no function `grand_total`"),
        ("../outside.py::f", None, "inside the project"),
        (
            "tests/test_cart.py::test_total_simple",
            None,
            "a test file's function is not a target",
        ),
        ("pkg/cart.py::total", Some("../elsewhere/test_x.py"), "inside the project"),
        (
            "pkg/cart.py::total",
            Some("tests/test_cart.py -k nothing_like_this"),
            "selects no test",
        ),
    ] {
        let mut cmd = rgd(home.path(), "http://127.0.0.1:9");
        cmd.args(["solve", "--repo", &repo, "--target", target, "--python"]).arg(&python);
        if let Some(tests) = extra {
            cmd.args(["--tests", tests]);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(said), "{target} {extra:?}: {err}");
        assert!(!home.path().join("repos").exists(), "{target} {extra:?} built an index first");
    }
}
