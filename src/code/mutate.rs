//! Single-fault mutants of a module (`rgd bench locate`): faults no one here wrote, planted by
//! tree-sitter mutation operators inside functions: comparison and arithmetic operator swaps,
//! `and`/`or` swaps, off-by-one integer constants, negated conditions, a dropped call statement,
//! the first two positional arguments of a call swapped.

use tree_sitter::Node;

use super::parse_python;

/// One mutant: where, what, and the module's text with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutant {
    /// The function holding the fault (`name`, `Class.name`; an inner function counts for the
    /// function holding it, as the spectra do).
    pub function: String,
    /// 1-based line of the change.
    pub line: usize,
    pub operator: &'static str,
    /// The whole module with the change.
    pub text: String,
}

/// `name` or `Class.name` of the outermost function holding `node`, if any.
fn holder(node: Node, source: &str) -> Option<String> {
    let mut chain = Vec::new();
    let mut at = node.parent();
    while let Some(n) = at {
        if matches!(n.kind(), "function_definition" | "class_definition")
            && let Some(name) = n.child_by_field_name("name")
        {
            chain.push((n.kind(), source[name.byte_range()].to_string()));
        }
        at = n.parent();
    }
    chain.reverse();
    // Classes down to the first function; what is inside that function belongs to it.
    let first_fn = chain.iter().position(|(k, _)| *k == "function_definition")?;
    Some(chain[..=first_fn].iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join("."))
}

fn swap(op: &str) -> Option<&'static str> {
    Some(match op {
        "<" => "<=",
        "<=" => "<",
        ">" => ">=",
        ">=" => ">",
        "==" => "!=",
        "!=" => "==",
        "+" => "-",
        "-" => "+",
        "*" => "+",
        "and" => "or",
        "or" => "and",
        _ => return None,
    })
}

/// Every mutant of `source` the operators make, in source order.
pub fn mutants(source: &str) -> Vec<Mutant> {
    let tree = parse_python(source);
    if tree.root_node().has_error() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    let mut cursor = tree.walk();
    while let Some(node) = stack.pop() {
        stack.extend(node.children(&mut cursor).collect::<Vec<_>>().into_iter().rev());
        let change: Option<(usize, usize, String, &'static str)> = match node.kind() {
            "comparison_operator" | "binary_operator" | "boolean_operator" => {
                let op = node
                    .child_by_field_name("operator")
                    .or_else(|| (0..node.child_count()).filter_map(|i| node.child(i)).find(|c| !c.is_named()));
                op.and_then(|o| {
                    let text = &source[o.byte_range()];
                    swap(text).map(|to| (o.start_byte(), o.end_byte(), to.to_string(), "operator swap"))
                })
            }
            "integer" => source[node.byte_range()]
                .parse::<i64>()
                .ok()
                .map(|n| (node.start_byte(), node.end_byte(), (n + 1).to_string(), "off by one")),
            "if_statement" | "while_statement" => node.child_by_field_name("condition").map(|c| {
                (
                    c.start_byte(),
                    c.end_byte(),
                    format!("not ({})", &source[c.byte_range()]),
                    "negated condition",
                )
            }),
            // f(a, b) -> f(b, a): the first two of two or more plain positional arguments.
            "argument_list" => {
                let mut cursor = node.walk();
                let args: Vec<Node> = node.named_children(&mut cursor).filter(|a| a.kind() != "comment").collect();
                let plain = |a: &Node| {
                    !matches!(
                        a.kind(),
                        "keyword_argument" | "list_splat" | "dictionary_splat" | "parenthesized_expression" | "generator_expression"
                    )
                };
                match args.as_slice() {
                    [a, b, ..] if plain(a) && plain(b) && source[a.byte_range()] != source[b.byte_range()] => Some((
                        a.start_byte(),
                        b.end_byte(),
                        format!(
                            "{}{}{}",
                            &source[b.byte_range()],
                            &source[a.end_byte()..b.start_byte()],
                            &source[a.byte_range()]
                        ),
                        "swapped arguments",
                    )),
                    _ => None,
                }
            }
            "expression_statement" if node.named_child(0).is_some_and(|c| c.kind() == "call") => {
                Some((node.start_byte(), node.end_byte(), "pass".to_string(), "dropped statement"))
            }
            _ => None,
        };
        let (Some((start, end, with, operator)), Some(function)) = (change, holder(node, source)) else {
            continue;
        };
        let text = format!("{}{}{}", &source[..start], with, &source[end..]);
        if super::parses_cleanly(&text) {
            out.push(Mutant {
                function,
                line: node.start_position().row + 1,
                operator,
                text,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_plant_one_fault_inside_a_function_and_name_it() {
        let src = "LIMIT = 3\n\n\nclass Cart:\n    def total(self, xs):\n        if len(xs) > 2:\n            log(xs, limit)\n        return sum(x + 1 for x in xs if x and x != 0)\n";
        let all = mutants(src);
        // Nothing at the module level (LIMIT = 3 is no function's).
        assert!(all.iter().all(|m| m.function == "Cart.total"), "{all:?}");
        let ops: Vec<&str> = all.iter().map(|m| m.operator).collect();
        for op in [
            "operator swap",
            "off by one",
            "negated condition",
            "dropped statement",
            "swapped arguments",
        ] {
            assert!(ops.contains(&op), "{op}: {ops:?}");
        }
        assert!(all.iter().any(|m| m.text.contains("if len(xs) >= 2:")));
        assert!(all.iter().any(|m| m.text.contains("if not (len(xs) > 2):")));
        assert!(all.iter().any(|m| m.text.contains("x - 1 for x")));
        assert!(all.iter().any(|m| m.text.contains("x or x != 0")));
        assert!(all.iter().any(|m| m.text.contains("            pass\n")));
        assert!(all.iter().any(|m| m.text.contains("log(limit, xs)")), "{all:?}");
        assert!(!all.iter().any(|m| m.text.starts_with("LIMIT = 4")));
        // Each is one change away from the original, and parses.
        assert!(all.iter().all(|m| m.text != src && crate::code::parses_cleanly(&m.text)));
    }
}
