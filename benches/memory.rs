//! `cargo bench --bench memory`: the memory pool's retrieval quality and speed, with the real
//! model (int8 all-MiniLM-L6-v2 on ONNX Runtime) and the real tantivy index.
//!
//! Quality: a pool of the 500 MBPP tasks (Q = the task text, K = tree-sitter identifiers of the
//! canonical code, no LLM), queried with perturbed descriptions (30% of words dropped; words
//! shuffled; synonyms from a small table) and with the canonical code alone. recall@1 / recall@5 of
//! BM25, SBERT, hybrid (weighted 0.7/0.3) and hybrid (RRF), side by side.
//!
//! Speed: query latency at 1k, 10k and 100k entries (synthetic texts, real vectors of perturbed
//! MBPP texts), excluding and including the query's embedding; index build rate; embeddings per
//! second; and the RGD reference's approach (re-embedding every entry per query) at 1k.

use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "../tests/support/paraphrase.rs"]
mod paraphrase;

use paraphrase::{description, drop_words, shuffle_words, synonyms};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgd::dataset::{load_dataset, resolve_dataset};
use rgd::memory::keywords::code_keywords;
use rgd::memory::{Embedder, Entry, Fusion, MemoryPool, Method, SearchOptions, assets};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1000.0
}

fn entry(i: usize, task_id: &str, entry_point: &str, question: &str, keywords: Vec<String>, code: &str) -> Entry {
    Entry {
        id: format!("{i:026}"),
        record: rgd::engine::MemoryRecord {
            task_id: task_id.into(),
            entry_point: entry_point.into(),
            question: question.into(),
            guidance: String::new(),
            keywords,
            code: code.into(),
        },
        run_id: None,
        created_at: chrono::Utc::now(),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let assets = assets::ensure(&|l| eprintln!("{l}")).unwrap();
    let load = Instant::now();
    let embedder = Arc::new(Embedder::load(&assets).unwrap());
    let load_secs = load.elapsed().as_secs_f64();
    let (_, path) = resolve_dataset("mbpp", None).unwrap();
    let tasks = load_dataset("mbpp", &path, 0).unwrap().tasks;

    // ---- quality ---- (`RGD_BENCH_PART=quality` stops after it)
    let dir = tempfile::tempdir().unwrap();
    let mut pool = MemoryPool::open(dir.path(), embedder.clone()).unwrap();
    let entries: Vec<Entry> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let code = t.canonical.clone().unwrap_or_default();
            entry(i, &t.id, &t.entry_point, &t.prompt, code_keywords(&code), &code)
        })
        .collect();
    let started = Instant::now();
    pool.insert(entries).unwrap();
    let build_secs = started.elapsed().as_secs_f64();
    println!(
        "pool of {} MBPP tasks built in {build_secs:.1} s ({:.0} entries/s, embedding included); model load {load_secs:.2} s",
        pool.len(),
        pool.len() as f64 / build_secs
    );

    let mut rng = ChaCha8Rng::seed_from_u64(241001242);
    let sets: Vec<(&str, Vec<(String, String)>)> = vec![
        (
            "30% of words dropped",
            tasks
                .iter()
                .map(|t| (t.id.clone(), drop_words(&description(&t.prompt), &mut rng)))
                .collect(),
        ),
        (
            "words shuffled",
            tasks
                .iter()
                .map(|t| (t.id.clone(), shuffle_words(&description(&t.prompt), &mut rng)))
                .collect(),
        ),
        (
            "synonyms",
            tasks.iter().map(|t| (t.id.clone(), synonyms(&description(&t.prompt)))).collect(),
        ),
        (
            "code only",
            tasks
                .iter()
                .map(|t| (t.id.clone(), t.canonical.clone().unwrap_or_default()))
                .collect(),
        ),
    ];
    let methods: [(&str, Method, Fusion); 4] = [
        ("BM25", Method::Bm25, Fusion::Weighted { sbert: 0.7, bm25: 0.3 }),
        ("SBERT", Method::Sbert, Fusion::Weighted { sbert: 0.7, bm25: 0.3 }),
        ("hybrid 0.7/0.3", Method::Hybrid, Fusion::Weighted { sbert: 0.7, bm25: 0.3 }),
        ("hybrid RRF", Method::Hybrid, Fusion::Rrf { k: 60.0 }),
    ];
    println!(
        "\nrecall@1 / recall@5 over {} queries per set (no similarity threshold):",
        tasks.len()
    );
    print!("{:<22}", "query set");
    for (name, ..) in &methods {
        print!("{name:>18}");
    }
    println!();
    for (set, queries) in &sets {
        let texts: Vec<&str> = queries.iter().map(|(_, q)| q.as_str()).collect();
        let vectors = embedder.embed(&texts).unwrap();
        print!("{set:<22}");
        for (_, method, fusion) in &methods {
            let options = SearchOptions {
                k: 5,
                min_similarity: -1.0,
                fusion: *fusion,
                method: *method,
            };
            let (mut at1, mut at5) = (0, 0);
            for ((want, text), v) in queries.iter().zip(&vectors) {
                let hits = pool.search_with_vector(text, v, &options).unwrap();
                at1 += usize::from(hits.first().is_some_and(|h| &h.entry.task_id == want));
                at5 += usize::from(hits.iter().any(|h| &h.entry.task_id == want));
            }
            let n = queries.len() as f64;
            print!("{:>18}", format!("{:.3} / {:.3}", at1 as f64 / n, at5 as f64 / n));
        }
        println!();
    }
    drop(pool);

    if std::env::var("RGD_BENCH_PART").as_deref() == Ok("quality") {
        return;
    }

    // ---- speed ----
    let texts: Vec<String> = tasks.iter().map(|t| description(&t.prompt)).collect();
    let text_refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    let base_vectors = embedder.embed(&text_refs).unwrap();
    let eps = texts.len() as f64 / started.elapsed().as_secs_f64();
    println!("\nembeddings: {eps:.0} texts/s (batches of 64, {} MBPP descriptions)", texts.len());

    let queries: Vec<String> = (0..200).map(|i| drop_words(&texts[i % texts.len()], &mut rng)).collect();
    println!("query latency, 200 queries (k = 3), median / p95 in ms:");
    println!(
        "{:>9}  {:>22}  {:>22}  {:>14}",
        "entries", "search (no embedding)", "embedding + search", "build rate"
    );
    // `RGD_BENCH_SIZES=100000` measures one size only.
    let sizes: Vec<usize> = std::env::var("RGD_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    for size in sizes {
        let dir = tempfile::tempdir().unwrap();
        let mut pool = MemoryPool::open(dir.path(), embedder.clone()).unwrap();
        // Synthetic entries: MBPP texts with a numbered suffix, vectors of those texts jittered
        // (so no two are equal), renormalised.
        let batch: Vec<(Entry, Vec<f32>)> = (0..size)
            .map(|i| {
                let j = i % texts.len();
                let mut v = base_vectors[j].clone();
                v.iter_mut().for_each(|x| *x += rng.random_range(-0.02f32..0.02));
                rgd::memory::embed::normalise(&mut v);
                let text = format!("{} (variant {i})", texts[j]);
                (entry(i, &format!("S/{i}"), "f", &text, vec![format!("kw{}", i % 97)], ""), v)
            })
            .collect();
        let started = Instant::now();
        for chunk in batch.chunks(5_000) {
            pool.insert_embedded(chunk.to_vec()).unwrap();
        }
        let rate = size as f64 / started.elapsed().as_secs_f64();
        let options = SearchOptions::default();
        let mut without = Vec::new();
        let mut with = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let v = embedder.embed_one(q).unwrap();
            let embedded = t.elapsed();
            let t = Instant::now();
            pool.search_with_vector(q, &v, &options).unwrap();
            let searched = t.elapsed();
            without.push(searched);
            with.push(embedded + searched);
        }
        without.sort();
        with.sort();
        // Where the time goes: each method alone, same queries.
        let mut parts = Vec::new();
        for method in [Method::Sbert, Method::Bm25] {
            let options = SearchOptions {
                method,
                ..SearchOptions::default()
            };
            let mut times: Vec<Duration> = queries
                .iter()
                .map(|q| {
                    let v = embedder.embed_one(q).unwrap();
                    let t = Instant::now();
                    pool.search_with_vector(q, &v, &options).unwrap();
                    t.elapsed()
                })
                .collect();
            times.sort();
            parts.push(format!("{method:?} alone {:.2} ms", percentile(&times, 0.5)));
        }
        println!(
            "{size:>9}  {:>10.2} / {:>9.2}  {:>10.2} / {:>9.2}  {:>9.0} /s",
            percentile(&without, 0.5),
            percentile(&without, 0.95),
            percentile(&with, 0.5),
            percentile(&with, 0.95),
            rate
        );
        println!("{:>9}  medians: {}", "", parts.join(", "));
        if size >= 20_000 {
            // The sign and int8 passes only shortlist: check SBERT's top 3 against an exhaustive
            // float scan of every entry.
            let options = SearchOptions {
                method: Method::Sbert,
                min_similarity: -1.0,
                ..SearchOptions::default()
            };
            let mut same = 0;
            for q in &queries {
                let v = embedder.embed_one(q).unwrap();
                let got: Vec<String> = pool
                    .search_with_vector(q, &v, &options)
                    .unwrap()
                    .into_iter()
                    .map(|h| h.entry.id)
                    .collect();
                let mut all: Vec<(f32, usize)> = (0..pool.len()).map(|i| (rgd::memory::embed::dot(pool.vector(i), &v), i)).collect();
                all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                let want: Vec<String> = all.iter().take(3).map(|(_, i)| pool.entries()[*i].id.clone()).collect();
                same += usize::from(got == want);
            }
            println!(
                "{:>9}  SBERT top 3 identical to an exhaustive float scan: {same}/{} queries",
                "",
                queries.len()
            );
        }
        if size == 1_000 {
            // The reference: every query re-embeds the whole pool.
            let entries_text: Vec<&str> = pool.entries().iter().map(|e| e.question.as_str()).collect();
            let mut times = Vec::new();
            for q in queries.iter().take(5) {
                let t = Instant::now();
                let _ = embedder.embed(&entries_text).unwrap();
                let _ = embedder.embed_one(q).unwrap();
                times.push(t.elapsed());
            }
            times.sort();
            println!(
                "{:>9}  reference approach (re-embed all 1,000 entries per query): median {:.0} ms over 5 queries",
                "",
                percentile(&times, 0.5)
            );
        }
    }
}
