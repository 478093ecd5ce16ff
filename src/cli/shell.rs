//! `rgd completions SHELL` and `rgd man [DIR]`: both made from the clap definition the parser
//! itself uses, so they cannot drift from the commands rgd accepts.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

/// The shells rgd writes completions for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Prints the completion script for `shell` on stdout.
pub fn completions(shell: Shell) -> anyhow::Result<ExitCode> {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut cmd = super::Cli::command();
    clap_complete::generate(generator, &mut cmd, "rgd", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

/// Writes one page per command (`rgd.1`, `rgd-sweep.1`, `rgd-runs-list.1`, ...) into
/// `dir/man1`, the layout `man -M dir` reads.
pub fn man(dir: &Path) -> anyhow::Result<ExitCode> {
    let section = dir.join("man1");
    std::fs::create_dir_all(&section).with_context(|| format!("cannot create the man page directory {}", section.display()))?;
    clap_mangen::generate_to(super::Cli::command(), &section)
        .with_context(|| format!("cannot write man pages into {}", section.display()))?;
    let pages = std::fs::read_dir(&section)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "1"))
        .count();
    eprintln!(
        "wrote {pages} man pages into {}; read them with: man -M {} rgd",
        section.display(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
