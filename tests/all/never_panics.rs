//! Bad input never panics. Random `rgd.toml` files, run manifests and dataset lines are read the
//! way rgd reads them; each is accepted or refused with an error, and a panic fails the property.

use proptest::prelude::*;
use rgd::config::{FileConfig, LlmArgs, Settings};
use rgd::engine::Manifest;
use serde_json::{Value, json};

/// Numbers of every awkward kind, as TOML literals.
fn toml_number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("-inf".to_string()),
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("1e308".to_string()),
        Just("\"ten\"".to_string()),
        Just("\"\"".to_string()),
        Just("true".to_string()),
    ]
}

const TOML_KEYS: &[(&str, &str)] = &[
    ("llm", "timeout_secs"),
    ("llm", "retries"),
    ("llm", "max_in_flight"),
    ("llm", "backoff_min_ms"),
    ("llm", "backoff_max_ms"),
    ("llm", "price_input_per_mtok"),
    ("llm", "model"),
    ("local", "threads"),
    ("local", "contexts"),
    ("local", "context"),
    ("local", "model"),
    ("agents.guide", "temperature"),
    ("agents.debug", "max_tokens"),
    ("agents.feedback", "model"),
    ("sandbox", "per_test_timeout_secs"),
    ("sandbox", "max_total_secs"),
    ("sandbox", "memory_mb"),
    ("sandbox", "output_cap"),
    ("run", "max_iters"),
    ("run", "concurrency"),
    ("run", "seed"),
];

/// JSON values of every kind, nested a little.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(".{0,6}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Numbers a corrupt or hand-edited record might hold.
fn bad_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(-1.0)),
        Just(json!(-1e300)),
        Just(json!(1e300)),
        Just(json!(-0.25)),
        Just(json!(0)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        any::<f64>().prop_map(|f| json!(f)),
    ]
}

/// A real manifest, recorded by an earlier version of rgd.
fn recorded_manifest() -> Value {
    let text = include_str!("../fixtures/tui-run.jsonl");
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["event"]["manifest"].clone()
}

/// Every path of object keys in `value` (for mutations).
fn key_paths(value: &Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    if let Value::Object(map) = value {
        for (k, v) in map {
            let mut path = prefix.clone();
            path.push(k.clone());
            out.push(path.clone());
            key_paths(v, path, out);
        }
    }
}

fn at<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, k| v.get_mut(k))
}

const DATASET_KEYS: &[&str] = &[
    "task_id",
    "prompt",
    "entry_point",
    "test",
    "given_tests",
    "canonical_solution",
    "text",
    "code",
    "test_list",
    "challenge_test_list",
    "test_setup_code",
    "question",
    "input_output",
    "starter_code",
    "sample_io",
    "solutions",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn config_files_are_accepted_or_refused_never_a_panic(
        entries in prop::collection::vec((0..TOML_KEYS.len(), toml_number()), 0..8),
        concurrency in prop::option::of(0usize..64),
    ) {
        let mut text = String::new();
        let mut seen = std::collections::BTreeMap::<&str, Vec<String>>::new();
        for (k, value) in &entries {
            let (section, key) = TOML_KEYS[*k];
            let lines = seen.entry(section).or_default();
            if !lines.iter().any(|l| l.starts_with(&format!("{key} ="))) {
                lines.push(format!("{key} = {value}"));
            }
        }
        for (section, lines) in &seen {
            text.push_str(&format!("[{section}]\n{}\n", lines.join("\n")));
        }
        if let Ok(file) = toml::from_str::<FileConfig>(&text)
            && file.validate().is_ok()
        {
            let _ = Settings::resolve(file, None, &LlmArgs::default(), concurrency, None);
        }
    }

    #[test]
    fn manifests_are_accepted_or_refused_never_a_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::option::of(json_value())), 1..6),
        numbers in prop::collection::vec((any::<prop::sample::Index>(), bad_number()), 0..4),
    ) {
        let mut manifest = recorded_manifest();
        // Numbers first: every numeric field is a candidate for a negative, huge or fractional value.
        for (index, number) in numbers {
            let mut paths = Vec::new();
            key_paths(&manifest, Vec::new(), &mut paths);
            paths.retain(|p| at(&mut manifest, p).is_some_and(|v| v.is_number()));
            if !paths.is_empty() {
                let path = index.get(&paths).clone();
                if let Some(slot) = at(&mut manifest, &path) {
                    *slot = number;
                }
            }
        }
        for (index, replacement) in edits {
            let mut paths = Vec::new();
            key_paths(&manifest, Vec::new(), &mut paths);
            if paths.is_empty() {
                break;
            }
            let path = index.get(&paths).clone();
            match replacement {
                Some(value) => {
                    if let Some(slot) = at(&mut manifest, &path) {
                        *slot = value;
                    }
                }
                None => {
                    let (last, parent) = path.split_last().unwrap();
                    if let Some(Value::Object(map)) = at(&mut manifest, parent) {
                        map.remove(last);
                    }
                }
            }
        }
        let _ = serde_json::from_value::<Manifest>(manifest);
    }

    #[test]
    fn dataset_lines_are_loaded_or_refused_never_a_panic(
        records in prop::collection::vec(prop::collection::vec((0..DATASET_KEYS.len(), json_value()), 0..6), 1..4),
        garbage in prop::option::of(".{0,20}"),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("random.jsonl");
        let mut text = String::new();
        for fields in records {
            let object: serde_json::Map<String, Value> =
                fields.into_iter().map(|(k, v)| (DATASET_KEYS[k].to_string(), v)).collect();
            text.push_str(&Value::Object(object).to_string());
            text.push('\n');
        }
        if let Some(g) = garbage {
            text.push_str(&g);
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        let _ = rgd::dataset::load_dataset("random", &path, 1);
    }
}

/// The recorded manifest itself still reads, so the mutations above start from something valid.
#[test]
fn the_recorded_manifest_reads() {
    serde_json::from_value::<Manifest>(recorded_manifest()).unwrap();
}
