//! A task from a user's own file (`rgd solve`): one function of a module, and tests written as
//! plain `assert` lines or pytest-style `test_*` functions. Written out as a one-line dataset in
//! the LDB format (plus the whole module), so the run resumes, replays and forks like any other.

use std::path::Path;

use serde_json::json;

use crate::code::{find_function, parse_python, stubbed};

/// The task record, and whether the function is a stub (written from scratch) or code to repair.
pub struct UserTask {
    pub record: serde_json::Value,
    pub task_id: String,
    pub is_stub: bool,
    /// The file as it is now: the program of the first iteration when the function has code.
    pub module: String,
    /// Hidden tests were given.
    pub has_hidden: bool,
}

/// Reads `file`'s function `entry` and the test files.
pub fn user_task(file: &Path, entry: &str, tests: Option<&Path>, hidden: Option<&Path>) -> anyhow::Result<UserTask> {
    let module = read(file)?;
    let site = find_function(&module, entry).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let module_name = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let visible = match tests {
        Some(path) => test_sources(path, &read(path)?, &module_name)?,
        None => Vec::new(),
    };
    let hidden_tests = match hidden {
        Some(path) => test_sources(path, &read(path)?, &module_name)?,
        None => Vec::new(),
    };
    if visible.is_empty() && hidden_tests.is_empty() {
        anyhow::bail!("no tests: give --tests (and --hidden) files with assert lines or test_* functions");
    }
    // The hidden tests run as one `check`: a run learns only whether they all passed.
    let check = if hidden_tests.is_empty() {
        "def check(candidate):\n    pass\n".to_string()
    } else {
        let body: String = hidden_tests.iter().flat_map(|t| t.lines().map(|l| format!("    {l}\n"))).collect();
        format!("def check(candidate):\n{body}")
    };
    let task_id = format!("{module_name}.py::{entry}");
    let prompt = format!(
        "{}\n\n(From the file {}: write the function `{entry}`; the rest of the module stays as it is.)\n",
        stubbed(&module, &site).trim_end(),
        file.file_name().and_then(|s| s.to_str()).unwrap_or_default()
    );
    Ok(UserTask {
        record: json!({
            "task_id": task_id,
            "entry_point": entry,
            "prompt": prompt,
            "given_tests": visible,
            "test": check,
            "module": module,
        }),
        task_id,
        is_stub: site.is_stub,
        module,
        has_hidden: !hidden_tests.is_empty(),
    })
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))
}

/// One source per test: each top-level `assert`, and each `test_*` function followed by its call.
/// Everything else at the top level (imports, helpers, constants) goes in front of every test;
/// imports of the module under test are dropped (its names are the tests' globals already).
pub fn test_sources(path: &Path, source: &str, module_name: &str) -> anyhow::Result<Vec<String>> {
    let at = |line: usize, what: &str| anyhow::anyhow!("{} line {line}: {what}", path.display());
    let tree = parse_python(source);
    let root = tree.root_node();
    if root.has_error() {
        let line = error_line(root);
        return Err(at(line, "syntax error"));
    }
    let mut prelude = String::new();
    let mut tests = Vec::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        let text = &source[node.byte_range()];
        let line = node.start_position().row + 1;
        let def = match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition"),
            "function_definition" => Some(node),
            _ => None,
        };
        let test_name = def
            .and_then(|d| d.child_by_field_name("name"))
            .map(|n| &source[n.byte_range()])
            .filter(|n| n.starts_with("test"));
        match (node.kind(), test_name) {
            ("assert_statement", _) => tests.push(text.to_string()),
            (_, Some(name)) => {
                let takes_arguments = def
                    .and_then(|d| d.child_by_field_name("parameters"))
                    .is_some_and(|p| p.named_child_count() > 0);
                if takes_arguments || node.kind() == "decorated_definition" {
                    return Err(at(
                        line,
                        &format!("{name} takes fixtures or parameters; rgd runs plain test functions (write the cases out)"),
                    ));
                }
                tests.push(format!("{text}\n{name}()"));
            }
            ("import_from_statement", _) if imports_module(node, source, module_name) => {}
            ("import_statement", _) if imports_module(node, source, module_name) => {}
            ("expression_statement", _) if text.starts_with("if __name__") => {}
            ("if_statement", _) if text.starts_with("if __name__") => {}
            _ => {
                prelude.push_str(text);
                prelude.push('\n');
            }
        }
    }
    if tests.is_empty() {
        return Err(at(1, "no assert lines or test_* functions"));
    }
    Ok(tests.into_iter().map(|t| format!("{prelude}{t}")).collect())
}

fn imports_module(node: tree_sitter::Node, source: &str, module_name: &str) -> bool {
    let field = if node.kind() == "import_from_statement" {
        "module_name"
    } else {
        "name"
    };
    let mut cursor = node.walk();
    node.children_by_field_name(field, &mut cursor).any(|n| {
        let name = &source[n.byte_range()];
        name == module_name || name.starts_with(&format!("{module_name} ")) || name.ends_with(&format!(".{module_name}"))
    })
}

fn error_line(node: tree_sitter::Node) -> usize {
    if node.is_error() || node.is_missing() {
        return node.start_position().row + 1;
    }
    let mut cursor = node.walk();
    let children: Vec<tree_sitter::Node> = node.children(&mut cursor).collect();
    children
        .into_iter()
        .find(|c| c.has_error() || c.is_error() || c.is_missing())
        .map(error_line)
        .unwrap_or(node.start_position().row + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asserts_and_test_functions_become_tests_with_the_files_other_lines_in_front() {
        let src = "import math\nfrom geometry import area\n\nR = 2\n\nassert area(1) == math.pi\n\ndef test_two():\n    assert area(R) == 4 * math.pi\n\ndef helper():\n    return 1\n";
        let tests = test_sources(Path::new("t.py"), src, "geometry").unwrap();
        assert_eq!(tests.len(), 2);
        assert_eq!(
            tests[0],
            "import math\nR = 2\ndef helper():\n    return 1\nassert area(1) == math.pi"
        );
        assert!(tests[1].ends_with("def test_two():\n    assert area(R) == 4 * math.pi\ntest_two()"));
    }

    #[test]
    fn bad_test_files_name_the_file_and_line() {
        let e = test_sources(Path::new("t.py"), "x = 1\nassert f(1 ==\n", "m").unwrap_err();
        assert!(e.to_string().starts_with("t.py line 2: syntax error"), "{e}");
        let e = test_sources(Path::new("t.py"), "\ndef test_a(tmp_path):\n    pass\n", "m").unwrap_err();
        assert!(e.to_string().starts_with("t.py line 2: test_a takes fixtures"), "{e}");
        let e = test_sources(Path::new("t.py"), "x = 1\n", "m").unwrap_err();
        assert_eq!(e.to_string(), "t.py line 1: no assert lines or test_* functions");
    }
}
