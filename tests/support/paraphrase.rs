//! Perturbed task descriptions, standing in for paraphrases (no model writes them): words
//! dropped, shuffled, or swapped for synonyms from a small table. Used by the memory benchmarks.
#![allow(dead_code)]

use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

const SYNONYMS: &[(&str, &str)] = &[
    ("write", "create"),
    ("function", "routine"),
    ("find", "get"),
    ("given", "provided"),
    ("list", "array"),
    ("string", "text"),
    ("number", "integer"),
    ("numbers", "integers"),
    ("check", "verify"),
    ("remove", "delete"),
    ("count", "tally"),
    ("sort", "order"),
    ("maximum", "largest"),
    ("minimum", "smallest"),
    ("sum", "total"),
    ("element", "item"),
    ("elements", "items"),
    ("first", "initial"),
    ("last", "final"),
    ("calculate", "compute"),
    ("whether", "if"),
    ("characters", "letters"),
    ("tuple", "pair"),
];

/// The prose of a task: its docstring without the signature and quotes.
pub fn description(prompt: &str) -> String {
    prompt
        .lines()
        .map(|l| l.trim().trim_matches('"').trim())
        .filter(|l| !l.is_empty() && !l.starts_with("def ") && !l.starts_with("from ") && !l.starts_with("import "))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn drop_words(text: &str, rng: &mut ChaCha8Rng) -> String {
    let kept: Vec<&str> = text.split_whitespace().filter(|_| rng.random::<f64>() >= 0.3).collect();
    if kept.is_empty() { text.to_string() } else { kept.join(" ") }
}

pub fn shuffle_words(text: &str, rng: &mut ChaCha8Rng) -> String {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    words.shuffle(rng);
    words.join(" ")
}

pub fn synonyms(text: &str) -> String {
    text.split_whitespace()
        .map(|w| {
            let bare = w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
            SYNONYMS
                .iter()
                .find(|(a, _)| *a == bare)
                .map_or(w.to_string(), |(_, b)| b.to_string())
        })
        .collect::<Vec<_>>()
        .join(" ")
}
