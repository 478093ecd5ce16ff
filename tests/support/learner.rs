//! A scripted model whose behaviour is known, for benchmarks of whole loops: its FIRST program
//! for a task is wrong (the canonical code with the entry point shadowed by a stub returning
//! None) and every repair is the canonical program. Plans, guidance, analyses, verdicts and
//! reflections are fixed text; MapCoder's recall is well-formed XML with three problems and
//! confidences 90, 50, 10; Reflexion's own test is the task's first visible test (a model that
//! happens to write it; rgd never shows it).

use std::sync::Arc;

use super::{Reply, Script, fenced, squash};

/// What the scripted model knows of a task: found by its prompt in the request.
struct Known {
    prompt: String,
    entry: String,
    canonical: String,
    first_visible: String,
}

fn recall() -> String {
    let problem = |n: u32| {
        format!(
            "<problem><description>Recalled problem {n}</description><code>def f{n}(xs):\n    return [x for x in xs if x < {n}]</code><planning>Plan of problem {n}.</planning></problem>"
        )
    };
    format!(
        "<root>{}{}{}<algorithm>Careful iteration & edge cases.</algorithm></root>",
        problem(1),
        problem(2),
        problem(3)
    )
}

/// The model for the first `limit` tasks of a bundled dataset.
pub fn script(dataset: &str, limit: usize) -> Script {
    let (_, path) = rgd::dataset::resolve_dataset(dataset, None).expect("bundled");
    let ds = rgd::dataset::load_dataset(dataset, &path, 0).expect("loads");
    let known: Vec<Known> = ds
        .tasks
        .iter()
        .take(limit)
        .filter_map(|t| {
            Some(Known {
                prompt: squash(&t.prompt),
                entry: t.entry_point.clone(),
                canonical: t.canonical.clone()?,
                first_visible: t.visible.first()?.label(),
            })
        })
        .collect();
    let known = Arc::new(known);
    Arc::new(move |req| {
        let user = squash(&req.user);
        let task = known.iter().find(|k| user.contains(k.prompt.as_str()));
        let (right, wrong, test) = match task {
            Some(k) => (
                fenced(&k.canonical),
                fenced(&format!("{}\n\ndef {}(*args, **kwargs):\n    return None\n", k.canonical, k.entry)),
                k.first_visible.clone(),
            ),
            None => (String::new(), String::new(), String::new()),
        };
        Reply::Text(match req.purpose {
            "direct" | "cot" | "implement" | "debug_init" | "self_debug_seed" | "ldb_seed" | "reflexion_implement" | "map_code" => wrong,
            "debug_fix" | "self_debug_fix" | "ldb_fix" | "reflexion_fix" | "map_debug" => right,
            "self_tests" => test,
            "recall" => recall(),
            "map_plan" => {
                let n = (1..=3).find(|n| req.user.contains(&format!("Recalled problem {n}"))).unwrap_or(0);
                format!("PLAN {n}: follow the docstring step by step.")
            }
            "confidence" if req.user.contains("PLAN 1") => "<root><explanation>ok</explanation><confidence>90</confidence></root>".into(),
            "confidence" if req.user.contains("PLAN 2") => "<root><explanation>ok</explanation><confidence>50</confidence></root>".into(),
            "confidence" => "<root><explanation>ok</explanation><confidence>10</confidence></root>".into(),
            "ldb_verdict" => "[BLOCK-1] wrong: the stub returns None".into(),
            "keywords" => "docstring, edge cases".into(),
            _ => "Implement the function as the docstring says, step by step, with care for the edge cases.".into(),
        })
    })
}
