//! The tests' half of an isolated repository target (`sandbox/rgd_isolate/`): in the tests'
//! copy of the module the target's body becomes one call into the program's process, under the
//! target's own decorators (the program's process calls the function bare, so none applies twice).

use tree_sitter::Node;

use super::parse_python;
use super::splice::{definitions, is_docstring, locate};

/// The tests' half for a program that repairs `qualname` in `source` (the project's module): the
/// forwarding stub under the function's own signature, or, when the program gave the function
/// another signature (a repair that adds a parameter its callers pass), under `(*rgd_args,
/// **rgd_kwargs)`, so every call reaches the program's process, which binds the arguments with
/// its own signature (a call that does not fit raises its TypeError there). The program's
/// signature is only compared, never put in the tests' process: its defaults and annotations are
/// code, which the tests' process must not run.
///
/// A program that changes the function's decorators or whether it yields cannot be forwarded:
/// the tests' half applies the module's decorators around a stub of the module's kind, and the
/// program's process calls its function bare (click's `_nullpager` became a
/// `contextlib.contextmanager` generator: its callers would get the generator, not the manager).
pub fn forwarding_stub_for(source: &str, program: &str, qualname: &str) -> Result<String, String> {
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let shape = |text: &str| -> Option<(String, String, bool)> {
        let tree = parse_python(text);
        let (node, def, _) = locate(tree.root_node(), text, qualname)?;
        let params = def.child_by_field_name("parameters")?;
        let decorators = flat(&text[node.start_byte()..def.start_byte()]);
        let generator = def.child_by_field_name("body").is_some_and(yields);
        Some((flat(&text[params.byte_range()]), decorators, generator))
    };
    match (shape(source), shape(program)) {
        (Some((_, a, _)), Some((_, b, _))) if a != b => Err(format!(
            "the program changes the decorators of `{qualname}`, which run in the tests' process"
        )),
        (Some((_, _, x)), Some((_, _, y))) if x != y => Err(format!("the program changes whether `{qualname}` is a generator")),
        (Some((a, _, _)), Some((b, _, _))) if a != b => generic_stub(source, qualname),
        _ => forwarding_stub(source, qualname),
    }
}

/// `forwarding_stub` with the parameters replaced by `(*rgd_args, **rgd_kwargs)` (the lines they
/// took kept, so the module's other lines keep their numbers).
fn generic_stub(source: &str, qualname: &str) -> Result<String, String> {
    let tree = parse_python(source);
    let (_, def, _) =
        locate(tree.root_node(), source, qualname).ok_or_else(|| format!("the project's module has no function `{qualname}`"))?;
    let params = def
        .child_by_field_name("parameters")
        .ok_or_else(|| format!("`{qualname}` has no parameters"))?;
    let lines = source[params.byte_range()].matches('\n').count();
    let generic = format!("(*rgd_args, **rgd_kwargs{})", "\n".repeat(lines));
    let text = format!("{}{generic}{}", &source[..params.start_byte()], &source[params.end_byte()..]);
    forwarding_stub(&text, qualname)
}

/// `source` with the body of `qualname` replaced by a call through `rgd_isolate` that forwards
/// every argument as the signature bound it (its docstring kept, its line count kept so the
/// module's other lines keep their numbers); or why the function cannot be forwarded.
pub fn forwarding_stub(source: &str, qualname: &str) -> Result<String, String> {
    let tree = parse_python(source);
    let root = tree.root_node();
    let (_, def, _) = locate(root, source, qualname).ok_or_else(|| format!("the project's module has no function `{qualname}`"))?;
    if def.kind() != "function_definition" {
        return Err(format!("`{qualname}` is a class, not a function"));
    }
    let is_async = source[def.byte_range()].starts_with("async");
    let body = def.child_by_field_name("body").ok_or_else(|| format!("`{qualname}` has no body"))?;
    let generator = yields(body);
    if is_async && generator {
        return Err(format!("`{qualname}` is an async generator, which rgd does not isolate"));
    }
    let params = def
        .child_by_field_name("parameters")
        .ok_or_else(|| format!("`{qualname}` has no parameters"))?;
    let (positional, keyword) =
        forwarded(params, source).map_err(|what| format!("`{qualname}` takes {what}, which rgd does not forward"))?;
    let args = match positional.len() {
        0 => "()".to_string(),
        _ => format!("({},)", positional.join(", ")),
    };
    let call = format!("__import__(\"rgd_isolate\").call({qualname:?}, {args}, {{{}}})", keyword.join(", "));
    let stub = if generator {
        format!("yield from {call}")
    } else {
        format!("return {call}")
    };
    let mut cursor = body.walk();
    let statements: Vec<Node> = body.named_children(&mut cursor).filter(|n| n.kind() != "comment").collect();
    let keep_doc = statements.first().filter(|s| is_docstring(**s)).map(|d| d.end_byte());
    let (from, text) = match keep_doc {
        Some(end) => (end, format!("\n{}{stub}", body_indent(source, body))),
        None => (body.start_byte(), stub),
    };
    let to = body.end_byte().max(from);
    let removed_lines = source[from..to].matches('\n').count();
    let added_lines = text.matches('\n').count();
    let pad = "\n".repeat(removed_lines.saturating_sub(added_lines));
    Ok(format!("{}{text}{pad}{}", &source[..from], &source[to..]))
}

/// The indentation of the line a body starts on, as written (tabs stay tabs: pathspec indents
/// with tabs, and spaces there made every stub an IndentationError); spaces to the body's column
/// where the body starts on the `def` line.
fn body_indent(source: &str, body: Node) -> String {
    let line_start = source[..body.start_byte()].rfind('\n').map_or(0, |i| i + 1);
    let before = &source[line_start..body.start_byte()];
    if before.chars().all(|c| c == ' ' || c == '\t') {
        before.to_string()
    } else {
        " ".repeat(body.start_position().column)
    }
}

/// Whether a function body yields (itself, not a function or lambda nested in it).
fn yields(node: Node) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|child| match child.kind() {
        "yield" => true,
        "function_definition" | "lambda" | "class_definition" => false,
        _ => yields(child),
    })
}

/// The parameters as a call forwards them: positional expressions (`a`, `*args`) and keyword
/// entries of a dict display (`"c": c`, `**kw`); or the kind of parameter that cannot be.
fn forwarded(params: Node, source: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let (mut positional, mut keyword) = (Vec::new(), Vec::new());
    let mut keyword_only = false;
    let mut cursor = params.walk();
    for p in params.named_children(&mut cursor) {
        let kind = p.kind();
        // A typed `*args: int` or `**kw: str` holds the splat pattern.
        let inner = match kind {
            "typed_parameter" => p.named_child(0).unwrap_or(p),
            _ => p,
        };
        match inner.kind() {
            "keyword_separator" => keyword_only = true,
            "positional_separator" | "comment" => {}
            "list_splat_pattern" => {
                positional.push(format!("*{}", name_in(inner, source)?));
                keyword_only = true;
            }
            "dictionary_splat_pattern" => keyword.push(format!("**{}", name_in(inner, source)?)),
            "identifier" | "default_parameter" | "typed_default_parameter" => {
                let name = match inner.kind() {
                    "identifier" => &source[inner.byte_range()],
                    _ => inner
                        .child_by_field_name("name")
                        .map(|n| &source[n.byte_range()])
                        .ok_or("a parameter without a name")?,
                };
                if keyword_only {
                    keyword.push(format!("{name:?}: {name}"));
                } else {
                    positional.push(name.to_string());
                }
            }
            other => return Err(format!("a parameter of the form {other}")),
        }
    }
    Ok((positional, keyword))
}

fn name_in(splat: Node, source: &str) -> Result<String, String> {
    let mut cursor = splat.walk();
    let id = splat
        .named_children(&mut cursor)
        .find(|c| c.kind() == "identifier")
        .ok_or("a bare star")?;
    Ok(source[id.byte_range()].to_string())
}

fn text_of<'s>(source: &'s str, node: Node) -> &'s str {
    &source[node.byte_range()]
}

/// The definitions the agents wrote in `new` (the target, and every top-level definition the
/// original module lacks or that differs from its own): "the program" in the target's file when it
/// runs in the tests' process, as against the module's own code.
pub fn program_names(original: &str, new: &str, qualname: &str) -> Vec<String> {
    let (old_tree, new_tree) = (parse_python(original), parse_python(new));
    let old: Vec<(String, &str)> = definitions(old_tree.root_node(), original)
        .into_iter()
        .map(|(name, node, _)| (name, text_of(original, node)))
        .collect();
    let mut names = vec![qualname.to_string()];
    for (name, node, _) in definitions(new_tree.root_node(), new) {
        let text = text_of(new, node);
        let same = old.iter().any(|(n, t)| *n == name && *t == text);
        if !same && !names.contains(&name) && !qualname.starts_with(&format!("{name}.")) {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_indented_body_keeps_its_tabs() {
        let src = "class P:\n\tdef f(self, a):\n\t\t\"\"\"Doc.\"\"\"\n\t\treturn a\n";
        let out = forwarding_stub(src, "P.f").unwrap();
        assert!(out.contains("\"\"\"Doc.\"\"\"\n\t\treturn __import__"), "{out}");
        assert!(!parse_python(&out).root_node().has_error(), "{out}");
    }

    #[test]
    fn every_kind_of_parameter_is_forwarded_as_bound() {
        let src = "def f(a, b=1, /, c: int = 2, *args: int, d, e=3, **kw):\n    \"\"\"Doc.\"\"\"\n    x = 1\n    return x\n\n\ndef g():\n    pass\n";
        let out = forwarding_stub(src, "f").unwrap();
        assert!(
            out.contains(
                "\"\"\"Doc.\"\"\"\n    return __import__(\"rgd_isolate\").call(\"f\", (a, b, c, *args,), {\"d\": d, \"e\": e, **kw})"
            ),
            "{out}"
        );
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
        assert!(out.contains("def g():\n    pass"), "{out}");
    }

    #[test]
    fn methods_generators_and_bare_stars() {
        let src = "class C:\n    @staticmethod\n    def s(*, k):\n        return k\n\n    def gen(self, n):\n        for i in range(n):\n            yield i\n";
        let s = forwarding_stub(src, "C.s").unwrap();
        assert!(
            s.contains("return __import__(\"rgd_isolate\").call(\"C.s\", (), {\"k\": k})"),
            "{s}"
        );
        let g = forwarding_stub(src, "C.gen").unwrap();
        assert!(
            g.contains("yield from __import__(\"rgd_isolate\").call(\"C.gen\", (self, n,), {})"),
            "{g}"
        );
        assert!(
            forwarding_stub("async def a():\n    yield 1\n", "a")
                .unwrap_err()
                .contains("async generator")
        );
        assert!(forwarding_stub("def f():\n    pass\n", "nope").is_err());
    }

    #[test]
    fn a_program_that_changes_the_signature_is_forwarded_every_argument_and_none_of_its_code() {
        let src = "def windowed(src,\n             size):\n    \"\"\"Doc.\"\"\"\n    return list(src)[:size]\n\n\ndef after():\n    pass\n";
        let program = "def windowed(src, size, fill=__import__('os').getpid()):\n    return []\n";
        let out = forwarding_stub_for(src, program, "windowed").unwrap();
        assert!(
            out.contains("def windowed(*rgd_args, **rgd_kwargs\n):")
                && out.contains("return __import__(\"rgd_isolate\").call(\"windowed\", (*rgd_args,), {**rgd_kwargs})"),
            "{out}"
        );
        assert!(
            !out.contains("getpid"),
            "the program's defaults stay out of the tests' process: {out}"
        );
        assert_eq!(out.lines().count(), src.lines().count(), "{out}");
        // A program that adds a decorator, or yields where the module's function returned, is
        // not forwarded (the run is judged in-process).
        let decorated = "@contextlib.contextmanager\ndef windowed(src, size):\n    yield src\n";
        assert!(forwarding_stub_for(src, decorated, "windowed").unwrap_err().contains("decorators"));
        let yielding = "def windowed(src, size):\n    yield src\n";
        assert!(forwarding_stub_for(src, yielding, "windowed").unwrap_err().contains("generator"));
        // The same signature (spacing aside) keeps the bound forwarding.
        let same = "def windowed(src, size):\n    return []\n";
        assert!(
            forwarding_stub_for(src, same, "windowed")
                .unwrap()
                .contains("call(\"windowed\", (src, size,), {})")
        );
    }

    #[test]
    fn a_yield_in_a_nested_function_is_not_the_targets() {
        let src = "def f(xs):\n    def inner():\n        yield 1\n    return list(inner())\n";
        assert!(forwarding_stub(src, "f").unwrap().contains("return __import__"));
    }

    #[test]
    fn the_program_is_the_target_and_what_the_agents_added_or_changed() {
        let old = "import collections\nP = collections.namedtuple('P', 'x', defaults=(0,))\n\n\ndef keep():\n    return 1\n\n\ndef total(x):\n    ...\n";
        let new = "import collections\nP = collections.namedtuple('P', 'x', defaults=(0,))\n\n\ndef keep():\n    return 1\n\n\ndef _helper():\n    return 2\n\n\ndef total(x):\n    return _helper()\n";
        assert_eq!(program_names(old, new, "total"), ["total", "_helper"]);
    }
}
