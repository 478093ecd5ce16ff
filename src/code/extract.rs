//! Taking the program out of an LLM answer.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};

use super::{defined_functions, parse_python};

/// What was wrong with the code an answer gave, if anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "problem")]
pub enum ExtractProblem {
    /// No code block, and the answer itself is not Python.
    NoCode,
    /// The chosen code has a syntax error (tree-sitter's first error position, 1-based line).
    SyntaxError { line: usize },
    /// The code parses but does not define the entry point.
    EntryPointMissing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    pub code: Option<String>,
    pub problem: Option<ExtractProblem>,
}

/// Picks the code from an answer: among fenced blocks, the last that defines `entry_point` wins;
/// otherwise the last Python-looking block; an answer with no block (empty blocks do not count:
/// a lone closing fence opens one) is taken without its stray fence lines, whole if that parses,
/// else from its first line of code. An empty `entry_point` (stdin/stdout tasks) accepts any block.
pub fn extract_code(answer: &str, entry_point: &str) -> Extracted {
    // A method (`Class.name`) is found by its own name, at the top level or in a class.
    let entry_point = entry_point.rsplit('.').next().unwrap_or(entry_point);
    let blocks = code_blocks(answer);
    let defines_entry = |code: &str| entry_point.is_empty() || defined_functions(code).iter().any(|n| n == entry_point);
    let chosen = blocks
        .iter()
        .rev()
        .find(|b| defines_entry(b))
        .or_else(|| blocks.last())
        .cloned()
        .or_else(|| unfenced(answer));
    // One trailing newline, whatever the fence left: iterations diff cleanly and samples are stable.
    let chosen = chosen.map(|c| format!("{}\n", c.trim_end()));
    let Some(code) = chosen.filter(|c| !c.trim().is_empty()) else {
        return Extracted {
            code: None,
            problem: Some(ExtractProblem::NoCode),
        };
    };
    let problem = match first_error_line(&code) {
        Some(line) => Some(ExtractProblem::SyntaxError { line }),
        None if !defines_entry(&code) => Some(ExtractProblem::EntryPointMissing),
        None => None,
    };
    Extracted { code: Some(code), problem }
}

/// The code of an answer without (usable) fenced blocks: its lines minus fence lines, whole if that
/// parses, otherwise from the first line that starts a definition or an import (prose before the
/// code, as in "Here it is:\ndef f(): ...\n```").
fn unfenced(answer: &str) -> Option<String> {
    let lines: Vec<&str> = answer.lines().filter(|l| !l.trim_start().starts_with("```")).collect();
    let parses = |code: &str| !code.trim().is_empty() && !parse_python(code).root_node().has_error();
    let whole = lines.join("\n");
    if parses(&whole) {
        return Some(whole.trim().to_string());
    }
    let starts_code = |l: &&str| {
        ["def ", "class ", "import ", "from ", "@", "async def "]
            .iter()
            .any(|p| l.starts_with(p))
    };
    let first = lines.iter().position(starts_code)?;
    let code = lines[first..].join("\n");
    parses(&code).then(|| code.trim_end().to_string())
}

/// The contents of Python (or unlabelled) fenced blocks, empty ones left out.
fn code_blocks(answer: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(answer) {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match &kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_ascii_lowercase(),
                    CodeBlockKind::Indented => String::new(),
                };
                let is_python = matches!(lang.as_str(), "" | "python" | "py" | "python3");
                current = is_python.then(String::new);
            }
            Event::Text(text) => {
                if let Some(buf) = current.as_mut() {
                    buf.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block) = current.take().filter(|b| !b.trim().is_empty()) {
                    blocks.push(block);
                }
            }
            _ => {}
        }
    }
    blocks
}

fn first_error_line(code: &str) -> Option<usize> {
    let tree = parse_python(code);
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = tree.walk();
    let mut stack = vec![root];
    let mut best: Option<usize> = None;
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let line = node.start_position().row + 1;
            best = Some(best.map_or(line, |b| b.min(line)));
        } else if node.has_error() {
            stack.extend(node.children(&mut cursor));
        }
    }
    best.or(Some(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_defining_entry_point_wins() {
        let answer = "Helper:\n```python\ndef helper():\n    return 1\n```\nSolution:\n```python\ndef solve(x):\n    return helper() + x\n```\nUsage:\n```python\nprint(solve(1))\n```\n";
        let got = extract_code(answer, "solve");
        assert_eq!(got.code.as_deref(), Some("def solve(x):\n    return helper() + x\n"));
        assert_eq!(got.problem, None);
    }

    #[test]
    fn no_code_syntax_error_and_missing_entry() {
        assert_eq!(extract_code("I cannot help with that.", "f").problem, Some(ExtractProblem::NoCode));
        let bad = extract_code("```python\ndef f(x):\n    return (x\n\ny = 2\n```", "f");
        assert!(matches!(bad.problem, Some(ExtractProblem::SyntaxError { .. })), "{bad:?}");
        let other = extract_code("```python\ndef g():\n    pass\n```", "f");
        assert_eq!(other.problem, Some(ExtractProblem::EntryPointMissing));
    }

    #[test]
    fn unfenced_python_and_unterminated_fence() {
        assert!(extract_code("def f():\n    return 2\n", "f").problem.is_none());
        let truncated = extract_code("```python\ndef f():\n    return 2\n", "f");
        assert_eq!(truncated.code.as_deref(), Some("def f():\n    return 2\n"));
    }

    #[test]
    fn a_lone_closing_fence_keeps_the_code() {
        // As llama-server's SmolLM2 answered: no opening fence, a closing one.
        let got = extract_code("def add(a, b):\n    return a + b\n```", "add");
        assert_eq!(got.code.as_deref(), Some("def add(a, b):\n    return a + b\n"));
        assert_eq!(got.problem, None);
        let prose = extract_code("Here is the function:\n\ndef add(a, b):\n    return a + b\n```\n", "add");
        assert_eq!(prose.code.as_deref(), Some("def add(a, b):\n    return a + b\n"));
        // An empty block is no block; prose alone is still no code.
        assert_eq!(extract_code("```python\n```\nSorry.", "add").problem, Some(ExtractProblem::NoCode));
    }
}
