//! `rgd index` and `rgd context` on a small project written here: chunks, graph edges through
//! imports and classes, incremental re-indexing, the reasons given, and bad input. The real
//! tree-sitter, sled, tantivy and embedding model serve it.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::temp_home;

const FILES: [(&str, &str); 5] = [
    ("pkg/__init__.py", "from .core import *\n"),
    (
        "pkg/text.py",
        "def normalise_whitespace(text):\n    \"\"\"Collapse runs of spaces and tabs to one space.\"\"\"\n    return ' '.join(text.split())\n\n\
         def word_count(text):\n    \"\"\"How many words the text has.\"\"\"\n    return len(normalise_whitespace(text).split(' '))\n",
    ),
    (
        "pkg/core.py",
        "from .text import normalise_whitespace\n\n\
         class Report:\n    \"\"\"A titled report.\"\"\"\n    def __init__(self, title):\n        self.title = title\n\n    \
         def heading(self):\n        \"\"\"The title, cleaned, in capitals.\"\"\"\n        return normalise_whitespace(self.title).upper()\n\n    \
         def render(self, body):\n        \"\"\"Heading, blank line, body.\"\"\"\n        return self.heading() + '\\n\\n' + body\n",
    ),
    (
        "tests/test_core.py",
        "from pkg import Report\n\ndef test_render():\n    assert Report(' a  b ').render('x') == 'A B\\n\\nx'\n",
    ),
    ("broken.py", "def fine():\n    return 1\n\ndef broken(:\n    pass\n"),
];

fn project() -> tempfile::TempDir {
    support::project_with(&FILES)
}

fn rgd(home: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"));
    cmd.env("RGD_HOME", home).env_remove("OPENAI_BASE_URL").env_remove("OPENAI_API_KEY");
    cmd
}

fn json(cmd: &mut std::process::Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fails(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = walk(dir)
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// `rgd context --json` for `target` with its body blank.
fn blank_context(home: &Path, project: &Path, target: &str, extra: &[&str]) -> Value {
    json(
        rgd(home)
            .args(["context", "--repo"])
            .arg(project)
            .args(["--target", target, "--blank", "--json"])
            .args(extra),
    )
}

/// The ids of a context's pieces, best first.
fn piece_ids(context: &Value) -> Vec<String> {
    context["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_project_is_indexed_incrementally_and_its_unparsable_files_are_named() {
    let home = temp_home();
    let project = project();
    let before = listing(project.path());
    let first = json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    assert_eq!(first["files"], 5);
    assert_eq!(first["parsed"], 5);
    assert_eq!(first["failed"], serde_json::json!([["broken.py", 4]]));
    assert!(first["chunks"].as_u64().unwrap() >= 10, "{first}");
    assert!(first["embedded"].as_u64().unwrap() > 0);
    // Again: nothing parsed or embedded again.
    let again = json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    assert_eq!(
        (again["parsed"].as_u64(), again["embedded"].as_u64()),
        (Some(0), Some(0)),
        "{again}"
    );
    // One file changed: only it is parsed, only its new text embedded.
    std::fs::write(
        project.path().join("pkg/text.py"),
        FILES[1].1.replace("How many words", "The number of words"),
    )
    .unwrap();
    let changed = json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    assert_eq!(changed["parsed"], 1, "{changed}");
    assert_eq!(changed["embedded"], 2, "only word_count's code and description changed: {changed}");
    // The project itself is untouched (the index lives under RGD_HOME).
    std::fs::write(project.path().join("pkg/text.py"), FILES[1].1).unwrap();
    assert_eq!(listing(project.path()), before);
}

#[test]
fn context_names_each_piece_with_the_reason_it_was_chosen() {
    let home = temp_home();
    let project = project();
    let ctx = json(rgd(home.path()).args(["context", "--repo"]).arg(project.path()).args([
        "--target",
        "pkg/core.py::Report.render",
        "--blank",
        "--json",
    ]));
    assert_eq!(ctx["target"], "pkg/core.py::Report.render");
    let pieces = ctx["pieces"].as_array().unwrap();
    let ids: Vec<&str> = pieces.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert!(!ids.contains(&"pkg/core.py::Report.render"), "never the target itself: {ids:?}");
    // heading is the class's own method: the graph finds it, and says so.
    let heading = pieces
        .iter()
        .find(|p| p["id"] == "pkg/core.py::Report.heading")
        .unwrap_or_else(|| panic!("{ids:?}"));
    let reasons: Vec<&str> = heading["found_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["reason"].as_str().unwrap())
        .collect();
    assert!(reasons.iter().any(|r| r.starts_with("same class (Report)")), "{reasons:?}");
    assert_eq!(heading["kind"], "method");
    assert!(ids.iter().position(|i| *i == "pkg/core.py::Report.heading").unwrap() < 3, "{ids:?}");
    // The imported helper comes through the graph: the module imports it, and the function whose
    // requirement is most like the target's (Report.heading) calls it; the stronger reason shows.
    let helper = pieces
        .iter()
        .find(|p| p["id"] == "pkg/text.py::normalise_whitespace")
        .unwrap_or_else(|| panic!("{ids:?}"));
    let reasons: Vec<&str> = helper["found_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("imported by pkg.core") || r.starts_with("called by Report.heading, whose requirement is like this one")),
        "{reasons:?}"
    );
    assert_eq!((helper["start_line"].as_u64(), helper["end_line"].as_u64()), (Some(1), Some(3)));

    // With its body, the target's callees come first.
    let ctx = json(rgd(home.path()).args(["context", "--repo"]).arg(project.path()).args([
        "--target",
        "pkg/core.py::Report.render",
        "--json",
        "--streams",
        "graph",
    ]));
    let first = &ctx["pieces"][0];
    assert_eq!(first["id"], "pkg/core.py::Report.heading");
    assert!(
        first["found_by"][0]["reason"].as_str().unwrap().starts_with("called by the target"),
        "{first}"
    );
}

#[test]
fn bad_input_gets_a_clear_error() {
    let home = temp_home();
    let project = project();
    let empty = tempfile::tempdir().unwrap();
    let err = fails(rgd(home.path()).arg("index").arg(empty.path()));
    assert!(err.contains("holds no Python file: is it a Python project?"), "{err}");
    let err = fails(rgd(home.path()).arg("index").arg(project.path().join("nope")));
    assert!(err.contains("nope: not a directory"), "{err}");
    let context = |target: &str| {
        fails(
            rgd(home.path())
                .args(["context", "--repo"])
                .arg(project.path())
                .args(["--target", target]),
        )
    };
    let err = context("pkg/core.py::nope");
    assert!(
        err.contains("pkg/core.py defines no `nope` (it defines: Report, Report.__init__, Report.heading, Report.render)"),
        "{err}"
    );
    let err = context("pkg/missing.py::f");
    assert!(err.contains("pkg/missing.py: no such Python file"), "{err}");
    let err = context("broken.py::fine");
    assert!(
        err.contains("broken.py: no such Python file") && err.contains("or it does not parse"),
        "{err}"
    );
    let err = context("pkg/core.py");
    assert!(err.contains("a target is path/to/mod.py::name"), "{err}");
    // The rerank is a stage, not a stream: --rerank asks for it.
    let err = fails(rgd(home.path()).args(["context", "--repo"]).arg(project.path()).args([
        "--target",
        "pkg/core.py::Report.render",
        "--streams",
        "graph,rerank",
    ]));
    assert!(err.contains("invalid value 'rerank'"), "{err}");
}

/// A model for the repository prompts: an expanded query naming the helper, a rerank choosing the
/// third and then the first piece, a description for every chunk.
async fn model_server() -> support::ScriptedServer {
    use support::Reply;
    support::ScriptedServer::start(std::sync::Arc::new(|req: &support::Request| {
        if req.system.contains("You help search a Python repository") {
            Reply::Text("Collapse the whitespace of the title with normalise_whitespace.\n\ndef render(self, body):\n    return normalise_whitespace(self.title)".into())
        } else if req.system.contains("You choose, among pieces of code") {
            Reply::Text("3\n1\n".into())
        } else if req.system.contains("You describe code from a Python repository") {
            Reply::Text("Turns text into something tidier.".into())
        } else {
            Reply::Text("?".into())
        }
    }))
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_expanded_query_and_the_rerank_ask_the_model_and_say_so() {
    let server = model_server().await;
    let home = temp_home();
    let project = project();
    let (h, p, url) = (home.path().to_path_buf(), project.path().to_path_buf(), server.base_url());
    let plain = tokio::task::spawn_blocking({
        let (h, p, url) = (h.clone(), p.clone(), url.clone());
        move || {
            json(support::rgd(&h, &url).args(["context", "--repo"]).arg(&p).args([
                "--target",
                "pkg/core.py::Report.render",
                "--blank",
                "--json",
            ]))
        }
    })
    .await
    .unwrap();
    let asked = tokio::task::spawn_blocking(move || {
        json(support::rgd(&h, &url).args(["context", "--repo"]).arg(&p).args([
            "--target",
            "pkg/core.py::Report.render",
            "--blank",
            "--augment",
            "--rerank",
            "5",
            "--json",
        ]))
    })
    .await
    .unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v["pieces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect()
    };
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one call for each stage");
    // The augmented stream found the helper the expanded query names.
    let helper = asked["pieces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "pkg/text.py::normalise_whitespace")
        .unwrap();
    assert!(
        helper["found_by"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["stream"] == "augmented" && f["rank"].as_u64() <= Some(2)),
        "{helper}"
    );
    // The rerank prompt listed five numbered pieces; the two the model chose lead, in its order.
    assert!(
        requests[1].user.contains("\n5. ") && !requests[1].user.contains("\n6. "),
        "{}",
        requests[1].user
    );
    let rerank_of = |n: usize| -> Option<String> {
        asked["pieces"][n]["found_by"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["stream"] == "rerank")
            .map(|f| f["reason"].as_str().unwrap().to_string())
    };
    assert_eq!(rerank_of(0).as_deref(), Some("the model chose it (1 of 2)"));
    assert_eq!(rerank_of(1).as_deref(), Some("the model chose it (2 of 2)"));
    assert_eq!(rerank_of(2), None);
    let got = ids(&asked);
    // Neither prompt ever holds the target's body.
    for r in &requests {
        assert!(!r.user.contains("self.heading() +"), "{}", r.user);
    }
    assert!(
        requests[0].user.contains("from .text import normalise_whitespace"),
        "the module's imports: {}",
        requests[0].user
    );
    assert_ne!(ids(&plain), got);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_describes_each_chunk_once_and_the_context_block_keeps_to_its_budget() {
    let server = model_server().await;
    let home = temp_home();
    let project = project();
    let (h, p, url) = (home.path().to_path_buf(), project.path().to_path_buf(), server.base_url());
    let (first, again, block, tiny) = tokio::task::spawn_blocking(move || {
        let index = |h: &Path| json(support::rgd(h, &url).arg("index").arg(&p).args(["--describe", "--json"]));
        let first = index(&h);
        let again = index(&h);
        let prompt = |budget: &str| {
            let out = support::rgd(&h, &url)
                .args(["context", "--repo"])
                .arg(&p)
                .args(["--target", "pkg/core.py::Report.render", "--blank", "--prompt", "--budget", budget])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        };
        (first, again, prompt("2000"), prompt("60"))
    })
    .await
    .unwrap();
    // Every function, method and class once (7 in the parsable files), then never again.
    assert_eq!(first["described"], 7, "{first}");
    assert_eq!(again["described"], 0, "{again}");
    assert_eq!(server.requests().len(), 7);
    assert!(
        server.requests().iter().all(|r| !r.user.contains("def broken(")),
        "unparsable files are not described"
    );
    // The block: the module's imports, then the pieces' code with where and why.
    assert!(
        block.starts_with("# Code from the repository for pkg/core.py::Report.render (def render(self, body):)"),
        "{block}"
    );
    assert!(
        block.contains("## pkg/core.py imports\n```python\nfrom .text import normalise_whitespace\n```"),
        "{block}"
    );
    assert!(
        block.contains("## pkg/core.py:8-10 Report.heading (graph #2: same class (Report)"),
        "{block}"
    );
    // Every stream that found a piece is named with its rank (what the TUI shows too).
    let heading = block.lines().find(|l| l.contains("Report.heading (")).unwrap_or_default();
    assert!(heading.contains("; also bm25 #") && heading.contains("description #"), "{heading}");
    assert!(
        block.contains("class Report:\n    ...\n    def heading(self):"),
        "a method comes with its class: {block}"
    );
    assert!(!block.contains("self.heading() + "), "never the target's own body: {block}");
    // A small budget holds fewer pieces, and stays within it (characters / 4).
    assert!(tiny.len() < block.len());
    assert!(tiny.chars().count().div_ceil(4) <= 60, "{tiny}");
}

/// A stub whose docstring describes, in other words, a helper in another module it does not
/// import, next to a class of three methods and its own tests (issue 30's held-out case).
const HELPER_ELSEWHERE: [(&str, &str); 5] = [
    ("pkg/__init__.py", ""),
    (
        "pkg/strings.py",
        "def squeeze_blanks(text):\n    \"\"\"Replace every run of blanks with a single space and trim both ends.\"\"\"\n    return ' '.join(text.split())\n\n\n\
         def shout(text):\n    \"\"\"The text in capitals.\"\"\"\n    return text.upper()\n",
    ),
    (
        "pkg/table.py",
        "class Table:\n    \"\"\"Rows of cells.\"\"\"\n\n    def __init__(self, rows):\n        self.rows = rows\n\n    \
         def width(self):\n        \"\"\"The widest row's number of cells.\"\"\"\n        return max(len(r) for r in self.rows)\n\n    \
         def cell(self, row, column):\n        \"\"\"One cell of the table.\"\"\"\n        return self.rows[row][column]\n\n\n\
         def tidy_cell(value):\n    \"\"\"A cell's text with each run of blanks squeezed to a single space, both ends trimmed.\"\"\"\n    ...\n",
    ),
    (
        "tests/test_table.py",
        "from pkg.table import Table, tidy_cell\n\n\ndef test_tidy_cell_inner_blanks():\n    assert tidy_cell('a   b') == 'a b'\n\n\n\
         def test_tidy_cell_ends():\n    assert tidy_cell('  a ') == 'a'\n\n\ndef test_tidy_cell_table():\n    assert tidy_cell(Table([[' x ']]).cell(0, 0)) == 'x'\n",
    ),
    ("tests/__init__.py", ""),
];

#[test]
fn a_helper_described_in_other_words_comes_first_and_tests_are_left_out_unless_asked() {
    let home = temp_home();
    let project = support::project_with(&HELPER_ELSEWHERE);
    let context = |extra: &[&str]| piece_ids(&blank_context(home.path(), project.path(), "pkg/table.py::tidy_cell", extra));
    let ids = context(&[]);
    let at = ids.iter().position(|i| i == "pkg/strings.py::squeeze_blanks");
    assert!(at.is_some_and(|a| a < 3), "the helper BM25 finds first is buried: {ids:?}");
    assert!(
        !ids.iter().any(|i| i.starts_with("tests/")),
        "tests are left out by default: {ids:?}"
    );
    let ids = context(&["--include-tests"]);
    assert!(ids.iter().any(|i| i.starts_with("tests/")), "--include-tests lets them in: {ids:?}");
    // Even then, BM25's confident first hit (20.5 against 4.4) is not buried behind the tests
    // and the class (it came 7th by fused score).
    let at = ids.iter().position(|i| i == "pkg/strings.py::squeeze_blanks");
    assert!(at.is_some_and(|a| a < 3), "{ids:?}");
    let out = rgd(home.path())
        .args(["context", "--repo"])
        .arg(project.path())
        .args(["--target", "pkg/table.py::tidy_cell", "--blank"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("test functions and test files left out"), "{said}");
}

/// What cannot or should not be indexed is named and left out, the rest indexed: a 5 MB
/// generated module, a file with a NUL byte, a symlink that loops.
#[test]
fn files_that_cannot_be_indexed_are_named_and_left_out() {
    let home = temp_home();
    let project = project();
    let generated: String = (0..400_000).map(|i| format!("T{i} = {i}\n")).collect();
    std::fs::write(project.path().join("pkg/table.py"), generated).unwrap();
    std::fs::write(project.path().join("pkg/blob.py"), b"x = 1\n\0\0\x01binary").unwrap();
    std::os::unix::fs::symlink("loop.py", project.path().join("pkg/loop.py")).unwrap();
    let out = rgd(home.path()).arg("index").arg(project.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("pkg/table.py: left out:") && err.contains("(generated?)"), "{err}");
    assert!(err.contains("pkg/blob.py: left out: holds a NUL byte"), "{err}");
    assert!(
        err.contains("pkg/loop.py: left out: a symbolic link that leads nowhere or loops"),
        "{err}"
    );
    let report = json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    assert_eq!(report["skipped"].as_array().map(Vec::len), Some(3), "{report}");
    // The rest is indexed: its functions are targets.
    let ok = rgd(home.path())
        .args(["context", "--repo"])
        .arg(project.path())
        .args(["--target", "pkg/core.py::Report.render"])
        .output()
        .unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}

/// A project too large to embed at once (more than `EAGER_TEXTS` texts): twelve modules of
/// unrelated steps, and an invoice that rounds with a helper from another module.
fn large_project() -> tempfile::TempDir {
    let mut files: Vec<(String, String)> = (0..12)
        .map(|m| {
            let body: String = (0..20)
                .map(|i| format!("def step_{m}_{i}(x):\n    \"\"\"Stage {m}, step {i}: shifts x by {i}.\"\"\"\n    return x + {i}\n\n"))
                .collect();
            (format!("pkg/stage{m}.py"), body)
        })
        .collect();
    files.push((
        "pkg/money.py".into(),
        "def round_half_up(value, places):\n    \"\"\"Round a decimal amount to `places` digits, halves away from zero.\"\"\"\n    \
         q = 10 ** places\n    return int(value * q + 0.5) / q\n"
            .into(),
    ));
    files.push((
        "pkg/invoice.py".into(),
        "from .money import round_half_up\n\ndef invoice_total(amounts):\n    \"\"\"Sum the line amounts and round the total to cents, halves away from zero.\"\"\"\n    \
         return round_half_up(sum(amounts), 2)\n"
            .into(),
    ));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    support::project_with(&files)
}

/// On a project never indexed, `rgd context` does not wait for every embedding: graph and BM25
/// choose the neighbourhood, only it is embedded, and the answer says so; `rgd index` then embeds
/// the rest (not again what the query embedded), after which the context says every chunk was
/// compared.
#[test]
fn a_cold_project_answers_from_graph_and_bm25_and_embeds_only_the_neighbourhood() {
    let home = temp_home();
    let project = large_project();
    let context = || {
        let v = blank_context(home.path(), project.path(), "pkg/invoice.py::invoice_total", &[]);
        (v["embeddings"].clone(), piece_ids(&v))
    };
    let (cold, ids) = context();
    assert_eq!(cold["complete"], false, "{cold}");
    let (embedded, chunks) = (cold["embedded"].as_u64().unwrap(), cold["chunks"].as_u64().unwrap());
    assert!(embedded > 0 && embedded * 4 < chunks, "a neighbourhood, not the project: {cold}");
    assert_eq!(ids.first().map(String::as_str), Some("pkg/money.py::round_half_up"), "{ids:?}");
    // Said in words too.
    let out = rgd(home.path())
        .args(["context", "--repo"])
        .arg(project.path())
        .args(["--target", "pkg/invoice.py::invoice_total", "--blank"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("texts not embedded yet") && said.contains("not every chunk is embedded yet: `rgd index` embeds the rest"),
        "{said}"
    );

    // The full index embeds what the queries did not; from nothing it embeds more.
    let rest = json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    let fresh = temp_home();
    let full = json(rgd(fresh.path()).arg("index").arg(project.path()).arg("--json"));
    let (rest, full) = (rest["embedded"].as_u64().unwrap(), full["embedded"].as_u64().unwrap());
    assert!(rest > 0 && rest < full, "after the cold queries {rest}, from nothing {full}");
    let (warm, ids) = context();
    assert_eq!(warm["complete"], true, "{warm}");
    assert!(ids.iter().any(|i| i == "pkg/money.py::round_half_up"), "{ids:?}");
}

#[test]
fn a_damaged_index_is_named_by_verify_and_rebuilt_from_the_project() {
    let home = temp_home();
    let project = project();
    json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    let verify = |home: &Path| {
        let out = rgd(home).arg("index").arg(project.path()).arg("--verify").output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, text) = verify(home.path());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("ok: 5 files") && !text.contains("changed since"), "{text}");
    // The database cut short (sled keeps what it can read): never "ok" as it was.
    let repos = home.path().join("repos");
    let dir = std::fs::read_dir(&repos).unwrap().flatten().next().unwrap().path();
    let db = dir.join("db/db");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&db).unwrap().set_len(len / 3).unwrap();
    let (code, text) = verify(home.path());
    assert!(!text.contains("panicked") && !text.contains("backtrace ()"), "{text}");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("damaged") && text.contains("the last `rgd index` left"), "{text}");
    // Indexing again makes it whole from the project.
    json(rgd(home.path()).arg("index").arg(project.path()).arg("--json"));
    let (code, text) = verify(home.path());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("ok: 5 files") && !text.contains("changed since"), "{text}");
}
