//! `cargo bench --bench memory_threshold`: where the memory pool's similarity threshold should be,
//! by measurement. RGD queries the pool with a task's prompt, and an entry's question is a solved
//! task's prompt. For every HumanEval and MBPP task, with the real embedding model:
//! - related: the prompt against a paraphrase of it (rgd has no model to write paraphrases: 30% of
//!   the words dropped, synonyms swapped in, as `benches/memory.rs` does);
//! - unrelated: the prompt against another task's prompt of the same dataset (seeded random pairs).
//!
//! Printed: both distributions of SBERT cosine, and for each candidate threshold the share of
//! related pairs kept (recall) and of unrelated ones let through (false-positive rate). The default
//! is chosen as the lowest threshold that lets at most 1% of unrelated pairs through.

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
