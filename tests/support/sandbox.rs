//! Running one program in a sandbox from a test.

use rgd::dataset::{TaskKind, TestCase};
use rgd::sandbox::{Job, Limits, RunReport, SandboxKind, make_executor};

/// Runs `code` against `tests` in the given sandbox and checks the report names that executor.
pub async fn run_program(sandbox: SandboxKind, code: &str, kind: &TaskKind, entry: &str, tests: &[TestCase], limits: &Limits) -> RunReport {
    let executor = make_executor(sandbox, &|line| eprintln!("{line}")).expect("the sandbox can be built");
    let report = executor
        .run(Job {
            code,
            kind,
            entry_point: entry,
            tests,
            limits,
        })
        .await
        .expect("the sandbox runs");
    assert_eq!(report.executor, executor.name());
    report
}
