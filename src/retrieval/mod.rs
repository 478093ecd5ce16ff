//! Search, one room: the sentence embedder (SBERT all-MiniLM-L6-v2, int8, through fastembed and
//! ONNX Runtime, its files from PyPI wheels) and the in-memory BM25 (tantivy) that the memory pool,
//! a repository's index and `rgd locate` use; and the opening, rebuilding and writing of the
//! tantivy indexes kept on disk (`disk.rs`: the memory pool's BM25 and the run search, each with
//! its own schema); and reciprocal rank fusion (`fusion.rs`), which the memory pool and a
//! repository's retrieval both rank with.

pub mod assets;
pub mod bm25;
pub mod disk;
pub mod docs;
pub mod embed;
pub mod fusion;
pub mod int8_graph;

pub use bm25::Bm25;
pub use embed::{DIM, Embedder};

/// What can go wrong finding the embedding model's files or running it.
#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    #[error("memory assets: {0}")]
    Assets(String),
    #[error("embedding model: {0}")]
    Embedding(String),
}
