//! `rgd index DIR`: a project's chunks, code graph, BM25 index and embeddings. Kept under
//! `$RGD_HOME/repos/<key>/` (never in the project): a sled database of each file's content hash
//! and parsed module, and of every embedding by the hash of the text embedded, so indexing again
//! re-parses only changed files and embeds only new text. The graph and the BM25 index (tantivy,
//! in memory) are derived from the modules on every open: a few hundred milliseconds for 10k chunks.

pub mod check;
pub mod chunks;
pub mod graph;
pub mod lexical;
pub mod llm;
pub mod render;
pub mod retrieve;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::repo::index::chunks::{Chunk, ChunkKind, Module, cut};
use crate::repo::index::graph::Graph;
use crate::retrieval::Embedder;
use crate::retrieval::bm25::{Bm25, split_identifiers};

/// Directories that are never the project's own code.
const SKIPPED_DIRS: [&str; 12] = [
    ".git",
    ".hg",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "__pycache__",
    "node_modules",
    "build",
    "dist",
    "site-packages",
    ".mypy_cache",
];

/// What an indexing pass did.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    pub files: usize,
    /// Files parsed in this pass (new or changed); the rest were reused.
    pub parsed: usize,
    /// Files that do not parse: path and the line of the first error.
    pub failed: Vec<(String, usize)>,
    /// Files left out before parsing: path and why (unreadable, too large, binary).
    #[serde(default)]
    pub skipped: LeftOut,
    pub removed: usize,
    pub chunks: usize,
    pub lines: usize,
    pub edges: usize,
    /// Texts embedded in this pass (the rest came from the cache).
    pub embedded: usize,
    /// Texts not embedded yet (`Embed::Ready` on a cold project): a query embeds those of its
    /// neighbourhood; `rgd index` embeds them all.
    #[serde(default)]
    pub pending: usize,
    pub seconds: f64,
    /// The index directory's size on disk.
    pub bytes: u64,
    /// Chunks the model described in this pass (`--describe`), and those it failed to.
    pub described: usize,
    pub describe_failed: usize,
}

/// How much of a project's text an index build embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embed {
    /// Every text a full index holds (`rgd index`, the benchmarks).
    All,
    /// The cached vectors, and the missing texts only when they are at most `EAGER_TEXTS` (a
    /// changed file): a cold project starts from its syntax tree, graph and BM25, and a query
    /// embeds what its neighbourhood needs (`RepoIndex::prepare`).
    Ready,
}

/// What `RepoIndex::fill` did: texts embedded, and texts left without a vector (more were
/// missing than it was to embed).
pub(super) struct Filled {
    pub embedded: usize,
    pub missing: usize,
}

/// Missing texts `Embed::Ready` still embeds at once (about a second).
pub const EAGER_TEXTS: usize = 256;

/// Texts embedded at once, at most: sorted by length, a batch's texts are about as long as each
/// other, and a batch of long ones holds fewer, so that it pads to at most `BATCH_TOKENS` tokens
/// (what ONNX Runtime's buffers grow to, and keep, is a batch's padded size).
const EMBED_BATCH: usize = 32;
const BATCH_TOKENS: usize = 2048;
/// The embedding model's window (`memory::embed`): a longer text counts as this many tokens.
const WINDOW_TOKENS: usize = 256;

/// Texts sorted by length cut into batches of at most `EMBED_BATCH` texts and, padded to the
/// last (longest) one, about `BATCH_TOKENS` tokens (a token is taken as 3 characters: code has
/// many short ones).
fn batches<'a>(sorted: &'a [&'a str]) -> Vec<&'a [&'a str]> {
    let tokens = |t: &str| (t.len() / 3 + 2).min(WINDOW_TOKENS);
    let mut out = Vec::new();
    let mut start = 0;
    for end in 1..=sorted.len() {
        let count = end - start;
        let full = count == EMBED_BATCH || count * tokens(sorted[end - 1]) >= BATCH_TOKENS;
        let next_too_big = sorted.get(end).is_some_and(|t| (count + 1) * tokens(t) > BATCH_TOKENS);
        if end == sorted.len() || full || next_too_big {
            out.push(&sorted[start..end]);
            start = end;
        }
    }
    out
}

/// Whether a chunk's code is embedded: the code stream returns neither modules nor test
/// functions (`rgd context --include-tests` embeds those when it asks).
pub fn needs_code_vector(c: &Chunk) -> bool {
    c.kind != ChunkKind::Module && !crate::repo::index::chunks::is_test_file(&c.file)
}

/// The chunker's version: a file parsed by another version is parsed again (what a chunk holds
/// may have changed even though the file did not).
const CHUNKER: u32 = 2;

/// What the last indexing pass left in the database (`index.json`, checksummed): a database
/// holding fewer records lost some (`rgd index --verify`).
pub(super) const BUILT: &str = "index.json";

#[derive(Serialize, Deserialize)]
pub(super) struct Built {
    pub(super) files: usize,
    pub(super) vectors: usize,
}

#[derive(Serialize, Deserialize)]
pub(super) struct FileRecord {
    #[serde(default)]
    chunker: u32,
    pub(super) sha256: String,
    module: Option<Module>,
    /// Line of the first syntax error, when it does not parse.
    error_line: Option<usize>,
}

/// The text a chunk's description vector is made from: its signature, class and docstring, and
/// the model's description of it when `rgd index --describe` has written one.
pub fn description(c: &Chunk) -> String {
    description_with(c, None)
}

fn description_with(c: &Chunk, written: Option<&str>) -> String {
    let mut s = String::new();
    if let Some(h) = &c.class_header {
        s.push_str(h);
        s.push(' ');
    }
    s.push_str(&c.signature);
    if let Some(d) = &c.docstring {
        s.push('\n');
        s.push_str(d);
    }
    if let Some(w) = written {
        s.push('\n');
        s.push_str(w);
    }
    s
}

/// The key a written description is kept under: the chunk's code, so an unchanged chunk keeps it.
pub fn code_key(c: &Chunk) -> Vec<u8> {
    hash(&c.code)
}

/// The chunks of an index that have no written description yet.
pub fn undescribed(index: &RepoIndex) -> anyhow::Result<Vec<usize>> {
    let db = open_db(&index.dir)?;
    let tree = db.open_tree("descriptions")?;
    let mut out = Vec::new();
    for (i, c) in index.graph.chunks.iter().enumerate() {
        if c.kind != ChunkKind::Module && !tree.contains_key(code_key(c))? {
            out.push(i);
        }
    }
    Ok(out)
}

/// Keeps written descriptions (by code key); the next build embeds them.
pub fn store_descriptions(dir: &Path, written: &[(Vec<u8>, String)]) -> anyhow::Result<()> {
    let db = open_db(dir)?;
    let tree = db.open_tree("descriptions")?;
    for (key, text) in written {
        tree.insert(key.as_slice(), text.as_bytes())?;
    }
    db.flush()?;
    Ok(())
}

pub(super) fn open_db(dir: &Path) -> anyhow::Result<sled::Db> {
    sled_db(dir).map_err(|e| opening_error(dir, e))
}

fn sled_db(dir: &Path) -> sled::Result<sled::Db> {
    crate::sled_open::open(sled::Config::new().cache_capacity(32 << 20), &dir.join("db"))
}

fn opening_error(dir: &Path, e: sled::Error) -> anyhow::Error {
    match e {
        sled::Error::Corruption { .. } => anyhow::anyhow!(
            "the index at {} is damaged (its database holds corrupted data); `rgd index PROJECT` rebuilds it from the project",
            dir.display()
        ),
        e => anyhow::Error::new(e).context(format!("opening the index at {} (is another rgd using it?)", dir.display())),
    }
}

/// The index's database for an indexing pass: a damaged one is moved aside (`db.damaged-<time>`)
/// and made again from the project, and said so; the project is the index's source of truth.
fn open_db_for_build(dir: &Path) -> anyhow::Result<sled::Db> {
    match sled_db(dir) {
        Err(sled::Error::Corruption { .. }) => {
            let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S").to_string();
            let aside = crate::checked::move_aside(dir, "db", &stamp)?;
            tracing::warn!("the index at {} was damaged: rebuilt from the project", dir.display());
            eprintln!(
                "the index at {} was damaged (kept as {}); it is rebuilt from the project",
                dir.display(),
                aside.map_or_else(|| "nothing".to_string(), |p| p.display().to_string())
            );
            open_db(dir)
        }
        opened => opened.map_err(|e| opening_error(dir, e)),
    }
}

/// What BM25 reads of a chunk: its name and identifiers as words, and its docstring.
pub(super) fn bm25_text(c: &Chunk) -> String {
    format!(
        "{} {} {}",
        split_identifiers(&c.name),
        split_identifiers(&c.code),
        c.docstring.as_deref().unwrap_or("")
    )
}

fn hash(text: &str) -> Vec<u8> {
    Sha256::digest(text.as_bytes()).to_vec()
}

fn vector_from(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

pub struct RepoIndex {
    pub root: PathBuf,
    pub dir: PathBuf,
    pub graph: Graph,
    /// Each module's import statements, by file (the context a chunk is read in).
    pub imports: HashMap<String, String>,
    /// Per chunk: the embedding of its code, and of its description.
    pub code_vectors: Vec<Vec<f32>>,
    pub description_vectors: Vec<Vec<f32>>,
    bm25: Bm25,
    pub embedder: Arc<Embedder>,
}

/// Where a project's index lives: `$RGD_HOME/repos/<first 16 hex of sha256(canonical path)>`.
pub fn index_dir(home_root: &Path, project: &Path) -> anyhow::Result<PathBuf> {
    let canonical = project
        .canonicalize()
        .with_context(|| format!("{}: no such directory", project.display()))?;
    let key = hex::encode(Sha256::digest(canonical.display().to_string().as_bytes()));
    Ok(home_root.join("repos").join(&key[..16]))
}

/// Every file and directory of a project but version control, virtual environments, caches,
/// build output and package metadata (`*.egg-info`), in a stable order: what the index reads.
pub fn project_walk(root: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    walk(root, false)
}

/// `project_walk` with the package metadata: what a copy the project's tests run in needs. A
/// project installed in place keeps its `*.egg-info` beside its code, and `importlib.metadata`
/// reads its entry points from there (markdown finds its extensions by name that way): without
/// it, tests that pass in the project fail in the copy.
pub fn copy_walk(root: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    walk(root, true)
}

fn walk(root: &Path, metadata: bool) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    walkdir::WalkDir::new(root).sort_by_file_name().into_iter().filter_entry(move |e| {
        let name = e.file_name().to_string_lossy();
        let skipped = SKIPPED_DIRS.contains(&name.as_ref()) || (!metadata && name.ends_with(".egg-info"));
        !(e.file_type().is_dir() && e.depth() > 0 && skipped)
    })
}

/// The project's files (what `project_walk` reads), relative and `/`-separated, sorted; a place
/// the walk cannot read is an error (what must be complete, such as the files a copy withholds,
/// is built from this). Symbolic links are not followed.
pub fn project_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let walked = walk_files(root)?;
    if let Some((path, why)) = walked.unreadable.first() {
        bail!("reading {}: {path}: {why}", root.display());
    }
    Ok(walked.files)
}

/// What a walk of the project found: files, places it could not read (path and why), and
/// symbolic links (not followed).
struct Walked {
    files: Vec<String>,
    unreadable: Vec<(String, String)>,
    links: Vec<String>,
}

fn walk_files(root: &Path) -> anyhow::Result<Walked> {
    anyhow::ensure!(root.is_dir(), "{}: not a directory", root.display());
    let relative = |p: &Path| p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
    let mut walked = Walked {
        files: Vec::new(),
        unreadable: Vec::new(),
        links: Vec::new(),
    };
    for entry in project_walk(root) {
        match entry {
            Ok(e) if e.file_type().is_file() => walked.files.push(relative(e.path())),
            Ok(e) if e.path_is_symlink() => walked.links.push(relative(e.path())),
            Ok(_) => {}
            Err(e) => walked.unreadable.push((e.path().map(relative).unwrap_or_default(), e.to_string())),
        }
    }
    Ok(walked)
}

/// The project's Python files, relative and `/`-separated, sorted.
pub fn python_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = project_files(root)?;
    files.retain(|f| f.ends_with(".py"));
    Ok(files)
}

/// Files left out of an index: path and why.
pub type LeftOut = Vec<(String, String)>;

/// What the index reads: the Python files; and what it leaves out, named in its report: places
/// the walk could not read, and Python files that are symbolic links (not followed: one may lead
/// out of the project, or loop).
fn indexed_files(root: &Path) -> anyhow::Result<(Vec<String>, LeftOut)> {
    let Walked {
        mut files,
        unreadable,
        links,
    } = walk_files(root)?;
    files.retain(|f| f.ends_with(".py"));
    let mut left_out: LeftOut = unreadable.into_iter().map(|(p, why)| (p, format!("unreadable: {why}"))).collect();
    for link in links.into_iter().filter(|l| l.ends_with(".py")) {
        let why = match std::fs::metadata(root.join(&link)) {
            Ok(_) => "a symbolic link: not followed (it may lead out of the project)".to_string(),
            Err(e) => format!("a symbolic link that leads nowhere or loops: {e}"),
        };
        left_out.push((link, why));
    }
    Ok((files, left_out))
}

/// A source file larger than this is left out: generated code (tables, vendored bundles) that no
/// function's context needs, and whose thousands of chunks would each be embedded.
const MAX_SOURCE_BYTES: u64 = 1 << 20;

/// A Python file's bytes, or why it is left out: unreadable (a symlink loop, no permission), over
/// `MAX_SOURCE_BYTES`, or holding a NUL byte (not text).
fn read_source(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("unreadable: {e}"))?;
    if meta.len() > MAX_SOURCE_BYTES {
        return Err(format!(
            "{:.1} MB, over the {} MB a source file may have (generated?)",
            meta.len() as f64 / 1e6,
            MAX_SOURCE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("unreadable: {e}"))?;
    if bytes.contains(&0) {
        return Err("holds a NUL byte: not Python source".into());
    }
    Ok(bytes)
}

/// The project's Python files and the places left out; an error when there are no files (said
/// before any work).
pub fn python_project(root: &Path) -> anyhow::Result<(Vec<String>, LeftOut)> {
    let (files, unreadable) = indexed_files(root)?;
    if files.is_empty() {
        bail!("{} holds no Python file: is it a Python project?", root.display());
    }
    Ok((files, unreadable))
}

fn dir_size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

impl RepoIndex {
    /// Indexes `root` (again: only what changed), then opens the index, embedding what `embed`
    /// says. `progress(done, total)` is called as files are read and texts embedded.
    pub fn build(
        home_root: &Path,
        root: &Path,
        embedder: Arc<Embedder>,
        embed: Embed,
        progress: &dyn Fn(&str, usize, usize),
    ) -> anyhow::Result<(RepoIndex, IndexReport)> {
        let started = Instant::now();
        let (files, mut skipped) = python_project(root)?;
        let dir = index_dir(home_root, root)?;
        std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
        let db = open_db_for_build(&dir)?;
        let file_tree = db.open_tree("files")?;
        db.insert("root", root.canonicalize()?.display().to_string().as_bytes())?;

        // Files: reuse what did not change.
        let mut modules = Vec::new();
        let (mut parsed, mut failed) = (0, Vec::new());
        for (n, file) in files.iter().enumerate() {
            progress("parsing files", n, files.len());
            let bytes = match read_source(&root.join(file)) {
                Ok(bytes) => bytes,
                Err(why) => {
                    skipped.push((file.clone(), why));
                    continue;
                }
            };
            let sha = hex::encode(Sha256::digest(&bytes));
            let known: Option<FileRecord> = file_tree.get(file)?.and_then(|v| serde_json::from_slice(&v).ok());
            let record = match known {
                Some(r) if r.sha256 == sha && r.chunker == CHUNKER => r,
                _ => {
                    parsed += 1;
                    let source = String::from_utf8_lossy(&bytes);
                    let record = match cut(file, &source) {
                        Ok(m) => FileRecord {
                            chunker: CHUNKER,
                            sha256: sha,
                            module: Some(m),
                            error_line: None,
                        },
                        Err(line) => FileRecord {
                            chunker: CHUNKER,
                            sha256: sha,
                            module: None,
                            error_line: Some(line),
                        },
                    };
                    file_tree.insert(file.as_bytes(), serde_json::to_vec(&record)?)?;
                    record
                }
            };
            match (record.module, record.error_line) {
                (Some(m), _) => modules.push(m),
                (None, line) => failed.push((file.clone(), line.unwrap_or(1))),
            }
        }
        let mut removed = 0;
        for key in file_tree.iter().keys() {
            let key = key?;
            let name = String::from_utf8_lossy(&key).into_owned();
            if files.binary_search(&name).is_err() {
                file_tree.remove(&key)?;
                removed += 1;
            }
        }
        let graph = Graph::build(&modules);
        let imports = modules.iter().map(|m| (m.file.clone(), m.import_text.clone())).collect();
        let lines = modules.iter().map(|m| m.lines).sum();
        drop(modules);
        let bm25 = Bm25::build(graph.chunks.iter().map(bm25_text).collect::<Vec<_>>().iter().map(String::as_str))?;
        let chunks = graph.chunks.len();
        let edges = graph.edges.len();
        let mut index = RepoIndex {
            root: root.to_path_buf(),
            dir: dir.clone(),
            code_vectors: vec![Vec::new(); chunks],
            description_vectors: vec![Vec::new(); chunks],
            graph,
            imports,
            bm25,
            embedder,
        };
        // Embeddings: by the hash of the text, so unchanged chunks are never embedded again.
        // What the cache holds is loaded; the rest is embedded now when `embed` asks it or when
        // it is little (a changed file), else when a query needs it (`prepare`).
        let all: Vec<usize> = (0..chunks).collect();
        let at_most = match embed {
            Embed::All => usize::MAX,
            Embed::Ready => EAGER_TEXTS,
        };
        let filled = index.fill(&db, &all, false, at_most, progress)?;
        db.flush()?;
        let left = Built {
            files: file_tree.len(),
            vectors: db.open_tree("vectors")?.len(),
        };
        drop(db);
        crate::checked::write_json(&dir.join(BUILT), &left)?;
        let report = IndexReport {
            files: files.len(),
            parsed,
            failed,
            skipped,
            removed,
            chunks,
            lines,
            edges,
            embedded: filled.embedded,
            pending: filled.missing,
            seconds: started.elapsed().as_secs_f64(),
            bytes: dir_size(&dir),
            described: 0,
            describe_failed: 0,
        };
        Ok((index, report))
    }

    /// Loads the vectors `chunks` lack from the cache and, when the cache lacks at most
    /// `at_most` texts, embeds those (and keeps them there). A chunk gets a code vector when the
    /// code stream may return it (`needs_code_vector`; a test's too with `tests`), and a
    /// description vector (its signature, docstring and any written description), which similar
    /// requirements compare.
    pub(super) fn fill(
        &mut self,
        db: &sled::Db,
        chunks: &[usize],
        tests: bool,
        at_most: usize,
        progress: &dyn Fn(&str, usize, usize),
    ) -> anyhow::Result<Filled> {
        let vector_tree = db.open_tree("vectors")?;
        let written_tree = db.open_tree("descriptions")?;
        // (chunk, code or description, text) for each vector a chunk lacks.
        let mut lacking: Vec<(usize, bool, String)> = Vec::new();
        for &i in chunks {
            let c = &self.graph.chunks[i];
            let wants_code = needs_code_vector(c) || (tests && c.kind != ChunkKind::Module);
            if wants_code && self.code_vectors[i].is_empty() {
                lacking.push((i, true, c.code.clone()));
            }
            if self.description_vectors[i].is_empty() {
                let written = written_tree.get(code_key(c))?.map(|v| String::from_utf8_lossy(&v).into_owned());
                lacking.push((i, false, description_with(c, written.as_deref())));
            }
        }
        // Each text once: cached, or wanted.
        let mut cached: HashMap<&str, Vec<f32>> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        let mut wanted: Vec<&str> = Vec::new();
        for (_, _, t) in &lacking {
            if !seen.insert(t.as_str()) {
                continue;
            }
            match vector_tree.get(hash(t))? {
                // A vector of another length than the model's is no vector: embedded again.
                Some(bytes) if bytes.len() == crate::retrieval::DIM * 4 => {
                    cached.insert(t, vector_from(&bytes));
                }
                _ => wanted.push(t),
            }
        }
        if wanted.len() > at_most {
            self.place(&lacking, &cached);
            return Ok(Filled {
                embedded: 0,
                missing: wanted.len(),
            });
        }
        // By length (ties in text order), so a batch pads its texts to about their own length.
        wanted.sort_unstable();
        wanted.sort_by_key(|t| t.len());
        let mut done = 0;
        for batch in batches(&wanted) {
            progress("embedding texts", done, wanted.len());
            done += batch.len();
            let vectors = self.embedder.embed(batch)?;
            let mut b = sled::Batch::default();
            for (t, v) in batch.iter().zip(vectors) {
                b.insert(hash(t), v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
                cached.insert(t, v);
            }
            vector_tree.apply_batch(b)?;
        }
        self.place(&lacking, &cached);
        Ok(Filled {
            embedded: wanted.len(),
            missing: 0,
        })
    }

    fn place(&mut self, lacking: &[(usize, bool, String)], vectors: &HashMap<&str, Vec<f32>>) {
        for (i, code, t) in lacking {
            if let Some(v) = vectors.get(t.as_str()) {
                match code {
                    true => self.code_vectors[*i] = v.clone(),
                    false => self.description_vectors[*i] = v.clone(),
                }
            }
        }
    }

    /// Whether every chunk has the vectors a full index gives it (else the embedding streams
    /// only see the chunks a query's `prepare` embedded).
    pub fn complete(&self) -> bool {
        self.graph
            .chunks
            .iter()
            .enumerate()
            .all(|(i, c)| !self.description_vectors[i].is_empty() && (!needs_code_vector(c) || !self.code_vectors[i].is_empty()))
    }

    /// Drops every vector, as a cold open on a large project leaves the index (the benchmark's
    /// cold-start row: each target then `prepare`s from nothing).
    pub fn forget_vectors(&mut self) {
        for v in self.code_vectors.iter_mut().chain(self.description_vectors.iter_mut()) {
            *v = Vec::new();
        }
    }

    /// How many chunks have their vectors (the embedding streams compare only these).
    pub fn embedded_chunks(&self) -> usize {
        self.description_vectors.iter().filter(|v| !v.is_empty()).count()
    }

    /// BM25 over the chunks' identifiers (split) and docstrings: (chunk, score), best first.
    pub fn bm25(&self, query: &str, k: usize) -> anyhow::Result<Vec<(usize, f32)>> {
        self.bm25.search(query, k)
    }

    /// Chunks by cosine to `query` among code or description vectors: (chunk, cosine), best first
    /// (a chunk without a code vector, a module or a test, is not among the code's).
    pub fn nearest(&self, query: &[f32], descriptions: bool, k: usize) -> Vec<(usize, f32)> {
        let vectors = if descriptions {
            &self.description_vectors
        } else {
            &self.code_vectors
        };
        let mut scored: Vec<(usize, f32)> = vectors
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.is_empty())
            .map(|(i, v)| (i, crate::retrieval::embed::dot(query, v)))
            .collect();
        let k = k.min(scored.len());
        if k == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(k - 1, |a, b| b.1.total_cmp(&a.1));
        scored.truncate(k);
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored
    }

    /// The chunk a target names: `path/to/mod.py::name` (or `Class.method`).
    pub fn target(&self, target: &str) -> anyhow::Result<usize> {
        let (file, name) = target
            .split_once("::")
            .with_context(|| format!("{target:?}: a target is path/to/mod.py::name (or ::Class.method)"))?;
        if let Some(i) = self.graph.index_of(target) {
            return Ok(i);
        }
        let in_file: Vec<&str> = self
            .graph
            .chunks
            .iter()
            .filter(|c| c.file == file && c.kind != ChunkKind::Module)
            .map(|c| c.name.as_str())
            .collect();
        if in_file.is_empty() {
            bail!("{file}: no such Python file in {} (or it does not parse)", self.root.display());
        }
        bail!(
            "{file} defines no `{name}` (it defines: {}{})",
            in_file.iter().take(12).copied().collect::<Vec<_>>().join(", "),
            if in_file.len() > 12 { ", ..." } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_long_texts_hold_fewer_and_every_text_is_in_one() {
        let short = "x = 1".to_string();
        let long = "y".repeat(3000);
        let mut texts: Vec<&str> = vec![short.as_str(); 70];
        texts.extend(vec![long.as_str(); 20]);
        let cut = batches(&texts);
        assert_eq!(cut.iter().map(|b| b.len()).sum::<usize>(), 90);
        assert!(cut.iter().all(|b| b.len() <= EMBED_BATCH));
        assert_eq!(cut[0].len(), EMBED_BATCH);
        // Padded to its last (longest) text, no batch is over 2048 tokens: 8 long ones at most.
        let sizes: Vec<usize> = cut.iter().map(|b| b.len()).collect();
        assert_eq!(sizes, [32, 32, 8, 8, 8, 2], "{sizes:?}");
        assert_eq!(cut[2].iter().filter(|t| t.len() == 3000).count(), 2);
    }
}
