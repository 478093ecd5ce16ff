//! Python source handling with tree-sitter: taking code out of an LLM answer, checking syntax,
//! and showing what changed between iterations.

pub mod align;
mod extract;
mod forward;
mod hierarchy;
mod highlight;
pub mod mutate;
mod splice;

pub use extract::{ExtractProblem, Extracted, extract_code};
pub use forward::{forwarding_stub, forwarding_stub_for, program_names};
pub use hierarchy::{TopFunction, bottom_up, top_functions};
pub use highlight::{Class, highlight};
pub use splice::{Site, definition_ranges, find_function, splice, stubbed};

use tree_sitter::{Parser, Tree};

/// Parses Python source. tree-sitter always returns a tree; errors show up as ERROR/MISSING nodes.
#[allow(
    clippy::expect_used,
    reason = "the grammar is compiled in against this tree-sitter, and parsing without a timeout or cancellation flag always returns a tree"
)]
pub fn parse_python(source: &str) -> Tree {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .expect("the bundled tree-sitter-python grammar matches the tree-sitter ABI");
    parser
        .parse(source, None)
        .expect("parsing without a timeout or cancellation flag always yields a tree")
}

/// True when the source has no syntax error.
pub fn parses_cleanly(source: &str) -> bool {
    !parse_python(source).root_node().has_error()
}

/// Names of the functions (and classes' methods) defined anywhere in the source.
pub fn defined_functions(source: &str) -> Vec<String> {
    let tree = parse_python(source);
    let mut names = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "function_definition"
            && let Some(name) = node.child_by_field_name("name")
        {
            names.push(source[name.byte_range()].to_string());
        }
        stack.extend(node.children(&mut cursor));
    }
    names
}

/// True when the source is exactly one `assert` statement that calls `function` by name.
pub fn is_assert_calling(source: &str, function: &str) -> bool {
    let tree = parse_python(source);
    let root = tree.root_node();
    if root.has_error() || root.named_child_count() != 1 || root.named_child(0).map(|n| n.kind()) != Some("assert_statement") {
        return false;
    }
    let mut cursor = tree.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "call"
            && let Some(callee) = node.child_by_field_name("function")
            && callee.kind() == "identifier"
            && &source[callee.byte_range()] == function
        {
            return true;
        }
        stack.extend(node.children(&mut cursor));
    }
    false
}

/// A unified diff from the previous iteration's code, for events and the Debug agent's history.
pub fn unified_diff(old: &str, new: &str) -> String {
    unified_diff_named(old, new, "previous", "current")
}

/// `unified_diff` with the two sides named (`a/path`, `b/path`: what `git apply` and `patch -p1` take).
pub fn unified_diff_named(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_definitions_and_errors() {
        let src = "def a():\n    return 1\nclass S:\n    def b(self):\n        pass\n";
        let mut names = defined_functions(src);
        names.sort();
        assert_eq!(names, vec!["a", "b"]);
        assert!(parses_cleanly(src));
        assert!(!parses_cleanly("def a(:\n  return"));
    }

    #[test]
    fn diff_marks_changed_lines() {
        let d = unified_diff("x = 1\ny = 2\n", "x = 1\ny = 3\n");
        assert!(d.contains("-y = 2") && d.contains("+y = 3"), "{d}");
    }
}
