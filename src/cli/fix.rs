//! `rgd fix --repo DIR --failing ID... [--tests SEL] [--candidates N] [--pairs-of N] [--write]`:
//! from a red test to a repaired project. The flags become `FixOptions`; `front::fix` locates the
//! fault and runs the attempts (`repo::fix` decides them); this prints the outcome and the diff,
//! writes it with `--write`, and exits with the status the exit table gives.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use super::args::CommonArgs;
use crate::config::LlmArgs;
use crate::front::attempt::write_keeping_backup;
use crate::front::fix::{FixOptions, fix_shown};
use crate::launch::project::{FailureArgs, RepoSolveArgs};
use crate::repo::fix::FixPlan;
use crate::store::Home;

#[derive(Debug, Args)]
pub struct FixArgs {
    /// The project, the failing tests, and the selection whose passing tests a repair must not
    /// break
    #[command(flatten)]
    pub failure: FailureArgs,
    /// How many of the ranked candidates the agents repair, one function at a time
    #[arg(long, default_value_t = 3, value_parser = crate::validate::parse_count)]
    pub candidates: usize,
    /// When no single function's repair fixes it: try pairs among the first N candidates (0: none)
    #[arg(long, default_value_t = 3)]
    pub pairs_of: usize,
    /// Apply the fix to the project (each changed file's old version kept as FILE.orig)
    #[arg(long)]
    pub write: bool,
    /// Only print the ranking, the outcome and the diff
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub repo_args: RepoSolveArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

impl FixArgs {
    fn options(self) -> FixOptions {
        FixOptions {
            plan: FixPlan {
                candidates: self.candidates,
                pairs_of: self.pairs_of,
                allow_in_process: self.repo_args.allow_in_process,
            },
            failure: self.failure,
            quiet: self.quiet,
            repo: self.repo_args,
            attempt: self.common.attempt(),
            test_seconds: self.common.test_timeout,
        }
    }
}

pub async fn execute(home: &Home, config: Option<&Path>, llm: &LlmArgs, args: FixArgs) -> anyhow::Result<ExitCode> {
    if args.common.tui && (args.common.breakpoints.is_some() || args.common.control.is_some()) {
        anyhow::bail!("rgd fix --tui follows each attempt and cannot drive the debugger: give --break without --tui (commands on stdin)");
    }
    let from = crate::config::Configured::load(config, &home.root, llm)?;
    let (write, json) = (args.write, args.common.json);
    let opts = args.options();
    let Some((record, saved)) = fix_shown(home, &from, &opts).await? else {
        eprintln!("stopped: the view closed before the fix ended; nothing was written (each attempt so far is a recorded run)");
        return Ok(crate::front::exit::code(crate::front::exit::INTERRUPTED));
    };
    if json {
        println!("{}", serde_json::to_string(&record)?);
    }
    let replays: Vec<String> = record
        .tried
        .iter()
        .filter(|t| !t.run_id.is_empty())
        .map(|t| format!("rgd replay {}", t.run_id))
        .collect();
    eprintln!("\nattempts ({} recorded): {}", saved.display(), replays.join("; "));
    // An unverified repair is never a fix: its own status, written or not (`exit::UNVERIFIED`).
    let ended = match record.unverified {
        Some(_) => crate::front::exit::code(crate::front::exit::UNVERIFIED),
        None => ExitCode::SUCCESS,
    };
    if record.fixed_by.is_none() {
        return Ok(if record.unverified.is_some() { ended } else { ExitCode::FAILURE });
    }
    if !json {
        for c in &record.changes {
            println!("{}", crate::terminal::clean(&c.diff()));
        }
    }
    if write {
        let root = Path::new(&record.root);
        for c in &record.changes {
            write_keeping_backup(&root.join(&c.file), &c.after)?;
        }
    } else {
        eprintln!("the project is unchanged (--write applies the fix)");
    }
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Fix {
        #[command(flatten)]
        args: FixArgs,
    }

    /// `rgd bench real --fix` repairs with `FixOptions::new`, not a parsed command line: its
    /// defaults must stay the command's.
    #[test]
    fn a_fix_without_a_command_line_has_the_commands_defaults() {
        let parsed = Fix::try_parse_from(["fix", "--repo", "p", "--failing", "t.py::x", "--python", "py"]).unwrap();
        let built = FixOptions::new("p".into(), vec!["t.py::x".into()], Some("py".into()));
        assert_eq!(format!("{:?}", parsed.args.options()), format!("{built:?}"));
        let other = Fix::try_parse_from(["fix", "--repo", "p", "--failing", "t.py::x", "--candidates", "5"]).unwrap();
        assert_ne!(format!("{:?}", other.args.options()), format!("{built:?}"));
    }
}
