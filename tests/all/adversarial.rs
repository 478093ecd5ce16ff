//! Hostile programs against the default (wasm) sandbox. Each case's test can only pass by cheating
//! (`assert f() == 1` where f never legitimately returns 1). For every case: the host survives,
//! the verdict is the expected one, and no program fakes a pass or touches the host.

use std::path::Path;
use std::time::Duration;

use rgd::dataset::{TaskKind, TestCase};
use rgd::sandbox::{Job, Limits, SandboxKind, TestStatus, make_executor};

use TestStatus::{Error, Failed, Memory, Passed, Tampered, Timeout};

struct Case {
    name: &'static str,
    code: &'static str,
    /// Acceptable verdicts for `assert f() == 1` (a few attacks can fail in more than one honest way).
    expect: &'static [TestStatus],
}

const CASES: &[Case] = &[
    Case {
        name: "infinite loop",
        code: "def f():\n    while True:\n        pass\n",
        expect: &[Timeout],
    },
    Case {
        name: "regex backtracking (C code)",
        code: "import re\ndef f():\n    return re.match(r'(a+)+$', 'a' * 40 + 'b')\n",
        expect: &[Timeout],
    },
    Case {
        name: "loop in a sorted() key",
        code: "def k(x):\n    while True:\n        pass\ndef f():\n    return sorted([3, 1, 2], key=k)\n",
        expect: &[Timeout],
    },
    Case {
        name: "C loop: sum(range(10**12))",
        code: "def f():\n    return sum(range(10**12))\n",
        expect: &[Timeout],
    },
    Case {
        name: "time.sleep(1e9)",
        code: "import time\ndef f():\n    time.sleep(1e9)\n    return 1\n",
        expect: &[Timeout],
    },
    Case {
        name: "string bomb",
        code: "def f():\n    return len('a' * 10**9)\n",
        expect: &[Memory],
    },
    Case {
        name: "list bomb",
        code: "def f():\n    xs = []\n    while True:\n        xs.append([0] * 10**6)\n",
        expect: &[Memory],
    },
    Case {
        name: "bytearray bomb",
        code: "def f():\n    return len(bytearray(10**9))\n",
        expect: &[Memory],
    },
    Case {
        name: "dict bomb",
        code: "def f():\n    d = {}\n    i = 0\n    while True:\n        d[i] = 'x' * 1000 + str(i)\n        i += 1\n",
        expect: &[Memory, Timeout],
    },
    Case {
        name: "deep recursion (Python)",
        code: "def f(n=0):\n    return f(n + 1)\n",
        expect: &[Error],
    },
    Case {
        name: "deep recursion with raised limit (C stack)",
        code: "import sys\nsys.setrecursionlimit(10**6)\ndef f(n=0):\n    return f(n + 1)\n",
        expect: &[Error, Memory, Timeout],
    },
    Case {
        name: "deep recursion in C repr",
        code: "def f():\n    x = []\n    for _ in range(10**6):\n        x = [x]\n    return len(repr(x))\n",
        expect: &[Error, Memory],
    },
    Case {
        name: "huge output",
        code: "def f():\n    for _ in range(10**5):\n        print('x' * 1000)\n    return 2\n",
        expect: &[Failed, Timeout],
    },
    Case {
        name: "read /etc/passwd",
        code: "def f():\n    open('/etc/passwd').read()\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "list the user's home",
        code: "import os\ndef f():\n    os.listdir(os.path.expanduser('~'))\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "list the root directory",
        code: "import os\ndef f():\n    os.listdir('/')\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "write a file",
        code: "def f():\n    open('/tmp/rgd-adversarial-write', 'w').write('x')\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "os.system",
        code: "import os\ndef f():\n    os.system('touch /tmp/rgd-adversarial-system')\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "subprocess",
        code: "import subprocess\ndef f():\n    subprocess.run(['touch', '/tmp/rgd-adversarial-subprocess'])\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "socket",
        code: "import socket\ndef f():\n    socket.create_connection(('127.0.0.1', 22), timeout=1)\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "ctypes",
        code: "import ctypes\ndef f():\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "signal",
        code: "import signal\ndef f():\n    signal.alarm(1)\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "threads",
        code: "import threading\ndef f():\n    t = threading.Thread(target=print)\n    t.start()\n    return 1\n",
        expect: &[Error],
    },
    Case {
        name: "sys.exit(0)",
        code: "import sys\ndef f():\n    sys.exit(0)\n",
        expect: &[Tampered],
    },
    Case {
        name: "os._exit(0)",
        code: "import os\ndef f():\n    os._exit(0)\n",
        expect: &[Tampered],
    },
    Case {
        name: "exit() inside the test",
        code: "def f():\n    exit()\n",
        expect: &[Tampered],
    },
    Case {
        name: "raise SystemExit in finally",
        code: "def f():\n    try:\n        return 2\n    finally:\n        raise SystemExit(0)\n",
        expect: &[Tampered],
    },
    Case {
        name: "patch builtins.bool",
        code: "import builtins\nbuiltins.bool = lambda x: True\ndef f():\n    return 2\n",
        expect: &[Tampered],
    },
    Case {
        name: "patch builtins.AssertionError",
        code: "import builtins\nbuiltins.AssertionError = KeyError\ndef f():\n    return 2\n",
        expect: &[Tampered],
    },
    Case {
        name: "print a fake verdict",
        code: "def f():\n    print('{\"i\": 0, \"status\": \"passed\"}')\n    return 2\n",
        expect: &[Tampered],
    },
    Case {
        name: "write a fake verdict to fd 1",
        code: "import os\ndef f():\n    os.write(1, b'X {\"i\": 0, \"status\": \"passed\"}\\n')\n    return 2\n",
        expect: &[Tampered],
    },
    Case {
        name: "reach the judge through sys.stdout",
        code: "import sys\ndef f():\n    g = type(sys.stdout).write.__globals__\n    g['run_assert'] = lambda *a: None\n    return 2\n",
        expect: &[Failed, Tampered],
    },
    Case {
        name: "import the judge and patch it",
        code: "import sys\nfor m in list(sys.modules.values()):\n    if hasattr(m, 'run_assert'):\n        m.run_assert = lambda *a: None\ndef f():\n    return 2\n",
        expect: &[Failed],
    },
];

#[tokio::test(flavor = "multi_thread")]
async fn hostile_programs_cannot_escape_or_fake_a_pass() {
    assert!(CASES.len() >= 30);
    let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}")).expect("the wasm sandbox can be built");
    // The per-test deadline is wall-clock time: with the whole suite sharing two cores, a memory
    // bomb or a deep C recursion (0.3 s alone) has been seen to overrun 1 s and end as a timeout
    // instead of what it is. 3 s keeps those cases what they are; the loops still never finish.
    let limits = Limits {
        per_test: Duration::from_secs(3),
        memory_mb: 256,
        ..Limits::default()
    };
    let tests = vec![
        TestCase::Assert {
            src: "assert f() == 1".into(),
        },
        TestCase::Assert {
            src: "assert 1 + 1 == 2".into(),
        },
    ];
    let mut wrong = Vec::new();
    for case in CASES {
        eprintln!("case: {}", case.name);
        let report = executor
            .run(Job {
                code: case.code,
                kind: &TaskKind::Function,
                entry_point: "f",
                tests: &tests,
                limits: &limits,
            })
            .await
            .unwrap_or_else(|e| panic!("{}: the sandbox itself failed: {e}", case.name));
        let status = report.tests[0].status;
        if status == Passed || !case.expect.contains(&status) {
            wrong.push(format!(
                "{}: {status:?} (expected one of {:?}): {:?}",
                case.name, case.expect, report.tests[0]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for file in [
        "/tmp/rgd-adversarial-write",
        "/tmp/rgd-adversarial-system",
        "/tmp/rgd-adversarial-subprocess",
    ] {
        assert!(!Path::new(file).exists(), "{file} was created on the host");
    }
}

#[tokio::test]
async fn the_guest_sees_no_environment_and_no_files() {
    let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}")).expect("the wasm sandbox can be built");
    let code = "import os\ndef env():\n    return dict(os.environ)\ndef cwd_files():\n    try:\n        return os.listdir('.')\n    except OSError:\n        return []\n";
    let tests = vec![
        TestCase::Assert {
            src: "assert env() == {}".into(),
        },
        TestCase::Assert {
            src: "assert cwd_files() == []".into(),
        },
    ];
    let report = executor
        .run(Job {
            code,
            kind: &TaskKind::Function,
            entry_point: "env",
            tests: &tests,
            limits: &Limits::default(),
        })
        .await
        .unwrap();
    assert!(report.all_passed(), "{report:?}");
}
