//! `samples.jsonl`, `results.jsonl` and `summary.json` from a recorded run.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::{RunStore, StoreError};
use crate::record::RunSummary;

#[derive(Serialize)]
struct Sample<'a> {
    task_id: &'a str,
    completion: &'a str,
    /// Why the completion is withheld (a program of the task tampered with its tests).
    #[serde(skip_serializing_if = "Option::is_none")]
    withheld: Option<&'a str>,
    /// A person changed this task's course: the completion is not the method's alone.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    intervened: bool,
}

/// Writes the three output files for a run into `out` and returns the summary.
pub fn export_run(store: &RunStore, out: &Path) -> Result<RunSummary, StoreError> {
    let manifest = store.manifest()?;
    let mut results = store.results()?;
    // Dataset order, not key order: MBPP/100 comes after MBPP/99.
    let order = |id: &str| manifest.dataset.selected.iter().position(|s| s == id).unwrap_or(usize::MAX);
    results.sort_by_key(|r| order(&r.task_id));
    let summary = RunSummary::compute(
        &manifest.run_id,
        &manifest.dataset.name,
        &manifest.model_label(),
        &manifest.dataset.selected,
        &results,
        manifest.max_iters,
    );

    let io = |path: &Path| {
        let shown = path.display().to_string();
        move |source| StoreError::Io { path: shown, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    let write_lines = |name: &str, lines: Vec<String>| -> Result<(), StoreError> {
        let path = out.join(name);
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io(&path))?);
        for line in lines {
            writeln!(file, "{}", crate::secrets::scrub(&line)).map_err(io(&path))?;
        }
        file.flush().map_err(io(&path))
    };
    fn line<T: Serialize>(value: &T) -> Result<String, StoreError> {
        serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("cannot serialise: {e}")))
    }
    write_lines(
        "samples.jsonl",
        // A task the endpoint failed has no answer to evaluate: it is in results.jsonl (and in the
        // summary's unfinished), not among the samples.
        results
            .iter()
            .filter(|r| r.is_final())
            .map(|r| {
                line(&Sample {
                    task_id: &r.task_id,
                    completion: r.trusted_completion().unwrap_or_default(),
                    withheld: r.tampered.as_deref(),
                    intervened: r.intervened,
                })
            })
            .collect::<Result<_, _>>()?,
    )?;
    write_lines("results.jsonl", results.iter().map(line).collect::<Result<_, _>>()?)?;
    let path = out.join("summary.json");
    let text = serde_json::to_string_pretty(&summary).map_err(|e| StoreError::Corrupt(format!("cannot serialise the summary: {e}")))?;
    std::fs::write(&path, crate::secrets::scrub(&text).as_bytes()).map_err(io(&path))?;
    Ok(summary)
}
