//! A project's functions by their words (BM25 over split identifiers and docstrings, no
//! embeddings: built in a moment, with no index to wait for), for `rgd locate`'s retrieval
//! signal: the failing tests' source and failure messages are the query, as a developer greps a
//! failure's names.

use std::collections::HashMap;
use std::path::Path;

use crate::repo::index::chunks::is_test_file;
use crate::repo::index::chunks::{ChunkKind, cut};
use crate::repo::index::{bm25_text, python_files};
use crate::retrieval::Bm25;

pub struct Lexical {
    bm25: Bm25,
    /// (file, qualified name) of each indexed function.
    functions: Vec<(String, String)>,
    /// The test files' chunks by id (`path::Class.test`), for the failing tests' source.
    tests: HashMap<String, String>,
}

impl Lexical {
    /// The functions and methods of the project's Python files (files that do not parse are
    /// left out: the spectra have the rest).
    pub fn build(root: &Path) -> anyhow::Result<Lexical> {
        let mut chunks = Vec::new();
        let mut tests = HashMap::new();
        for file in python_files(root)? {
            let Ok(source) = std::fs::read_to_string(root.join(&file)) else {
                continue;
            };
            let Ok(module) = cut(&file, &source) else {
                continue;
            };
            if is_test_file(&file) {
                tests.extend(module.chunks.into_iter().map(|c| (c.id, c.code)));
                continue;
            }
            chunks.extend(
                module
                    .chunks
                    .into_iter()
                    .filter(|c| matches!(c.kind, ChunkKind::Function | ChunkKind::Method)),
            );
        }
        let texts: Vec<String> = chunks.iter().map(bm25_text).collect();
        let bm25 = Bm25::build(texts.iter().map(String::as_str))?;
        let functions = chunks.into_iter().map(|c| (c.file, c.name)).collect();
        Ok(Lexical { bm25, functions, tests })
    }

    /// The function `name` names (a qualified name, or a bare one as older Pythons print it), as
    /// (file, qualified name): the one function when only one is called so, else the one of those
    /// in `entered` (the files a failing test ran); None when that leaves none or several.
    pub fn defining(&self, name: &str, entered: &std::collections::BTreeSet<&str>) -> Option<(String, String)> {
        let dotted = format!(".{name}");
        let exact: Vec<&(String, String)> = self.functions.iter().filter(|(_, q)| q == name).collect();
        let found: Vec<&(String, String)> = if exact.is_empty() {
            self.functions.iter().filter(|(_, q)| q.ends_with(&dotted)).collect()
        } else {
            exact
        };
        match found.as_slice() {
            [one] => Some((*one).clone()),
            many => {
                let ran: Vec<&&(String, String)> = many.iter().filter(|(f, _)| entered.contains(f.as_str())).collect();
                (ran.len() == 1).then(|| (*ran[0]).clone())
            }
        }
    }

    /// The source of the test a node id names (`tests/t.py::TestC::test_m[1]`), if known.
    pub fn test_source(&self, node: &str) -> Option<&str> {
        self.tests.get(&crate::repo::task::test_chunk_id(node)?).map(String::as_str)
    }

    /// Each function's BM25 score against the failing tests (their source and failure
    /// messages, at most `MAX_TESTS` of them), divided by the best: 1 for the best match.
    pub fn scores(&self, failing: &[(&str, &str)]) -> anyhow::Result<HashMap<(String, String), f64>> {
        const MAX_TESTS: usize = 5;
        let mut query = String::new();
        for (id, message) in failing.iter().take(MAX_TESTS) {
            query.push_str(self.test_source(id).unwrap_or_default());
            query.push('\n');
            // The message's first lines: the assertion and the values, not a long repr.
            for line in message.lines().take(5) {
                query.push_str(line);
                query.push('\n');
            }
        }
        let hits = self.bm25.search(&query, self.functions.len().max(1))?;
        let best = hits.first().map_or(1.0, |h| h.1.max(f32::EPSILON)) as f64;
        Ok(hits
            .into_iter()
            .map(|(i, s)| (self.functions[i].clone(), s as f64 / best))
            .collect())
    }
}
