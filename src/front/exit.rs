//! What rgd's exit status means, for scripts, CI jobs and Slurm: one table, shown in `--help` and
//! docs/commands.md, and the codes the commands return.

use std::process::ExitCode;

/// Every task finished (solved or not), or the command did what it was asked.
pub const OK: u8 = 0;
/// rgd failed: an error is printed (a file it could not read, a run it could not open).
pub const FAILED: u8 = 1;
/// Usage: the command line does not parse (clap's own code).
pub const USAGE: u8 = 2;
/// `rgd solve --repo` and `rgd fix`: the program passed, but only with it inside the tests'
/// process, where rgd cannot vouch for the verdict: unverified, never solved or fixed (under
/// --allow-in-process it is still written with --write, and still exits so).
pub const UNVERIFIED: u8 = 3;
/// Tasks were left unfinished (the endpoint failed them, or stopped the sweep); `--resume`
/// finishes them. EX_TEMPFAIL: try again later.
pub const UNFINISHED: u8 = 75;
/// Interrupted (Ctrl-C, or the view closed while tasks ran): finished tasks are recorded, and
/// `--resume` goes on.
pub const INTERRUPTED: u8 = 130;

/// The table `--help` prints under sweep, run, experiment, eval and solve, and at the top level.
pub const TABLE: &str = "Exit status:
  0    every task finished (solved or not); the command did what it was asked
  1    rgd failed: the error is printed
  2    usage: the command line does not parse
  3    solve --repo, fix: the program passed only in the tests' process (unverified, not solved)
  75   tasks left unfinished (the endpoint failed them or stopped the sweep): --resume finishes them
  130  interrupted (Ctrl-C): finished tasks are recorded; --resume goes on";

pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}
