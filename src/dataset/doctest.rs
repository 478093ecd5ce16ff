//! Visible tests from the `>>>` examples of a prompt's docstring (OpenAI HumanEval has no split).

use crate::code::parses_cleanly;

/// Every `>>> expr` followed by one expected-output line becomes `assert expr == expected`.
/// Examples that do not form a valid assert (multi-line output, prose) are left out.
pub fn examples_as_asserts(prompt: &str) -> Vec<String> {
    let lines: Vec<&str> = prompt.lines().map(str::trim).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(first) = lines[i].strip_prefix(">>>") else {
            i += 1;
            continue;
        };
        let mut expr = first.trim().to_string();
        i += 1;
        while i < lines.len() && lines[i].starts_with("...") {
            expr.push(' ');
            expr.push_str(lines[i].trim_start_matches("...").trim());
            i += 1;
        }
        let expected = lines.get(i).copied().unwrap_or("");
        let ends_example = lines
            .get(i + 1)
            .is_none_or(|next| next.is_empty() || next.starts_with(">>>") || next.starts_with("\"\"\""));
        if expected.is_empty() || expected.starts_with(">>>") || expected.starts_with("\"\"\"") || !ends_example {
            continue;
        }
        let candidate = format!("assert {expr} == {expected}");
        if parses_cleanly(&candidate) {
            out.push(candidate);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_examples() {
        let prompt = "def f(x):\n    \"\"\" Doc.\n    >>> f([1.0, 2.0])\n    False\n    >>> f(\n    ... 3)\n    'a b'\n    >>> g()\n    not python at all (\n    \"\"\"\n";
        assert_eq!(
            examples_as_asserts(prompt),
            vec!["assert f([1.0, 2.0]) == False", "assert f( 3) == 'a b'"]
        );
    }
}
