//! Syntax classes for Python source from tree-sitter-python's own highlight query, so views can
//! colour code without regexes.

use std::ops::Range;
use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Query, QueryCursor};

use super::parse_python;

/// What a span of code is, coarsely: enough for a terminal palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Keyword,
    String,
    Number,
    Comment,
    Function,
    Type,
    Constant,
    Builtin,
    Operator,
}

#[allow(
    clippy::expect_used,
    reason = "the query ships inside tree-sitter-python, built for the grammar it is compiled with"
)]
fn query() -> &'static Query {
    static QUERY: OnceLock<Query> = OnceLock::new();
    QUERY.get_or_init(|| {
        Query::new(&tree_sitter_python::LANGUAGE.into(), tree_sitter_python::HIGHLIGHTS_QUERY)
            .expect("tree-sitter-python's bundled highlight query compiles")
    })
}

fn class_of(capture: &str) -> Option<Class> {
    Some(match capture {
        "keyword" => Class::Keyword,
        "string" | "escape" => Class::String,
        "number" => Class::Number,
        "comment" => Class::Comment,
        "function" | "function.method" | "constructor" => Class::Function,
        "type" => Class::Type,
        "constant" => Class::Constant,
        "constant.builtin" | "function.builtin" => Class::Builtin,
        "operator" => Class::Operator,
        _ => return None,
    })
}

/// Non-overlapping classified byte ranges, in order. Where captures overlap, the first one that
/// starts at a position wins, except that builtins and constants beat a plain name or call.
pub fn highlight(source: &str) -> Vec<(Range<usize>, Class)> {
    let tree = parse_python(source);
    let query = query();
    let names = query.capture_names();
    let mut cursor = QueryCursor::new();
    let mut spans: Vec<(Range<usize>, Class)> = Vec::new();
    let mut captures = cursor.captures(query, tree.root_node(), source.as_bytes());
    while let Some((m, index)) = captures.next() {
        let capture = m.captures()[*index];
        let Some(class) = class_of(names[capture.index as usize]) else {
            continue;
        };
        let range = capture.node.byte_range();
        if let Some((last, last_class)) = spans.last_mut()
            && range.start < last.end
        {
            // A builtin (`len`) is also matched as a plain call; the narrower class is kept.
            if *last == range && matches!(class, Class::Builtin | Class::Constant) {
                *last_class = class;
            }
            continue;
        }
        spans.push((range, class));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_keywords_strings_numbers_comments_and_calls() {
        let src = "def f(x):\n    # note\n    return len('a') + 1\n";
        let spans = highlight(src);
        let text_of = |class| -> Vec<&str> { spans.iter().filter(|(_, c)| *c == class).map(|(r, _)| &src[r.clone()]).collect() };
        assert!(text_of(Class::Keyword).contains(&"def"));
        assert!(text_of(Class::Keyword).contains(&"return"));
        assert_eq!(text_of(Class::String), ["'a'"]);
        assert_eq!(text_of(Class::Number), ["1"]);
        assert_eq!(text_of(Class::Comment), ["# note"]);
        assert!(text_of(Class::Builtin).contains(&"len"), "{spans:?}");
        assert!(spans.windows(2).all(|w| w[0].0.end <= w[1].0.start), "spans do not overlap");
    }
}
