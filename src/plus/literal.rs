//! Python literals as data: read from a test's call arguments (tree-sitter), written back as
//! source. What a test writes as something else (a call, `10**9`, an f-string, bytes) is not a
//! literal here: that argument list is not a seed.

use std::fmt::Write;

use tree_sitter::Node;

/// A Python value that a literal can write.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Lit>),
    Tuple(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
    Set(Vec<Lit>),
}

impl Lit {
    /// The literal `node` (of `source`) writes, if it is one.
    pub fn read(node: Node<'_>, source: &str) -> Option<Lit> {
        let text = &source[node.byte_range()];
        let items = |node: Node<'_>| -> Option<Vec<Lit>> {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .filter(|c| c.kind() != "comment")
                .map(|c| Lit::read(c, source))
                .collect()
        };
        Some(match node.kind() {
            "none" => Lit::None,
            "true" => Lit::Bool(true),
            "false" => Lit::Bool(false),
            "integer" => Lit::Int(int(text)?),
            "float" => Lit::Float(text.replace('_', "").parse().ok().filter(|f: &f64| f.is_finite())?),
            "string" => Lit::Str(string(node, source)?),
            "concatenated_string" => {
                let mut cursor = node.walk();
                let parts: Option<Vec<String>> = node.named_children(&mut cursor).map(|c| string(c, source)).collect();
                Lit::Str(parts?.concat())
            }
            "list" => Lit::List(items(node)?),
            "set" => Lit::Set(items(node)?),
            "tuple" => Lit::Tuple(items(node)?),
            "parenthesized_expression" => {
                let mut cursor = node.walk();
                let inner: Vec<Node<'_>> = node.named_children(&mut cursor).filter(|c| c.kind() != "comment").collect();
                match inner.as_slice() {
                    [one] => Lit::read(*one, source)?,
                    _ => return None,
                }
            }
            "dictionary" => {
                let mut cursor = node.walk();
                let pairs: Option<Vec<(Lit, Lit)>> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "comment")
                    .map(|pair| {
                        let key = Lit::read(pair.child_by_field_name("key")?, source)?;
                        let value = Lit::read(pair.child_by_field_name("value")?, source)?;
                        Some((key, value))
                    })
                    .collect();
                Lit::Dict(pairs?)
            }
            "unary_operator" => {
                let operand = Lit::read(node.child_by_field_name("argument")?, source)?;
                let op = &source[node.child_by_field_name("operator")?.byte_range()];
                match (op, operand) {
                    ("-", Lit::Int(i)) => Lit::Int(i.checked_neg()?),
                    ("-", Lit::Float(f)) => Lit::Float(-f),
                    ("+", n @ (Lit::Int(_) | Lit::Float(_))) => n,
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    /// The value as Python source (`ast.literal_eval` reads it back equal).
    pub fn source(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        let list = |out: &mut String, items: &[Lit], open: &str, close: &str| {
            out.push_str(open);
            for (n, x) in items.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                x.write(out);
            }
            out.push_str(close);
        };
        match self {
            Lit::None => out.push_str("None"),
            Lit::Bool(true) => out.push_str("True"),
            Lit::Bool(false) => out.push_str("False"),
            Lit::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Lit::Float(f) => {
                // Rust's shortest round-trip form; Python reads it as the same double.
                let _ = write!(out, "{f:?}");
            }
            Lit::Str(s) => quote(s, out),
            Lit::List(items) => list(out, items, "[", "]"),
            Lit::Tuple(items) if items.len() == 1 => list(out, items, "(", ",)"),
            Lit::Tuple(items) => list(out, items, "(", ")"),
            Lit::Set(items) if items.is_empty() => out.push_str("set()"),
            Lit::Set(items) => list(out, items, "{", "}"),
            Lit::Dict(pairs) => {
                out.push('{');
                for (n, (k, v)) in pairs.iter().enumerate() {
                    if n > 0 {
                        out.push_str(", ");
                    }
                    k.write(out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// Whether the value holds a float anywhere (its comparison may need a tolerance).
    pub fn has_float(&self) -> bool {
        match self {
            Lit::Float(_) => true,
            Lit::List(v) | Lit::Tuple(v) | Lit::Set(v) => v.iter().any(Lit::has_float),
            Lit::Dict(p) => p.iter().any(|(k, v)| k.has_float() || v.has_float()),
            _ => false,
        }
    }
}

/// A decimal, hexadecimal, octal or binary integer that fits in 64 bits.
fn int(text: &str) -> Option<i64> {
    let t = text.replace('_', "").to_ascii_lowercase();
    let (digits, radix) = match t.get(..2) {
        Some("0x") => (&t[2..], 16),
        Some("0o") => (&t[2..], 8),
        Some("0b") => (&t[2..], 2),
        _ => (t.as_str(), 10),
    };
    i64::from_str_radix(digits, radix).ok()
}

/// A plain or raw `str` literal's value; bytes and f-strings are not read.
fn string(node: Node<'_>, source: &str) -> Option<String> {
    if node.kind() != "string" {
        return None;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    let start = children.first().filter(|c| c.kind() == "string_start")?;
    let prefix = source[start.byte_range()].trim_end_matches(['\'', '"']).to_ascii_lowercase();
    if prefix.contains('b') || prefix.contains('f') || prefix.contains('t') {
        return None;
    }
    let raw = prefix.contains('r');
    let mut value = String::new();
    for c in &children[1..] {
        match c.kind() {
            "string_content" => {
                // tree-sitter leaves escapes inside the content as children of their own.
                let mut inner = c.walk();
                let mut at = c.start_byte();
                for e in c.children(&mut inner) {
                    value.push_str(&source[at..e.start_byte()]);
                    let escape = &source[e.byte_range()];
                    match (raw, e.kind()) {
                        (false, "escape_sequence") => value.push_str(&unescape(escape)?),
                        (true, _) | (_, "line_continuation") => value.push_str(if raw { escape } else { "" }),
                        _ => value.push_str(escape),
                    }
                    at = e.end_byte();
                }
                value.push_str(&source[at..c.end_byte()]);
            }
            "escape_sequence" if !raw => value.push_str(&unescape(&source[c.byte_range()])?),
            "escape_sequence" => value.push_str(&source[c.byte_range()]),
            "string_end" => {}
            "interpolation" => return None,
            _ => value.push_str(&source[c.byte_range()]),
        }
    }
    Some(value)
}

/// One escape sequence's text; `\N{...}` is not read.
fn unescape(e: &str) -> Option<String> {
    let body = e.strip_prefix('\\')?;
    let mut chars = body.chars();
    let first = chars.next()?;
    let code = |hex: &str| u32::from_str_radix(hex, 16).ok().and_then(char::from_u32).map(String::from);
    Some(match first {
        'n' => "\n".into(),
        't' => "\t".into(),
        'r' => "\r".into(),
        '0'..='7' => char::from_u32(u32::from_str_radix(body, 8).ok()?)?.into(),
        'a' => "\x07".into(),
        'b' => "\x08".into(),
        'f' => "\x0c".into(),
        'v' => "\x0b".into(),
        '\\' | '\'' | '"' => first.into(),
        '\n' => String::new(),
        'x' | 'u' | 'U' => code(&body[1..])?,
        _ => return None,
    })
}

/// A `str` literal in Python's own style: single quotes unless the text holds one and no double.
fn quote(s: &str, out: &mut String) {
    let q = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(q);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(src: &str) -> Option<Lit> {
        let tree = crate::code::parse_python(src);
        let stmt = tree.root_node().named_child(0)?;
        Lit::read(stmt.named_child(0)?, src)
    }

    #[test]
    fn literals_read_and_write_back_as_python_would() {
        for src in [
            "[1, -2, 3.5, 'a', None, True]",
            "{'k': (1,), 'j': [[], {}]}",
            "(1, 2)",
            "{1, 2}",
            "'it\\'s'",
            "\"it's\"",
            "'a\\nb\\t\\\\'",
            "1e-07",
            "-0.5",
        ] {
            let v = lit(src).unwrap_or_else(|| panic!("{src} not read"));
            assert_eq!(lit(&v.source()), Some(v.clone()), "{src} -> {}", v.source());
        }
        assert_eq!(lit("'it\\'s'"), Some(Lit::Str("it's".into())));
        assert_eq!(lit("r'\\d+'"), Some(Lit::Str("\\d+".into())));
        assert_eq!(lit("'a' 'b'"), Some(Lit::Str("ab".into())));
        assert_eq!(lit("0x1F"), Some(Lit::Int(31)));
        assert_eq!(lit("1_000"), Some(Lit::Int(1000)));
        assert_eq!(Lit::Tuple(vec![Lit::Int(1)]).source(), "(1,)");
        assert_eq!(Lit::Float(2.0).source(), "2.0");
        assert_eq!(Lit::Str("\u{1}".into()).source(), "'\\x01'");
    }

    #[test]
    fn what_is_not_a_literal_is_not_read() {
        for src in [
            "f(1)",
            "10**9",
            "f'{x}'",
            "b'x'",
            "x",
            "[1, y]",
            "float('inf')",
            "99999999999999999999",
        ] {
            assert_eq!(lit(src), None, "{src}");
        }
    }
}
