//! One function of a user's file (`rgd solve`): finding it, showing it as a stub to the agents,
//! and putting the agents' version back in its place, with any helper or import it brought.

use tree_sitter::Node;

use super::parse_python;

/// A top-level function of a module.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// Bytes of the whole definition, decorators included.
    pub start: usize,
    pub end: usize,
    /// 1-based line of the `def`.
    pub line: usize,
    /// The body is only a docstring, `pass`, `...` or `raise NotImplementedError`.
    pub is_stub: bool,
    /// `def name(...):` (with decorators) and its docstring, if any: the function as a spec.
    pub spec: String,
}

/// The top-level definitions of a module: name, node (the decorated one when decorated).
fn top_level<'t>(root: Node<'t>, source: &str) -> Vec<(String, Node<'t>)> {
    let mut cursor = root.walk();
    root.named_children(&mut cursor)
        .filter_map(|node| {
            let def = match node.kind() {
                "decorated_definition" => node.child_by_field_name("definition")?,
                "function_definition" | "class_definition" => node,
                _ => return None,
            };
            let name = def.child_by_field_name("name")?;
            Some((source[name.byte_range()].to_string(), node))
        })
        .collect()
}

/// The function `name` defined at the top level of `source`, or why it cannot be used.
pub fn find_function(source: &str, name: &str) -> Result<Site, String> {
    let tree = parse_python(source);
    let root = tree.root_node();
    if root.has_error() {
        let line = first_error_line(root).unwrap_or(1);
        return Err(format!("line {line}: syntax error"));
    }
    let defs = top_level(root, source);
    let Some((_, node)) = defs.iter().find(|(n, _)| n == name) else {
        let names: Vec<&str> = defs.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
            "no top-level function `{name}` (defined here: {})",
            if names.is_empty() { "nothing".into() } else { names.join(", ") }
        ));
    };
    let def = match node.kind() {
        "decorated_definition" => node.child_by_field_name("definition").unwrap_or(*node),
        _ => *node,
    };
    if def.kind() != "function_definition" {
        return Err(format!("`{name}` is a class, not a function"));
    }
    let body = def.child_by_field_name("body").ok_or_else(|| format!("`{name}` has no body"))?;
    let mut cursor = body.walk();
    let statements: Vec<Node> = body.named_children(&mut cursor).filter(|n| n.kind() != "comment").collect();
    let docstring = statements.first().filter(|s| is_docstring(**s));
    let is_stub = statements.iter().all(|s| is_docstring(*s) || is_placeholder(*s, source));
    let header_end = body.start_byte();
    let mut spec = source[node.start_byte()..header_end].trim_end().to_string();
    let indent = " ".repeat(body.start_position().column);
    match docstring {
        Some(doc) => spec.push_str(&format!("\n{indent}{}\n", &source[doc.byte_range()])),
        None => spec.push_str(&format!("\n{indent}...\n")),
    }
    Ok(Site {
        start: node.start_byte(),
        end: node.end_byte(),
        line: def.start_position().row + 1,
        is_stub,
        spec,
    })
}

fn first_error_line(node: Node) -> Option<usize> {
    if node.is_error() || node.is_missing() {
        return Some(node.start_position().row + 1);
    }
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|c| c.has_error() || c.is_error() || c.is_missing())
        .find_map(first_error_line)
}

fn is_docstring(node: Node) -> bool {
    node.kind() == "expression_statement" && node.named_child(0).is_some_and(|c| c.kind() == "string")
}

fn is_placeholder(node: Node, source: &str) -> bool {
    let text = source[node.byte_range()].trim();
    node.kind() == "pass_statement" || text == "..." || (node.kind() == "raise_statement" && text.contains("NotImplementedError"))
}

/// The module as the agents see it: the function reduced to its signature and docstring.
pub fn stubbed(source: &str, site: &Site) -> String {
    format!("{}{}{}", &source[..site.start], site.spec, &source[site.end..])
}

/// `module` with the agents' definition of `name` (from `code`) in place of its own; helpers the
/// code defines that the module lacks go just before it, imports it adds go at the top. Code
/// without a top-level `name` is returned as it is (the extractor only hands over code defining it).
pub fn splice(module: &str, name: &str, code: &str) -> String {
    let (Ok(site), new_tree) = (find_function(module, name), parse_python(code)) else {
        return code.to_string();
    };
    let new_root = new_tree.root_node();
    let theirs = top_level(new_root, code);
    let Some((_, new_def)) = theirs.iter().find(|(n, _)| n == name) else {
        return code.to_string();
    };
    let module_tree = parse_python(module);
    let ours: Vec<String> = top_level(module_tree.root_node(), module).into_iter().map(|(n, _)| n).collect();
    let helpers: Vec<&str> = theirs
        .iter()
        .filter(|(n, _)| n != name && !ours.contains(n))
        .map(|(_, node)| &code[node.byte_range()])
        .collect();
    let mut cursor = new_root.walk();
    let imports: Vec<&str> = new_root
        .named_children(&mut cursor)
        .filter(|n| matches!(n.kind(), "import_statement" | "import_from_statement"))
        .map(|n| &code[n.byte_range()])
        .filter(|line| !module.lines().any(|l| l.trim() == line.trim()))
        .collect();
    let mut out = String::new();
    for import in &imports {
        out.push_str(import);
        out.push('\n');
    }
    out.push_str(&module[..site.start]);
    for helper in helpers {
        out.push_str(helper);
        out.push_str("\n\n\n");
    }
    out.push_str(&code[new_def.byte_range()]);
    out.push_str(&module[site.end..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "import math\n\n\ndef helper(x):\n    return x * 2\n\n\ndef area(r):\n    \"\"\"Area of a circle of radius r.\"\"\"\n    return math.pi * r\n\n\nprint('loaded')\n";

    #[test]
    fn a_buggy_function_is_found_and_shown_as_its_spec() {
        let site = find_function(MODULE, "area").unwrap();
        assert_eq!(site.line, 8);
        assert!(!site.is_stub);
        assert_eq!(site.spec, "def area(r):\n    \"\"\"Area of a circle of radius r.\"\"\"\n");
        let shown = stubbed(MODULE, &site);
        assert!(shown.contains("def helper(x):") && !shown.contains("math.pi * r"), "{shown}");
    }

    #[test]
    fn stubs_are_told_from_implementations() {
        for body in ["pass", "...", "raise NotImplementedError", "\"\"\"Doc.\"\"\"\n    pass"] {
            let src = format!("def f(x):\n    {body}\n");
            assert!(find_function(&src, "f").unwrap().is_stub, "{body}");
        }
        assert!(!find_function("def f(x):\n    return 1\n", "f").unwrap().is_stub);
    }

    #[test]
    fn missing_functions_classes_and_syntax_errors_say_what_and_where() {
        assert_eq!(
            find_function(MODULE, "volume").unwrap_err(),
            "no top-level function `volume` (defined here: helper, area)"
        );
        assert_eq!(
            find_function("class C:\n    pass\n", "C").unwrap_err(),
            "`C` is a class, not a function"
        );
        assert_eq!(
            find_function("x = 1\ndef f(:\n    pass\n", "f").unwrap_err(),
            "line 2: syntax error"
        );
    }

    #[test]
    fn the_new_definition_replaces_the_old_and_brings_its_helpers_and_imports() {
        let code = "import math\nfrom functools import lru_cache\n\ndef square(x):\n    return x * x\n\ndef helper(x):\n    return 0\n\ndef area(r):\n    return math.pi * square(r)\n";
        let out = splice(MODULE, "area", code);
        assert_eq!(
            out,
            "from functools import lru_cache\nimport math\n\n\ndef helper(x):\n    return x * 2\n\n\ndef square(x):\n    return x * x\n\n\ndef area(r):\n    return math.pi * square(r)\n\n\nprint('loaded')\n"
        );
    }
}
