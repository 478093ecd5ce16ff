//! `rgd report RUN_OR_EXPERIMENT... --out DIR`: report.md and one self-contained report.html.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::analysis::{Report, RunData, html};
use crate::store::Home;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run ids and experiment ids (unique prefixes), or the results file of `rgd bench real
    /// --fix` (its repairs' runs)
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// Where report.md and report.html go
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub plus: super::args::PlusArgs,
}

pub async fn execute(home: &Home, data_dir: Option<&std::path::Path>, args: ReportArgs) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let mut run_ids: Vec<String> = Vec::new();
    for id in &args.ids {
        if let Some(runs) = bench_real_runs(std::path::Path::new(id))? {
            run_ids.extend(runs);
            continue;
        }
        match home.load_experiment(id) {
            Ok(experiment) => run_ids.extend(experiment.cells.iter().filter_map(|c| c.run_id.clone())),
            Err(_) => run_ids.push(
                home.find_run(id)
                    .with_context(|| format!("{id} is neither an experiment nor a run"))?,
            ),
        }
    }
    run_ids.dedup();
    let mut runs = Vec::new();
    for id in &run_ids {
        match RunData::load(home, id) {
            Ok(run) => runs.push(run),
            Err(e) => eprintln!("left out run {id}: {e:#}"),
        }
    }
    if runs.is_empty() {
        anyhow::bail!("no run could be read");
    }
    args.plus.judge(home, data_dir, &mut runs).await?;
    let n = runs.len();
    let report = Report::gather(runs);
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let md = args.out.join("report.md");
    let page = args.out.join("report.html");
    std::fs::write(&md, report.markdown()).with_context(|| format!("writing {}", md.display()))?;
    std::fs::write(&page, html(&report)).with_context(|| format!("writing {}", page.display()))?;
    eprintln!(
        "report of {n} runs: {} and {} ({:.2} s)",
        md.display(),
        page.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// The runs of the repairs a `rgd bench real --fix` results file records (None: `path` is not a
/// file, so an id).
fn bench_real_runs(path: &std::path::Path) -> anyhow::Result<Option<Vec<String>>> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).with_context(|| path.display().to_string())?;
    let mut runs = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let m: crate::repo::bench::real::measure::Measured =
            serde_json::from_str(line).with_context(|| format!("{}:{}: not a result of rgd bench real", path.display(), n + 1))?;
        runs.extend(m.fix.into_iter().flat_map(|f| f.runs));
    }
    if runs.is_empty() {
        anyhow::bail!(
            "{}: no repair recorded a run (results of rgd bench real --fix have them)",
            path.display()
        );
    }
    Ok(Some(runs))
}
