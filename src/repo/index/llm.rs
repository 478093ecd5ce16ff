//! The two retrieval stages that ask a model: RepoRift's query augmentation (the requirement,
//! restated in the words its code would use, with a sketch implementation, searched as the
//! `augmented` stream) and qodo's second stage (the model picks, from the fused candidates, the
//! ones the implementation needs; they move to the front in its order). Prompts are
//! `assets/prompts/repo/augment.md` and `rerank.md`.

use serde::Serialize;

use crate::agents::Prompts;
use crate::llm::{CallParams, ChatModel, Silent};
use crate::repo::index::RepoIndex;
use crate::repo::index::retrieve::{Found, Piece, Stream};

#[derive(Serialize)]
struct AugmentContext<'a> {
    project: String,
    module: &'a str,
    imports: &'a str,
    class_header: Option<&'a str>,
    requirement: String,
}

/// The LLM-expanded query for `target`.
pub async fn augment(
    model: &dyn ChatModel,
    params: &CallParams,
    prompts: &Prompts,
    index: &RepoIndex,
    target: usize,
) -> anyhow::Result<String> {
    let c = &index.graph.chunks[target];
    let ctx = AugmentContext {
        project: index
            .root
            .file_name()
            .map_or_else(|| index.root.display().to_string(), |n| n.to_string_lossy().into_owned()),
        module: &c.module,
        imports: index.imports.get(&c.file).map_or("", String::as_str),
        class_header: c.class_header.as_deref(),
        requirement: index.requirement(target),
    };
    let messages = prompts.render_named("repo/augment", &ctx)?;
    let answer = model.chat(&messages, params, &Silent).await?;
    anyhow::ensure!(!answer.text.trim().is_empty(), "the model's expanded query was empty");
    Ok(answer.text)
}

#[derive(Serialize)]
struct Candidate {
    signature: String,
    file: String,
    doc: Option<String>,
}

#[derive(Serialize)]
struct RerankContext {
    file: String,
    requirement: String,
    candidates: Vec<Candidate>,
}

/// The numbers an answer lists, in order, each once and within `1..=n`.
fn chosen(answer: &str, n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for line in answer.lines() {
        let digits: String = line
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(k) = digits.parse::<usize>()
            && (1..=n).contains(&k)
            && !out.contains(&k)
        {
            out.push(k);
        }
    }
    out
}

/// Asks the model which of the first `top` pieces the target needs; those move to the front in
/// its order (each marked with why), the rest follow as they were.
pub async fn rerank(
    model: &dyn ChatModel,
    params: &CallParams,
    prompts: &Prompts,
    index: &RepoIndex,
    target: usize,
    mut pieces: Vec<Piece>,
    top: usize,
) -> anyhow::Result<Vec<Piece>> {
    let n = top.min(pieces.len());
    if n == 0 {
        return Ok(pieces);
    }
    let g = &index.graph;
    let ctx = RerankContext {
        file: g.chunks[target].file.clone(),
        requirement: index.requirement(target),
        candidates: pieces[..n]
            .iter()
            .map(|p| {
                let c = &g.chunks[p.chunk];
                Candidate {
                    signature: match &c.class_header {
                        Some(h) => format!("{} {}", h.trim_end_matches(':'), c.signature),
                        None => c.signature.clone(),
                    },
                    file: c.file.clone(),
                    doc: c.docstring.as_ref().and_then(|d| d.lines().next()).map(str::to_string),
                }
            })
            .collect(),
    };
    let messages = prompts.render_named("repo/rerank", &ctx)?;
    let answer = model.chat(&messages, params, &Silent).await?;
    let order = chosen(&answer.text, n);
    let mut front = Vec::with_capacity(order.len());
    for (rank, k) in order.iter().enumerate() {
        let mut p = pieces[k - 1].clone();
        p.found_by.push(Found {
            stream: Stream::Rerank,
            rank: rank + 1,
            score: 0.0,
            reason: format!("the model chose it ({} of {})", rank + 1, order.len()),
        });
        front.push(p);
    }
    let picked: Vec<usize> = order.iter().map(|k| pieces[k - 1].chunk).collect();
    pieces.retain(|p| !picked.contains(&p.chunk));
    front.extend(pieces);
    Ok(front)
}

#[derive(Serialize)]
struct Failure<'a> {
    id: &'a str,
    source: &'a str,
    message: String,
}

#[derive(Serialize)]
struct Suspect {
    target: String,
    code: String,
}

#[derive(Serialize)]
struct SuspectsContext<'a> {
    failures: Vec<Failure<'a>>,
    candidates: Vec<Suspect>,
}

/// Lines of a suspect's source the model reads, and failing tests it is shown.
const SUSPECT_LINES: usize = 60;
const FAILURES_SHOWN: usize = 3;

/// qodo's second stage for `rgd locate --rerank-suspects N`: the Guide's model reads the failing tests
/// (source and failure) and the first `top` suspects' source, and the ones it names move to the
/// front in its order (each with `model_rank`); the rest follow as they were.
pub async fn rerank_suspects(
    model: &dyn ChatModel,
    params: &CallParams,
    prompts: &Prompts,
    root: &std::path::Path,
    failures: &[crate::repo::locate::localise::FailingTest],
    mut ranked: Vec<crate::repo::locate::Candidate>,
    top: usize,
) -> anyhow::Result<Vec<crate::repo::locate::Candidate>> {
    let n = top.min(ranked.len());
    if n == 0 {
        return Ok(ranked);
    }
    let code = |c: &crate::repo::locate::Candidate| -> String {
        let module = std::fs::read_to_string(root.join(&c.file)).unwrap_or_default();
        match crate::code::find_function(&module, &c.name) {
            Ok(site) => module[site.start..site.end]
                .lines()
                .take(SUSPECT_LINES)
                .collect::<Vec<_>>()
                .join("\n"),
            Err(_) => String::from("(source not available)"),
        }
    };
    let ctx = SuspectsContext {
        failures: failures
            .iter()
            .take(FAILURES_SHOWN)
            .map(|f| Failure {
                id: &f.id,
                source: &f.source,
                message: f.message.lines().take(12).collect::<Vec<_>>().join("\n"),
            })
            .collect(),
        candidates: ranked[..n]
            .iter()
            .map(|c| Suspect {
                target: c.target(),
                code: code(c),
            })
            .collect(),
    };
    let messages = prompts.render_named("repo/suspects", &ctx)?;
    let answer = model.chat(&messages, params, &Silent).await?;
    let order = chosen(&answer.text, n);
    let mut front = Vec::with_capacity(order.len());
    for (rank, k) in order.iter().enumerate() {
        let mut c = ranked[k - 1].clone();
        c.model_rank = Some(rank + 1);
        front.push(c);
    }
    let picked: Vec<String> = front.iter().map(|c| c.target()).collect();
    ranked.retain(|c| !picked.contains(&c.target()));
    front.extend(ranked);
    Ok(front)
}

#[derive(Serialize)]
struct DescribeContext<'a> {
    file: &'a str,
    class_header: Option<&'a str>,
    code: &'a str,
}

/// The model's description of each of `chunks` (by code key, for `store_descriptions`), and how
/// many it failed to give (after the client's own retries; those chunks keep their docstring).
pub async fn describe(
    model: &dyn ChatModel,
    params: &CallParams,
    prompts: &Prompts,
    index: &RepoIndex,
    chunks: &[usize],
    progress: &dyn Fn(usize, usize),
) -> anyhow::Result<(Vec<(Vec<u8>, String)>, usize)> {
    let mut written = Vec::new();
    let mut failed = 0;
    for (n, &i) in chunks.iter().enumerate() {
        progress(n, chunks.len());
        let c = &index.graph.chunks[i];
        // The model reads at most ~1,500 tokens of code; a description of the start is enough.
        let code: String = c.code.chars().take(6000).collect();
        let ctx = DescribeContext {
            file: &c.file,
            class_header: c.class_header.as_deref(),
            code: &code,
        };
        let messages = prompts.render_named("repo/describe", &ctx)?;
        match model.chat(&messages, params, &Silent).await {
            Ok(answer) if !answer.text.trim().is_empty() => {
                written.push((crate::repo::index::code_key(c), answer.text.trim().to_string()));
            }
            _ => failed += 1,
        }
    }
    Ok((written, failed))
}

#[cfg(test)]
mod tests {
    use super::chosen;

    #[test]
    fn the_chosen_numbers_are_read_in_order_once_and_in_range() {
        assert_eq!(chosen("3\n1. yes\n- 3\n12\nnone\n2", 5), [3, 1, 2]);
        assert!(chosen("I cannot tell.", 5).is_empty());
    }
}
