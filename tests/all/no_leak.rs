//! Hidden tests never reach an agent. The state machine is driven through a whole debug round
//! (failing visible tests, then passing visible but failing hidden tests) for every task of every
//! shipped dataset, and each prompt it builds is searched for hidden test text.

use std::collections::BTreeMap;
use std::sync::Arc;

use rgd::agents::{Agent, Prompts};
use rgd::dataset::{CATALOG, DEFAULT_SPLIT_SEED, Task, TestCase, load_dataset, resolve_dataset};
use rgd::engine::{Effect, LoopConfig, Outcome, Step, Suite, TaskMachine};
use rgd::llm::{CallParams, ChatResponse, Message, Usage};
use rgd::sandbox::{RunReport, SetupStatus, TestOutcome, TestStatus};

fn answer(text: &str) -> Outcome {
    Outcome::Agent(Ok(ChatResponse {
        served_model: None,
        text: text.into(),
        usage: Usage::default(),
        finish_reason: None,
        attempts: 1,
        latency_ms: 1,
    }))
}

fn report(n: usize, status: TestStatus) -> Outcome {
    let tests = (0..n)
        .map(|index| TestOutcome {
            got: Some("41".into()),
            ..TestOutcome::new(index, status)
        })
        .collect();
    Outcome::Tests(Ok(RunReport {
        executor: "test".into(),
        setup: SetupStatus::Ok,
        setup_error: None,
        tests,
        abnormal_end: None,
        wall_ms: 1,
        best_effort: None,
    }))
}

/// Pieces of hidden tests that the agent-visible material does not already contain.
fn secrets(task: &Task) -> Vec<String> {
    let raw = |t: &TestCase| match t {
        TestCase::Assert { src } | TestCase::Check { src } | TestCase::Value { src } => src.clone(),
        TestCase::Io { input, output } => format!("{input}\n{output}"),
        TestCase::Run { input } => input.clone(),
        TestCase::Pytest { node, src } => format!("{node}\n{src}"),
    };
    let visible: String = task.visible.iter().map(raw).collect::<Vec<_>>().join("\n") + &task.prompt;
    let mut out = Vec::new();
    for test in &task.hidden {
        match test {
            TestCase::Assert { src } | TestCase::Value { src } => out.push(src.trim().to_string()),
            TestCase::Check { src } => out.extend(src.lines().map(str::trim).filter(|l| l.starts_with("assert")).map(str::to_string)),
            TestCase::Io { input, output } => {
                out.push(input.trim().to_string());
                out.push(output.trim().to_string());
            }
            TestCase::Run { input } => out.push(input.trim().to_string()),
            TestCase::Pytest { node, src } => {
                out.push(node.clone());
                out.extend(src.lines().map(str::trim).filter(|l| l.starts_with("assert")).map(str::to_string));
            }
        }
    }
    out.retain(|s| s.len() >= 12 && !visible.contains(s.as_str()));
    out.push("def check(candidate)".into());
    if let Some(c) = &task.canonical {
        // A canonical body long enough to be distinctive must not show up either.
        out.extend(
            c.lines()
                .map(str::trim)
                .filter(|l| l.len() >= 40 && !visible.contains(*l))
                .map(str::to_string),
        );
    }
    out
}

/// Three iterations, memory on, every agent on the same tiny parameters.
fn config(strategy: rgd::engine::Strategy, guide: bool, feedback: bool) -> Arc<LoopConfig> {
    let params = CallParams {
        model: "m".into(),
        temperature: 0.0,
        max_tokens: 10,
        seed: None,
        stop: Vec::new(),
    };
    Arc::new(LoopConfig {
        strategy,
        max_iters: 3,
        params: Agent::ALL.iter().map(|a| (*a, params.clone())).collect::<BTreeMap<_, _>>(),
        memory: true,
        self_debug: Default::default(),
        trace: None,
        seeds: None,
        guide,
        feedback,
        context_size: None,
        mapcoder: rgd::engine::MapCoderParams { k: 2, t: 1 },
        codesim: rgd::engine::CodeSimParams { p: 2, d: 1 },
        lpw: rgd::engine::LpwParams {
            verify_rounds: 2,
            refine_rounds: 2,
        },
        mgdebugger: rgd::engine::MgDebuggerParams {
            retries: 2,
            repairs: 1,
            trace: rgd::record::MgTrace::Real,
        },
        allow_in_process: false,
        impossible: false,
        allow_flag: false,
    })
}

fn drive(task: Arc<Task>, prompts: Arc<Prompts>, config: Arc<LoopConfig>) -> Vec<Vec<Message>> {
    let mut machine = TaskMachine::new(task.clone(), prompts, config);
    let mut seen = Vec::new();
    let mut t = machine.start();
    let mut visible_runs = 0;
    // MGDebugger's unit tests are the model's own: those may be traced too.
    let mut own: Vec<String> = Vec::new();
    let n = task.visible.len();
    loop {
        let outcome = match t.step {
            Step::Finished(_) => return seen,
            Step::Run(Effect::CallAgent { purpose, messages, .. }) => {
                seen.push(messages);
                use rgd::agents::Purpose;
                match purpose.agent() {
                    _ if purpose == Purpose::SelfTests => answer(&format!("assert {}(-98765) == 424242", task.entry_point)),
                    // LPW's plan verified on every visible test, and the verification checked.
                    _ if purpose == Purpose::LpwPlan => answer("[Start Plan]\n1. Return 41.\n[End Plan]"),
                    _ if purpose == Purpose::LpwVerify => answer(
                        &(0..n)
                            .map(|i| format!("[Verification for test {i}]\n[Record]: 41\n[Correct Plan]\n"))
                            .collect::<String>(),
                    ),
                    _ if purpose == Purpose::LpwCheck => answer(&"[Correct Analysis]\n".repeat(n)),
                    _ if purpose == Purpose::MgTests => {
                        answer("```json\n{\"test_cases\": [{\"input\": [-98765], \"expected_output\": 424242}]}\n```")
                    }
                    Agent::Debug => answer(&format!(
                        "```python\ndef {}(*args):\n    return 41\n```",
                        task.entry_point.clone().max("main".into())
                    )),
                    _ => answer("analysis / guidance"),
                }
            }
            Step::Run(Effect::RunTests { suite: Suite::Visible, .. }) => {
                visible_runs += 1;
                let status = if visible_runs == 1 {
                    TestStatus::Failed
                } else {
                    TestStatus::Passed
                };
                report(task.visible.len(), status)
            }
            Step::Run(Effect::RunTests { suite: Suite::Hidden, .. }) => report(task.hidden.len(), TestStatus::Failed),
            Step::Run(Effect::RunTests {
                suite: Suite::Own | Suite::Printed,
                ..
            }) => unreachable!("own tests and printed runs travel in their own effects"),
            Step::Run(Effect::RunOwnTests { tests, .. }) => {
                own.extend(tests.iter().map(TestCase::prompt_text));
                report(tests.len(), TestStatus::Failed)
            }
            Step::Run(Effect::RunPrinted { .. }) => report(task.visible.len(), TestStatus::Failed),
            Step::Run(Effect::QueryMemory { .. }) => Outcome::Memory(None),
            Step::Run(Effect::StoreMemory { .. }) => Outcome::Stored(Ok("entry".into())),
            // Only visible tests (and the model's own) are ever traced.
            Step::Run(Effect::TraceTest { test, .. }) => {
                assert!(
                    own.contains(&test)
                        || task.visible.iter().any(|v| test.starts_with(v.label().as_str())
                            || matches!(v, TestCase::Check { src } if test.starts_with(src.as_str()))),
                    "{}: traced {test:?}, not a visible test",
                    task.id
                );
                Outcome::Traced(Err("not traced in this test".into()))
            }
        };
        t = machine.advance(outcome);
    }
}

#[test]
fn no_prompt_contains_hidden_tests_or_canonical_code() {
    let prompts = Arc::new(Prompts::builtin());
    let config = config(rgd::engine::Strategy::Rgd, true, true);
    let mut checked = Vec::new();
    for entry in CATALOG {
        let Ok((name, path)) = resolve_dataset(entry.name, None) else {
            continue;
        };
        let dataset = load_dataset(&name, &path, DEFAULT_SPLIT_SEED).unwrap();
        for task in dataset.tasks {
            let secrets = secrets(&task);
            let conversations = drive(Arc::new(task.clone()), prompts.clone(), config.clone());
            // guide_init, debug_init, feedback, refine, fix, feedback (hidden failed), refine, fix.
            assert_eq!(conversations.len(), 8, "{}", task.id);
            let hidden_note = conversations[5]
                .iter()
                .any(|m| m.content.contains("was not accepted: further tests that you cannot see"));
            assert!(hidden_note, "{}: the Feedback agent is told the code was not accepted", task.id);
            for messages in &conversations {
                for m in messages {
                    for secret in &secrets {
                        assert!(
                            !m.content.contains(secret.as_str()),
                            "{}: hidden material {secret:?} reached a prompt",
                            task.id
                        );
                    }
                }
            }
        }
        checked.push(name);
    }
    assert!(checked.contains(&"sample".to_string()));
    eprintln!("checked datasets: {checked:?}");
}

#[test]
fn no_strategy_or_ablation_sees_hidden_tests_or_canonical_code() {
    use rgd::engine::Strategy;
    let prompts = Arc::new(Prompts::builtin());
    let configs = [
        (Strategy::Direct, true, true),
        (Strategy::Cot, true, true),
        (Strategy::SelfPlanning, true, true),
        (Strategy::SelfDebug, true, true),
        (Strategy::Ldb, true, true),
        (Strategy::Reflexion, true, true),
        (Strategy::MapCoder, true, true),
        (Strategy::CodeSim, true, true),
        (Strategy::Lpw, true, true),
        (Strategy::MgDebugger, true, true),
        (Strategy::Rgd, false, true),
        (Strategy::Rgd, true, false),
        (Strategy::Rgd, false, false),
    ];
    let datasets: Vec<_> = CATALOG
        .iter()
        .filter_map(|e| resolve_dataset(e.name, None).ok())
        .map(|(name, path)| load_dataset(&name, &path, DEFAULT_SPLIT_SEED).unwrap())
        .collect();
    for (strategy, guide, feedback) in configs {
        let config = config(strategy, guide, feedback);
        let mut calls = 0;
        for task in datasets.iter().flat_map(|d| &d.tasks) {
            let mut secrets = secrets(task);
            if strategy == Strategy::Reflexion {
                // Reflexion never sees the visible tests either (those the task's text holds aside).
                secrets.extend(task.visible.iter().map(|t| t.label()).filter(|l| !task.prompt.contains(l.as_str())));
            }
            for messages in drive(Arc::new(task.clone()), prompts.clone(), config.clone()) {
                calls += 1;
                for m in &messages {
                    for secret in &secrets {
                        assert!(
                            !m.content.contains(secret.as_str()),
                            "{} ({strategy:?}, guide {guide}, feedback {feedback}): {secret:?} reached a prompt",
                            task.id
                        );
                    }
                }
            }
        }
        assert!(calls > 0, "{strategy:?}");
    }
}
