//! Two versions of one module, function by function (`rgd bench real harvest`): the functions and
//! methods both define, aligned by qualified name, whose code differs in more than comments and
//! layout, and the newer module with one of them put back as the older version had it.

use tree_sitter::Node;

use super::parse_python;
use super::splice::{find_function, qualnames};

/// A function both versions define, with different code.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// `name`, `Class.name`, `Outer.Inner.name`.
    pub qualname: String,
    /// The whole definition (decorators included) in each version.
    pub old: String,
    pub new: String,
    /// 1-based line of the newer version's `def`.
    pub line: usize,
}

/// Every function `source` defines at the top level or in a class (not inside a function).
pub fn qualified_functions(source: &str) -> Vec<String> {
    let tree = parse_python(source);
    let mut out = Vec::new();
    qualnames(tree.root_node(), source, "", &mut out);
    out
}

/// The code of a definition as tokens, comments left out: equal for two versions that differ only
/// in comments, blank lines or spacing.
pub fn tokens(definition: &str) -> Vec<String> {
    let tree = parse_python(definition);
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "comment" {
            continue;
        }
        // A string is one token, whatever its parts (tree-sitter splits f-strings).
        if node.child_count() == 0 || node.kind() == "string" {
            out.push(definition[node.byte_range()].to_string());
            continue;
        }
        let children: Vec<Node> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The functions both `old` and `new` define whose code differs (by `tokens`), in the newer
/// module's order. Neither parsing with errors: nothing.
pub fn changed_functions(old: &str, new: &str) -> Vec<Changed> {
    if parse_python(old).root_node().has_error() || parse_python(new).root_node().has_error() {
        return Vec::new();
    }
    let before = qualified_functions(old);
    qualified_functions(new)
        .into_iter()
        .filter(|q| before.contains(q))
        .filter_map(|qualname| {
            let (was, now) = (find_function(old, &qualname).ok()?, find_function(new, &qualname).ok()?);
            let (old_def, new_def) = (&old[was.start..was.end], &new[now.start..now.end]);
            (tokens(old_def) != tokens(new_def)).then(|| Changed {
                old: old_def.to_string(),
                new: new_def.to_string(),
                line: now.line,
                qualname,
            })
        })
        .collect()
}

/// `new` with the definition of `qualname` replaced by `definition` (the older version's, as
/// written at the same indentation); None when `new` has no such function or the result does not
/// parse.
pub fn put_back(new: &str, qualname: &str, definition: &str) -> Option<String> {
    let site = find_function(new, qualname).ok()?;
    let text = format!("{}{}{}", &new[..site.start], definition, &new[site.end..]);
    (!parse_python(&text).root_node().has_error()).then_some(text)
}

/// The definition of `qualname` in `source` (decorators included) moved to column 0, as an agent
/// answers it; None when `source` has no such function.
pub fn definition(source: &str, qualname: &str) -> Option<String> {
    let site = find_function(source, qualname).ok()?;
    let pad = " ".repeat(site.indent);
    let text: Vec<&str> = source[site.start..site.end]
        .lines()
        .map(|l| l.strip_prefix(pad.as_str()).unwrap_or(l))
        .collect();
    Some(text.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "import os\n\ndef same(a):\n    # old comment\n    return a\n\nclass K:\n    def m(self, x):\n        return x + 1\n\n    @staticmethod\n    def s():\n        return 'a'\n\ndef gone():\n    pass\n";
    const NEW: &str = "import os\n\ndef same(a):\n    return  a  # new comment\n\nclass K:\n    def m(self, x):\n        return x + 2\n\n    @staticmethod\n    def s():\n        return 'a'\n\ndef added():\n    pass\n";

    #[test]
    fn only_functions_both_define_with_other_code_count_as_changed() {
        let changed = changed_functions(OLD, NEW);
        let names: Vec<&str> = changed.iter().map(|c| c.qualname.as_str()).collect();
        assert_eq!(
            names,
            ["K.m"],
            "comments and spacing are no change; added and gone functions are not aligned"
        );
        assert_eq!(changed[0].line, 7);
        assert!(changed[0].old.contains("x + 1") && changed[0].new.contains("x + 2"));
    }

    #[test]
    fn a_method_put_back_keeps_its_class_and_the_rest_of_the_module() {
        let changed = changed_functions(OLD, NEW);
        let back = put_back(NEW, "K.m", &changed[0].old).unwrap();
        assert!(back.contains("        return x + 1\n") && !back.contains("x + 2"), "{back}");
        assert!(back.contains("def added()") && back.contains("def s():"), "{back}");
        assert_eq!(changed_functions(&back, OLD), vec![], "the put-back module has the old method");
        assert_eq!(put_back(NEW, "K.nothing", "def nothing(): pass"), None);
    }

    #[test]
    fn a_method_s_definition_is_given_at_column_zero_with_its_decorator() {
        assert_eq!(definition(NEW, "K.s").as_deref(), Some("@staticmethod\ndef s():\n    return 'a'\n"));
        assert_eq!(definition(NEW, "K.nothing"), None);
    }
}
