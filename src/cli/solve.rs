//! `rgd solve FILE.py --entry NAME --tests TESTS.py [--hidden HIDDEN.py] [--write]`: the agents
//! work on a function of the user's own file (`--repo DIR --target FILE::NAME`: of a project, see
//! `solve_repo.rs`). A stub is written from its docstring; code is taken
//! as the first iteration's program and repaired. The result is shown as a diff; `--write` puts it
//! in the file (keeping FILE.orig) once it passed.

use std::path::Path;
use std::process::ExitCode;

use super::args::SolveArgs;
use crate::config::LlmArgs;
use crate::dataset::user_task;
use crate::front::attempt::{How, solve_task};
use crate::store::Home;

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
