//! `rgd solve FILE.py --entry NAME --tests TESTS.py [--hidden HIDDEN.py] [--write]`: the agents
//! work on a function of the user's own file (`--repo DIR --target FILE::NAME`: of a project, see
//! `solve_repo.rs`). A stub is written from its docstring; code is taken
//! as the first iteration's program and repaired. The result is shown as a diff; `--write` puts it
//! in the file (keeping FILE.orig) once it passed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::args::CommonArgs;
use crate::config::LlmArgs;
use crate::dataset::user_task;
use crate::front::attempt::{How, solve_task};
use crate::store::Home;

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// The Python file holding the function (or --repo and --target)
    #[arg(required_unless_present = "repo", conflicts_with = "repo")]
    pub file: Option<PathBuf>,
    /// The function to write (a stub with a docstring) or repair (code)
    #[arg(long, required_unless_present = "repo", conflicts_with = "repo")]
    pub entry: Option<String>,
    /// A Python project: work on its function --target, tested by the project's own tests
    /// (pytest) in a throw-away copy, with context retrieved from the project
    #[arg(long, requires = "target")]
    pub repo: Option<PathBuf>,
    /// With --repo: the function, as path/to/mod.py::name or path/to/mod.py::Class.method
    #[arg(long, requires = "repo")]
    pub target: Option<String>,
    /// Visible tests: a file of assert lines or pytest-style test_* functions (no fixtures); with
    /// --repo a pytest selection as you would write it after `pytest` (paths, node ids, -k EXPR;
    /// default -k NAME)
    #[arg(long, allow_hyphen_values = true)]
    pub tests: Option<String>,
    /// Hidden tests, in the same form: they decide success and no agent ever sees them
    #[arg(long, allow_hyphen_values = true)]
    pub hidden: Option<String>,
    /// Put the result in the file once it passed (the old file is kept as FILE.orig)
    #[arg(long)]
    pub write: bool,
    /// Only print the outcome and the diff
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub repo_args: crate::launch::project::RepoSolveArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub async fn execute_solve(home: &Home, config: Option<&Path>, llm: &LlmArgs, args: SolveArgs) -> anyhow::Result<ExitCode> {
    let (Some(file), Some(entry)) = (args.file.clone(), args.entry.clone()) else {
        anyhow::bail!("give FILE and --entry NAME (or --repo DIR and --target path::name)");
    };
    let task = user_task(
        &file,
        &entry,
        args.tests.as_deref().map(Path::new),
        args.hidden.as_deref().map(Path::new),
    )?;
    // The judge ran the hidden tests on the program it passed: nothing more to check before writing.
    let how = How {
        common: args.common.attempt(),
        quiet: args.quiet,
        write: args.write,
    };
    let from = crate::config::Configured::load(config, &home.root, llm)?;
    solve_task(home, &from, how, task, &file, None).await
}
