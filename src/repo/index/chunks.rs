//! A Python module cut along its concrete syntax tree (tree-sitter): one chunk per function,
//! method and class, and one for the module's top level (its imports and other statements). Each
//! chunk keeps the context it is read in (qodo's chunking): the module's imports and, for a method,
//! the header of its class. The names a chunk uses are kept too; the code graph resolves them.

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

use crate::code::parse_python;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    Function,
    Method,
    Class,
    Module,
}

/// One chunk. Its id is `path/to/mod.py::Name` (`Class.method` for a method, `<module>` for the
/// top level).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub id: String,
    /// Path relative to the project root, `/`-separated.
    pub file: String,
    /// Dotted module name (`pkg.sub.mod`; `pkg` for `pkg/__init__.py`).
    pub module: String,
    pub kind: ChunkKind,
    /// `name`, `Class.method` or `<module>`.
    pub name: String,
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    pub code: String,
    /// `def name(args) -> T:` or `class Name(Bases):`, decorators left out.
    pub signature: String,
    pub docstring: Option<String>,
    /// A method's class header (`class Name(Bases):`).
    pub class_header: Option<String>,
    /// Names the body reads, as written: `helper`, `self.method` (as `self.method`),
    /// `module.func`. The graph resolves them to chunks.
    pub uses: Vec<String>,
    /// A class's bases, as written.
    pub bases: Vec<String>,
}

/// One `import` or `from ... import ...` of a module, resolved to absolute dotted names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Import {
    /// `a.b` for `import a.b` and `from a.b import c`.
    pub module: String,
    /// `c` for `from a.b import c` (`*` for a star import); `None` for `import a.b`.
    pub name: Option<String>,
    /// The name it is bound to here.
    pub alias: String,
}

/// A parsed module: its chunks and imports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Module {
    pub file: String,
    pub module: String,
    pub imports: Vec<Import>,
    /// The import statements as written, the context every chunk of the module carries.
    pub import_text: String,
    pub chunks: Vec<Chunk>,
    pub lines: usize,
}

/// Is `path` (relative to the root) a test file or test helper? Its chunks never go into a
/// solve's context: hidden tests live there, and the visible ones are shown on their own.
pub fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.split('/').any(|part| part == "tests" || part == "test" || part == "testing")
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name == "conftest.py"
}

/// `pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`; a leading `src/` is dropped.
pub fn module_name(file: &str) -> String {
    let path = file.strip_prefix("src/").unwrap_or(file);
    let path = path.strip_suffix(".py").unwrap_or(path);
    let path = path.strip_suffix("/__init__").unwrap_or(path);
    path.replace('/', ".")
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    &source[node.byte_range()]
}

/// The docstring of a function, class or module body, unquoted.
fn docstring(body: Node<'_>, source: &str) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let string = first.named_child(0)?;
    if string.kind() != "string" {
        return None;
    }
    let raw = text(string, source);
    let trimmed = raw.trim_start_matches(|c: char| "rRbBuUfF".contains(c));
    let inner = ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find_map(|q| trimmed.strip_prefix(q).and_then(|s| s.strip_suffix(q)))
        .unwrap_or(trimmed);
    Some(inner.trim().to_string())
}

/// `def f(a, b) -> int:` from a definition node: the text up to the body.
fn header(def: Node<'_>, source: &str) -> String {
    let end = def.child_by_field_name("body").map_or(def.end_byte(), |b| b.start_byte());
    let head = source[def.start_byte()..end].trim_end();
    head.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Names a subtree reads: identifiers, and dotted attribute chains (`a.b.c`) as written.
fn uses(node: Node<'_>, source: &str, out: &mut Vec<String>) {
    match node.kind() {
        "attribute" => {
            let chain = text(node, source);
            if chain.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                out.push(chain.to_string());
                return;
            }
        }
        "identifier" => {
            out.push(text(node, source).to_string());
            return;
        }
        // A nested definition's name is not a use; its body is.
        "string" | "comment" => return,
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        uses(child, source, out);
    }
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(x.clone()));
    v
}

/// Resolves `from ..a import b` inside module `here` (a package's `__init__` is the package).
fn absolute(here: &str, is_package: bool, relative: &str) -> String {
    let dots = relative.chars().take_while(|c| *c == '.').count();
    if dots == 0 {
        return relative.to_string();
    }
    let mut parts: Vec<&str> = here.split('.').collect();
    // One dot is this module's package.
    let up = if is_package { dots - 1 } else { dots };
    for _ in 0..up {
        parts.pop();
    }
    let rest = &relative[dots..];
    let mut base = parts.join(".");
    if !rest.is_empty() {
        if !base.is_empty() {
            base.push('.');
        }
        base.push_str(rest);
    }
    base
}

/// `a.b` or `a.b as c` of an import: the name and its alias, if any.
fn imported_name<'a>(name: Node<'_>, source: &'a str) -> (&'a str, Option<String>) {
    match name.kind() {
        "aliased_import" => (
            name.child_by_field_name("name").map(|n| text(n, source)).unwrap_or(""),
            name.child_by_field_name("alias").map(|n| text(n, source).to_string()),
        ),
        _ => (text(name, source), None),
    }
}

fn imports(root: Node<'_>, source: &str, module: &str, is_package: bool) -> (Vec<Import>, String) {
    let mut found = Vec::new();
    let mut lines = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "import_statement" => {
                lines.push((node.start_byte(), text(node, source).to_string()));
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let (dotted, alias) = imported_name(name, source);
                    let alias = alias.unwrap_or_else(|| dotted.split('.').next().unwrap_or(dotted).to_string());
                    found.push((
                        node.start_byte(),
                        Import {
                            module: dotted.to_string(),
                            name: None,
                            alias,
                        },
                    ));
                }
            }
            "import_from_statement" => {
                lines.push((node.start_byte(), text(node, source).to_string()));
                let from = node.child_by_field_name("module_name").map(|n| text(n, source)).unwrap_or("");
                let from = absolute(module, is_package, from);
                let mut cursor = node.walk();
                if node.named_children(&mut cursor).any(|c| c.kind() == "wildcard_import") {
                    found.push((
                        node.start_byte(),
                        Import {
                            module: from.clone(),
                            name: Some("*".into()),
                            alias: "*".into(),
                        },
                    ));
                }
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let (n, alias) = imported_name(name, source);
                    found.push((
                        node.start_byte(),
                        Import {
                            module: from.clone(),
                            name: Some(n.to_string()),
                            alias: alias.unwrap_or_else(|| n.to_string()),
                        },
                    ));
                }
            }
            // Imports inside functions count too (a common way to dodge import cycles).
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
            }
        }
    }
    lines.sort();
    // In source order (the walk above is depth-first from the end); stable within a statement.
    found.sort_by_key(|(at, _)| *at);
    let text = lines.into_iter().map(|(_, l)| l).collect::<Vec<_>>().join("\n");
    (found.into_iter().map(|(_, i)| i).collect(), text)
}

struct Cutter<'s> {
    source: &'s str,
    file: &'s str,
    module: &'s str,
    chunks: Vec<Chunk>,
}

impl Cutter<'_> {
    fn definition(&mut self, node: Node<'_>, class: Option<(&str, &str)>) {
        let def = match node.kind() {
            "decorated_definition" => match node.child_by_field_name("definition") {
                Some(d) => d,
                None => return,
            },
            _ => node,
        };
        let Some(name) = def.child_by_field_name("name").map(|n| text(n, self.source).to_string()) else {
            return;
        };
        let body = def.child_by_field_name("body");
        let (kind, qualified) = match (def.kind(), class) {
            ("function_definition", Some((c, _))) => (ChunkKind::Method, format!("{c}.{name}")),
            ("function_definition", None) => (ChunkKind::Function, name.clone()),
            ("class_definition", Some((c, _))) => (ChunkKind::Class, format!("{c}.{name}")),
            ("class_definition", None) => (ChunkKind::Class, name.clone()),
            _ => return,
        };
        let is_class = def.kind() == "class_definition";
        let mut used = Vec::new();
        // A class chunk is its skeleton: header, docstring, class-level statements and the
        // signatures of its methods (which are chunks of their own), so its text never carries
        // a method's body.
        let mut skeleton = Vec::new();
        if let Some(b) = body {
            if is_class {
                let mut cursor = b.walk();
                for child in b.named_children(&mut cursor) {
                    let inner = match child.kind() {
                        "decorated_definition" => child.child_by_field_name("definition").unwrap_or(child),
                        _ => child,
                    };
                    if matches!(inner.kind(), "function_definition" | "class_definition") {
                        skeleton.push(format!("    {} ...", header(inner, self.source)));
                    } else {
                        uses(child, self.source, &mut used);
                        skeleton.push(format!("    {}", text(child, self.source)));
                    }
                }
            } else {
                uses(b, self.source, &mut used);
            }
        }
        // Defaults and annotations are read too.
        if let Some(p) = def.child_by_field_name("parameters") {
            uses(p, self.source, &mut used);
        }
        let mut bases = Vec::new();
        if let Some(args) = def.child_by_field_name("superclasses") {
            let mut cursor = args.walk();
            for a in args.named_children(&mut cursor) {
                if matches!(a.kind(), "identifier" | "attribute") {
                    bases.push(text(a, self.source).to_string());
                }
            }
            uses(args, self.source, &mut used);
        }
        let signature = header(def, self.source);
        let code = if is_class {
            let head = &self.source[node.start_byte()..body.map_or(def.end_byte(), |b| b.start_byte())];
            format!("{}\n{}", head.trim_end(), skeleton.join("\n"))
        } else {
            // From the start of its line, so a method keeps its indentation on every line.
            let line_start = self.source[..node.start_byte()].rfind('\n').map_or(0, |i| i + 1);
            let from = if self.source[line_start..node.start_byte()].trim().is_empty() {
                line_start
            } else {
                node.start_byte()
            };
            self.source[from..node.end_byte()].to_string()
        };
        self.chunks.push(Chunk {
            id: format!("{}::{qualified}", self.file),
            file: self.file.to_string(),
            module: self.module.to_string(),
            kind,
            name: qualified.clone(),
            start_line: node.start_position().row + 1,
            end_line: node.end_position().row + 1,
            code,
            signature: signature.clone(),
            docstring: body.and_then(|b| docstring(b, self.source)),
            class_header: class.map(|(_, h)| h.to_string()),
            uses: dedup(used),
            bases,
        });
        // A class's methods (and nested classes) are chunks of their own.
        if def.kind() == "class_definition"
            && let Some(b) = body
        {
            let mut cursor = b.walk();
            for child in b.named_children(&mut cursor) {
                if matches!(child.kind(), "function_definition" | "class_definition" | "decorated_definition") {
                    self.definition(child, Some((&qualified, &signature)));
                }
            }
        }
    }
}

/// Cuts one module. `None` when it does not parse (the caller lists it and goes on).
pub fn cut(file: &str, source: &str) -> Result<Module, usize> {
    let tree = parse_python(source);
    let root = tree.root_node();
    if root.has_error() {
        return Err(first_error_line(root).unwrap_or(1));
    }
    let module = module_name(file);
    let is_package = file.ends_with("__init__.py");
    let (imports, import_text) = imports(root, source, &module, is_package);
    let mut cutter = Cutter {
        source,
        file,
        module: &module,
        chunks: Vec::new(),
    };
    let mut top = Vec::new();
    let mut top_uses = Vec::new();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        match node.kind() {
            "function_definition" | "class_definition" | "decorated_definition" => cutter.definition(node, None),
            "import_statement" | "import_from_statement" | "comment" => {}
            _ => {
                uses(node, source, &mut top_uses);
                top.push(text(node, source).to_string());
            }
        }
    }
    let lines = source.lines().count();
    let mut chunks = vec![Chunk {
        id: format!("{file}::<module>"),
        file: file.to_string(),
        module: module.clone(),
        kind: ChunkKind::Module,
        name: "<module>".into(),
        start_line: 1,
        end_line: lines.max(1),
        code: top.join("\n"),
        signature: format!("module {module}"),
        docstring: docstring(root, source),
        class_header: None,
        uses: dedup(top_uses),
        bases: Vec::new(),
    }];
    chunks.extend(cutter.chunks);
    Ok(Module {
        file: file.to_string(),
        module,
        imports,
        import_text,
        chunks,
        lines,
    })
}

fn first_error_line(node: Node<'_>) -> Option<usize> {
    if node.is_error() || node.is_missing() {
        return Some(node.start_position().row + 1);
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).find_map(first_error_line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::bm25::split_identifiers;

    #[test]
    fn test_files_are_recognised() {
        for p in [
            "tests/test_a.py",
            "pkg/tests/helpers.py",
            "test_x.py",
            "pkg/x_test.py",
            "conftest.py",
        ] {
            assert!(is_test_file(p), "{p}");
        }
        for p in ["pkg/core.py", "pkg/testament.py", "contest.py"] {
            assert!(!is_test_file(p), "{p}");
        }
    }

    const SOURCE: &str = r#""""Tools."""
import os.path as osp
from .helpers import norm, scale as sc
from .. import base

LIMIT = compute_limit()

def top(a, b=LIMIT):
    """Adds."""
    return norm(a) + sc(b)

class Shape(base.Thing):
    """A shape."""
    def area(self):
        return self.width() * osp.sep

    @property
    def width(self):
        return 1
"#;

    #[test]
    fn cuts_functions_methods_classes_and_the_top_level_with_their_context() {
        let m = cut("pkg/geo/tools.py", SOURCE).unwrap();
        assert_eq!(m.module, "pkg.geo.tools");
        let ids: Vec<&str> = m.chunks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "pkg/geo/tools.py::<module>",
                "pkg/geo/tools.py::top",
                "pkg/geo/tools.py::Shape",
                "pkg/geo/tools.py::Shape.area",
                "pkg/geo/tools.py::Shape.width"
            ]
        );
        let top = &m.chunks[1];
        assert_eq!(top.signature, "def top(a, b=LIMIT):");
        assert_eq!(top.docstring.as_deref(), Some("Adds."));
        assert!(
            top.uses.contains(&"norm".to_string()) && top.uses.contains(&"LIMIT".to_string()),
            "{:?}",
            top.uses
        );
        let area = &m.chunks[3];
        assert_eq!(area.kind, ChunkKind::Method);
        assert_eq!(area.class_header.as_deref(), Some("class Shape(base.Thing):"));
        assert!(area.uses.contains(&"self.width".to_string()) && area.uses.contains(&"osp.sep".to_string()));
        assert_eq!(m.chunks[2].bases, ["base.Thing"]);
        assert_eq!(
            m.chunks[2].code,
            "class Shape(base.Thing):\n    \"\"\"A shape.\"\"\"\n    def area(self): ...\n    def width(self): ..."
        );
        assert_eq!((m.chunks[4].start_line, m.chunks[4].end_line), (17, 19), "decorators included");
        let imports: Vec<(&str, Option<&str>, &str)> = m
            .imports
            .iter()
            .map(|i| (i.module.as_str(), i.name.as_deref(), i.alias.as_str()))
            .collect();
        assert_eq!(
            imports,
            [
                ("os.path", None, "osp"),
                ("pkg.geo.helpers", Some("norm"), "norm"),
                ("pkg.geo.helpers", Some("scale"), "sc"),
                ("pkg", Some("base"), "base")
            ]
        );
        assert!(m.import_text.starts_with("import os.path as osp\nfrom .helpers"));
    }

    #[test]
    fn a_file_that_does_not_parse_names_its_line() {
        assert_eq!(cut("bad.py", "def ok():\n    return 1\n\ndef broken(:\n"), Err(4));
    }

    #[test]
    fn identifiers_become_words() {
        assert_eq!(
            split_identifiers("def takeWhile_v2(xs): return HTTPServer"),
            "def take while v2 xs return httpserver"
        );
    }
}
