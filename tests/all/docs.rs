//! The README and the guide in docs/ cannot drift from rgd: every relative link and anchor
//! resolves, every fenced block says what it holds, and every `rgd` command in a shell block parses
//! with the flags it shows (clap's own parser, the one the binary uses), every command of rgd
//! shown at least once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use rgd::cli::Cli;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

fn name(page: &Path) -> String {
    page.strip_prefix(ROOT).unwrap().display().to_string()
}

/// A fenced block: its language tag, its first line's number and its lines.
struct Block {
    lang: String,
    line: usize,
    lines: Vec<String>,
}

/// The page split into prose lines (with numbers) and fenced blocks.
fn parse(text: &str) -> (Vec<(usize, String)>, Vec<Block>) {
    let (mut prose, mut blocks) = (Vec::new(), Vec::new());
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => {
                open = Some(Block {
                    lang: lang.trim().to_string(),
                    line: i + 1,
                    lines: Vec::new(),
                })
            }
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some(block), None) => block.lines.push(line.to_string()),
            (None, None) => prose.push((i + 1, line.to_string())),
        }
    }
    assert!(open.is_none(), "a fenced block is never closed");
    (prose, blocks)
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get
/// -1, -2, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = parse(text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose {
        let Some(title) = line.trim_start_matches('#').strip_prefix(' ').filter(|_| line.starts_with('#')) else {
            continue;
        };
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 { slug.clone() } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// Relative link targets of a prose line: `[text](target)` and `![alt](target)`.
fn links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split_whitespace().next().unwrap_or("").to_string();
            if !target.contains("://") && !target.starts_with("mailto:") {
                out.push(target);
            }
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut checked = 0;
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line_no, line) in parse(&text).0 {
            // Inline code is not a link.
            let line: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
            for target in links(&line) {
                checked += 1;
                let (path, anchor) = target.split_once('#').map_or((target.as_str(), None), |(p, a)| (p, Some(a)));
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(path)
                };
                if !file.exists() {
                    broken.push(format!("{}:{line_no}: {target}: no such file", name(&page)));
                    continue;
                }
                if let Some(anchor) = anchor {
                    let target_text = std::fs::read_to_string(&file).unwrap_or_default();
                    if !anchors(&target_text).contains(anchor) {
                        broken.push(format!("{}:{line_no}: {target}: no such heading", name(&page)));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 30, "only {checked} links found: the README should lead into docs/");
}

/// The commands of a shell block (`sh`, `bash`) or of a console transcript (`console`: the lines
/// after `$ `), continuation lines joined.
fn commands(block: &Block) -> Vec<(usize, String)> {
    let transcript = block.lang == "console";
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut continuing = false;
    for (i, line) in block.lines.iter().enumerate() {
        let line_no = block.line + 1 + i;
        let text = if continuing {
            out.last_mut().unwrap().1.push(' ');
            line.trim().to_string()
        } else if transcript {
            match line.strip_prefix("$ ") {
                Some(cmd) => {
                    out.push((line_no, String::new()));
                    cmd.to_string()
                }
                None => continue,
            }
        } else {
            out.push((line_no, String::new()));
            line.trim().to_string()
        };
        continuing = text.ends_with('\\');
        out.last_mut().unwrap().1.push_str(text.trim_end_matches('\\'));
    }
    out
}

/// The words of an `rgd` invocation in a shell command, if it is one: environment assignments
/// before it dropped, pipes, redirections, `&&`, `;` and comments after it cut off.
fn rgd_words(command: &str) -> Option<Vec<String>> {
    let words = shlex::split(command)?;
    let mut words = words.into_iter().skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let program = words.next()?;
    if program != "rgd" && !program.ends_with("/rgd") {
        return None;
    }
    let rest = words
        .take_while(|w| {
            !matches!(w.as_str(), "|" | "&&" | ";" | "||") && !w.starts_with('#') && !w.starts_with('>') && !w.starts_with("2>")
        })
        .collect::<Vec<_>>();
    Some(std::iter::once("rgd".to_string()).chain(rest).collect())
}

#[test]
fn every_rgd_command_in_the_docs_parses() {
    let mut parsed = 0;
    let mut failures = Vec::new();
    let mut shown: BTreeSet<String> = BTreeSet::new();
    let mut untagged = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in parse(&text).1 {
            if block.lang.is_empty() {
                untagged.push(format!("{}:{}", name(&page), block.line));
            }
            if !matches!(block.lang.as_str(), "sh" | "bash" | "console") {
                continue;
            }
            for (line_no, command) in commands(&block) {
                let Some(words) = rgd_words(&command) else { continue };
                parsed += 1;
                if let Some(sub) = words.get(1).filter(|w| !w.starts_with('-')) {
                    shown.insert(sub.clone());
                }
                if let Err(e) = Cli::try_parse_from(&words)
                    && !matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
                    )
                {
                    failures.push(format!("{}:{line_no}: {command}\n{}", name(&page), e.render()));
                }
            }
        }
    }
    assert!(
        untagged.is_empty(),
        "fenced blocks without a language (sh, console, text, toml, ...): {untagged:?}"
    );
    assert!(
        failures.is_empty(),
        "commands in the docs that rgd rejects:\n{}",
        failures.join("\n")
    );
    let missing: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|c| c != "help" && !shown.contains(c))
        .collect();
    assert!(missing.is_empty(), "commands no shell block of the docs shows: {missing:?}");
    assert!(parsed >= 40, "only {parsed} rgd commands found in shell blocks");
}

/// The checks above find what they look for: a wrong flag, a missing file and a missing heading
/// are reported.
#[test]
fn the_checks_catch_what_they_look_for() {
    assert!(Cli::try_parse_from(rgd_words("rgd sweep --dataset mbpp --no-such-flag").unwrap()).is_err());
    assert!(Cli::try_parse_from(rgd_words("RGD_HOME=/tmp/x rgd sweep --dataset mbpp --limit 2 | tail -1").unwrap()).is_ok());
    assert_eq!(rgd_words("cargo bench --bench eval"), None);
    let block = Block {
        lang: "console".into(),
        line: 1,
        lines: vec!["$ rgd runs list \\".into(), "    --json".into(), "output line".into()],
    };
    assert_eq!(commands(&block), vec![(2, "rgd runs list  --json".to_string())]);
    let text = "# Getting started\n## The TUI, and its keys\n## Set-up\n## Set-up\n```sh\n# not a heading\n```\n";
    let found = anchors(text);
    for a in ["getting-started", "the-tui-and-its-keys", "set-up", "set-up-1"] {
        assert!(found.contains(a), "{a}: {found:?}");
    }
    assert!(!found.contains("not-a-heading"));
    assert_eq!(
        links("see [a](docs/a.md#x), ![p](img/p.svg) and [w](https://x.org)"),
        vec!["docs/a.md#x", "img/p.svg"]
    );
}

/// docs/tui.md lists the keys from the same table the TUI reads them from.
#[test]
fn the_tui_guide_lists_the_keymap() {
    let path = Path::new(ROOT).join("docs/tui.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- keys: generated from src/tui/keymap.rs -->\n", "<!-- end of keys -->");
    let expected = rgd::tui::keymap::markdown();
    let (Some(a), Some(b)) = (text.find(start), text.find(end)) else {
        panic!("docs/tui.md lacks the markers {start:?} and {end:?}");
    };
    let shown = &text[a + start.len()..b];
    if shown != expected {
        if std::env::var_os("RGD_UPDATE_DOCS").is_some() {
            let updated = format!("{}{expected}{}", &text[..a + start.len()], &text[b..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!(
                "docs/tui.md's keys differ from src/tui/keymap.rs; RGD_UPDATE_DOCS=1 cargo test --test all docs:: rewrites them:\n{expected}"
            );
        }
    }
}

/// Paragraphs and bullets of prose (not tables, headings or fenced blocks): first line and length.
fn paragraphs(text: &str) -> Vec<(usize, usize)> {
    let (prose, _) = parse(text);
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut last = 0;
    for (n, line) in prose {
        let trimmed = line.trim_start();
        let breaks = trimmed.is_empty() || trimmed.starts_with('|') || line.starts_with('#') || n != last + 1;
        let numbered = trimmed
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        let starts_item = trimmed.starts_with("- ") || trimmed.starts_with("* ") || numbered;
        if breaks || starts_item {
            out.extend(current.take());
        }
        if !(trimmed.is_empty() || trimmed.starts_with('|') || line.starts_with('#')) {
            let c = current.get_or_insert((n, 0));
            c.1 += 1;
        }
        last = n;
    }
    out.extend(current);
    out
}

/// A commit hash in prose: 7 to 10 hexadecimal characters holding both a digit and a letter.
fn commit_hashes(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| (7..=10).contains(&w.len()) && w.chars().all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(|c| c.is_ascii_alphabetic()))
        .map(str::to_string)
        .collect()
}

/// The README is a front door and the guide pages are for users: the README fits 150 lines, no
/// page but the results page names a commit (run history lives there, under History), and no
/// paragraph or bullet anywhere runs past 25 lines.
#[test]
fn the_readme_and_the_guide_stay_short_and_hold_no_history() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 150,
        "README.md has {} lines (at most 150)",
        readme.lines().count()
    );
    let mut problems = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let page_name = name(&page);
        if page_name != "docs/results.md" {
            let hashes = commit_hashes(&text);
            if !hashes.is_empty() {
                problems.push(format!("{page_name}: commit hashes {hashes:?} (they belong in docs/results.md)"));
            }
        }
        for (line, length) in paragraphs(&text) {
            if length > 25 {
                problems.push(format!("{page_name}:{line}: a paragraph of {length} lines (at most 25)"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_shortness_checks_catch_what_they_look_for() {
    let long: String = (0..26).map(|i| format!("line {i}\n")).collect();
    assert_eq!(
        paragraphs(&format!("# t\n\n{long}\n- a\n  b\n- c\n")),
        vec![(3, 26), (30, 2), (32, 1)]
    );
    assert_eq!(paragraphs("| a |\n| --- |\ntext\n```sh\nx\n```\nmore\n"), vec![(3, 1), (7, 1)]);
    assert_eq!(paragraphs("1. one\n   more\n2. two\n"), vec![(1, 2), (3, 1)]);
    assert_eq!(
        commit_hashes("at 9c366b5, sha256 1beed3607776..., word deadbeef, 1234567"),
        vec!["9c366b5"]
    );
}
