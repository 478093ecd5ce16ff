//! Retrieval: SBERT cosine over every stored vector (exact; one pass over a contiguous matrix),
//! BM25 from tantivy, and their fusion. Every hit carries both component scores, so a reader (or
//! the TUI) can see why an entry was chosen.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::embed::{dot, quantize};
use super::scan::{signs, top_rows};
use super::{Entry, MemoryError, MemoryPool};

/// How the two rankings are combined.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fusion {
    /// `sbert * cosine + bm25 * (bm25 / best bm25)`, as the RGD reference (0.7 / 0.3).
    Weighted { sbert: f32, bm25: f32 },
    /// Reciprocal rank fusion: the sum of `1 / (k + rank)` over both rankings.
    Rrf { k: f32 },
}

/// Which ranking to use (single methods exist for comparison and ablation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Bm25,
    Sbert,
    Hybrid,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchOptions {
    pub k: usize,
    /// Hits whose SBERT cosine is below this are dropped (with pure BM25 nothing is dropped).
    pub min_similarity: f32,
    pub fusion: Fusion,
    pub method: Method,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            k: 3,
            min_similarity: 0.8,
            fusion: Fusion::Weighted { sbert: 0.7, bm25: 0.3 },
            method: Method::Hybrid,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub entry: Entry,
    /// The fused (or single-method) score that ranked this hit.
    pub score: f32,
    /// Raw BM25 score (0 when the entry was not among BM25's candidates).
    pub bm25: f32,
    /// Cosine similarity of the query's and the entry's embeddings.
    pub sbert: f32,
}

/// Pools from this size search BM25 and SBERT on two threads.
const PARALLEL_FROM: usize = 20_000;

impl MemoryPool {
    /// Embeds the query, then searches. An empty pool finds nothing without embedding (the
    /// model is built at its first use: a sweep that never stores need never load it).
    pub fn search(&self, text: &str, options: &SearchOptions) -> Result<Vec<Hit>, MemoryError> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        let query = self.embedder().embed_one(text)?;
        self.search_with_vector(text, &query, options)
    }

    /// Searches with the query's embedding already computed.
    pub fn search_with_vector(&self, text: &str, query: &[f32], options: &SearchOptions) -> Result<Vec<Hit>, MemoryError> {
        let n = self.len();
        if n == 0 || options.k == 0 {
            return Ok(Vec::new());
        }
        let depth = (options.k * 10).max(50).min(n);
        let bm25_part = || -> Result<(HashMap<usize, f32>, f32), MemoryError> {
            if options.method == Method::Sbert {
                return Ok((HashMap::new(), 1.0));
            }
            let ranked = self.bm25_ranked(text, depth)?;
            let best = ranked.values().copied().fold(0.0f32, f32::max);
            // Normalised by the larger of the best score and what a full match would score
            // (see `Bm25::ceiling`), so a query whose words the pool mostly lacks leans on SBERT.
            let scale = if ranked.is_empty() {
                1.0
            } else {
                best.max(self.bm25_index().ceiling(text)?).max(f32::EPSILON)
            };
            Ok((ranked, scale))
        };
        let sbert_part = || match options.method {
            Method::Bm25 => Vec::new(),
            // A margin for the quantisation error, so no true top-`depth` entry is missed.
            _ => top_rows(
                self.quantized_matrix(),
                self.sign_matrix(),
                &quantize(query),
                &signs(query),
                (depth * 2).min(n),
            ),
        };
        // BM25 and the SBERT first pass are independent: in large pools they run side by side on
        // two threads; in small ones starting a thread costs more than it saves.
        let (bm25, sbert_candidates) = if n >= PARALLEL_FROM {
            std::thread::scope(|scope| {
                let bm25 = scope.spawn(bm25_part);
                let candidates = sbert_part();
                // A panic on the BM25 thread goes on here, as if it had happened on this one.
                let bm25 = bm25.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                (bm25, candidates)
            })
        } else {
            (bm25_part(), sbert_part())
        };
        let (bm25, bm25_scale) = bm25?;
        let best_bm25 = bm25.values().copied().fold(0.0f32, f32::max);
        let mut candidates = sbert_candidates;
        candidates.extend(bm25.keys().copied());
        candidates.sort_unstable();
        candidates.dedup();
        let sims: HashMap<usize, f32> = candidates.iter().map(|&i| (i, dot(self.vector(i), query))).collect();

        // RRF ranks SBERT over its own top `depth`, as BM25 is ranked over its own.
        let mut by_sim = candidates.clone();
        by_sim.sort_by(|a, b| sims[b].total_cmp(&sims[a]).then(a.cmp(b)));
        by_sim.truncate(depth);
        let sbert_rank = rank_of(&by_sim, |i| sims[&i]);
        let bm25_rank = rank_of(&bm25.keys().copied().collect::<Vec<_>>(), |i| bm25[&i]);
        let mut hits: Vec<(usize, f32)> = candidates
            .iter()
            .filter(|&&i| options.method == Method::Bm25 || sims[&i] >= options.min_similarity)
            .filter_map(|&i| {
                let b = bm25.get(&i).copied();
                let score = match options.method {
                    Method::Sbert => sims[&i],
                    Method::Bm25 => b? / best_bm25.max(f32::EPSILON),
                    Method::Hybrid => match options.fusion {
                        Fusion::Weighted { sbert, bm25: w } => sbert * sims[&i] + w * b.unwrap_or(0.0) / bm25_scale,
                        Fusion::Rrf { k } => {
                            let r = |rank: Option<&usize>| rank.map_or(0.0, |&r| crate::retrieval::fusion::reciprocal_rank(1.0, k, r));
                            r(sbert_rank.get(&i)) + r(bm25_rank.get(&i))
                        }
                    },
                };
                Some((i, score))
            })
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(options.k);
        Ok(hits
            .into_iter()
            .map(|(i, score)| Hit {
                entry: self.entries()[i].clone(),
                score,
                bm25: bm25.get(&i).copied().unwrap_or(0.0),
                sbert: sims[&i],
            })
            .collect())
    }

    fn bm25_ranked(&self, text: &str, depth: usize) -> Result<HashMap<usize, f32>, MemoryError> {
        Ok(self
            .bm25_index()
            .search(text, depth)?
            .into_iter()
            .filter_map(|(id, score)| self.index_of(&id).map(|i| (i, score)))
            .collect())
    }
}

/// 0-based rank of each index by `score`, best first.
fn rank_of(indices: &[usize], score: impl Fn(usize) -> f32) -> HashMap<usize, usize> {
    let mut sorted = indices.to_vec();
    sorted.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
    sorted.into_iter().enumerate().map(|(rank, i)| (i, rank)).collect()
}
