//! A program as a tree of functions (MGDebugger): its top-level functions, which of them each
//! calls, and the order that debugs callees before their callers.

use super::parse_python;

/// A top-level function and the other top-level functions it calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopFunction {
    pub name: String,
    /// Its source, decorators included.
    pub source: String,
    pub calls: Vec<String>,
}

/// The top-level functions of `source` in the order they are written (classes and nested
/// functions belong to the function or statement that holds them).
pub fn top_functions(source: &str) -> Vec<TopFunction> {
    let tree = parse_python(source);
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut found: Vec<(String, String, Vec<String>)> = Vec::new();
    for node in root.named_children(&mut cursor) {
        let def = match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition"),
            "function_definition" => Some(node),
            _ => None,
        };
        let Some(def) = def.filter(|d| d.kind() == "function_definition") else {
            continue;
        };
        let Some(name) = def.child_by_field_name("name") else {
            continue;
        };
        // Every name called inside, by plain identifier.
        let mut called = Vec::new();
        let mut walk = def.walk();
        let mut stack = vec![def];
        while let Some(n) = stack.pop() {
            if n.kind() == "call"
                && let Some(callee) = n.child_by_field_name("function")
                && callee.kind() == "identifier"
            {
                called.push((callee.start_byte(), source[callee.byte_range()].to_string()));
            }
            stack.extend(n.children(&mut walk));
        }
        // In the order they are written.
        called.sort();
        let called: Vec<String> = called.into_iter().map(|(_, name)| name).collect();
        found.push((source[name.byte_range()].to_string(), source[node.byte_range()].to_string(), called));
    }
    // A name defined twice is its last definition, as Python binds it.
    let mut kept: Vec<(String, String, Vec<String>)> = Vec::new();
    for f in found {
        kept.retain(|(n, _, _)| *n != f.0);
        kept.push(f);
    }
    let found = kept;
    let names: Vec<String> = found.iter().map(|(n, _, _)| n.clone()).collect();
    found
        .into_iter()
        .map(|(name, source, called)| {
            let mut calls: Vec<String> = Vec::new();
            for c in called {
                if c != name && names.contains(&c) && !calls.contains(&c) {
                    calls.push(c);
                }
            }
            TopFunction { name, source, calls }
        })
        .collect()
}

/// Callees before callers, starting from `entry` (functions it never reaches are left out);
/// among functions ready at once, the one written first goes first, and a cycle is broken at
/// the function written first.
pub fn bottom_up(functions: &[TopFunction], entry: &str) -> Vec<String> {
    let by_name = |n: &str| functions.iter().position(|f| f.name == n);
    // What the entry reaches.
    let mut reached = vec![false; functions.len()];
    let mut stack: Vec<usize> = by_name(entry).into_iter().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut reached[i], true) {
            continue;
        }
        stack.extend(functions[i].calls.iter().filter_map(|c| by_name(c)));
    }
    let mut order = Vec::new();
    let mut done = vec![false; functions.len()];
    while order.len() < reached.iter().filter(|r| **r).count() {
        let ready = (0..functions.len())
            .find(|&i| reached[i] && !done[i] && functions[i].calls.iter().filter_map(|c| by_name(c)).all(|j| done[j] || j == i));
        // A cycle: take the first function still waiting.
        let Some(next) = ready.or_else(|| (0..functions.len()).find(|&i| reached[i] && !done[i])) else {
            break;
        };
        done[next] = true;
        order.push(functions[next].name.clone());
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "import math\n\ndef main(xs):\n    ys = clean(xs)\n    return total(ys)\n\ndef clean(xs):\n    return [x for x in xs if keep(x)]\n\ndef keep(x):\n    return x > 0\n\ndef total(ys):\n    return sum(ys)\n\ndef unused():\n    return main([])\n";

    #[test]
    fn callees_come_before_their_callers_and_unreached_functions_are_left_out() {
        let functions = top_functions(PROGRAM);
        assert_eq!(
            functions.iter().map(|f| (f.name.as_str(), f.calls.clone())).collect::<Vec<_>>(),
            [
                ("main", vec!["clean".to_string(), "total".to_string()]),
                ("clean", vec!["keep".to_string()]),
                ("keep", vec![]),
                ("total", vec![]),
                ("unused", vec!["main".to_string()]),
            ]
        );
        assert_eq!(bottom_up(&functions, "main"), ["keep", "clean", "total", "main"]);
    }

    #[test]
    fn a_cycle_is_broken_and_recursion_is_no_dependency() {
        let source =
            "def f(n):\n    return g(n) if n else 0\n\ndef g(n):\n    return f(n - 1)\n\ndef h(n):\n    return h(n - 1) if n else 1\n";
        let functions = top_functions(source);
        assert_eq!(bottom_up(&functions, "f"), ["f", "g"]);
        assert_eq!(bottom_up(&functions, "h"), ["h"]);
        // Defined twice: the last definition is the function.
        let twice = top_functions("def f():\n    return 1\n\ndef g():\n    return f()\n\ndef f():\n    return g()\n");
        assert_eq!(twice.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["g", "f"]);
        assert!(twice[1].source.contains("return g()"));
        assert!(bottom_up(&functions, "missing").is_empty());
    }
}
