//! Retrieval for a target function: each stream alone (switchable, for ablations) and their fusion.
//! - graph: the target's neighbourhood in the code graph (its class and the class's members, its
//!   bases, what its module imports from the project, its module's definitions, its callers, and
//!   its callees when it has a body), each candidate scored by its edge and by how like the
//!   target's requirement its own description is (CodeRAG's requirement-to-code mapping);
//! - bm25: identifiers (split) and docstrings against the target's signature and docstring;
//! - code / description: embedding of the requirement against chunks' code and descriptions;
//! - augmented: the same searches with an LLM-expanded query (RepoRift), when one is given.
//!
//! Streams are fused by reciprocal rank fusion, each piece keeping every reason it was chosen.

use std::collections::HashMap;

use serde::Serialize;

use crate::repo::index::chunks::ChunkKind;
use crate::repo::index::chunks::is_test_file;
use crate::repo::index::graph::EdgeKind;
use crate::repo::index::{RepoIndex, description, open_db};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Graph,
    Bm25,
    Code,
    Description,
    Augmented,
    /// Not a stream of its own: the model's choice among the fused pieces (`--rerank`), so not
    /// a value of `--streams`.
    #[value(skip)]
    Rerank,
}

impl Stream {
    pub fn name(self) -> &'static str {
        match self {
            Stream::Graph => "graph",
            Stream::Bm25 => "bm25",
            Stream::Code => "code",
            Stream::Description => "description",
            Stream::Augmented => "augmented",
            Stream::Rerank => "rerank",
        }
    }
}

/// The graph's weight when it is fused with the other streams: the best of 1, 3 and 5 on
/// `rgd bench repo` (chosen on that benchmark; there is no held-out set).
pub const GRAPH_WEIGHT: f32 = 3.0;

/// What the embedding streams of a retrieval compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Readiness {
    pub chunks: usize,
    /// Chunks with their vectors.
    pub embedded: usize,
    /// Every chunk has them (a full index).
    pub complete: bool,
}

impl Readiness {
    /// What a retrieval used, in words.
    pub fn describe(&self) -> String {
        if self.complete {
            format!("graph, BM25 and embeddings over all {} chunks", self.chunks)
        } else {
            format!(
                "graph and BM25 over all {} chunks, embeddings over the {} that graph and BM25 reach from the target (not every chunk is embedded yet: `rgd index` embeds the rest)",
                self.chunks, self.embedded
            )
        }
    }
}

/// One stream's answer, best first: (chunk, the stream's own score, why).
pub type Ranked = Vec<(usize, f32, String)>;

/// One retrieved chunk and why.
#[derive(Debug, Clone, Serialize)]
pub struct Piece {
    pub chunk: usize,
    /// The fused score (reciprocal ranks, weighted).
    pub score: f32,
    /// Per stream that found it: its rank (1-based), its own score and the reason.
    pub found_by: Vec<Found>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub stream: Stream,
    pub rank: usize,
    pub score: f32,
    pub reason: String,
}

/// What is asked: the target and how.
#[derive(Debug, Clone)]
pub struct Query {
    pub target: usize,
    /// The requirement: signature, class and docstring of the target.
    pub text: String,
    /// Use the target's own body (its callees): false when the body is blank or being rewritten.
    pub body_known: bool,
    /// An LLM's expansion of the requirement (RepoRift), embedded and searched as well.
    pub augmented: Option<String>,
    pub streams: Vec<Stream>,
    /// How many each stream returns before fusion.
    pub depth: usize,
    /// How many functions with the most similar requirements lend the graph their callees
    /// (`SIMILAR`; 0 for the ablation).
    pub similar: usize,
    /// Test functions and test files may be retrieved. Off by default: tests are the
    /// specification, not code to imitate, and left in they take the places of the helpers a
    /// target needs (in every stream, before fusion).
    pub tests: bool,
}

/// A stream's first hit this far ahead of its second is confident (BM25: this many times the
/// second's score; cosines: this much higher) ...
pub const CONFIDENT_BM25_RATIO: f32 = 2.0;
pub const CONFIDENT_COSINE_GAP: f32 = 0.1;
/// ... and fusion places it no lower than this (1-based): the other streams' agreement on their
/// own first hits may outvote it, their noise may not bury it.
pub const CONFIDENT_PLACE: usize = 3;

/// The repair context's first places ...
pub const TOP: usize = 5;
/// ... of which one class's methods may hold this many while BM25's first hit waits below them:
/// the graph (weighted 3) lists the target's class members together, and four of them would push
/// out the one function BM25 found by its name and docstring.
pub const SIBLINGS_IN_TOP: usize = 3;

/// Moves `hit` (BM25's first) up to place `TOP` when it is below it and more than
/// `SIBLINGS_IN_TOP` of the first `TOP` are methods of one class (`class_of`).
fn unbury(fused: &mut Vec<Piece>, hit: usize, class_of: &dyn Fn(usize) -> Option<String>) {
    let Some(at) = fused.iter().position(|p| p.chunk == hit).filter(|&at| at >= TOP) else {
        return;
    };
    let mut per_class: HashMap<String, usize> = HashMap::new();
    for p in &fused[..TOP] {
        if let Some(class) = class_of(p.chunk) {
            *per_class.entry(class).or_default() += 1;
        }
    }
    if per_class.values().all(|&n| n <= SIBLINGS_IN_TOP) {
        return;
    }
    let mut piece = fused.remove(at);
    if let Some(f) = piece.found_by.iter_mut().find(|f| f.stream == Stream::Bm25) {
        f.reason.push_str(&format!(
            " (BM25's first: kept in the first {TOP}, above the members of one class that filled them)"
        ));
    }
    fused.insert(TOP - 1, piece);
}

/// Whether `q` may return tests by their code (tests get code vectors only then).
fn wants_test_code(q: &Query) -> bool {
    q.tests && q.streams.iter().any(|s| matches!(s, Stream::Code | Stream::Augmented))
}

/// Whether `list`'s first hit is confident, by its stream's own scores.
fn confident(stream: Stream, list: &Ranked) -> bool {
    let (Some(first), second) = (list.first(), list.get(1)) else {
        return false;
    };
    let second = second.map_or(0.0, |s| s.1);
    match stream {
        Stream::Bm25 => first.1 > 0.0 && first.1 >= CONFIDENT_BM25_RATIO * second,
        Stream::Code | Stream::Description => first.1 - second >= CONFIDENT_COSINE_GAP,
        Stream::Graph | Stream::Augmented | Stream::Rerank => false,
    }
}

/// How many functions with the most similar requirements lend the graph their callees.
pub const SIMILAR: usize = 5;

/// The graph stream's candidates, each with its weight and why; a candidate found twice keeps
/// its heaviest reason.
struct Candidates<'a> {
    index: &'a RepoIndex,
    q: &'a Query,
    found: HashMap<usize, (f32, String)>,
}

impl Candidates<'_> {
    fn add(&mut self, i: usize, weight: f32, why: String) {
        if !self.index.may_return(self.q, i) {
            return;
        }
        let e = self.found.entry(i).or_insert((0.0, String::new()));
        if weight > e.0 {
            *e = (weight, why);
        }
    }

    /// The target's structural neighbourhood: its callees (when its body is known), its class,
    /// the class's members and bases, what its module imports from the project and defines, and
    /// its callers.
    fn structural(&mut self) {
        let (index, q) = (self.index, self.q);
        let g = &index.graph;
        let target = q.target;
        let t = &g.chunks[target];
        if q.body_known {
            for c in g.callees(target) {
                self.add(c, 5.0, "called by the target".into());
            }
        }
        // Its class, the class's other members, and its bases' members.
        for &(p, k) in g.incoming(target) {
            if k == EdgeKind::Contains && g.chunks[p].kind == ChunkKind::Class {
                self.add(p, 3.5, format!("the target's class ({})", g.chunks[p].name));
                for &(m, k) in g.outgoing(p) {
                    if k == EdgeKind::Contains {
                        self.add(m, 3.0, format!("same class ({})", g.chunks[p].name));
                    }
                    if k == EdgeKind::Inherits {
                        self.add(m, 3.0, format!("base class of {}", g.chunks[p].name));
                        for &(bm, k) in g.outgoing(m) {
                            if k == EdgeKind::Contains {
                                self.add(bm, 2.5, format!("inherited from {}", g.chunks[m].name));
                            }
                        }
                    }
                }
            }
        }
        // What the module imports from the project, and what it defines.
        if let Some(m) = g.index_of(&format!("{}::<module>", t.file)) {
            for &(x, k) in g.outgoing(m) {
                match k {
                    EdgeKind::Imports if g.chunks[x].kind == ChunkKind::Module => {
                        // A whole project module imported: its definitions.
                        for &(d, k) in g.outgoing(x) {
                            if k == EdgeKind::Contains {
                                self.add(d, 2.0, format!("in {}, which {} imports", g.chunks[x].module, t.module));
                            }
                        }
                    }
                    EdgeKind::Imports => self.add(x, 2.5, format!("imported by {}", t.module)),
                    EdgeKind::Contains => self.add(x, 2.0, format!("same module ({})", t.module)),
                    _ => {}
                }
            }
        }
        for &(c, k) in g.incoming(target) {
            if k == EdgeKind::Calls {
                self.add(c, 0.5, "calls the target".into());
            }
        }
    }

    /// Similar requirements (CodeRAG's requirement graph mapped onto the code graph): what the
    /// functions whose descriptions are most like the target's call, the target likely calls too.
    fn similar(&mut self, qv: &[f32]) {
        let index = self.index;
        for (s, like) in index.similar_requirements(self.q, qv) {
            let name = &index.graph.chunks[s].name;
            for c in index.graph.callees(s) {
                self.add(
                    c,
                    3.5 * like,
                    format!("called by {name}, whose requirement is like this one (cosine {like:.2})"),
                );
            }
        }
    }

    /// Definitions the requirement names as code (`windowed`, :func:`take`, `peekable()`,
    /// snake_case or CamelCase words): the requirement graph's link to the code graph. A bonus on
    /// top of a structural edge, a weak edge of its own elsewhere (names repeat across modules).
    fn named(&mut self) {
        let (index, q) = (self.index, self.q);
        for name in named_in(&q.text) {
            for (i, c) in index.graph.chunks.iter().enumerate() {
                let short = c.name.rsplit('.').next().unwrap_or(&c.name);
                if short != name || !index.may_return(q, i) {
                    continue;
                }
                match self.found.get_mut(&i) {
                    Some((w, why)) => {
                        *w += 1.0;
                        why.push_str(&format!(", named in the requirement ({short})"));
                    }
                    None => {
                        self.found.insert(i, (1.5, format!("named in the requirement ({short})")));
                    }
                }
            }
        }
    }
}

/// Graph edges and how much each says about relevance; the requirement's likeness adds up to 1.
fn graph_candidates(index: &RepoIndex, q: &Query, qv: &[f32]) -> HashMap<usize, (f32, String)> {
    let mut c = Candidates {
        index,
        q,
        found: HashMap::new(),
    };
    c.structural();
    c.similar(qv);
    c.named();
    c.found
}

/// The identifiers a requirement writes as code: in backquotes, called, or shaped like an
/// identifier (an underscore, an inner capital).
fn named_in(requirement: &str) -> std::collections::HashSet<&str> {
    let mut names = std::collections::HashSet::new();
    let is_ident =
        |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_') && !w.starts_with(|c: char| c.is_ascii_digit());
    for (n, part) in requirement.split('`').enumerate() {
        // Odd parts are inside backquotes.
        if n % 2 == 1 {
            let inner = part.trim_end_matches("()").rsplit('.').next().unwrap_or(part);
            if is_ident(inner) {
                names.insert(inner);
            }
        }
    }
    let bytes = requirement.as_bytes();
    for (start, word) in requirement
        .match_indices(|c: char| c.is_alphanumeric() || c == '_')
        .fold(Vec::<(usize, usize)>::new(), |mut spans, (i, s)| {
            match spans.last_mut() {
                Some(last) if last.1 == i => last.1 = i + s.len(),
                _ => spans.push((i, i + s.len())),
            }
            spans
        })
        .into_iter()
        .map(|(a, b)| (a, &requirement[a..b]))
    {
        let called = bytes.get(start + word.len()) == Some(&b'(');
        let shaped = word.trim_matches('_').contains('_')
            || word.chars().skip(1).any(|c| c.is_uppercase()) && word.chars().any(|c| c.is_lowercase());
        if is_ident(word) && word.len() >= 3 && (called || shaped) {
            names.insert(word);
        }
    }
    names
}

/// Reciprocal rank fusion of ranked lists, each with a weight.
pub fn fuse(lists: &[(Stream, f32, Ranked)]) -> Vec<Piece> {
    const K: f32 = 5.0;
    let mut pieces: HashMap<usize, Piece> = HashMap::new();
    for (stream, weight, list) in lists {
        for (rank, (chunk, score, reason)) in list.iter().enumerate() {
            let p = pieces.entry(*chunk).or_insert(Piece {
                chunk: *chunk,
                score: 0.0,
                found_by: Vec::new(),
            });
            p.score += crate::retrieval::fusion::reciprocal_rank(*weight, K, rank);
            p.found_by.push(Found {
                stream: *stream,
                rank: rank + 1,
                score: *score,
                reason: reason.clone(),
            });
        }
    }
    let mut out: Vec<Piece> = pieces.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
    out
}

impl RepoIndex {
    /// The requirement text of a chunk (what a blanked function still shows).
    pub fn requirement(&self, target: usize) -> String {
        description(&self.graph.chunks[target])
    }

    /// Whether a stream may return chunk `i` for `q`: not the target, not a module, not a test
    /// unless `q` asks for them.
    fn may_return(&self, q: &Query, i: usize) -> bool {
        let c = &self.graph.chunks[i];
        i != q.target && c.kind != ChunkKind::Module && (q.tests || !is_test_file(&c.file))
    }

    /// The `q.similar` chunks other than the target whose descriptions are most like `qv` (the
    /// requirement): (chunk, cosine), best first.
    fn similar_requirements(&self, q: &Query, qv: &[f32]) -> Vec<(usize, f32)> {
        self.nearest(qv, true, q.similar + 1)
            .into_iter()
            .filter(|&(s, _)| s != q.target)
            .take(q.similar)
            .collect()
    }

    /// How many hits a stream fetches so that those `may_return` leaves out do not shorten it.
    fn fetch(&self, q: &Query) -> usize {
        let left_out = if q.tests {
            0
        } else {
            self.graph.chunks.iter().filter(|c| is_test_file(&c.file)).count()
        };
        q.depth + 2 + left_out
    }

    /// The chunks `q` reaches without an embedding: the graph's structural and named candidates,
    /// and BM25's first hits for the requirement (and for its expansion, when there is one).
    fn neighbourhood(&self, q: &Query) -> anyhow::Result<Vec<usize>> {
        let mut c = Candidates {
            index: self,
            q,
            found: HashMap::new(),
        };
        c.structural();
        c.named();
        let mut near: Vec<usize> = c.found.into_keys().collect();
        for text in std::iter::once(&q.text).chain(&q.augmented) {
            let hits = self.bm25(text, self.fetch(q))?;
            near.extend(hits.into_iter().map(|(i, _)| i).filter(|&i| self.may_return(q, i)).take(q.depth));
        }
        near.sort_unstable();
        near.dedup();
        Ok(near)
    }

    /// Makes the index ready for `q`: on a complete index, nothing (or, when `q` may return
    /// tests by their code, the tests' code vectors); on one built without every embedding, the
    /// vectors of the chunks the graph and BM25 reach from the target, and of the callees of the
    /// functions whose requirements are most like it (the graph stream's similar-requirement
    /// edges). Embedded texts are kept in the index's cache for the next query and the next open.
    pub fn prepare(&mut self, q: &Query) -> anyhow::Result<Readiness> {
        if self.complete() && !wants_test_code(q) {
            return Ok(self.readiness());
        }
        let db = open_db(&self.dir)?;
        self.prepare_in(&db, q)
    }

    /// `prepare` with the index's database already open (a benchmark asks it for every target).
    pub fn prepare_in(&mut self, db: &sled::Db, q: &Query) -> anyhow::Result<Readiness> {
        let test_code = wants_test_code(q);
        let quiet = |_: &str, _: usize, _: usize| {};
        if self.complete() {
            if test_code {
                let tests: Vec<usize> = (0..self.graph.chunks.len())
                    .filter(|&i| is_test_file(&self.graph.chunks[i].file))
                    .collect();
                self.fill(db, &tests, true, usize::MAX, &quiet)?;
            }
            return Ok(self.readiness());
        }
        let near = self.neighbourhood(q)?;
        self.fill(db, &near, test_code, usize::MAX, &quiet)?;
        if q.similar > 0 {
            let qv = self.embedder.embed_one(&q.text)?;
            let lent: Vec<usize> = self
                .similar_requirements(q, &qv)
                .into_iter()
                .flat_map(|(s, _)| self.graph.callees(s).collect::<Vec<_>>())
                .collect();
            self.fill(db, &lent, test_code, usize::MAX, &quiet)?;
        }
        Ok(self.readiness())
    }

    /// What the embedding streams compare now.
    pub fn readiness(&self) -> Readiness {
        Readiness {
            chunks: self.graph.chunks.len(),
            embedded: self.embedded_chunks(),
            complete: self.complete(),
        }
    }

    /// Each requested stream's ranked list for `q`, the target and module chunks left out.
    pub fn streams(&self, q: &Query) -> anyhow::Result<Vec<(Stream, Ranked)>> {
        let keep = |i: usize| self.may_return(q, i);
        let fetch = self.fetch(q);
        let mut out = Vec::new();
        let needs_vector = q
            .streams
            .iter()
            .any(|s| matches!(s, Stream::Graph | Stream::Code | Stream::Description));
        let query_vector = if needs_vector {
            Some(self.embedder.embed_one(&q.text)?)
        } else {
            None
        };
        // Embedded once, for every stream that compares with it.
        let qv: &[f32] = query_vector.as_deref().unwrap_or_default();
        let name = |i: usize| self.graph.chunks[i].name.clone();
        for &stream in &q.streams {
            let list: Ranked = match stream {
                Stream::Graph => {
                    let cands = graph_candidates(self, q, qv);
                    let mut scored: Ranked = cands
                        .into_iter()
                        .map(|(i, (w, why))| {
                            let like = crate::retrieval::embed::dot(qv, &self.description_vectors[i]);
                            // Helpers many functions use are likely used once more.
                            let callers = self.graph.incoming(i).iter().filter(|(_, k)| *k == EdgeKind::Calls).count();
                            let used = 0.5 * (1.0 + callers as f32).ln();
                            (
                                i,
                                w + like + used,
                                format!("{why}; requirement likeness {like:.2}, used by {callers}"),
                            )
                        })
                        .collect();
                    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                    scored.truncate(q.depth);
                    scored
                }
                Stream::Bm25 => self
                    .bm25(&q.text, fetch)?
                    .into_iter()
                    .filter(|(i, _)| keep(*i))
                    .take(q.depth)
                    .map(|(i, s)| (i, s, format!("BM25 {s:.2} on identifiers and docstring of {}", name(i))))
                    .collect(),
                Stream::Code | Stream::Description => {
                    let descriptions = stream == Stream::Description;
                    let hits = match descriptions {
                        true => self.nearest(qv, true, fetch),
                        // A test has a code vector once a query asked for tests (`prepare`).
                        false => self.nearest(qv, false, fetch),
                    };
                    hits.into_iter()
                        .filter(|(i, _)| keep(*i))
                        .take(q.depth)
                        .map(|(i, s)| {
                            (
                                i,
                                s,
                                format!("cosine {s:.2} to its {}", if descriptions { "description" } else { "code" }),
                            )
                        })
                        .collect()
                }
                Stream::Rerank => continue,
                Stream::Augmented => match &q.augmented {
                    None => continue,
                    Some(text) => {
                        let v = self.embedder.embed_one(text)?;
                        let mut by_code = self.nearest(&v, false, fetch);
                        by_code.retain(|(i, _)| keep(*i));
                        let mut bm = self.bm25(text, fetch)?;
                        bm.retain(|(i, _)| keep(*i));
                        let lists = [
                            (Stream::Code, 1.0, by_code.into_iter().map(|(i, s)| (i, s, String::new())).collect()),
                            (Stream::Bm25, 1.0, bm.into_iter().map(|(i, s)| (i, s, String::new())).collect()),
                        ];
                        fuse(&lists)
                            .into_iter()
                            .take(q.depth)
                            .map(|p| (p.chunk, p.score, "the LLM-expanded query (code cosine + BM25)".into()))
                            .collect()
                    }
                },
            };
            out.push((stream, list));
        }
        Ok(out)
    }

    /// The pieces for `q`, best first: its streams fused, the graph weighted `graph_weight`, and
    /// a stream's confident first hit kept among the first `CONFIDENT_PLACE`.
    pub fn retrieve(&self, q: &Query, graph_weight: f32) -> anyhow::Result<Vec<Piece>> {
        let lists: Vec<(Stream, f32, Ranked)> = self
            .streams(q)?
            .into_iter()
            .map(|(s, l)| {
                let w = match s {
                    Stream::Graph => graph_weight,
                    Stream::Description | Stream::Augmented | Stream::Rerank => 1.0,
                    Stream::Code | Stream::Bm25 => 0.5,
                };
                (s, w, l)
            })
            .collect();
        let mut fused = fuse(&lists);
        for (stream, _, list) in &lists {
            if !confident(*stream, list) {
                continue;
            }
            let hit = list[0].0;
            if let Some(at) = fused.iter().position(|p| p.chunk == hit).filter(|&at| at >= CONFIDENT_PLACE) {
                let mut piece = fused.remove(at);
                if let Some(f) = piece.found_by.iter_mut().find(|f| f.stream == *stream) {
                    f.reason
                        .push_str(&format!(" (a confident first hit: kept in the first {CONFIDENT_PLACE})"));
                }
                fused.insert(CONFIDENT_PLACE - 1, piece);
            }
        }
        if let Some((_, _, list)) = lists.iter().find(|(s, _, l)| *s == Stream::Bm25 && !l.is_empty()) {
            let chunks = &self.graph.chunks;
            let class_of = |i: usize| {
                let c = &chunks[i];
                c.class_header.as_ref()?;
                Some(format!("{}::{}", c.file, c.name.rsplit_once('.')?.0))
            };
            unbury(&mut fused, list[0].0, &class_of);
        }
        Ok(fused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(scores: &[f32]) -> Ranked {
        scores.iter().enumerate().map(|(i, s)| (i, *s, String::new())).collect()
    }

    fn pieces(n: usize) -> Vec<Piece> {
        (0..n)
            .map(|chunk| Piece {
                chunk,
                score: 1.0 / (chunk as f32 + 1.0),
                found_by: vec![Found {
                    stream: Stream::Bm25,
                    rank: 1,
                    score: 1.0,
                    reason: String::new(),
                }],
            })
            .collect()
    }

    #[test]
    fn bm25_s_first_hit_is_not_buried_under_four_members_of_one_class() {
        // Chunks 0..4 are methods of K, 5 of L; BM25's first is chunk 6.
        let class_of = |i: usize| match i {
            0..=3 => Some("m.py::K".to_string()),
            5 => Some("m.py::L".to_string()),
            _ => None,
        };
        let mut fused = pieces(8);
        unbury(&mut fused, 6, &class_of);
        let order: Vec<usize> = fused.iter().map(|p| p.chunk).collect();
        assert_eq!(order, [0, 1, 2, 3, 6, 4, 5, 7]);
        assert!(fused[4].found_by[0].reason.contains("BM25's first"));
        // Three of one class leave the fusion's order alone, as does a hit already in the top 5.
        let three = |i: usize| (i < 3).then(|| "m.py::K".to_string());
        let mut fused = pieces(8);
        unbury(&mut fused, 6, &three);
        assert_eq!(fused.iter().map(|p| p.chunk).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>());
        let mut fused = pieces(8);
        unbury(&mut fused, 2, &class_of);
        assert_eq!(fused.iter().map(|p| p.chunk).collect::<Vec<_>>(), (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn a_first_hit_is_confident_only_well_ahead_of_the_second_by_its_streams_own_scores() {
        assert!(confident(Stream::Bm25, &list(&[20.5, 4.4])));
        assert!(!confident(Stream::Bm25, &list(&[6.0, 4.4])));
        assert!(confident(Stream::Bm25, &list(&[1.0])));
        assert!(!confident(Stream::Bm25, &list(&[])));
        assert!(confident(Stream::Code, &list(&[0.71, 0.56])));
        assert!(!confident(Stream::Description, &list(&[0.69, 0.65])));
        // The graph already leads fusion (weight 3): no rule of its own.
        assert!(!confident(Stream::Graph, &list(&[9.0, 1.0])));
    }
}
