//! The floor plan holds: commands parse, call and print (no file in `src/cli/` over 300 lines),
//! no function over 120 lines, tantivy reached only through `src/retrieval/`, and the isolation
//! channel a package of files of at most 700 lines. A change that breaks one says where.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(Path::new(ROOT).join(dir))
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == ext))
        .map(|e| e.path().to_path_buf())
        .collect()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

/// Each function's name and length in lines: from its `fn` line to the brace that closes it
/// (strings, characters and comments left out of the count of braces).
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub ")
            .or_else(|| t.strip_prefix("pub(crate) "))
            .or_else(|| t.strip_prefix("pub(super) "))
            .unwrap_or(t);
        let t = t.strip_prefix("async ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("fn ") else { continue };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let (mut depth, mut opened) = (0i32, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            if !opened && l.trim_end().ends_with(';') && !l.contains('{') {
                break;
            }
            for c in code_only(l).chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                out.push((name.clone(), i + 1, j - i + 1));
                break;
            }
        }
    }
    out
}

/// A line without its comment, strings and character literals.
fn code_only(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                chars.next();
            }
            (true, '"') => in_string = false,
            (true, _) => {}
            (false, '"') => in_string = true,
            (false, '/') if chars.peek() == Some(&'/') => break,
            (false, '\'') => {
                // A character literal ('{', '\n'); a lifetime has no closing quote nearby.
                let ahead: String = chars.clone().take(3).collect();
                if let Some(end) = ahead.find('\'').filter(|&e| e > 0) {
                    for _ in 0..=end {
                        chars.next();
                    }
                }
            }
            (false, _) => out.push(c),
        }
    }
    out
}

#[test]
fn commands_stay_thin_functions_short_and_tantivy_in_its_room() {
    let mut problems = Vec::new();
    for f in files("src/cli", "rs") {
        if lines(&f) > 300 {
            problems.push(format!("{}: {} lines (a command file holds at most 300)", f.display(), lines(&f)));
        }
    }
    for f in files("src", "rs") {
        let text = std::fs::read_to_string(&f).unwrap();
        for (name, at, length) in functions(&text) {
            if length > 120 {
                problems.push(format!("{}:{at}: fn {name} is {length} lines (at most 120)", f.display()));
            }
        }
        if !f.starts_with(Path::new(ROOT).join("src/retrieval")) && text.contains("tantivy::") {
            problems.push(format!("{}: uses tantivy outside src/retrieval/", f.display()));
        }
    }
    for f in files("sandbox/rgd_isolate", "py") {
        if lines(&f) > 700 {
            problems.push(format!(
                "{}: {} lines (a module of the channel holds at most 700)",
                f.display(),
                lines(&f)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_function_count_sees_braces_in_code_only() {
    let text = "fn a() {\n    let s = \"{\";\n    let c = '{';\n    // {\n}\nfn b(x: &'static str) -> usize {\n    1\n}\nfn c();\n";
    let found = functions(text);
    assert_eq!(found, vec![("a".to_string(), 1, 5), ("b".to_string(), 6, 3)]);
}
