//! What every command prints the same way: a report's lines, a check's verdict.

use std::process::ExitCode;

/// Prints a check (`runs verify`, `memory verify`, `index --verify`) as JSON or as its line; the
/// exit status says whether anything is damaged (1), for scripts.
pub fn print_check(json: bool, check: &impl serde::Serialize, line: &str, damaged: bool) -> anyhow::Result<ExitCode> {
    match json {
        true => println!("{}", serde_json::to_string(check)?),
        false => println!("{line}"),
    }
    Ok(if damaged { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// A report's lines on stdout, as the library rendered them.
pub fn print_lines(lines: impl IntoIterator<Item = String>) {
    for line in lines {
        println!("{line}");
    }
}
