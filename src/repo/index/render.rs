//! The context block the agents are given: the target module's imports, then each retrieved
//! piece's code (a method with its class header) under a line that says where it is from and
//! why it was chosen (every stream that found it), best first, as long as it fits the token budget.

use crate::repo::index::RepoIndex;
use crate::repo::index::chunks::ChunkKind;
use crate::repo::index::retrieve::Piece;

/// Tokens, estimated as characters / 4 (the usual ratio for English and code with BPE
/// tokenizers; the model's own tokenizer may differ by a fifth either way).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// The rendered context and the pieces it holds (in order); pieces that do not fit what is left
/// of the budget are skipped, smaller ones after them may still fit.
pub fn render_context(index: &RepoIndex, target: usize, pieces: &[Piece], budget: usize) -> (String, Vec<usize>) {
    let g = &index.graph;
    let t = &g.chunks[target];
    let mut out = format!("# Code from the repository for {} ({})\n", t.id, t.signature);
    if let Some(imports) = index.imports.get(&t.file).filter(|i| !i.is_empty()) {
        out.push_str(&format!("\n## {} imports\n```python\n{imports}\n```\n", t.file));
    }
    let mut used = Vec::new();
    for p in pieces {
        let c = &g.chunks[p.chunk];
        // Why it was chosen: the best stream's reason (a graph edge, a score), then the other
        // streams that found it and at which rank.
        let why = match p.found_by.split_first() {
            Some((best, others)) => {
                let also: Vec<String> = others.iter().map(|f| format!("{} #{}", f.stream.name(), f.rank)).collect();
                let also = if also.is_empty() {
                    String::new()
                } else {
                    format!("; also {}", also.join(", "))
                };
                format!(" ({} #{}: {}{also})", best.stream.name(), best.rank, best.reason)
            }
            None => String::new(),
        };
        let mut code = String::new();
        if c.kind == ChunkKind::Method
            && let Some(h) = &c.class_header
        {
            code.push_str(h);
            code.push_str("\n    ...\n");
        }
        code.push_str(&c.code);
        let block = format!(
            "\n## {}:{}-{} {}{why}\n```python\n{}\n```\n",
            c.file,
            c.start_line,
            c.end_line,
            c.name,
            code.trim_end()
        );
        if estimate_tokens(&out) + estimate_tokens(&block) > budget {
            continue;
        }
        out.push_str(&block);
        used.push(p.chunk);
    }
    (out, used)
}
