//! Verdicts a program cannot forge. Each hostile program below is a WRONG solution (`add` returns
//! `a - b`) plus one way of cheating the judge; against HumanEval-shaped (`check(candidate)`) and
//! MBPP-shaped (`assert add(...) == ...`) tests, on the wasm sandbox and the native one, every test
//! must end `Tampered` (a failed test, marked as such), never `Passed`. Honest programs that use
//! the same corners of Python (classes with `__eq__`, generators, exceptions a test expects, in-place
//! changes, `exit()` in a stdin/stdout program) must pass and must not be marked.

use std::time::Duration;

use crate::support;
use rgd::dataset::{TaskKind, TestCase};

use rgd::sandbox::{Limits, RunReport, SandboxKind, TestStatus};

const BOTH: [SandboxKind; 2] = [SandboxKind::Wasm, SandboxKind::Native];

const WRONG: &str = "def add(a, b):\n    return a - b\n";

/// (technique, program). Programs that cheat at import time are WRONG + the attack.
fn hostile() -> Vec<(&'static str, String)> {
    let with = |attack: &str| format!("{WRONG}{attack}");
    vec![
        (
            "rewrite the harness's globals through sys._getframe",
            with("import sys\ntry:\n    g = sys._getframe(1).f_globals\n    for k in list(g):\n        if callable(g[k]):\n            g[k] = lambda *a, **kw: None\nexcept Exception:\n    pass\n"),
        ),
        (
            "rewrite the harness through inspect.currentframe().f_back",
            with("import inspect\nf = inspect.currentframe().f_back\nwhile f is not None:\n    f.f_globals['run_check'] = lambda *a: None\n    f = f.f_back\n"),
        ),
        (
            "walk up from a traceback's frame and replace the encoder",
            with("try:\n    raise ValueError\nexcept ValueError as e:\n    f = e.__traceback__.tb_frame\n    while f.f_back is not None:\n        f = f.f_back\n    f.f_globals['to_json'] = lambda v: '{\"i\": 0, \"status\": \"passed\"}'\n"),
        ),
        (
            "find the harness with gc.get_objects",
            with("import gc\ntry:\n    for o in gc.get_objects():\n        if isinstance(o, dict) and 'run_check' in o:\n            o['run_check'] = lambda *a: None\nexcept Exception:\n    pass\n"),
        ),
        (
            "trace the harness with sys.settrace",
            with("import sys\ntry:\n    sys.settrace(lambda *a: None)\nexcept Exception:\n    pass\n"),
        ),
        (
            "replace builtins.AssertionError",
            with("import builtins\nclass Never(Exception):\n    pass\nbuiltins.AssertionError = Never\n"),
        ),
        ("replace builtins.print", with("import builtins\nbuiltins.print = lambda *a, **k: None\n")),
        ("replace builtins.exit", with("import builtins\nbuiltins.exit = lambda *a: None\n")),
        (
            "replace json.dumps",
            with("import json\njson.dumps = lambda *a, **k: '{\"status\": \"passed\"}'\n"),
        ),
        (
            "replace sys.stdout inside the call",
            "import sys, io\ndef add(a, b):\n    sys.stdout = io.StringIO()\n    return a - b\n".into(),
        ),
        ("sys.exit(0) inside the call", "import sys\ndef add(a, b):\n    sys.exit(0)\n".into()),
        ("os._exit(0) inside the call", "import os\ndef add(a, b):\n    os._exit(0)\n".into()),
        ("os._exit(0) at import time", with("import os\nos._exit(0)\n")),
        ("raise SystemExit from the call", "def add(a, b):\n    raise SystemExit(0)\n".into()),
        ("raise KeyboardInterrupt from the call", "def add(a, b):\n    raise KeyboardInterrupt\n".into()),
        ("raise BaseException from the call", "def add(a, b):\n    raise BaseException('done')\n".into()),
        (
            "print lines that mimic verdicts",
            "def add(a, b):\n    for i in range(3):\n        print('{\"i\": %d, \"status\": \"passed\"}' % i)\n    return a - b\n".into(),
        ),
        (
            "write fake answers straight to fd 1",
            "import os\ndef add(a, b):\n    os.write(1, b'{\"seq\": 1, \"status\": \"ok\", \"value\": 5}\\n')\n    return a - b\n".into(),
        ),
        (
            "return an always-equal object (__eq__/__ne__)",
            "class E:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\ndef add(a, b):\n    return E()\n".into(),
        ),
        (
            "return an object whose __eq__ answers a truthy object (__bool__)",
            "class Yes:\n    def __bool__(self):\n        return True\nclass E:\n    def __eq__(self, other):\n        return Yes()\n    __hash__ = None\ndef add(a, b):\n    return E()\n".into(),
        ),
        (
            "return an int subclass that equals anything",
            "class I(int):\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n    __hash__ = int.__hash__\ndef add(a, b):\n    return I(a - b)\n".into(),
        ),
    ]
}

fn humaneval_shaped() -> Vec<TestCase> {
    vec![TestCase::Check {
        src: "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\n".into(),
    }]
}

fn mbpp_shaped() -> Vec<TestCase> {
    ["assert add(2, 3) == 5", "assert add(1, 1) == 2", "assert add(0, 7) == 7"]
        .iter()
        .map(|s| TestCase::Assert { src: s.to_string() })
        .collect()
}

fn limits() -> Limits {
    Limits {
        per_test: Duration::from_secs(3),
        ..Limits::default()
    }
}

async fn run(sandbox: SandboxKind, code: &str, kind: &TaskKind, entry: &str, tests: &[TestCase]) -> RunReport {
    support::sandbox::run_program(sandbox, code, kind, entry, tests, &limits()).await
}

#[tokio::test]
async fn every_forging_technique_ends_in_failed_tests_marked_tampered() {
    let cases = hostile();
    assert!(cases.len() >= 15);
    let mut wrong = Vec::new();
    for sandbox in BOTH {
        for (technique, code) in &cases {
            for (shape, tests) in [("humaneval", humaneval_shaped()), ("mbpp", mbpp_shaped())] {
                let r = run(sandbox, code, &TaskKind::Function, "add", &tests).await;
                let statuses: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
                assert!(!r.all_passed(), "{sandbox:?} {shape} {technique}: forged a pass: {r:?}");
                if statuses.iter().any(|s| *s != TestStatus::Tampered) || r.tampered().is_none() {
                    wrong.push(format!("{sandbox:?} {shape} {technique}: {statuses:?} {:?}", r.tests[0].exc_msg));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "not marked tampered:\n{}", wrong.join("\n"));
}

/// Honest programs that use the same corners of Python as the attacks.
#[tokio::test]
async fn honest_programs_using_the_same_corners_of_python_pass_unmarked() {
    let cases: Vec<(&str, &str, Vec<&str>)> = vec![
        (
            "a dataclass with its own __eq__, built and compared by the test",
            "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\ndef f(n):\n    return P(n).x * 2\n",
            vec!["assert f(2) == 4", "assert P(1) != None"],
        ),
        (
            "Counter, namedtuple and IntEnum results compare as their base values",
            "from collections import Counter, namedtuple\nimport enum\nPt = namedtuple('Pt', 'x y')\nclass C(enum.IntEnum):\n    A = 1\ndef f(s):\n    return Counter(s)\ndef g():\n    return Pt(1, 2)\ndef h():\n    return C.A\n",
            vec!["assert f('aab') == {'a': 2, 'b': 1}", "assert g() == (1, 2)", "assert h() == 1"],
        ),
        (
            "a generator the test turns into a list, a big int, a set, bytes, complex and nan",
            "def f(n):\n    return (i * i for i in range(n))\ndef big():\n    return 2 ** 200\ndef misc():\n    return {1, 2}, b'\\xff', 1j, float('nan')\n",
            vec![
                "assert list(f(3)) == [0, 1, 4]",
                "assert big() == 2 ** 200",
                "assert misc()[:3] == ({1, 2}, b'\\xff', 1j)",
                "assert misc()[3] != misc()[3]",
            ],
        ),
        (
            "objects built by the test from the program's class, linked and passed back",
            "class Node:\n    def __init__(self, v):\n        self.v = v\n        self.next = None\ndef length(n):\n    k = 0\n    while n:\n        k += 1\n        n = n.next\n    return k\n",
            vec!["assert length(Node(1)) == 1"],
        ),
        (
            "an exception the test expects, and warnings, json and a raised recursion limit",
            "import json, sys, warnings\nsys.setrecursionlimit(5000)\ndef f(x):\n    warnings.warn('careful')\n    if x < 0:\n        raise ValueError('negative')\n    return json.loads(json.dumps([x]))[0]\n",
            vec!["assert f(3) == 3"],
        ),
    ];
    let check = TestCase::Check {
        src: concat!(
            "def check(candidate):\n",
            "    try:\n",
            "        candidate(-1)\n",
            "        assert False, 'no exception'\n",
            "    except ValueError:\n",
            "        pass\n",
        )
        .into(),
    };
    let in_place = (
        "def sort_in_place(xs):\n    xs.sort()\n",
        TestCase::Check {
            src: "def check(candidate):\n    xs = [3, 1, 2]\n    candidate(xs)\n    assert xs == [1, 2, 3]\n".into(),
        },
    );
    for sandbox in BOTH {
        for (what, code, asserts) in &cases {
            let entry = if code.contains("def length") { "length" } else { "f" };
            let tests: Vec<TestCase> = asserts.iter().map(|s| TestCase::Assert { src: s.to_string() }).collect();
            let r = run(sandbox, code, &TaskKind::Function, entry, &tests).await;
            assert!(r.all_passed() && r.tampered().is_none(), "{sandbox:?} {what}: {r:?}");
        }
        let (_, code, _) = &cases[4];
        let r = run(sandbox, code, &TaskKind::Function, "f", std::slice::from_ref(&check)).await;
        assert!(r.all_passed() && r.tampered().is_none(), "{sandbox:?} expected exception: {r:?}");
        let r = run(
            sandbox,
            in_place.0,
            &TaskKind::Function,
            "sort_in_place",
            std::slice::from_ref(&in_place.1),
        )
        .await;
        assert!(r.all_passed(), "{sandbox:?} in-place change: {r:?}");
        // A stdin/stdout program with fast binary I/O that ends with exit().
        let stdio = "import sys\nn = int(sys.stdin.buffer.readline())\nsys.stdout.buffer.write(str(n * 2).encode() + b'\\n')\nexit(0)\n";
        let tests = vec![TestCase::Io {
            input: "21\n".into(),
            output: "42\n".into(),
        }];
        let r = run(sandbox, stdio, &TaskKind::Stdio, "", &tests).await;
        assert!(r.all_passed() && r.tampered().is_none(), "{sandbox:?} stdio: {r:?}");
    }
}

#[tokio::test]
async fn hidden_expected_values_never_reach_the_programs_interpreter() {
    // The program searches everything it can reach for the test's expected value and prints what
    // it finds; the expected value lives only in the checker, so it finds nothing. (The program
    // computes the value it looks for: its own source must not contain it.)
    let code = concat!(
        "import sys\n",
        "def f(x):\n",
        "    needle = str(10 ** 9 - 12345679)\n",
        "    seen = []\n",
        "    for m in list(sys.modules.values()):\n",
        "        for v in list(getattr(m, '__dict__', {}).values()):\n",
        "            if needle in repr(v)[:100000]:\n",
        "                seen.append(repr(v)[:80])\n",
        "    f_ = sys._getframe(0)\n",
        "    while f_ is not None:\n",
        "        if needle in repr({k: v for k, v in f_.f_locals.items() if k != 'needle'})[:100000]:\n",
        "            seen.append('frame')\n",
        "        f_ = f_.f_back\n",
        "    print('FOUND' if seen else 'NOTHING')\n",
        "    return x\n",
    );
    let tests = vec![TestCase::Assert {
        src: "assert f(1) == 987654321".into(),
    }];
    for sandbox in BOTH {
        let r = run(sandbox, code, &TaskKind::Function, "f", &tests).await;
        assert_eq!(r.tests[0].status, TestStatus::Failed, "{sandbox:?}: {r:?}");
        assert_eq!(r.tests[0].stdout.as_deref(), Some("NOTHING\n"), "{sandbox:?}");
    }
}

/// Function mode keeps nothing a forging program made, as repository mode does (one rule,
/// `rgd::record::proves`): `rgd solve FILE --write` with a model whose every answer is a wrong
/// program that walks up to the judge's frames: judged tampered, not written, not remembered, and
/// its `samples.jsonl` line has no completion, only why it was withheld.
#[tokio::test(flavor = "multi_thread")]
async fn a_forging_program_of_a_users_file_is_not_written_remembered_or_sampled() {
    use support::{Reply, ScriptedServer, fenced};
    const FORGER: &str = "import sys\n\n\ndef add(a, b):\n    try:\n        g = sys._getframe(1).f_globals\n        for k in list(g):\n            if callable(g[k]):\n                g[k] = lambda *a, **kw: None\n    except Exception:\n        pass\n    return a - b\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.py");
    let original = "def add(a, b):\n    \"\"\"The sum of a and b.\"\"\"\n    ...\n";
    std::fs::write(&file, original).unwrap();
    std::fs::write(dir.path().join("visible.py"), "assert add(1, 2) == 3\n").unwrap();
    std::fs::write(dir.path().join("hidden.py"), "assert add(5, 5) == 10\n").unwrap();
    let home = support::temp_home();
    let out_dir = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start(std::sync::Arc::new(|req: &support::Request| match req.purpose {
        "debug_init" | "debug_fix" => Reply::Text(fenced(FORGER)),
        "keywords" => Reply::Text("add".into()),
        _ => Reply::Text("1. Add the numbers.".into()),
    }))
    .await;
    let mut cmd = support::rgd(home.path(), &server.base_url());
    cmd.arg("solve")
        .arg(&file)
        .args(["--entry", "add", "--tests"])
        .arg(dir.path().join("visible.py"))
        .arg("--hidden")
        .arg(dir.path().join("hidden.py"))
        .args(["--max-iters", "2", "--write", "--sandbox", "native", "--out"])
        .arg(out_dir.path());
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stdout.contains("tampered") && !stdout.contains("solved at"), "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original, "{stderr}");
    assert!(!dir.path().join("calc.py.orig").exists());
    let memory = support::rgd(home.path(), &server.base_url())
        .args(["memory", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&memory.stdout).contains("the memory pool is empty"));
    let samples = std::fs::read_to_string(out_dir.path().join("samples.jsonl")).unwrap();
    let sample: serde_json::Value = serde_json::from_str(samples.lines().next().unwrap()).unwrap();
    assert_eq!(sample["completion"], "", "{samples}");
    assert!(sample["withheld"].is_string(), "{samples}");
}
