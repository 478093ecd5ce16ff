//! `rgd index DIR`, `rgd context --repo DIR --target FILE::NAME` and `rgd bench repo`: a Python
//! project indexed, the context retrieved for one of its functions (with why each piece was
//! chosen), and retrieval measured on real projects.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::config::Configured;
use crate::launch::project::{Progress, RetrievalArgs, Wanted, guide_model, open, print_report, retrieve};
use crate::repo::index::Embed;
use crate::store::Home;

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The project's root directory
    pub dir: PathBuf,
    /// Have the Guide's model describe each chunk (once per version of its code; kept in the
    /// index) and embed that too
    #[arg(long)]
    pub describe: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
    /// Check the index instead of building it: every record read from a copy of its database
    /// and compared with the project; exit 1 when damaged (`rgd index DIR` then rebuilds it)
    #[arg(long, conflicts_with = "describe")]
    pub verify: bool,
    /// For --describe
    #[command(flatten)]
    pub llm: crate::config::LlmArgs,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The project's root directory
    #[arg(long)]
    pub repo: PathBuf,
    /// The function: path/to/mod.py::name or path/to/mod.py::Class.method
    #[arg(long)]
    pub target: String,
    /// Treat the target's body as blank (what the agents see when they write it anew)
    #[arg(long)]
    pub blank: bool,
    /// How many pieces
    #[arg(long, default_value_t = 10, value_parser = crate::validate::parse_count)]
    pub k: usize,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    /// Print the context block itself, as the agents get it, within --budget
    #[arg(long)]
    pub prompt: bool,
    /// Let test functions and test files be retrieved too (the agents never get them: tests are
    /// the specification, not code to imitate)
    #[arg(long)]
    pub include_tests: bool,
    /// Print JSON (one object with the pieces)
    #[arg(long)]
    pub json: bool,
    /// For --augment and --rerank
    #[command(flatten)]
    pub llm: crate::config::LlmArgs,
}

pub async fn index(home: &Home, args: IndexArgs, from: Configured<'_>) -> anyhow::Result<ExitCode> {
    if args.verify {
        let check = crate::repo::index::check::verify_index(&home.root, &args.dir)?;
        return super::print_check(args.json, &check, &check.line(), !check.damage.is_empty());
    }
    let (mut index, mut report) = open(home, &args.dir, Embed::All)?;
    if args.describe {
        let (model, params, prompts) = guide_model(&from)?;
        let todo = crate::repo::index::undescribed(&index)?;
        let progress = Progress::new();
        let (written, failed) = crate::repo::index::llm::describe(model.as_ref(), &params, &prompts, &index, &todo, &|done, total| {
            progress.set("describing", done, total)
        })
        .await?;
        progress.finish();
        crate::repo::index::store_descriptions(&index.dir, &written)?;
        let described = written.len();
        let first = report;
        (index, report) = open(home, &args.dir, Embed::All)?;
        // The pass as a whole: what the first build parsed, what both embedded.
        report.parsed = first.parsed;
        report.embedded += first.embedded;
        report.described = described;
        report.describe_failed = failed;
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_report(&report, &args.dir);
        println!("index in {}", index.dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn context(home: &Home, args: ContextArgs, from: Configured<'_>) -> anyhow::Result<ExitCode> {
    // A class is a target here too; whether it is one of the file's, the index says.
    crate::launch::project::check_target(&crate::launch::project::project_root(&args.repo)?, &args.target, false)?;
    let (mut index, report) = open(home, &args.repo, Embed::Ready)?;
    if !args.json {
        print_report(&report, &args.repo);
    }
    let target = index.target(&args.target)?;
    let k = args.k;
    let want = Wanted {
        target,
        blank: args.blank,
        k,
        tests: args.include_tests,
    };
    let ready = crate::launch::project::prepare(&mut index, &want, &args.retrieval)?;
    let pieces = retrieve(&index, want, &args.retrieval, &from, &|_| false).await?;
    if !args.json {
        eprintln!("retrieved with {}", ready.describe());
        eprintln!(
            "{}",
            if args.include_tests {
                "test functions and test files included (--include-tests): the agents never get them"
            } else {
                "test functions and test files left out, as for the agents (--include-tests shows them)"
            }
        );
    }
    let g = &index.graph;
    if args.prompt {
        let budget = args.retrieval.budget;
        let (text, used) = crate::repo::index::render::render_context(&index, target, &pieces[..pieces.len().min(k)], budget);
        print!("{text}");
        eprintln!(
            "{} of {} pieces in about {} of {budget} tokens",
            used.len(),
            k.min(pieces.len()),
            crate::repo::index::render::estimate_tokens(&text),
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        let shown: Vec<serde_json::Value> = pieces
            .iter()
            .take(k)
            .map(|p| {
                let c = &g.chunks[p.chunk];
                serde_json::json!({"id": c.id, "file": c.file, "start_line": c.start_line, "end_line": c.end_line,
                    "kind": c.kind, "score": p.score, "found_by": p.found_by})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"target": g.chunks[target].id, "pieces": shown, "embeddings": ready})
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("context for {} ({}):", g.chunks[target].id, g.chunks[target].signature);
    for (n, p) in pieces.iter().take(k).enumerate() {
        let c = &g.chunks[p.chunk];
        println!(
            "{:>2}. {}:{}-{}  {:?} {}  (fused {:.4})",
            n + 1,
            c.file,
            c.start_line,
            c.end_line,
            c.kind,
            c.name,
            p.score
        );
        for f in &p.found_by {
            println!("      {} #{}: {}", f.stream.name(), f.rank, f.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}
