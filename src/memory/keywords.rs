//! Keywords from code without an LLM: what tree-sitter-python finds (defined and called functions,
//! imported modules, attributes used). Merged with the Keywords agent's answer
//! (`agents::parse_keywords`), they keep the keyword field useful when that answer is poor.

use std::collections::BTreeSet;

use crate::code::parse_python;

pub fn code_keywords(code: &str) -> Vec<String> {
    let tree = parse_python(code);
    let mut found = BTreeSet::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    let text = |n: tree_sitter::Node| code[n.byte_range()].to_string();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "function_definition" | "class_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    found.insert(text(name));
                }
            }
            "call" => {
                if let Some(f) = node.child_by_field_name("function") {
                    let name = match f.kind() {
                        "attribute" => f.child_by_field_name("attribute").map(text),
                        "identifier" => Some(text(f)),
                        _ => None,
                    };
                    found.extend(name);
                }
            }
            "import_statement" | "import_from_statement" => {
                for i in 0..node.named_child_count() {
                    if let Some(child) = node.named_child(i as u32)
                        && matches!(child.kind(), "dotted_name" | "aliased_import")
                    {
                        let name = child.child_by_field_name("name").map_or_else(|| text(child), text);
                        found.insert(name);
                    }
                }
            }
            _ => {}
        }
        stack.extend(node.children(&mut cursor));
    }
    found.into_iter().filter(|k| k.len() > 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_definitions_calls_and_imports() {
        let code = "import heapq\nfrom collections import Counter\n\ndef sort_matrix(m):\n    c = Counter(x for r in m for x in r)\n    return sorted(m, key=sum) + heapq.nsmallest(2, c)\n";
        let k = code_keywords(code);
        for want in ["sort_matrix", "Counter", "sorted", "heapq", "nsmallest", "collections"] {
            assert!(k.contains(&want.to_string()), "{want} missing from {k:?}");
        }
    }
}
