//! `rgd bench real`: harvesting real regressions from two releases of a tiny project made here
//! (1.0 and 1.1, as two source trees), and the shipped list. Needs an interpreter with pytest (see
//! `support::pytest_python`).

use crate::support;

use support::{project_with, rgd, temp_home};

/// Every test calls `norm`; `add` is tested once; `mul` by no test.
const TESTS: &str = "from calc.ops import add, mul, norm, label\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_label():\n    assert label(3) == 'n=3'\n\n\n{norms}";

fn tests() -> String {
    let norms: String = (0..10)
        .map(|i| format!("def test_norm_{i}():\n    assert norm({i}) == {i}\n\n\n"))
        .collect();
    TESTS.replace("{norms}", &norms)
}

/// 1.0: `add` subtracts (the bug 1.1 fixed), `norm` returns a string (1.1 changed what every
/// test expects: an interface change), `mul` and `label` changed only in what no test sees or
/// in comments.
const OLD_OPS: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b * 1\n\n\ndef norm(x):\n    return str(x)\n\n\ndef label(n):\n    # the label\n    return 'n=%d' % n\n";
const NEW_OPS: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef norm(x):\n    return x\n\n\ndef label(n):\n    return 'n=%d' % n  # a comment moved\n";

/// `calc.scale`: 1.0's `scale` takes its default from a constant 1.1 no longer has, so put back
/// into 1.1 its `def` raises `NameError` and `tests/test_scale.py` no longer collects. Its one
/// test goes red, a small share of the suite, but a suite that does not collect is no instance.
const OLD_SCALE: &str = "FACTOR = 2


def scale(x, factor=FACTOR):
    return x * factor
";
const NEW_SCALE: &str = "def scale(x, factor=2):
    return factor * x
";
const SCALE_TESTS: &str = "from calc.scale import scale


def test_scale():
    assert scale(3) == 6
";

/// A release of `calc` with `ops` as its module. Its `noxfile.py` session changes between the two
/// releases too: code no test runs, which a harvest does not count as a changed function.
fn release(ops: &str) -> tempfile::TempDir {
    let old = ops == OLD_OPS;
    let flag = if old { "-x" } else { "-q" };
    project_with(&[
        ("calc/__init__.py", ""),
        ("calc/ops.py", ops),
        ("calc/scale.py", if old { OLD_SCALE } else { NEW_SCALE }),
        ("tests/__init__.py", ""),
        ("tests/test_ops.py", &tests()),
        ("tests/test_scale.py", SCALE_TESTS),
        ("noxfile.py", &format!("def tests(session):\n    session.run('pytest', '{flag}')\n")),
    ])
}

/// `rgd bench real harvest calc --from OLD --to NEW` into `out`, with `extra` flags.
fn harvest_trees(
    home: &std::path::Path,
    old: &std::path::Path,
    new: &std::path::Path,
    python: &std::path::Path,
    out: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    rgd(home, "http://127.0.0.1:9")
        .args(["bench", "real", "harvest", "calc", "--from"])
        .arg(old)
        .arg("--to")
        .arg(new)
        .arg("--python")
        .arg(python)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// A harvest says why it found what it found: the test modules that do not collect, each with its
/// error, and the packages the interpreter lacks for them by name; when nothing collects at all,
/// the error names them too.
#[test]
fn a_harvest_names_the_modules_that_do_not_collect_and_the_packages_they_miss() {
    let Some(python) = support::pytest_python() else { return };
    let (old, new) = (release(OLD_OPS), release(NEW_OPS));
    std::fs::write(
        new.path().join("tests/test_yaml.py"),
        "import nosuchpkg_rgd\n\n\ndef test_load():\n    assert nosuchpkg_rgd\n",
    )
    .unwrap();
    let home = temp_home();
    let out = home.path().join("instances.jsonl");
    let run = harvest_trees(home.path(), old.path(), new.path(), &python, &out, &["--releases", "1.0..1.1"]);
    let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    assert!(
        said.contains("1 instances"),
        "the rest of the suite still gives its instance: {said}"
    );
    assert!(
        said.contains("not collecting: tests/test_yaml.py (ModuleNotFoundError: No module named 'nosuchpkg_rgd')"),
        "{said}"
    );
    assert!(said.contains("missing test dependencies: nosuchpkg_rgd"), "{said}");
    // Nothing collects: the harvest of the pair fails, naming the missing package.
    std::fs::write(new.path().join("tests/conftest.py"), "import nosuchpkg_rgd\n").unwrap();
    let run = harvest_trees(home.path(), old.path(), new.path(), &python, &out, &["--releases", "1.0..1.1"]);
    let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{said}");
    assert!(said.contains("missing test dependencies: nosuchpkg_rgd"), "{said}");
}

#[test]
fn a_function_put_back_that_turns_few_green_tests_red_is_an_instance_and_harvesting_again_gives_the_same() {
    let Some(python) = support::pytest_python() else { return };
    let (old, new) = (release(OLD_OPS), release(NEW_OPS));
    // `calc.names.greeting` is called as the tests' conftest loads (marshmallow's tests build
    // schemas as they import): put back, 1.0's raises there, pytest ends before its session and
    // reports nothing. That put-back's suite no longer collects; the pair goes on.
    for (tree, body) in [(&old, "return GREETING"), (&new, "return 'hi'")] {
        for (file, text) in [
            ("calc/names.py", format!("def greeting():\n    {body}\n")),
            (
                "tests/conftest.py",
                "from calc.names import greeting\n\nHELLO = greeting()\n".into(),
            ),
            (
                "tests/test_names.py",
                "from calc.names import greeting\n\n\ndef test_greeting():\n    assert greeting() == 'hi'\n".into(),
            ),
        ] {
            std::fs::write(tree.path().join(file), text).unwrap();
        }
    }
    let home = temp_home();
    let out = home.path().join("instances.jsonl");
    let harvest = || {
        let run = harvest_trees(home.path(), old.path(), new.path(), &python, &out, &["--releases", "1.0..1.1"]);
        let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{said}");
        (said, std::fs::read(&out).unwrap())
    };
    let (said, first) = harvest();
    // add: an instance; norm: every test red, an interface change; mul: no test enters it;
    // scale and greeting: their modules no longer import; label: comments only, not a change.
    assert!(
        said.contains("calc 1.0 -> 1.1: 5 changed functions, 1 instances (14 tests green twice of 14 collected)"),
        "{said}"
    );
    assert!(
        said.contains("1 entered by no green test")
            && said.contains("1 interface changes (too many tests red)")
            && said.contains("2 the suite no longer collects"),
        "{said}"
    );
    let instances: Vec<serde_json::Value> = String::from_utf8_lossy(&first)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(instances.len(), 1, "{said}");
    let i = &instances[0];
    assert_eq!(i["function"], "add");
    assert_eq!(i["file"], "calc/ops.py");
    assert_eq!(i["versions"], serde_json::json!(["1.0", "1.1"]));
    assert_eq!(i["red_tests"], serde_json::json!(["tests/test_ops.py::test_add"]));
    assert_eq!((i["suite"].as_u64(), i["covering"].as_u64()), (Some(14), Some(1)));
    assert!(i["faulty"].as_str().unwrap().contains("a - b") && i["fixed"].as_str().unwrap().contains("a + b"));
    let (_, again) = harvest();
    assert_eq!(first, again, "harvesting again writes the same list");

    // The bench end to end on that list: the newer release is found in rgd's cache (as a
    // fetched sdist would be), the fault put back, located from its red test.
    let cached = home.path().join("bench/real/calc-1.1");
    rgd::checked::copy_tree(new.path(), &cached).unwrap();
    std::fs::write(home.path().join("bench/real/calc-1.1.sha256"), "").unwrap();
    let bench = |extra: &[&str]| {
        let run = rgd(home.path(), "http://127.0.0.1:9")
            .args(["bench", "real", "--json", "--instances"])
            .arg(&out)
            .arg("--python")
            .arg(&python)
            .args(extra)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        serde_json::from_slice::<serde_json::Value>(&run.stdout).unwrap()
    };
    let measured = bench(&[]);
    let summary = &measured["summary"];
    assert_eq!(
        (summary["instances"].as_u64(), summary["errors"].as_u64()),
        (Some(1), Some(0)),
        "{measured}"
    );
    assert_eq!(summary["rgd"][0], 1.0, "add is the first suspect: {measured}");
    assert_eq!(measured["instances"][0]["key"], "calc 1.0..1.1 calc/ops.py::add");
    let results = home.path().join("bench/real/tuning.jsonl");
    let recorded = std::fs::read_to_string(&results).unwrap();
    let resumed = bench(&["--resume"]);
    assert_eq!(resumed["summary"]["instances"], 1, "{resumed}");
    assert_eq!(
        std::fs::read_to_string(&results).unwrap(),
        recorded,
        "--resume measures nothing twice"
    );
    let anew = bench(&[]);
    assert_eq!(anew["summary"]["instances"], 1, "{anew}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("bench/real/tuning.jsonl.previous")).unwrap(),
        recorded,
        "a run without --resume keeps the earlier results aside"
    );
    let held = rgd(home.path(), "http://127.0.0.1:9")
        .args(["bench", "real", "--held-out", "--instances"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        !held.status.success() && String::from_utf8_lossy(&held.stderr).contains("no instance of the list is in the held-out set"),
        "{}",
        String::from_utf8_lossy(&held.stderr)
    );
}

#[test]
fn a_release_without_tests_is_named_and_nothing_is_recorded() {
    let Some(python) = support::pytest_python() else { return };
    let old = project_with(&[("calc/__init__.py", ""), ("calc/ops.py", OLD_OPS)]);
    let new = project_with(&[("calc/__init__.py", ""), ("calc/ops.py", NEW_OPS)]);
    let home = temp_home();
    let out = home.path().join("instances.jsonl");
    let run = harvest_trees(home.path(), old.path(), new.path(), &python, &out, &[]);
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success() && said.contains("its source ships no tests"), "{said}");
    assert!(!out.exists(), "no partial list is written");
}

#[test]
fn the_shipped_list_prints_as_a_json_array_of_instances() {
    let home = temp_home();
    let run = rgd(home.path(), "http://127.0.0.1:9")
        .args(["bench", "real", "--list", "--json"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&run.stdout).unwrap();
    for i in &list {
        for key in ["project", "versions", "function", "red_tests", "file", "faulty", "fixed"] {
            assert!(!i[key].is_null(), "{key} in {i}");
        }
        assert!(
            !rgd::repo::bench::real::measure::OUTSIDE_CHECKS.contains(&i["project"].as_str().unwrap()),
            "held back for checks: {i}"
        );
        assert!(!i["red_tests"].as_array().unwrap().is_empty(), "{i}");
    }
}

/// `rgd bench real --fix`: the `add` regression of the two releases above (written as a harvest
/// writes it), repaired by `rgd fix` on the oracle (as released) and on a model whose repair is
/// another (`b + a`), which the release's whole suite then judges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oracle_repairs_as_released_and_another_repair_is_judged_by_the_whole_suite() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let new = release(NEW_OPS);
    let cached = home.path().join("bench/real/calc-1.1");
    rgd::checked::copy_tree(new.path(), &cached).unwrap();
    std::fs::write(home.path().join("bench/real/calc-1.1.sha256"), "").unwrap();
    let instance = serde_json::json!({
        "project": "calc", "versions": ["1.0", "1.1"], "sdists": ["", ""], "file": "calc/ops.py",
        "function": "add", "line": 1, "red_tests": ["tests/test_ops.py::test_add"], "suite": 12,
        "covering": 1, "faulty": "def add(a, b):\n    return a - b", "fixed": "def add(a, b):\n    return a + b"
    });
    let list = home.path().join("instances.jsonl");
    std::fs::write(&list, format!("{instance}\n")).unwrap();
    // The configured model writes `add` its own way, and nothing else.
    let server = support::ScriptedServer::start(std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "debug_init" | "debug_fix" if req.user.contains("write the function `add`") => {
            support::Reply::Text(support::fenced("def add(a, b):\n    return b + a\n"))
        }
        _ => support::Reply::Text("1. Read the function.".into()),
    }))
    .await;
    let bench = |with: &'static str| {
        let mut cmd = rgd(home.path(), &server.base_url());
        cmd.args(["bench", "real", "--json", "--fix", with, "--instances"])
            .arg(&list)
            .arg("--python")
            .arg(&python);
        async move {
            let run = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
            assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
            serde_json::from_slice::<serde_json::Value>(&run.stdout).unwrap()
        }
    };
    let oracle = bench("oracle").await;
    let fix = &oracle["instances"][0]["fix"];
    assert_eq!(fix["model"], "oracle", "{oracle}");
    assert_eq!(
        (&fix["fixed"], &fix["as_released"], &fix["suite_green"]),
        (&true.into(), &true.into(), &true.into()),
        "{oracle}"
    );
    assert_eq!(fix["fixed_by"], serde_json::json!(["calc/ops.py::add"]));
    assert!(fix["calls"].as_u64().unwrap() >= 1, "{oracle}");
    assert_eq!(oracle["summary"]["fix"]["fixed"], 1, "{oracle}");
    // Judged with `add` in a process of its own: not counted among the in-process verdicts.
    assert!(fix["in_process"].is_null(), "{oracle}");
    assert_eq!(oracle["summary"]["fix"]["in_process"], 0, "{oracle}");
    let results = home.path().join("bench/real/tuning-fix-oracle.jsonl");
    assert!(results.is_file(), "a fix run keeps its own results");
    // Each repair is a recorded run: `rgd report` renders them from the results file.
    let out = home.path().join("report");
    let report = rgd(home.path(), &server.base_url())
        .arg("report")
        .arg(&results)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(std::fs::read_to_string(out.join("report.md")).unwrap().contains("add"));

    let model = bench("model").await;
    let fix = &model["instances"][0]["fix"];
    assert!(
        !fix["model"].as_str().unwrap().is_empty() && fix["model"] != "oracle",
        "the configured model's name: {model}"
    );
    assert_eq!(
        (&fix["fixed"], &fix["as_released"], &fix["suite_green"]),
        (&true.into(), &false.into(), &true.into()),
        "another repair, judged by the suite: {model}"
    );
    assert!(
        fix["suite_in_process"].is_null(),
        "one function's repair is judged with its process apart from the tests': {model}"
    );
    assert!(fix["tokens"].as_u64().unwrap() > 0, "{model}");
}

/// `--git DIR --commits A..B`: a project's own history as its benchmark. Each commit of the range
/// is paired with its parent and exported (the repository never changes); the instance a commit's
/// fix makes is then measured with `rgd bench real --instances`, as a harvested release's is.
#[test]
fn a_repositorys_commits_are_paired_with_their_parents_and_measured_from_the_list() {
    let Some(python) = support::pytest_python() else { return };
    let (repo, notes, fix) = history();
    let before = support::snapshot(repo.path());
    let home = temp_home();
    let out = home.path().join("instances.jsonl");
    let harvest = |extra: &[&str]| {
        let run = rgd(home.path(), "http://127.0.0.1:9")
            .args(["bench", "real", "harvest", "calc", "--git"])
            .arg(repo.path())
            .args(extra)
            .arg("--python")
            .arg(&python)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{said}");
        said
    };
    let every = harvest(&["--commits", "..", "--every", "2"]);
    assert!(
        every.contains("calc: 0 instances from 1 release pairs"),
        "every second commit: the notes alone\n{every}"
    );
    let said = harvest(&["--commits", ".."]);
    assert!(said.contains(": 0 changed functions"), "the notes change no function\n{said}");
    assert!(
        said.contains(&format!(
            "calc {} -> {}: 3 changed functions, 1 instances",
            &notes[..12],
            &fix[..12]
        )),
        "{said}"
    );
    let instance: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&out).unwrap().trim()).unwrap();
    assert_eq!(instance["versions"], serde_json::json!([&notes[..12], &fix[..12]]));
    assert_eq!(
        instance["sdists"],
        serde_json::json!([notes, fix]),
        "each commit stands for an sdist's hash"
    );
    assert_eq!(support::snapshot(repo.path()), before, "the repository itself never changes");
    let measured = rgd(home.path(), "http://127.0.0.1:9")
        .args(["bench", "real", "--json", "--instances"])
        .arg(&out)
        .arg("--python")
        .arg(&python)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&measured.stdout);
    assert!(measured.status.success(), "{text}{}", String::from_utf8_lossy(&measured.stderr));
    let report: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(report["summary"]["instances"], 1, "{report}");
    assert!(
        report["instances"][0]["error"].is_null(),
        "located from the exported commit: {report}"
    );
    assert!(
        report["instances"][0]["combined"].is_object(),
        "the function the fix changed is ranked: {report}"
    );
}

/// `--git DIR`: the same two releases as tags of a local repository (and a tag between them in
/// version order, so the pairs follow version order, not the order the tags were listed).
#[test]
fn a_git_repository_s_tags_are_releases_each_tree_exported_once_with_its_commit() {
    let Some(python) = support::pytest_python() else { return };
    let repo = tagged_releases();
    let newest = git_in(repo.path())(&["rev-parse", "v1.10^{commit}"]);
    let home = temp_home();
    let out = home.path().join("instances.jsonl");
    let said = harvest_tags(home.path(), repo.path(), &python, &out, &[]);
    assert!(said.contains("calc v1.0 -> v1.9: 0 changed functions"), "{said}");
    assert!(said.contains("calc v1.9 -> v1.10: 3 changed functions, 1 instances"), "{said}");
    let instance: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&out).unwrap().trim()).unwrap();
    assert_eq!(instance["versions"], serde_json::json!(["v1.9", "v1.10"]));
    assert_eq!(
        instance["sdists"][1],
        newest.as_str(),
        "the tag's commit stands for the sdist's hash"
    );
    assert!(home.path().join("bench/real/calc-v1.10/calc/ops.py").is_file());
}

/// A harvest keeps each pair as it ends (a journal beside `--out`, the list rewritten): stopped at
/// any point, `--resume` harvests only the pairs the journal lacks (a line a kill cut is that pair
/// again); without `--resume` an old journal is not read; a finished harvest removes it.
#[test]
fn a_stopped_harvest_resumes_from_the_pairs_it_finished_and_harvests_only_the_rest() {
    let Some(python) = support::pytest_python() else { return };
    let repo = tagged_releases();
    let home = temp_home();
    let out = home.path().join("instances.jsonl");
    let journal = home.path().join("instances.jsonl.calc.pairs");
    // What a run stopped after its second pair left: that pair (its instance marked), and the
    // first bytes of a line the kill cut.
    let finished = serde_json::json!({
        "project": "calc", "versions": ["v1.9", "v1.10"], "changed": 3, "dropped": {},
        "collected": 4, "suite": 4, "seconds": 1.0,
        "instances": [{
            "project": "calc", "versions": ["v1.9", "v1.10"], "sdists": ["", ""],
            "file": "calc/ops.py", "function": "marked", "line": 1, "red_tests": ["t"],
            "suite": 4, "covering": 1, "faulty": "", "fixed": ""
        }]
    });
    let stopped = format!("{finished}\n{{\"project\":\"calc\",\"vers");
    let harvest = |extra: &[&str]| {
        let said = harvest_tags(home.path(), repo.path(), &python, &out, extra);
        (said, std::fs::read_to_string(&out).unwrap())
    };

    std::fs::write(&journal, &stopped).unwrap();
    let (said, list) = harvest(&["--resume"]);
    assert!(
        said.contains("calc v1.9 -> v1.10: 3 changed functions, 1 instances (4 tests green twice of 4 collected) in 1s (harvested before)"),
        "{said}"
    );
    assert!(
        said.contains("calc v1.0 -> v1.9: 0 changed functions"),
        "the pair it lacked: {said}"
    );
    assert!(said.contains("calc: 1 instances from 2 release pairs"), "{said}");
    assert!(
        list.contains("\"function\":\"marked\""),
        "the finished pair's instance stands: {list}"
    );
    assert!(!journal.exists(), "a finished harvest removes its journal");

    std::fs::write(&journal, &stopped).unwrap();
    let (said, list) = harvest(&[]);
    assert!(said.contains("calc v1.9 -> v1.10: 3 changed functions, 1 instances"), "{said}");
    assert!(
        !said.contains("harvested before"),
        "without --resume the journal is not read: {said}"
    );
    assert!(
        list.contains("\"function\":\"add\"") && !list.contains("marked"),
        "harvested anew: {list}"
    );
    assert!(!journal.exists());
}

/// calc's two releases as tags of a repository: v1.0, v1.9 (the same commit) and v1.10 (the fix).
fn tagged_releases() -> tempfile::TempDir {
    let repo = release(OLD_OPS);
    {
        let git = git_in(repo.path());
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-qm", "1.0"]);
        git(&["tag", "v1.0"]);
        std::fs::write(repo.path().join("calc/ops.py"), NEW_OPS).unwrap();
        git(&["commit", "-qam", "1.10"]);
        git(&["tag", "v1.10"]);
        git(&["tag", "v1.9", "v1.0"]);
    }
    repo
}

/// `rgd bench real harvest calc --git REPO --out OUT` (and `extra`), which must succeed: what it said.
fn harvest_tags(home: &std::path::Path, repo: &std::path::Path, python: &std::path::Path, out: &std::path::Path, extra: &[&str]) -> String {
    let run = rgd(home, "http://127.0.0.1:9")
        .args(["bench", "real", "harvest", "calc", "--git"])
        .arg(repo)
        .arg("--python")
        .arg(python)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    said
}

/// git run in `repo`, as a test's author: its output, trimmed.
fn git_in(repo: &std::path::Path) -> impl Fn(&[&str]) -> String + '_ {
    move |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["-c", "user.name=rgd", "-c", "user.email=rgd@localhost"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// A project's history: its first commit (the older `calc`), a commit that changes no code, and
/// the fix (the newer `calc`); with the last two commits' ids.
fn history() -> (tempfile::TempDir, String, String) {
    let repo = release(OLD_OPS);
    let git = git_in(repo.path());
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "the first"]);
    std::fs::write(repo.path().join("NOTES.txt"), "nothing of the code\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "notes"]);
    let notes = git(&["rev-parse", "HEAD"]);
    std::fs::write(repo.path().join("calc/ops.py"), NEW_OPS).unwrap();
    git(&["commit", "-qam", "the fix"]);
    let fix = git(&["rev-parse", "HEAD"]);
    drop(git);
    (repo, notes, fix)
}

/// `rgd bench real --shard K/N` and `merge`: two shards of a two-instance list merge into what
/// the unsharded run measured, instance for instance; a missing shard, a shard given twice, a
/// shard of another list and a lost result are each refused.
#[test]
fn shards_of_a_list_merge_into_the_unsharded_run_and_nothing_else_merges() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let (one, two) = two_instance_lists(home.path(), &python);
    let cache = home.path().join("bench/real");
    let bench = |list: &std::path::Path, extra: &[&str]| {
        let out = rgd(home.path(), "http://127.0.0.1:9")
            .args(["bench", "real", "--json", "--instances"])
            .arg(list)
            .arg("--python")
            .arg(&python)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let whole = bench(&two, &[]);
    assert_eq!(whole["summary"]["instances"], 2, "{whole}");
    bench(&two, &["--shard", "0/2"]);
    bench(&two, &["--shard", "1/2"]);
    bench(&one, &["--shard", "1/2"]);
    let shard = |list: &str, k: u32| -> std::path::PathBuf {
        let names: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(&format!("-shard-{k}-of-2.jsonl")))
            .collect();
        let of_list = |p: &std::path::PathBuf| {
            let record: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(format!("{}.shard.json", p.display())).unwrap()).unwrap();
            record["keys"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k.as_str().unwrap().starts_with(list))
        };
        names.into_iter().find(of_list).unwrap_or_else(|| panic!("no shard {k} of {list}"))
    };
    let merge = |files: &[&std::path::Path]| {
        rgd(home.path(), "http://127.0.0.1:9")
            .args(["bench", "real", "merge", "--json"])
            .args(files)
            .output()
            .unwrap()
    };
    let (s0, s1) = (shard("calc ", 0), shard("calc2 ", 1));
    let merged = merge(&[&s1, &s0]);
    assert!(merged.status.success(), "{}", String::from_utf8_lossy(&merged.stderr));
    let merged: serde_json::Value = serde_json::from_slice(&merged.stdout).unwrap();
    let places = |v: &serde_json::Value| -> Vec<(String, serde_json::Value)> {
        v["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["key"].as_str().unwrap().to_string(), m["combined"].clone()))
            .collect()
    };
    assert_eq!(
        places(&merged),
        places(&whole),
        "merged shards are the unsharded run, instance for instance"
    );
    assert_eq!(merged["summary"]["instances"], whole["summary"]["instances"]);
    let refused = |files: &[&std::path::Path], why: &str| {
        let out = merge(files);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains(why), "expected {why:?}: {said}");
    };
    refused(&[&s0], "shards missing: 1/2");
    refused(&[&s0, &s0], "given twice");
    let other = shard("calc ", 1);
    assert_ne!(other, s1);
    refused(&[&s0, &other], "not a shard of the same measurement");
    std::fs::write(&s1, "").unwrap();
    refused(&[&s0, &s1], "has no result");
}

/// In `home`: the instance a project's history gives (`one.jsonl`), and a list of two
/// (`two.jsonl`: the same regression again under another project's name, its trees copied).
pub(crate) fn two_instance_lists(home: &std::path::Path, python: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (repo, _, _) = history();
    let one = home.join("one.jsonl");
    let harvested = rgd(home, "http://127.0.0.1:9")
        .args(["bench", "real", "harvest", "calc", "--git"])
        .arg(repo.path())
        .args(["--commits", "..", "--python"])
        .arg(python)
        .arg("--out")
        .arg(&one)
        .output()
        .unwrap();
    assert!(harvested.status.success(), "{}", String::from_utf8_lossy(&harvested.stderr));
    let first: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&one).unwrap().trim()).unwrap();
    let cache = home.join("bench/real");
    for v in first["versions"].as_array().unwrap() {
        let v = v.as_str().unwrap();
        support::copy_dir(&cache.join(format!("calc-{v}")), &cache.join(format!("calc2-{v}")));
        std::fs::copy(cache.join(format!("calc-{v}.sha256")), cache.join(format!("calc2-{v}.sha256"))).unwrap();
    }
    let mut second = first.clone();
    second["project"] = "calc2".into();
    let two = home.join("two.jsonl");
    std::fs::write(&two, format!("{first}\n{second}\n")).unwrap();
    (one, two)
}

/// `rgd bench verdicts --isolation --real-bugs`: the projects of a real-bug list, each at the
/// newest release its instances come from, have their most tested functions judged in-process and
/// isolated; here a project's history (a list made in the test) with nothing that differs.
#[test]
fn the_isolation_bench_runs_the_projects_of_a_real_bug_list_at_their_newest_release() {
    let Some(python) = support::pytest_python() else { return };
    let home = temp_home();
    let (one, _) = two_instance_lists(home.path(), &python);
    let newer = serde_json::from_str::<serde_json::Value>(std::fs::read_to_string(&one).unwrap().trim()).unwrap()["versions"][1]
        .as_str()
        .unwrap()
        .to_string();
    let bench = |extra: &[&str]| {
        rgd(home.path(), "http://127.0.0.1:9")
            .args([
                "bench",
                "verdicts",
                "--isolation",
                "--real-bugs",
                "--functions",
                "2",
                "--json",
                "--instances",
            ])
            .arg(&one)
            .arg("--python")
            .arg(&python)
            .args(extra)
            .output()
            .unwrap()
    };
    let run = bench(&[]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let projects: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(projects[0]["name"], format!("calc {newer}"), "{projects}");
    let functions = projects[0]["functions"].as_array().unwrap();
    assert_eq!(functions.len(), 2, "{projects}");
    assert!(
        functions
            .iter()
            .all(|f| f["not_isolated"].is_null() && f["differ"].as_array().unwrap().is_empty() && f["tests"].as_u64() > Some(0)),
        "{projects}"
    );
    assert_eq!(
        functions[0]["target"], "calc/ops.py::norm",
        "the function the most tests enter first: {projects}"
    );
    let held = bench(&["--held-out"]);
    assert!(
        !held.status.success() && String::from_utf8_lossy(&held.stderr).contains("no project of the list is in the held-out set"),
        "{}",
        String::from_utf8_lossy(&held.stderr)
    );
}
