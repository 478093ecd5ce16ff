//! `rgd compare RUN_A RUN_B [...]`: the runs side by side, each against the first.

use std::process::ExitCode;

use clap::Args;

use crate::analysis::{RunData, compare, render};
use crate::store::Home;

use super::args::PlusArgs;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more run ids (unique prefixes); each is compared with the first
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<String>,
    /// One JSON object with every number, for scripts
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub plus: PlusArgs,
}

pub async fn execute(home: &Home, data_dir: Option<&std::path::Path>, args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut runs = args
        .runs
        .iter()
        .map(|r| RunData::load(home, r))
        .collect::<anyhow::Result<Vec<_>>>()?;
    args.plus.judge(home, data_dir, &mut runs).await?;
    let comparison = compare(&runs)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", render(&comparison));
    }
    Ok(ExitCode::SUCCESS)
}
