//! One function of a project as a task (`rgd solve --repo`): the target file is the program (the
//! agents' function is spliced into it), the visible tests are pytest node ids with their source,
//! the hidden ones node ids the agents never see, and the question is the function's spec under
//! the repository context retrieved for it. Written out as a one-line LDB dataset with a
//! `project` object, so the run resumes, replays and forks like any other.

use std::path::Path;

use serde_json::json;

use crate::code::{find_function, stubbed};
use crate::dataset::UserTask;
use crate::repo::index::RepoIndex;

/// A module this size (estimated tokens) or smaller is shown whole, its function stubbed; a
/// larger one shows only its imports (in the context block) and the function's spec.
const WHOLE_MODULE_TOKENS: usize = 1500;

/// The chunk id of the test function a pytest node id names (`tests/t.py::TestC::test_m[1]` ->
/// `tests/t.py::TestC.test_m`).
pub fn test_chunk_id(node: &str) -> Option<String> {
    let node = node.split('[').next().unwrap_or(node);
    let (file, rest) = node.split_once("::")?;
    Some(format!("{file}::{}", rest.replace("::", ".")))
}

/// The source of the test a node id names (`tests/t.py::TestC::test_m[1]`), from the index; empty
/// when the index does not have it (a generated test).
pub fn test_source(index: &RepoIndex, node: &str) -> String {
    let Some(id) = test_chunk_id(node) else {
        return String::new();
    };
    index
        .graph
        .index_of(&id)
        .map(|i| index.graph.chunks[i].code.clone())
        .unwrap_or_default()
}

/// What `repo_task` needs.
#[derive(Debug, Clone, Copy)]
pub struct RepoTaskSpec<'a> {
    pub root: &'a Path,
    /// `path/to/mod.py::name`.
    pub target: &'a str,
    pub python: &'a Path,
    pub visible: &'a [String],
    pub hidden: &'a [String],
    /// The rendered context block (`render_context`), if the agents get one.
    pub context: Option<&'a str>,
}

pub fn repo_task(index: &RepoIndex, spec: &RepoTaskSpec<'_>) -> anyhow::Result<UserTask> {
    let (file, name) = spec
        .target
        .split_once("::")
        .ok_or_else(|| anyhow::anyhow!("{:?}: a target is path/to/mod.py::name or ::Class.method", spec.target))?;
    let path = spec.root.join(file);
    let module = std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    let site = find_function(&module, name).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let shown = stubbed(&module, &site);
    let function = if crate::repo::index::render::estimate_tokens(&shown) <= WHOLE_MODULE_TOKENS {
        format!("# {file}\n```python\n{}\n```", shown.trim_end())
    } else {
        // A method is shown in its class, at its indentation.
        let class_line = match name.rsplit_once('.') {
            Some((class, _)) => format!("class {}:\n{}", class.rsplit('.').next().unwrap_or(class), " ".repeat(site.indent)),
            None => String::new(),
        };
        format!(
            "# {file} (its other definitions are not shown)\n```python\n{class_line}{}\n```",
            site.spec.trim_end()
        )
    };
    let mut prompt = String::new();
    if let Some(context) = spec.context {
        prompt.push_str(context.trim_end());
        prompt.push_str("\n\n");
    }
    let what = match name.rsplit_once('.') {
        Some((_, method)) => format!(
            "{} (answer with its `def {method}(...)`, decorators included; the rest of the class stays as it is)",
            writing(name)
        ),
        None => writing(name),
    };
    prompt.push_str(&format!(
        "{function}\n\n(From the repository's file {file}: {what}; the rest of the file stays as it is. Import what you use from the project's other modules.)\n"
    ));
    let tests =
        |ids: &[String]| -> Vec<serde_json::Value> { ids.iter().map(|id| json!({"node": id, "src": test_source(index, id)})).collect() };
    // The hidden tests' sources are not written: they are never needed, so they cannot leak.
    let hidden: Vec<serde_json::Value> = spec.hidden.iter().map(|id| json!({"node": id})).collect();
    Ok(UserTask {
        record: json!({
            "task_id": spec.target,
            "entry_point": name,
            "prompt": prompt,
            "given_tests": spec.visible,
            "test": "",
            "module": module,
            "project": {
                "root": spec.root.display().to_string(),
                "file": file,
                "target": name,
                "python": spec.python.display().to_string(),
                "visible": tests(spec.visible),
                "hidden": hidden,
            },
        }),
        task_id: spec.target.to_string(),
        is_stub: site.is_stub,
        module,
        has_hidden: !spec.hidden.is_empty(),
    })
}

/// How a task asks for `qualname` ("write the function `f`", "write the method `m` of the class
/// `C`"): what `rgd bench real`'s oracle recognises its function by.
pub fn writing(qualname: &str) -> String {
    match qualname.rsplit_once('.') {
        Some((class, method)) => format!("write the method `{method}` of the class `{class}`"),
        None => format!("write the function `{qualname}`"),
    }
}
