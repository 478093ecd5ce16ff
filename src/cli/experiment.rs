//! `rgd experiment run | resume | list | show`: a matrix of ordinary runs under one id.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::stderr_line;
use crate::analysis::RunData;
use crate::config::{Configured, LlmArgs};
use crate::dataset::DEFAULT_SPLIT_SEED;
use crate::engine::Strategy;
use crate::front::print::PrinterMode;
use crate::front::{Front, execute};
use crate::launch::{ResumeFrom, RunPlan, load_dataset_named, new_run, resume, select_tasks};
use crate::store::{Cell, ExperimentRecord, ExperimentSpec, Home};

#[derive(Debug, Subcommand)]
pub enum ExperimentCommand {
    /// Run every combination of datasets, models and strategies (and RGD's ablations) as
    /// ordinary runs under one experiment id
    Run(RunArgs),
    /// Continue a killed or interrupted experiment: finished runs and tasks are not repeated
    Resume {
        id: String,
        #[command(flatten)]
        llm: LlmArgs,
    },
    /// Experiments, newest first
    List,
    /// An experiment's runs and their pass@1
    Show { id: String },
}

impl ExperimentCommand {
    /// The model flags of the commands that run cells (`run`, `resume`).
    pub fn llm(&self) -> LlmArgs {
        match self {
            ExperimentCommand::Run(args) => args.llm.clone(),
            ExperimentCommand::Resume { llm, .. } => llm.clone(),
            ExperimentCommand::List | ExperimentCommand::Show { .. } => LlmArgs::default(),
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A TOML file describing the matrix (the same fields as the flags; see
    /// assets/experiments/table1.toml)
    pub file: Option<PathBuf>,
    /// Comma-separated dataset names
    #[arg(long, value_delimiter = ',', required_unless_present = "file")]
    pub datasets: Vec<String>,
    /// Comma-separated strategies (rgd, direct, cot, self-planning, self-debug, ldb, reflexion, mapcoder, codesim, lpw, mgdebugger)
    #[arg(long, value_delimiter = ',', required_unless_present = "file")]
    pub strategies: Vec<String>,
    /// Comma-separated models, each running every cell (default: the configured model)
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Also run RGD without memory, without the Guide and without the Feedback agent
    #[arg(long)]
    pub ablations: bool,
    /// Tasks worked on at once in each run
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub concurrency: Option<usize>,
    #[arg(long, value_parser = crate::validate::parse_iters)]
    pub max_iters: Option<u32>,
    /// Only the first N tasks of each dataset
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub limit: Option<usize>,
    /// Leave out the tasks each dataset lists as broken in the data (`rgd datasets verify`
    /// shows them)
    #[arg(long)]
    pub exclude_broken: bool,
    /// Every run's Feedback agent may say a visible test contradicts the specification
    #[arg(long)]
    pub allow_flag: bool,
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub llm: LlmArgs,
}

impl RunArgs {
    fn spec(&self) -> anyhow::Result<ExperimentSpec> {
        let mut spec = match &self.file {
            Some(path) => {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
                toml::from_str(&text).with_context(|| format!("{} is not an experiment description", path.display()))?
            }
            None => ExperimentSpec {
                name: String::new(),
                datasets: self.datasets.clone(),
                strategies: self.strategies.clone(),
                models: self.models.clone(),
                ablations: self.ablations,
                concurrency: self.concurrency,
                max_iters: self.max_iters,
                limit: self.limit,
                exclude_broken: self.exclude_broken,
                allow_flag: self.allow_flag,
            },
        };
        // Flags given beside a file override it.
        if let Some(n) = &self.name {
            spec.name = n.clone();
        }
        spec.concurrency = self.concurrency.or(spec.concurrency);
        spec.max_iters = self.max_iters.or(spec.max_iters);
        spec.limit = self.limit.or(spec.limit);
        spec.exclude_broken |= self.exclude_broken;
        spec.allow_flag |= self.allow_flag;
        // A file's numbers get the checks the flags get.
        let from = self.file.as_ref().map_or("--".to_string(), |f| format!("{}: ", f.display()));
        spec.check(&from)?;
        Ok(spec)
    }
}

/// Where the experiment's runs find datasets, configuration and the endpoint.
pub struct Where<'a> {
    pub home: &'a Home,
    pub data_dir: Option<&'a Path>,
    pub config: Option<&'a Path>,
    pub llm: &'a LlmArgs,
}

pub async fn execute_command(cx: Where<'_>, cmd: ExperimentCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ExperimentCommand::Run(args) => {
            let spec = args.spec()?;
            // Every dataset loads before the first run starts: a typo fails at once.
            for d in &spec.datasets {
                load_dataset_named(d, cx.data_dir, DEFAULT_SPLIT_SEED, &|_| {})?;
            }
            let record = ExperimentRecord {
                id: ulid::Ulid::generate().to_string(),
                created_at: chrono::Utc::now(),
                cells: spec.cells(),
                spec,
            };
            cx.home.save_experiment(&record)?;
            eprintln!("experiment {}: {} runs", record.id, record.cells.len());
            drive(&cx, record).await
        }
        ExperimentCommand::Resume { id, .. } => {
            let record = cx.home.load_experiment(&id)?;
            eprintln!("resuming experiment {}", record.id);
            drive(&cx, record).await
        }
        ExperimentCommand::List => {
            for id in cx.home.experiment_ids() {
                let Ok(r) = cx.home.load_experiment(&id) else { continue };
                let done = r.cells.iter().filter(|c| cell_done(cx.home, c)).count();
                println!(
                    "{id}  {:<16} {}/{} runs done  {}  {}",
                    if r.spec.name.is_empty() { "-" } else { &r.spec.name },
                    done,
                    r.cells.len(),
                    r.spec.datasets.join(","),
                    r.created_at.format("%Y-%m-%d %H:%M")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        ExperimentCommand::Show { id } => {
            let r = cx.home.load_experiment(&id)?;
            println!("experiment {} {}", r.id, r.spec.name);
            for c in &r.cells {
                let shown = match c.run_id.as_deref().map(|id| RunData::load(cx.home, id)) {
                    Some(Ok(run)) => {
                        let solved = run.results.values().filter(|r| r.solved_by_method()).count();
                        let tasks = run.manifest.dataset.selected.len();
                        format!(
                            "{}  {solved}/{tasks} solved  pass@1 {:.1}%{}",
                            run.manifest.run_id,
                            100.0 * solved as f64 / tasks.max(1) as f64,
                            if run.results.len() < tasks { "  (unfinished)" } else { "" }
                        )
                    }
                    Some(Err(e)) => {
                        let id = c.run_id.as_deref().unwrap_or_default();
                        // A run another process is writing: its status file says how far it is.
                        match crate::record::RunStatus::read(&cx.home.run_dir(id)) {
                            Some(s) => format!(
                                "{id}  {}: {}/{} tasks finished, {} solved",
                                format!("{:?}", s.state).to_lowercase(),
                                s.finished,
                                s.tasks,
                                s.solved
                            ),
                            None => format!("{id}  ({e:#})"),
                        }
                    }
                    None => "not started".into(),
                };
                println!("  {:<40} {shown}", c.label());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Whether a cell's run has a final result for every task.
fn cell_done(home: &Home, cell: &Cell) -> bool {
    cell.run_id
        .as_deref()
        .and_then(|id| RunData::load(home, id).ok())
        .is_some_and(|r| r.results.len() == r.manifest.dataset.selected.len())
}

/// Runs each cell in turn: done ones are skipped, started ones resumed, the rest created (their
/// run id recorded first). Stops at the first run that ends early (endpoint down, Ctrl-C).
async fn drive(cx: &Where<'_>, mut record: ExperimentRecord) -> anyhow::Result<ExitCode> {
    let total = record.cells.len();
    for i in 0..total {
        let cell = record.cells[i].clone();
        if cell_done(cx.home, &cell) {
            eprintln!("[{}/{total}] {}: done", i + 1, cell.label());
            continue;
        }
        eprintln!("[{}/{total}] {}", i + 1, cell.label());
        let code = match &cell.run_id {
            Some(id) if cx.home.has_run(id) => resume_cell(cx, &cell, id).await?,
            _ => {
                let id = cell.run_id.clone().unwrap_or_else(|| ulid::Ulid::generate().to_string());
                record.cells[i].run_id = Some(id.clone());
                cx.home.save_experiment(&record)?;
                start_cell(cx, &record.spec, &cell, &id).await?
            }
        };
        if code != ExitCode::SUCCESS {
            eprintln!(
                "experiment {} stopped; continue with `rgd experiment resume {}`",
                record.id, record.id
            );
            return Ok(code);
        }
    }
    eprintln!("experiment {}: {total} runs done (rgd experiment show {})", record.id, record.id);
    Ok(ExitCode::SUCCESS)
}

fn plan_for(cell: &Cell, run_id: &str) -> anyhow::Result<RunPlan> {
    let strategy = Strategy::from_name(&cell.strategy).with_context(|| format!("unknown strategy {:?}", cell.strategy))?;
    let off = |a: &str| cell.ablation.as_deref() == Some(a);
    Ok(RunPlan {
        memory: !off("no-memory"),
        guide: !off("no-guide"),
        feedback: !off("no-feedback"),
        run_id: Some(run_id.to_string()),
        ..RunPlan::new(strategy)
    })
}

fn llm_for(cx: &Where<'_>, cell: &Cell) -> LlmArgs {
    let mut llm = cx.llm.clone();
    if let Some(m) = &cell.model {
        llm.model = Some(m.clone());
    }
    llm
}

async fn start_cell(cx: &Where<'_>, spec: &ExperimentSpec, cell: &Cell, run_id: &str) -> anyhow::Result<ExitCode> {
    let dataset = load_dataset_named(&cell.dataset, cx.data_dir, DEFAULT_SPLIT_SEED, &stderr_line)?;
    let selected = select_tasks(&dataset, &[], spec.limit, spec.exclude_broken)?;
    let llm = llm_for(cx, cell);
    let settings = Configured::load(cx.config, &cx.home.root, &llm)?.settings(spec.concurrency, spec.max_iters);
    let plan = RunPlan {
        excluded_broken: selected.excluded_broken,
        allow_flag: spec.allow_flag,
        ..plan_for(cell, run_id)?
    };
    let prepared = new_run(cx.home, &settings, &plan, dataset, selected.tasks, &stderr_line).await?;
    execute(prepared, PrinterMode::Progress, &Front::default()).await
}

async fn resume_cell(cx: &Where<'_>, cell: &Cell, run_id: &str) -> anyhow::Result<ExitCode> {
    let llm = llm_for(cx, cell);
    let from = ResumeFrom {
        configured: Configured::load(cx.config, &cx.home.root, &llm)?,
        concurrency: None,
    };
    let prepared = resume(cx.home, from, &plan_for(cell, run_id)?, run_id, &stderr_line).await?;
    execute(prepared, PrinterMode::Progress, &Front::default()).await
}
