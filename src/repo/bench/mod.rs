//! `rgd bench repo`: retrieval measured on real projects no one here wrote. Pinned, hash-checked
//! source distributions from PyPI are unpacked and indexed; for each library function with a
//! docstring whose body uses names the project defines, the body counts as blank (its own chunk,
//! its outgoing edges and its text are left out of every stream) and the gold context is those
//! names. Reported per stream alone, for the fused streams and with the graph: recall@5 and
//! recall@10 of the gold context, index time and size per 10k lines, query latency.

pub mod isolation;
pub mod locate;
pub mod real;
pub mod verdicts;

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::repo::index::chunks::ChunkKind;
use crate::repo::index::retrieve::{Query, Stream};
use crate::repo::index::{Embed, RepoIndex};
use crate::retrieval::Embedder;

/// A project: its PyPI name, version, the sdist's sha256 and licence.
pub struct Project {
    pub name: &'static str,
    pub version: &'static str,
    pub sha256: &'static str,
    pub licence: &'static str,
}

/// Pure-Python libraries with their own test suites, chosen for permissive licences.
pub const PROJECTS: [Project; 6] = [
    Project {
        name: "more-itertools",
        version: "11.2.1",
        sha256: "cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63",
        licence: "MIT",
    },
    Project {
        name: "toolz",
        version: "1.2.0",
        sha256: "9667a038e9d6ecba37995e26cb2f59ec6420b6ad8dd9677de59db9b956b08490",
        licence: "BSD-3-Clause",
    },
    Project {
        name: "boltons",
        version: "26.2.0",
        sha256: "d39cfd15c1a1c3bd4d705c82252fa9edb8e4f5e8cc039f8e39afac7b1b47e92c",
        licence: "BSD-3-Clause",
    },
    Project {
        name: "cachetools",
        version: "8.0.1",
        sha256: "deb1d376d4d28c2f33f3e3058043b005e0af75c35c094bd54053e27d2906ad95",
        licence: "MIT",
    },
    Project {
        name: "sortedcontainers",
        version: "2.4.0",
        sha256: "25caa5a06cc30b6b83d11423433f65d1f9d76c4c6a0c90e3379eaa43b9bfdb88",
        licence: "Apache-2.0",
    },
    Project {
        name: "inflection",
        version: "0.5.1",
        sha256: "1a29730d366e996aaacffb2f1f1cb9593dc38e2ddd30c91250c6dde09ea9b417",
        licence: "MIT",
    },
];

/// Projects kept apart: chosen after every weight of the retrieval was set on `PROJECTS`, and
/// never used to choose one (`rgd bench repo --held-out`), so their numbers say what to expect on
/// a project the weights were not fitted to.
pub const HELD_OUT: [Project; 4] = [
    Project {
        name: "click",
        version: "8.1.7",
        sha256: "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de",
        licence: "BSD-3-Clause",
    },
    Project {
        name: "funcy",
        version: "2.0",
        sha256: "3963315d59d41c6f30c04bc910e10ab50a3ac4a225868bfa96feed133df075cb",
        licence: "BSD-3-Clause",
    },
    Project {
        name: "jmespath",
        version: "1.0.1",
        sha256: "90261b206d6defd58fdd5e85f478bf633a2901798906be2ad389150c5c60edbe",
        licence: "MIT",
    },
    Project {
        name: "sqlparse",
        version: "0.5.3",
        sha256: "09f67787f56a0b16ecdbde1bfc7f5d9c3371ca683cfeaa8e6ff60b4807ec9272",
        licence: "BSD-3-Clause",
    },
];

/// The projects of `set` a suite bench measures: fetched (`fetch`), only those named in `only`
/// when it names any, each with the name it is reported by ("toolz 1.2.0") and its folder.
pub fn chosen(cache: &Path, set: &'static [Project], only: &[String], report: &dyn Fn(&str)) -> anyhow::Result<Vec<(String, PathBuf)>> {
    Ok(fetch(cache, set, report)?
        .into_iter()
        .filter(|(project, _)| only.is_empty() || only.iter().any(|n| n == project.name))
        .map(|(project, dir)| (format!("{} {}", project.name, project.version), dir))
        .collect())
}

/// Whether `file` (relative to a project's root) is the project's own library code: not a test,
/// not its setup script, not its documentation. What the benches plant faults in or align.
pub fn is_library_file(file: &str) -> bool {
    !crate::repo::index::chunks::is_test_file(file) && !file.ends_with("setup.py") && !file.starts_with("doc")
}

/// Whether a project's source distribution ships its tests: a `test*` file among its Python
/// `files` (`index::python_files`) that are test files.
pub fn ships_tests(files: &[String]) -> bool {
    files
        .iter()
        .any(|f| crate::repo::index::chunks::is_test_file(f) && f.rsplit('/').next().is_some_and(|n| n.starts_with("test")))
}

/// The unpacked source of every project of `set`, fetched once into `cache` (pip, hash-checked).
pub fn fetch(cache: &Path, set: &'static [Project], report: &dyn Fn(&str)) -> anyhow::Result<Vec<(&'static Project, PathBuf)>> {
    let sdists = cache.join("sdists");
    let missing: Vec<&Project> = set.iter().filter(|p| !unpacked(cache, p).is_dir()).collect();
    if !missing.is_empty() {
        let requirements: String = missing
            .iter()
            .map(|p| format!("{}=={} --hash=sha256:{}\n", p.name, p.version, p.sha256))
            .collect();
        report(&format!("fetching {} source distributions from PyPI (once)", missing.len()));
        crate::assets::download_sdists(&requirements, &sdists).map_err(anyhow::Error::msg)?;
        for p in missing {
            let archive = std::fs::read_dir(&sdists)?
                .flatten()
                .map(|e| e.path())
                .find(|f| {
                    let n = f.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
                    n.starts_with(&p.name.replace('-', "_")) || n.starts_with(p.name)
                })
                .with_context(|| format!("pip did not download {}", p.name))?;
            unpack(&archive, &unpacked(cache, p))?;
        }
    }
    Ok(set.iter().map(|p| (p, unpacked(cache, p))).collect())
}

fn unpacked(cache: &Path, p: &Project) -> PathBuf {
    cache.join(format!("{}-{}", p.name, p.version))
}

/// Unpacks a `.tar.gz` whose members sit under one top directory, into `to` (through a temporary
/// directory, so a killed unpack is never taken for a finished one).
pub(crate) fn unpack(archive: &Path, to: &Path) -> anyhow::Result<()> {
    let part = to.with_extension("part");
    let _ = std::fs::remove_dir_all(&part);
    let mut bytes = Vec::new();
    std::fs::File::open(archive)?.read_to_end(&mut bytes)?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
    for entry in tar.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.into_owned();
        // Drop the top directory (`name-version/`); refuse anything that climbs out.
        let inner: PathBuf = path.components().skip(1).collect();
        if inner.as_os_str().is_empty() || inner.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            continue;
        }
        let dest = part.join(&inner);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if entry.header().entry_type().is_file() {
            entry.unpack(&dest)?;
        }
    }
    std::fs::rename(&part, to)?;
    Ok(())
}

/// One row of the table: a way to retrieve and its recall.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub name: String,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    /// Of everything the way returns (at most 30 a stream): how much of the gold it holds.
    pub recall_at_30: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectStats {
    pub name: String,
    pub licence: String,
    pub files: usize,
    pub lines: usize,
    pub chunks: usize,
    pub targets: usize,
    pub index_seconds: f64,
    pub index_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub projects: Vec<ProjectStats>,
    pub targets: usize,
    pub rows: Vec<Row>,
    pub index_seconds_per_10k_lines: f64,
    pub index_mb_per_10k_lines: f64,
    pub query_ms_median: f64,
    pub query_ms_p95: f64,
    /// The cold-start row: a query's `prepare` and retrieval (vectors read from the cache), and
    /// the share of the project's chunks it gave vectors to, on average.
    pub cold_query_ms_median: f64,
    pub cold_embedded_share: f64,
}

/// The cold-start row's name.
pub const COLD_ROW: &str = "graph x3 + ensemble, cold: embeddings only where graph and BM25 reach";

/// The ways compared: a name, the streams, the graph's weight in the fusion, and how many
/// similar-requirement functions lend the graph their callees.
fn configurations() -> Vec<(String, Vec<Stream>, f32, usize)> {
    use crate::repo::index::retrieve::{GRAPH_WEIGHT, SIMILAR};
    let ensemble = vec![Stream::Bm25, Stream::Code, Stream::Description];
    let mut with_graph = ensemble.clone();
    with_graph.insert(0, Stream::Graph);
    vec![
        ("graph alone".into(), vec![Stream::Graph], 1.0, SIMILAR),
        ("bm25 alone".into(), vec![Stream::Bm25], 1.0, SIMILAR),
        ("code embeddings alone".into(), vec![Stream::Code], 1.0, SIMILAR),
        ("description embeddings alone".into(), vec![Stream::Description], 1.0, SIMILAR),
        ("ensemble (bm25 + code + description)".into(), ensemble, 1.0, SIMILAR),
        ("graph + ensemble".into(), with_graph.clone(), 1.0, SIMILAR),
        (
            "graph x3 + ensemble, no similar-requirement edges".into(),
            with_graph.clone(),
            GRAPH_WEIGHT,
            0,
        ),
        ("graph x3 + ensemble".into(), with_graph, GRAPH_WEIGHT, SIMILAR),
    ]
}

/// The library functions of a project that make a target: in no test or doc directory, with a
/// docstring, using at least one name the project defines. Returns (chunk, gold chunks).
pub fn targets(index: &RepoIndex) -> Vec<(usize, HashSet<usize>)> {
    let g = &index.graph;
    g.chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.kind, ChunkKind::Function | ChunkKind::Method))
        .filter(|(_, c)| {
            let f = c.file.to_lowercase();
            !(f.starts_with("test") || f.contains("/test") || f.starts_with("doc") || f.contains("/doc") || f.contains("conftest"))
        })
        .filter(|(_, c)| c.docstring.as_deref().is_some_and(|d| d.len() >= 10))
        .filter_map(|(i, _)| {
            let gold: HashSet<usize> = g.callees(i).filter(|&t| t != i).collect();
            (!gold.is_empty()).then_some((i, gold))
        })
        .collect()
}

/// The benchmark's query for `target`: its body blank, 30 pieces a stream.
fn blanked(index: &RepoIndex, target: usize, streams: Vec<Stream>, similar: usize) -> Query {
    Query {
        target,
        text: index.requirement(target),
        body_known: false,
        augmented: None,
        streams,
        depth: 30,
        similar,
        tests: false,
    }
}

/// Every stream but the augmented one (which asks a model).
fn all_streams() -> Vec<Stream> {
    vec![Stream::Graph, Stream::Bm25, Stream::Code, Stream::Description]
}

/// Adds to `hits` the share of `gold` among the first 5, 10 and 30 pieces.
fn add_recall(hits: &mut [f64; 3], pieces: &[crate::repo::index::retrieve::Piece], gold: &HashSet<usize>) {
    for (h, k) in hits.iter_mut().zip([5, 10, 30]) {
        *h += pieces.iter().take(k).filter(|p| gold.contains(&p.chunk)).count() as f64 / gold.len() as f64;
    }
}

/// A row of recalls summed over `n` targets.
fn row(name: &str, hits: &[f64; 3], n: usize) -> Row {
    let n = n.max(1) as f64;
    Row {
        name: name.to_string(),
        recall_at_5: hits[0] / n,
        recall_at_10: hits[1] / n,
        recall_at_30: hits[2] / n,
    }
}

/// Runs the benchmark on every project (fetched into `cache`).
pub fn run(
    home_root: &Path,
    cache: &Path,
    set: &'static [Project],
    embedder: Arc<Embedder>,
    warm: bool,
    report: &dyn Fn(&str),
) -> anyhow::Result<BenchReport> {
    let projects = fetch(cache, set, report)?;
    let configs = configurations();
    // One more row than configurations: graph x3 + ensemble from a cold start.
    let mut hits = vec![[0.0f64; 3]; configs.len() + 1];
    let (mut cold_latencies, mut cold_share) = (Vec::new(), 0.0f64);
    let mut stats = Vec::new();
    let mut latencies = Vec::new();
    let mut total_targets = 0;
    for (project, dir) in projects {
        report(&format!("indexing {} {}", project.name, project.version));
        // Indexed from nothing (the time is the cold cost), unless warm.
        if !warm {
            let _ = std::fs::remove_dir_all(crate::repo::index::index_dir(home_root, &dir)?);
        }
        let (mut index, r) = RepoIndex::build(home_root, &dir, embedder.clone(), Embed::All, &|_, _, _| {})?;
        let found = targets(&index);
        if found.is_empty() {
            bail!("{}: no function to measure on", project.name);
        }
        report(&format!(
            "{}: {} files, {} lines, {} chunks, {} targets; indexed in {:.1}s",
            project.name,
            r.files,
            r.lines,
            r.chunks,
            found.len(),
            r.seconds
        ));
        for (target, gold) in &found {
            for (n, (_, streams, weight, similar)) in configs.iter().enumerate() {
                let q = blanked(&index, *target, streams.clone(), *similar);
                let started = Instant::now();
                let pieces = index.retrieve(&q, *weight)?;
                if n + 1 == configs.len() {
                    latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                }
                add_recall(&mut hits[n], &pieces, gold);
            }
        }
        // Cold start: each target from an index without vectors, as on a project never indexed
        // (`Embed::Ready`): `prepare` gives vectors to the chunks graph and BM25 reach (read
        // from the cache here: the vectors it would embed), and only those are compared.
        let db = crate::repo::index::open_db(&index.dir)?;
        for (target, gold) in &found {
            index.forget_vectors();
            let q = blanked(&index, *target, all_streams(), crate::repo::index::retrieve::SIMILAR);
            let started = Instant::now();
            let ready = index.prepare_in(&db, &q)?;
            let pieces = index.retrieve(&q, crate::repo::index::retrieve::GRAPH_WEIGHT)?;
            cold_latencies.push(started.elapsed().as_secs_f64() * 1000.0);
            cold_share += ready.embedded as f64 / ready.chunks.max(1) as f64;
            add_recall(&mut hits[configs.len()], &pieces, gold);
        }
        drop(db);
        total_targets += found.len();
        stats.push(ProjectStats {
            name: format!("{} {}", project.name, project.version),
            licence: project.licence.into(),
            files: r.files,
            lines: r.lines,
            chunks: r.chunks,
            targets: found.len(),
            index_seconds: r.seconds,
            index_bytes: r.bytes,
        });
    }
    let pct = |latencies: &mut Vec<f64>, q: f64| {
        latencies.sort_by(f64::total_cmp);
        latencies
            .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let mut names: Vec<String> = configs.into_iter().map(|(name, ..)| name).collect();
    names.push(COLD_ROW.into());
    let lines: usize = stats.iter().map(|s| s.lines).sum();
    let per10k = 10_000.0 / lines.max(1) as f64;
    Ok(BenchReport {
        index_seconds_per_10k_lines: stats.iter().map(|s| s.index_seconds).sum::<f64>() * per10k,
        index_mb_per_10k_lines: stats.iter().map(|s| s.index_bytes).sum::<u64>() as f64 / 1e6 * per10k,
        projects: stats,
        targets: total_targets,
        rows: names
            .iter()
            .enumerate()
            .map(|(n, name)| row(name, &hits[n], total_targets))
            .collect(),
        query_ms_median: pct(&mut latencies, 0.5),
        query_ms_p95: pct(&mut latencies, 0.95),
        cold_query_ms_median: pct(&mut cold_latencies, 0.5),
        cold_embedded_share: cold_share / total_targets.max(1) as f64,
    })
}

/// The model that the LLM stages ask, and how many targets they are measured on.
pub struct ModelStages<'a> {
    pub model: &'a dyn crate::llm::ChatModel,
    pub params: &'a crate::llm::CallParams,
    pub prompts: &'a crate::agents::Prompts,
    pub sample: usize,
}

/// The stages that ask a model, on a sample of the targets (spread evenly over all of them, in
/// project order): RepoRift's augmentation, qodo's rerank of the first 20, and both, against graph
/// x3 + ensemble on the same sample. A stage whose call fails leaves that target's pieces as
/// they were (counted in `failed`).
#[derive(Debug, Clone, Serialize)]
pub struct StagesReport {
    pub model: String,
    pub sample: usize,
    pub rows: Vec<Row>,
    /// Calls that failed or answered nothing usable, of `calls`.
    pub failed: usize,
    pub calls: usize,
    pub seconds_per_call: f64,
}

pub async fn run_model_stages(
    home_root: &Path,
    cache: &Path,
    embedder: Arc<Embedder>,
    m: ModelStages<'_>,
    report: &dyn Fn(&str),
) -> anyhow::Result<StagesReport> {
    use crate::repo::index::retrieve::GRAPH_WEIGHT;
    let projects = fetch(cache, &PROJECTS, report)?;
    let mut indexes = Vec::new();
    for (project, dir) in projects {
        report(&format!("indexing {} {} (incremental)", project.name, project.version));
        let (index, _) = RepoIndex::build(home_root, &dir, embedder.clone(), Embed::All, &|_, _, _| {})?;
        let found = targets(&index);
        indexes.push((index, found));
    }
    let all: Vec<(usize, usize)> = indexes
        .iter()
        .enumerate()
        .flat_map(|(p, (_, found))| (0..found.len()).map(move |t| (p, t)))
        .collect();
    let step = (all.len() / m.sample.max(1)).max(1);
    let picked: Vec<(usize, usize)> = all.iter().step_by(step).take(m.sample).copied().collect();
    let names = [
        "graph x3 + ensemble",
        "+ augmented (RepoRift)",
        "+ rerank of the first 20 (qodo)",
        "+ augmented + rerank",
    ];
    let mut hits = [[0.0f64; 3]; 4];
    let (mut calls, mut failed, mut call_seconds) = (0usize, 0usize, 0.0f64);
    for (n, &(p, t)) in picked.iter().enumerate() {
        let (index, found) = &indexes[p];
        let (target, gold) = &found[t];
        report(&format!("[{}/{}] {}", n + 1, picked.len(), index.graph.chunks[*target].id));
        let mut q = blanked(index, *target, all_streams(), crate::repo::index::retrieve::SIMILAR);
        let base = index.retrieve(&q, GRAPH_WEIGHT)?;
        let started = Instant::now();
        calls += 1;
        let augmented = match crate::repo::index::llm::augment(m.model, m.params, m.prompts, index, *target).await {
            Ok(text) => {
                q.augmented = Some(text);
                q.streams.push(Stream::Augmented);
                index.retrieve(&q, GRAPH_WEIGHT)?
            }
            Err(e) => {
                report(&format!("  augment failed: {e:#}"));
                failed += 1;
                base.clone()
            }
        };
        let mut reranked = Vec::new();
        for pieces in [&base, &augmented] {
            calls += 1;
            reranked.push(
                match crate::repo::index::llm::rerank(m.model, m.params, m.prompts, index, *target, pieces.clone(), 20).await {
                    Ok(r) => {
                        // A rerank that picked nothing left the order as it was: no answer to use.
                        if r.iter().all(|p| !p.found_by.iter().any(|f| f.stream == Stream::Rerank)) {
                            failed += 1;
                        }
                        r
                    }
                    Err(e) => {
                        report(&format!("  rerank failed: {e:#}"));
                        failed += 1;
                        pieces.clone()
                    }
                },
            );
        }
        call_seconds += started.elapsed().as_secs_f64();
        let both = reranked.pop().unwrap_or_default();
        let rerank = reranked.pop().unwrap_or_default();
        for (i, pieces) in [&base, &augmented, &rerank, &both].into_iter().enumerate() {
            add_recall(&mut hits[i], pieces, gold);
        }
    }
    Ok(StagesReport {
        model: m.params.model.clone(),
        sample: picked.len(),
        rows: names
            .iter()
            .enumerate()
            .map(|(i, name)| row(name, &hits[i], picked.len()))
            .collect(),
        failed,
        calls,
        seconds_per_call: call_seconds / calls.max(1) as f64,
    })
}

/// The bench's report: a row per project, the retrieval rows, index and query costs.
pub fn table(report: &BenchReport) -> Vec<String> {
    let mut out = Vec::new();
    out.push("| project | licence | files | lines | chunks | targets | index s | index MB |".to_string());
    out.push("| --- | --- | --- | --- | --- | --- | --- | --- |".to_string());
    for p in &report.projects {
        out.push(format!(
            "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} |",
            p.name,
            p.licence,
            p.files,
            p.lines,
            p.chunks,
            p.targets,
            p.index_seconds,
            p.index_bytes as f64 / 1e6
        ));
    }
    out.push(format!(
        "\n{} targets (function bodies blanked; gold: the project names each body used)\n",
        report.targets
    ));
    out.extend(rows_table(&report.rows));
    out.push(format!(
        "\nindex: {:.1} s and {:.1} MB per 10k lines (cold, embeddings included); query (graph x3 + ensemble): median {:.1} ms, p95 {:.1} ms",
        report.index_seconds_per_10k_lines, report.index_mb_per_10k_lines, report.query_ms_median, report.query_ms_p95
    ));
    out.push(format!(
        "cold start (last row): each query gave vectors to {:.1}% of its project's chunks on average; median {:.1} ms with those vectors cached (on a cold project they are embedded first: `rgd context` says how long)",
        report.cold_embedded_share * 100.0,
        report.cold_query_ms_median
    ));
    out
}

/// Recall of each retrieval, one row each.
pub fn rows_table(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    out.push("| retrieval | recall@5 | recall@10 | recall@30 |".to_string());
    out.push("| --- | --- | --- | --- |".to_string());
    for r in rows {
        out.push(format!(
            "| {} | {:.3} | {:.3} | {:.3} |",
            r.name, r.recall_at_5, r.recall_at_10, r.recall_at_30
        ));
    }
    out
}
