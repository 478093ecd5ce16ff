//! `cargo bench --bench memory_threshold`: where the memory pool's similarity threshold should be,
//! by measurement. RGD queries the pool with a task's prompt, and an entry's question is a solved
//! task's prompt. For every HumanEval and MBPP task, with the real embedding model:
//! - related: the prompt against a paraphrase of it (rgd has no model to write paraphrases: 30% of
//!   the words dropped, synonyms swapped in, as `benches/memory.rs` does);
//! - unrelated: the prompt against another task's prompt of the same dataset (seeded random pairs).
//!
//! Printed: both distributions of SBERT cosine, and for each candidate threshold the share of
//! related pairs kept (recall) and of unrelated ones let through (false-positive rate).
//!
//! Then the measurement that decides the default, with REAL paraphrases: 60 task descriptions
//! rewritten by hand for rgd (`benches/data/paraphrases.jsonl`: 40 MBPP, 20 HumanEval; new function
//! names, new words, new examples), queried the way a run queries: against a pool (real sled,
//! tantivy, embedder; hybrid ranking) holding every HumanEval and MBPP task. For each paraphrase:
//! its best hit (right if it is the task it paraphrases) and, as if that task were not in the pool,
//! the best hit of another task (a false hit if it clears the threshold). Precision at a threshold
//! counts right hits among all hits that clear it, with half the queries finding their task
//! absent; the default is the lowest threshold reaching 90% precision.

#[path = "../tests/support/paraphrase.rs"]
mod paraphrase;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rgd::dataset::{load_dataset, resolve_dataset};
use rgd::memory::{Embedder, assets, embed::dot};

fn percentiles(v: &mut [f32]) -> String {
    v.sort_by(f32::total_cmp);
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    format!(
        "p1 {:.2}  p5 {:.2}  p25 {:.2}  median {:.2}  p75 {:.2}  p95 {:.2}  p99 {:.2}",
        at(0.01),
        at(0.05),
        at(0.25),
        at(0.5),
        at(0.75),
        at(0.95),
        at(0.99)
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let assets = assets::ensure(&|l| eprintln!("{l}")).unwrap();
    let embedder = Embedder::load(&assets).unwrap();
    for (what, prose_only) in [
        ("whole prompts (what RGD embeds today)", false),
        ("descriptions only (the docstring's prose)", true),
    ] {
        calibrate(&embedder, what, prose_only);
    }
    real_paraphrases(embedder);
}

/// Best-hit scores of the hand-written paraphrases against a pool of every task.
fn real_paraphrases(embedder: Embedder) {
    use rgd::memory::{Entry, MemoryPool, SearchOptions};
    let dir = tempfile::tempdir().unwrap();
    let mut pool = MemoryPool::open(dir.path(), std::sync::Arc::new(embedder)).unwrap();
    let mut entries = Vec::new();
    for name in ["humaneval", "mbpp"] {
        let (_, path) = resolve_dataset(name, None).unwrap();
        for t in load_dataset(name, &path, 0).unwrap().tasks {
            entries.push(Entry {
                id: t.id.replace('/', "-"),
                record: rgd::engine::MemoryRecord {
                    task_id: t.id.clone(),
                    entry_point: t.entry_point.clone(),
                    question: t.prompt.clone(),
                    guidance: String::new(),
                    keywords: Vec::new(),
                    code: String::new(),
                },
                run_id: None,
                created_at: chrono::Utc::now(),
            });
        }
    }
    pool.insert(entries).unwrap();
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/data/paraphrases.jsonl")).unwrap();
    let options = SearchOptions {
        k: 5,
        min_similarity: -1.0,
        ..SearchOptions::default()
    };
    // (best hit's cosine, whether it is the paraphrased task), and the best other task's cosine.
    let (mut present, mut absent) = (Vec::new(), Vec::new());
    // The same with the lead of the best hit's cosine over the runner-up's.
    let (mut present_lead, mut absent_lead) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (task, query) = (v["task_id"].as_str().unwrap(), v["paraphrase"].as_str().unwrap());
        let hits = pool.search(query, &options).unwrap();
        present.push((hits[0].sbert, hits[0].entry.task_id == task));
        let others: Vec<f32> = hits.iter().filter(|h| h.entry.task_id != task).map(|h| h.sbert).collect();
        absent.push(others[0]);
        let runner_up = hits[1..].iter().map(|h| h.sbert).fold(f32::MIN, f32::max);
        present_lead.push((hits[0].sbert - runner_up, hits[0].entry.task_id == task));
        absent_lead.push(others[0] - others[1..].iter().copied().fold(f32::MIN, f32::max));
    }
    let right: Vec<f32> = present.iter().filter(|(_, r)| *r).map(|(s, _)| *s).collect();
    println!(
        "\nhand-written paraphrases against a pool of all {} HumanEval and MBPP tasks (hybrid ranking): {} queries, the best hit is the paraphrased task for {} ({:.0}%)",
        pool.len(),
        present.len(),
        right.len(),
        100.0 * right.len() as f64 / present.len() as f64
    );
    println!("  right best hit, cosine:          {}", percentiles(&mut right.clone()));
    println!("  best other task (task absent):   {}", percentiles(&mut absent.clone()));
    println!("  threshold  right hits (recall)  wrong hits, task present  false hits, task absent  precision");
    let mut chosen = None;
    for step in 0..=14 {
        let t = 0.20 + step as f32 * 0.05;
        let hits_right = present.iter().filter(|(s, r)| *r && *s >= t).count();
        let hits_wrong = present.iter().filter(|(s, r)| !*r && *s >= t).count();
        let hits_false = absent.iter().filter(|s| **s >= t).count();
        let all = hits_right + hits_wrong + hits_false;
        let precision = if all == 0 { 1.0 } else { hits_right as f64 / all as f64 };
        if chosen.is_none() && precision >= 0.9 {
            chosen = Some((t, hits_right));
        }
        println!(
            "  {t:.2}       {hits_right:3} ({:5.1}%)           {hits_wrong:3}                       {hits_false:3}                     {:5.1}%",
            100.0 * hits_right as f64 / present.len() as f64,
            100.0 * precision
        );
    }
    match chosen {
        Some((t, kept)) => println!(
            "  lowest threshold with precision >= 90%: {t:.2} (recall {:.0}%)",
            100.0 * kept as f64 / present.len() as f64
        ),
        None => println!("  no threshold reaches 90% precision"),
    }
    println!("  lead over the runner-up's cosine   right hits (recall)  wrong hits, present  false hits, absent  precision");
    for step in 0..=10 {
        let m = step as f32 * 0.01;
        let hits_right = present_lead.iter().filter(|(l, r)| *r && *l >= m).count();
        let hits_wrong = present_lead.iter().filter(|(l, r)| !*r && *l >= m).count();
        let hits_false = absent_lead.iter().filter(|l| **l >= m).count();
        let all = hits_right + hits_wrong + hits_false;
        let precision = if all == 0 { 1.0 } else { hits_right as f64 / all as f64 };
        println!(
            "  {m:.2}                               {hits_right:3} ({:5.1}%)           {hits_wrong:3}                  {hits_false:3}                {:5.1}%",
            100.0 * hits_right as f64 / present.len() as f64,
            100.0 * precision
        );
    }
}

fn calibrate(embedder: &Embedder, what: &str, prose_only: bool) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut related, mut unrelated) = (Vec::new(), Vec::new());
    for name in ["humaneval", "mbpp"] {
        let (_, path) = resolve_dataset(name, None).unwrap();
        let tasks = load_dataset(name, &path, 0).unwrap().tasks;
        let texts: Vec<String> = tasks
            .iter()
            .map(|t| {
                if prose_only {
                    paraphrase::description(&t.prompt)
                } else {
                    t.prompt.clone()
                }
            })
            .collect();
        let prompts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let paraphrases: Vec<String> = prompts
            .iter()
            .map(|p| paraphrase::synonyms(&paraphrase::drop_words(p, &mut rng)))
            .collect();
        let mut vectors = Vec::new();
        for chunk in prompts.chunks(64) {
            vectors.extend(embedder.embed(chunk).unwrap());
        }
        let mut para_vectors = Vec::new();
        for chunk in paraphrases.chunks(64) {
            let texts: Vec<&str> = chunk.iter().map(String::as_str).collect();
            para_vectors.extend(embedder.embed(&texts).unwrap());
        }
        for i in 0..prompts.len() {
            related.push(dot(&vectors[i], &para_vectors[i]));
            for _ in 0..3 {
                let j = rng.random_range(0..prompts.len());
                if j != i {
                    unrelated.push(dot(&vectors[i], &vectors[j]));
                }
            }
        }
    }
    println!(
        "HumanEval + MBPP, {what}: {} related pairs (text, its paraphrase), {} unrelated pairs (two tasks)",
        related.len(),
        unrelated.len()
    );
    println!("  related:   {}", percentiles(&mut related));
    println!("  unrelated: {}", percentiles(&mut unrelated));
    println!("  threshold  related kept  unrelated let through");
    let share = |v: &[f32], t: f32| v.iter().filter(|&&x| x >= t).count() as f64 / v.len() as f64 * 100.0;
    let mut chosen = None;
    for step in 0..=14 {
        let t = 0.30 + step as f32 * 0.025;
        let fp = share(&unrelated, t);
        if chosen.is_none() && fp <= 1.0 {
            chosen = Some(t);
        }
        println!("  {t:.3}      {:6.1}%        {fp:6.2}%", share(&related, t));
    }
    if let Some(t) = chosen {
        println!("  lowest threshold letting <= 1% of unrelated pairs through: {t:.3}");
    }
}
