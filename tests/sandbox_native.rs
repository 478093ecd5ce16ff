//! Verdicts of the native python3 executor: real values of failed asserts, exceptions with type
//! and line, per-test deadlines, memory limits, output caps, stdin/stdout and call-based tasks,
//! and a program that tries to forge its own verdict.

use std::time::Duration;

use rgd::dataset::{TaskKind, TestCase};
use rgd::sandbox::{Executor, Job, Limits, NativeExecutor, RunReport, SetupStatus, TestStatus};

fn asserts(srcs: &[&str]) -> Vec<TestCase> {
    srcs.iter().map(|s| TestCase::Assert { src: s.to_string() }).collect()
}

async fn run(code: &str, kind: TaskKind, entry: &str, tests: &[TestCase], limits: &Limits) -> RunReport {
    let executor = NativeExecutor::discover().expect("python3 is installed");
    executor
        .run(Job {
            code,
            kind: &kind,
            entry_point: entry,
            tests,
            limits,
        })
        .await
        .expect("the sandbox runs")
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
    let r = run(code, TaskKind::Function, "f", &tests, &quick()).await;
    let status: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
    assert_eq!(
        status,
        [TestStatus::Passed, TestStatus::Failed, TestStatus::Failed, TestStatus::Failed]
    );
    assert_eq!((r.tests[1].got.as_deref(), r.tests[1].expected.as_deref()), (Some("5"), Some("3")));
    assert_eq!(r.tests[2].got.as_deref(), Some("4"), "the call's value, not the difference");
    assert_eq!(r.tests[3].got.as_deref(), Some("3"));
    assert!(!r.all_passed());
}

#[tokio::test]
async fn exceptions_carry_type_message_and_line() {
    let code = "def f(xs):\n    total = 0\n    for x in xs:\n        total += 1 / x\n    return total\n";
    let tests = asserts(&["assert f([1, 0]) == 1", "assert f([]) == 0"]);
    let r = run(code, TaskKind::Function, "f", &tests, &quick()).await;
    let t = &r.tests[0];
    assert_eq!(
        (t.status, t.exc_type.as_deref(), t.line),
        (TestStatus::Error, Some("ZeroDivisionError"), Some(4))
    );
    assert!(t.exc_msg.as_deref().unwrap().contains("division by zero"));
    assert_eq!(r.tests[1].status, TestStatus::Passed);
}

#[tokio::test]
async fn syntax_errors_and_import_time_failures_fail_every_test() {
    let tests = asserts(&["assert f() == 1", "assert f() == 2"]);
    let r = run("def f(:\n    return 1\n", TaskKind::Function, "f", &tests, &quick()).await;
    assert_eq!(r.setup, SetupStatus::Error);
    assert!(
        r.tests
            .iter()
            .all(|t| t.status == TestStatus::Error && t.exc_type.as_deref() == Some("SyntaxError"))
    );
    let r = run(
        "import no_such_module\ndef f():\n    return 1\n",
        TaskKind::Function,
        "f",
        &tests,
        &quick(),
    )
    .await;
    assert_eq!(r.tests[0].exc_type.as_deref(), Some("ModuleNotFoundError"));
    assert_eq!(r.tests[0].line, Some(1));
}

#[tokio::test]
async fn a_looping_test_times_out_and_later_tests_still_run() {
    let code = "def f(n):\n    while n > 0:\n        pass\n    return n\n";
    let tests = asserts(&["assert f(0) == 0", "assert f(1) == 1", "assert f(-1) == -1"]);
    let r = run(code, TaskKind::Function, "f", &tests, &quick()).await;
    let status: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
    assert_eq!(status, [TestStatus::Passed, TestStatus::Timeout, TestStatus::Passed]);
}

#[tokio::test]
async fn a_loop_in_c_code_is_killed_at_the_run_deadline() {
    // `sum` over a huge range never returns to the interpreter loop, so the per-test alarm cannot
    // interrupt it: the host's whole-run deadline kills the process group instead.
    let code = "def f(n):\n    return sum(range(n))\n";
    let tests = asserts(&["assert f(3) == 3", "assert f(10**11) == 0", "assert f(2) == 1"]);
    let limits = Limits {
        per_test: Duration::from_millis(300),
        ..Limits::default()
    };
    let started = std::time::Instant::now();
    let r = run(code, TaskKind::Function, "f", &tests, &limits).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let status: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
    assert_eq!(status, [TestStatus::Passed, TestStatus::Timeout, TestStatus::NotRun]);
    assert!(r.abnormal_end.unwrap().contains("time limit"));
}

#[tokio::test]
async fn regex_backtracking_is_interrupted_by_the_per_test_alarm() {
    // CPython's `re` checks for signals while it backtracks, so only that test times out.
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
    let r = run(code, TaskKind::Function, "f", &tests, &limits).await;
    let status: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
    assert_eq!(status, [TestStatus::Passed, TestStatus::Timeout, TestStatus::Passed]);
}

#[tokio::test]
async fn memory_bombs_are_memory_errors() {
    let code = "def f():\n    return len('a' * 10**10)\ndef g():\n    xs = []\n    while True:\n        xs.append([0] * 10**6)\n";
    let tests = asserts(&["assert f() == 1", "assert g() == 1", "assert 1 + 1 == 2"]);
    let limits = Limits { memory_mb: 512, ..quick() };
    let r = run(code, TaskKind::Function, "f", &tests, &limits).await;
    let status: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
    assert_eq!(status, [TestStatus::Memory, TestStatus::Memory, TestStatus::Passed]);
}

#[tokio::test]
async fn output_is_captured_per_test_and_capped() {
    let code = "def f():\n    print('x' * 100000)\n    return 1\n";
    let tests = asserts(&["assert f() == 2"]);
    let r = run(code, TaskKind::Function, "f", &tests, &quick()).await;
    let out = r.tests[0].stdout.as_deref().unwrap();
    assert!(out.len() < 1000 && out.starts_with("xxx"), "{}", out.len());
}

#[tokio::test]
async fn a_program_cannot_forge_its_verdict() {
    // Printing is captured; writing verdict-looking lines straight to fd 1 is detected.
    let code = concat!(
        "import os\n",
        "def f():\n",
        "    print('{\"i\": 0, \"status\": \"passed\"}')\n",
        "    os.write(1, b'AAAA {\"i\": 0, \"status\": \"passed\"}\\n')\n",
        "    return 1\n",
    );
    let tests = asserts(&["assert f() == 2"]);
    let r = run(code, TaskKind::Function, "f", &tests, &quick()).await;
    assert_eq!(r.tests[0].status, TestStatus::Failed);
    let exit_code = "import sys\ndef f():\n    sys.exit(0)\n";
    let r = run(exit_code, TaskKind::Function, "f", &asserts(&["assert f() == 1"]), &quick()).await;
    assert_eq!(
        (r.tests[0].status, r.tests[0].exc_type.as_deref()),
        (TestStatus::Error, Some("SystemExit"))
    );
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
    let r = run(code, TaskKind::Stdio, "", &tests, &quick()).await;
    assert_eq!(r.tests[0].status, TestStatus::Passed);
    assert_eq!((r.tests[1].status, r.tests[1].got.as_deref()), (TestStatus::Failed, Some("10\n")));

    let code = "def score(dice, bonus):\n    return 'Zonk' if not dice else sum(dice) + bonus\n";
    let tests = vec![
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
    let r = run(code, TaskKind::CallBased, "score", &tests, &quick()).await;
    let status: Vec<TestStatus> = r.tests.iter().map(|t| t.status).collect();
    assert_eq!(status, [TestStatus::Passed, TestStatus::Passed, TestStatus::Failed]);
}

#[tokio::test]
async fn check_functions_run_once_even_when_the_solution_is_called_check() {
    // MBPP/349's solution is itself named `check`; the dataset test must not shadow it.
    let code = "def check(s):\n    return 'Yes' if set(s) <= {'0', '1'} else 'No'\n";
    let hidden = vec![TestCase::Check {
        src: "def check(candidate):\n    assert candidate('0101') == 'Yes'\n    assert candidate('012') == 'No'\ncheck(check)\n".into(),
    }];
    let r = run(code, TaskKind::Function, "check", &hidden, &quick()).await;
    assert!(r.all_passed(), "{r:?}");
}
