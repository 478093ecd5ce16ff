//! Tantivy indexes kept on disk as derived data (the memory pool's BM25, the run search): each is
//! opened where it lies when its owner says it is current, and otherwise made again, empty, for
//! the owner to fill from what it is derived from (the pool's sled store, the recorded runs).
//! One place opens, recreates and writes them, so both are handled the same way.

use std::path::Path;

use tantivy::schema::Schema;
use tantivy::{Index, IndexWriter};

/// A writer's indexing heap (tantivy's minimum is 15 MB per thread); one thread: these indexes
/// take a few documents at a time.
const WRITER_HEAP: usize = 16 << 20;

/// An index opened from disk, or made again.
pub struct Opened {
    pub index: Index,
    /// Made again, empty: whatever it was derived from must be added.
    pub fresh: bool,
}

/// The index in `dir`: the one there when `current` (its owner's marker agrees) and it opens with
/// `schema`; else `dir` is emptied and a new index with `schema` made in it.
pub fn open_or_recreate(dir: &Path, schema: Schema, current: bool) -> tantivy::Result<Opened> {
    if current
        && let Ok(index) = Index::open_in_dir(dir)
        && index.schema() == schema
    {
        return Ok(Opened { index, fresh: false });
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let index = Index::create_in_dir(dir, schema)?;
    Ok(Opened { index, fresh: true })
}

/// A writer for a commit's worth of changes, let go after it (its threads and heap are not kept).
pub fn writer(index: &Index) -> tantivy::Result<IndexWriter> {
    index.writer_with_num_threads(1, WRITER_HEAP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::doc;
    use tantivy::schema::{STORED, STRING};

    fn schema(field: &str) -> Schema {
        let mut b = Schema::builder();
        b.add_text_field(field, STRING | STORED);
        b.build()
    }

    #[test]
    fn a_current_index_is_reopened_and_another_schema_or_marker_makes_it_again() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("index");
        let first = open_or_recreate(&at, schema("id"), true).unwrap();
        assert!(first.fresh, "nothing was there");
        let id = first.index.schema().get_field("id").unwrap();
        let mut w = writer(&first.index).unwrap();
        w.add_document(doc!(id => "a")).unwrap();
        w.commit().unwrap();
        drop((w, first));

        let again = open_or_recreate(&at, schema("id"), true).unwrap();
        assert!(!again.fresh, "the same schema on disk is opened as it is");
        assert_eq!(again.index.reader().unwrap().searcher().num_docs(), 1);
        drop(again);

        let stale = open_or_recreate(&at, schema("id"), false).unwrap();
        assert!(stale.fresh, "its owner says it is not current");
        assert_eq!(stale.index.reader().unwrap().searcher().num_docs(), 0);
        drop(stale);

        let other = open_or_recreate(&at, schema("key"), true).unwrap();
        assert!(other.fresh, "another schema");
        std::fs::write(at.join("meta.json"), "not json").unwrap();
        assert!(open_or_recreate(&at, schema("key"), true).unwrap().fresh, "unreadable");
    }
}
