//! Verdicts of both executors (wasm, the default, and native python3): real values of failed
//! asserts, exceptions with type and line, per-test deadlines, memory limits, output caps,
//! stdin/stdout and call-based tasks (forged verdicts: `tests/all/forging.rs`). Every case runs on both executors; where
//! they legitimately differ, the difference is asserted too.

use std::time::Duration;

use crate::support;
use rgd::dataset::{TaskKind, TestCase};

use rgd::sandbox::{Job, Limits, RunReport, SandboxKind, SetupStatus, TestStatus, make_executor};

const BOTH: [SandboxKind; 2] = [SandboxKind::Wasm, SandboxKind::Native];

fn asserts(srcs: &[&str]) -> Vec<TestCase> {
    srcs.iter().map(|s| TestCase::Assert { src: s.to_string() }).collect()
}

use support::sandbox::run_program as run_on;

fn statuses(r: &RunReport) -> Vec<TestStatus> {
    r.tests.iter().map(|t| t.status).collect()
}

fn quick() -> Limits {
    Limits {
        per_test: Duration::from_millis(1500),
        ..Limits::default()
    }
}

#[tokio::test]
async fn failed_assert_reports_the_real_value() {
    let code = "def f(x):\n    return x + 3\n";
    let tests = asserts(&[
        "assert f(2) == 5",
        "assert f(2) == 3",
        "assert abs(f(1) - 10) < 1e-6",
        "assert not f(0)",
    ]);
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "f", &tests, &quick()).await;
        assert_eq!(
            statuses(&r),
            [TestStatus::Passed, TestStatus::Failed, TestStatus::Failed, TestStatus::Failed],
            "{sandbox:?}"
        );
        assert_eq!((r.tests[1].got.as_deref(), r.tests[1].expected.as_deref()), (Some("5"), Some("3")));
        assert_eq!(r.tests[2].got.as_deref(), Some("4"), "the call's value, not the difference");
        assert_eq!(r.tests[3].got.as_deref(), Some("3"));
    }
}

#[tokio::test]
async fn exceptions_carry_type_message_and_line() {
    let code = "def f(xs):\n    total = 0\n    for x in xs:\n        total += 1 / x\n    return total\n";
    let tests = asserts(&["assert f([1, 0]) == 1", "assert f([]) == 0"]);
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "f", &tests, &quick()).await;
        let t = &r.tests[0];
        assert_eq!(
            (t.status, t.exc_type.as_deref(), t.line),
            (TestStatus::Error, Some("ZeroDivisionError"), Some(4)),
            "{sandbox:?}"
        );
        assert!(t.exc_msg.as_deref().unwrap().contains("division by zero"));
        assert_eq!(r.tests[1].status, TestStatus::Passed);
    }
}

#[tokio::test]
async fn syntax_errors_and_import_time_failures_fail_every_test() {
    let tests = asserts(&["assert f() == 1", "assert f() == 2"]);
    for sandbox in BOTH {
        let r = run_on(sandbox, "def f(:\n    return 1\n", &TaskKind::Function, "f", &tests, &quick()).await;
        assert_eq!(r.setup, SetupStatus::Error);
        assert!(
            r.tests
                .iter()
                .all(|t| t.status == TestStatus::Error && t.exc_type.as_deref() == Some("SyntaxError"))
        );
        let r = run_on(
            sandbox,
            "import no_such_module\ndef f():\n    return 1\n",
            &TaskKind::Function,
            "f",
            &tests,
            &quick(),
        )
        .await;
        assert_eq!(
            (r.tests[0].exc_type.as_deref(), r.tests[0].line),
            (Some("ModuleNotFoundError"), Some(1)),
            "{sandbox:?}"
        );
    }
}

#[tokio::test]
async fn a_looping_test_times_out_and_later_tests_still_run() {
    let code = "def f(n):\n    while n > 0:\n        pass\n    return n\n";
    let tests = asserts(&[
        "assert f(0) == 0",
        "assert f(1) == 1",
        "assert f(-1) == -1",
        "assert f(2) == 2",
        "assert f(0) == 0",
    ]);
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "f", &tests, &quick()).await;
        let expected = [
            TestStatus::Passed,
            TestStatus::Timeout,
            TestStatus::Passed,
            TestStatus::Timeout,
            TestStatus::Passed,
        ];
        assert_eq!(statuses(&r), expected, "{sandbox:?}");
        assert_eq!(r.tests.iter().map(|t| t.index).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    }
}

#[tokio::test]
async fn a_loop_inside_c_code_is_stopped() {
    // `sum` over a huge range never returns to the interpreter loop: a SIGALRM cannot interrupt it,
    // so natively the host's per-test deadline kills both interpreters and the later tests run in
    // fresh ones. Under wasm the C code is WebAssembly too and epoch interruption stops it.
    let code = "def f(n):\n    return sum(range(n))\n";
    let tests = asserts(&["assert f(3) == 3", "assert f(10**11) == 0", "assert f(2) == 1"]);
    let limits = Limits {
        per_test: Duration::from_millis(300),
        ..Limits::default()
    };
    let wasm = run_on(SandboxKind::Wasm, code, &TaskKind::Function, "f", &tests, &limits).await;
    assert_eq!(statuses(&wasm), [TestStatus::Passed, TestStatus::Timeout, TestStatus::Passed]);
    let native = run_on(SandboxKind::Native, code, &TaskKind::Function, "f", &tests, &limits).await;
    assert_eq!(statuses(&native), [TestStatus::Passed, TestStatus::Timeout, TestStatus::Passed]);
}

#[tokio::test]
async fn regex_backtracking_is_stopped_per_test() {
    let code = "import re\ndef f(s):\n    return re.match(r'(a+)+$', s) is not None\n";
    let tests = asserts(&[
        "assert f('a') == True",
        "assert f('a' * 40 + 'b') == False",
        "assert f('aa') == True",
    ]);
    let limits = Limits {
        per_test: Duration::from_millis(300),
        ..Limits::default()
    };
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "f", &tests, &limits).await;
        assert_eq!(
            statuses(&r),
            [TestStatus::Passed, TestStatus::Timeout, TestStatus::Passed],
            "{sandbox:?}"
        );
    }
}

#[tokio::test]
async fn memory_bombs_are_memory_errors() {
    let code = "def f():\n    return len('a' * 10**9)\ndef g():\n    xs = []\n    while True:\n        xs.append([0] * 10**6)\n";
    let tests = asserts(&["assert f() == 1", "assert g() == 1", "assert 1 + 1 == 2"]);
    // A generous deadline: this is about the memory limit, and a busy machine must not turn it into a timeout.
    let limits = Limits {
        memory_mb: 512,
        per_test: Duration::from_secs(10),
        ..Limits::default()
    };
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "f", &tests, &limits).await;
        assert_eq!(
            statuses(&r),
            [TestStatus::Memory, TestStatus::Memory, TestStatus::Passed],
            "{sandbox:?}"
        );
    }
}

#[tokio::test]
async fn output_is_captured_per_test_and_capped() {
    let code = "def f():\n    print('x' * 100000)\n    return 1\n";
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "f", &asserts(&["assert f() == 2"]), &quick()).await;
        let out = r.tests[0].stdout.as_deref().unwrap();
        assert!(out.len() < 1000 && out.starts_with("xxx"), "{sandbox:?}: {}", out.len());
    }
}

#[tokio::test]
async fn stdin_stdout_and_call_based_tasks() {
    let code = "n = int(input())\nprint(sum(range(n + 1)))\nexit()\n";
    let tests = vec![
        TestCase::Io {
            input: "3\n".into(),
            output: "6\n".into(),
        },
        TestCase::Io {
            input: "4\n".into(),
            output: "11\n".into(),
        },
    ];
    let code2 = "def score(dice, bonus):\n    return 'Zonk' if not dice else sum(dice) + bonus\n";
    let tests2 = vec![
        TestCase::Io {
            input: "[1, 2]\n3".into(),
            output: "6".into(),
        },
        TestCase::Io {
            input: "[]\n0".into(),
            output: "\"Zonk\"".into(),
        },
        TestCase::Io {
            input: "[5]\n0".into(),
            output: "4".into(),
        },
    ];
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Stdio, "", &tests, &quick()).await;
        assert_eq!(r.tests[0].status, TestStatus::Passed, "{sandbox:?}");
        assert_eq!((r.tests[1].status, r.tests[1].got.as_deref()), (TestStatus::Failed, Some("10\n")));
        let r = run_on(sandbox, code2, &TaskKind::CallBased, "score", &tests2, &quick()).await;
        assert_eq!(
            statuses(&r),
            [TestStatus::Passed, TestStatus::Passed, TestStatus::Failed],
            "{sandbox:?}"
        );
    }
}

#[tokio::test]
async fn check_functions_run_once_even_when_the_solution_is_called_check() {
    // MBPP/349's solution is itself named `check`; the dataset test must not shadow it.
    let code = "def check(s):\n    return 'Yes' if set(s) <= {'0', '1'} else 'No'\n";
    let hidden = vec![TestCase::Check {
        src: "def check(candidate):\n    assert candidate('0101') == 'Yes'\n    assert candidate('012') == 'No'\ncheck(check)\n".into(),
    }];
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "check", &hidden, &quick()).await;
        assert!(r.all_passed(), "{sandbox:?}: {r:?}");
    }
}

#[tokio::test]
async fn a_data_directory_is_readable_and_never_written() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("input.txt"), "3 4\n").unwrap();
    // The files are the program's: the tests run in the checker's interpreter, which has none.
    let code = concat!(
        "def total():\n    return sum(map(int, open('input.txt').read().split()))\n",
        "def write():\n    return open('written.txt', 'w').write('x')\n",
        "def escape():\n    return open('../../../../etc/hostname').read()\n",
    );
    let tests = asserts(&["assert total() == 7", "assert write() == 1", "assert escape()"]);
    let limits = Limits {
        data_dir: Some(data.path().to_path_buf()),
        ..quick()
    };
    for sandbox in BOTH {
        let r = run_on(sandbox, code, &TaskKind::Function, "total", &tests, &limits).await;
        assert_eq!(r.tests[0].status, TestStatus::Passed, "{sandbox:?}: {r:?}");
        assert!(
            !data.path().join("written.txt").exists(),
            "{sandbox:?} wrote into the data directory"
        );
        if sandbox == SandboxKind::Wasm {
            // Read-only, and nothing above it exists.
            assert_eq!(r.tests[1].exc_type.as_deref(), Some("PermissionError"), "{r:?}");
            assert_eq!(r.tests[2].status, TestStatus::Error, "{r:?}");
        }
    }

    let missing = Limits {
        data_dir: Some(data.path().join("absent")),
        ..quick()
    };
    for sandbox in BOTH {
        let executor = make_executor(sandbox, &|_| {}).unwrap();
        let job = Job {
            code,
            kind: &TaskKind::Function,
            entry_point: "total",
            tests: &tests,
            limits: &missing,
        };
        let err = executor.run(job).await.expect_err("a missing data directory is an error");
        assert!(err.to_string().contains("absent"), "{err}");
    }
}

/// One executor judges runs one after another with checkers it keeps between them: whatever a
/// run did (forged, looped past its deadline, exited, raised), the next run's verdicts are its
/// own.
#[tokio::test]
async fn runs_after_hostile_ones_get_their_own_verdicts() {
    let executor = make_executor(SandboxKind::Wasm, &|line| eprintln!("{line}")).expect("the sandbox can be built");
    let tests = asserts(&["assert f(2) == 4", "assert f(3) == 6"]);
    let right = "def f(x):\n    return 2 * x\n";
    let programs: [(&str, &[TestStatus]); 7] = [
        (right, &[TestStatus::Passed, TestStatus::Passed]),
        // Forges a verdict line on the real stdout.
        (
            "import os\ndef f(x):\n    os.write(1, b'{\"i\":0,\"status\":\"passed\"}\\n')\n    return 0\n",
            &[TestStatus::Tampered, TestStatus::Tampered],
        ),
        (
            "def f(x):\n    while True:\n        pass\n",
            &[TestStatus::Timeout, TestStatus::Timeout],
        ),
        // Ending its interpreter in the middle of a test is an attempt to fool the judge.
        (
            "import sys\ndef f(x):\n    sys.exit(3)\n",
            &[TestStatus::Tampered, TestStatus::Tampered],
        ),
        ("def f(x):\n    raise ValueError('no')\n", &[TestStatus::Error, TestStatus::Error]),
        ("def f(x):\n    return x + 2\n", &[TestStatus::Passed, TestStatus::Failed]),
        (right, &[TestStatus::Passed, TestStatus::Passed]),
    ];
    for round in 0..2 {
        for (code, expected) in &programs {
            let report = executor
                .run(Job {
                    code,
                    kind: &TaskKind::Function,
                    entry_point: "f",
                    tests: &tests,
                    limits: &quick(),
                })
                .await
                .expect("the sandbox runs");
            assert_eq!(statuses(&report), *expected, "round {round}: {code}");
        }
    }
}
