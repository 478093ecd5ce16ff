//! The baselines and RGD's ablations on the loopback server: which calls each makes, in which
//! order, and what each call is shown. The exemplars rgd's prompts carry are not tasks of any
//! bundled dataset.

use crate::support;

use std::sync::Arc;

use serde_json::Value;
use support::{Reply, ScriptedServer, fenced, rgd, sample_run, temp_home};

const WRONG: &str = "def add(a: int, b: int) -> int:\n    return a - b\n";
const RIGHT: &str = "def add(a: int, b: int) -> int:\n    return a + b\n";
const PLAN: &str = "1. Take a and b.\n2. Return their sum, a + b.";
const ANALYSIS: &str = "The code subtracts b from a where the task asks for their sum.";

/// First code attempts are wrong, repairs right; every other call answers plainly.
fn script() -> support::Script {
    Arc::new(|req| match req.purpose {
        "cot" => Reply::Text(format!("The sum of two numbers is a + b.\n\n{}", fenced(RIGHT))),
        "plan" => Reply::Text(PLAN.into()),
        "implement" | "debug_fix" | "ldb_fix" | "self_debug_fix" => Reply::Text(fenced(RIGHT)),
        "ldb_verdict" => Reply::Text("[BLOCK-1] wrong: it subtracts".into()),
        "debug_init" | "direct" => Reply::Text(fenced(WRONG)),
        "feedback" => Reply::Text(ANALYSIS.into()),
        _ => Reply::Text("1. Add the two numbers.".into()),
    })
}

/// Runs Sample/1 (add) with `args`; the server's requests and the run's manifest.
async fn run(args: &[&str]) -> (Vec<support::Request>, Value, String) {
    run_scripted(script(), args).await
}

/// As `run`, with the server answering by `script`.
async fn run_scripted(script: support::Script, args: &[&str]) -> (Vec<support::Request>, Value, String) {
    let server = ScriptedServer::start(script).await;
    let home = temp_home();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["run", "--dataset", "sample", "--task", "Sample/1", "--no-memory"])
        .args(args);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run_dir = std::fs::read_dir(home.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    let manifest = serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap()).unwrap();
    (server.requests(), manifest, stdout)
}

fn purposes(requests: &[support::Request]) -> Vec<&'static str> {
    requests.iter().map(|r| r.purpose).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cot_is_one_call_that_reasons_then_answers() {
    let (requests, manifest, stdout) = run(&["--strategy", "cot"]).await;
    assert_eq!(purposes(&requests), ["cot"]);
    assert!(requests[0].user.contains("Let's think step by step"));
    assert!(stdout.contains("solved at iteration 1"), "{stdout}");
    assert_eq!(
        (manifest["strategy"].as_str(), manifest["max_iters"].as_u64()),
        (Some("cot"), Some(1))
    );
    assert_eq!(manifest["memory"]["enabled"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn self_planning_plans_then_implements_from_the_plan() {
    let (requests, manifest, stdout) = run(&["--strategy", "self-planning"]).await;
    assert_eq!(purposes(&requests), ["plan", "implement"], "exactly two calls");
    assert!(requests[0].user.contains("## Example task") && requests[0].user.contains("longest_vowel_run"));
    assert!(requests[1].user.contains(PLAN), "the implementation is given the plan");
    assert!(!requests[1].user.contains("## Example task"), "and not the examples");
    assert!(stdout.contains("solved at iteration 1"), "{stdout}");
    assert_eq!(manifest["strategy"], "self-planning");
}

#[tokio::test(flavor = "multi_thread")]
async fn direct_and_the_one_shot_baselines_never_repair() {
    let (requests, _, stdout) = run(&["--strategy", "direct", "--max-iters", "5"]).await;
    assert_eq!(purposes(&requests), ["direct"]);
    assert!(stdout.contains("failed after 1 iteration"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_guide_the_debug_agent_repairs_from_the_analysis() {
    let (requests, manifest, stdout) = run(&["--no-guide"]).await;
    assert_eq!(purposes(&requests), ["debug_init", "feedback", "debug_fix"]);
    assert!(!requests[0].user.contains("## Guidance"), "{}", requests[0].user);
    assert!(!requests[0].system.contains("Guide agent's"), "{}", requests[0].system);
    let fix = &requests[2].user;
    assert!(fix.contains(ANALYSIS) && !fix.contains("## Refined guidance"), "{fix}");
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    assert_eq!(manifest["ablations"], serde_json::json!(["no-guide"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_feedback_the_guide_refines_from_the_raw_test_results() {
    let (requests, manifest, stdout) = run(&["--no-feedback"]).await;
    assert_eq!(purposes(&requests), ["guide_init", "debug_init", "guide_refine", "debug_fix"]);
    let refine = &requests[2].user;
    assert!(
        refine.contains("How the program did on the visible tests") && refine.contains("real output: -1"),
        "{refine}"
    );
    assert!(!refine.contains("Failure analysis"), "{refine}");
    assert!(!requests[3].user.contains("## Failure analysis"), "{}", requests[3].user);
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    assert_eq!(manifest["ablations"], serde_json::json!(["no-feedback"]));
}

#[test]
fn the_prompts_exemplars_are_not_tasks_of_any_bundled_dataset() {
    let plan = include_str!("../../assets/prompts/self_planning/plan.md");
    let mut exemplars: Vec<&str> = plan
        .split("## Example task\n")
        .skip(1)
        .map(|e| e.split("## Plan").next().unwrap())
        .collect();
    let tests = include_str!("../../assets/prompts/reflexion/tests.md");
    exemplars.extend(
        tests
            .split("## Example function\n")
            .skip(1)
            .map(|e| e.split("## Example tests").next().unwrap()),
    );
    assert_eq!(exemplars.len(), 3);
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    for entry in rgd::dataset::CATALOG {
        let (name, path) = rgd::dataset::resolve_dataset(entry.name, None).unwrap();
        let ds = rgd::dataset::load_dataset(&name, &path, 0).unwrap();
        for task in &ds.tasks {
            let prompt = squash(&task.prompt);
            for e in &exemplars {
                let signature = squash(e.lines().next().unwrap());
                let docstring = squash(e.lines().nth(1).unwrap());
                assert!(
                    !prompt.contains(&signature) && !prompt.contains(&docstring),
                    "{name} {} is an exemplar: {e}",
                    task.id
                );
            }
            assert!(
                !["longest_vowel_run", "merge_ranges", "clamp_to_band"]
                    .iter()
                    .any(|n| prompt.contains(n)),
                "{name} {}",
                task.id
            );
        }
    }
}

/// Self-debug on Sample/1 with `feedback`; the seed and `fixes` in turn answer the conversation.
async fn self_debug(feedback: &str, seed: &str, fixes: &'static [&'static str]) -> (Vec<support::Request>, String) {
    let seed = seed.to_string();
    let turn = std::sync::atomic::AtomicUsize::new(0);
    let server = ScriptedServer::start(Arc::new(move |req: &support::Request| match req.purpose {
        "self_debug_seed" => Reply::Text(fenced(&seed)),
        _ => {
            let n = turn.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reply::Text(format!("Here is the fix.\n{}", fenced(fixes[n.min(fixes.len() - 1)])))
        }
    }))
    .await;
    let home = temp_home();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args([
        "run",
        "--dataset",
        "sample",
        "--task",
        "Sample/1",
        "--strategy",
        "self-debug",
        "--feedback",
        feedback,
    ]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (server.requests(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The roles of a request's messages, in order.
fn roles(r: &support::Request) -> Vec<String> {
    r.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn self_debug_grows_one_conversation_with_unit_test_feedback() {
    const STILL_WRONG: &str = "def add(a: int, b: int) -> int:\n    return a * b\n";
    let (requests, stdout) = self_debug("unit-test", WRONG, &[STILL_WRONG, RIGHT]).await;
    assert_eq!(purposes(&requests), ["self_debug_seed", "self_debug_fix", "self_debug_fix"]);
    // One conversation: each turn carries every earlier program and the feedback on it.
    assert_eq!(roles(&requests[1]), ["system", "user", "assistant", "user"]);
    assert_eq!(roles(&requests[2]), ["system", "user", "assistant", "user", "assistant", "user"]);
    let last = requests[2].body["messages"].as_array().unwrap();
    assert!(last[2]["content"].as_str().unwrap().contains("return a - b"));
    assert!(last[4]["content"].as_str().unwrap().contains("return a * b"));
    let feedback = last[5]["content"].as_str().unwrap();
    assert!(
        feedback.contains("`assert add(2, 3) == 5`") && feedback.contains("got 6") && feedback.contains("Fix the code"),
        "{feedback}"
    );
    assert!(stdout.contains("solved at iteration 3"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn self_debug_feedback_formats_say_what_the_paper_says() {
    let (simple, _) = self_debug("simple", WRONG, &[RIGHT]).await;
    let turn = |rs: &[support::Request]| rs[1].body["messages"][3]["content"].as_str().unwrap().to_string();
    assert_eq!(
        turn(&simple).trim(),
        "The code above is wrong. Please fix it.\nEnd your answer with the whole corrected program in one ```python block."
    );
    let (trace, _) = self_debug("trace", WRONG, &[RIGHT]).await;
    assert!(turn(&trace).contains("trace the execution of the first failing test") && turn(&trace).contains("got -1"));
    let (explain, _) = self_debug("explain", WRONG, &[RIGHT]).await;
    assert!(turn(&explain).contains("explain what the code does, line by line"));
}

#[tokio::test(flavor = "multi_thread")]
async fn self_debug_stops_when_the_visible_tests_pass_and_hidden_ones_are_never_fed_back() {
    // Passes both visible tests (2+3, -1+1) by rote, fails the hidden ones.
    let rote = "def add(a: int, b: int) -> int:\n    return {(2, 3): 5, (-1, 1): 0}[(a, b)]\n";
    let (requests, stdout) = self_debug("unit-test", rote, &[RIGHT]).await;
    assert_eq!(purposes(&requests), ["self_debug_seed"], "no turn after the visible tests pass");
    assert!(stdout.contains("failed after 1 iteration"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ldb_shows_the_real_blocks_of_a_failing_test_asks_verdicts_then_the_fix() {
    let server = ScriptedServer::start(Arc::new(|req: &support::Request| match req.purpose {
        "ldb_seed" => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    s = a - b\n    return s\n")),
        "ldb_verdict" => Reply::Text("[BLOCK-1] wrong: it subtracts b instead of adding it".into()),
        _ => Reply::Text(fenced(RIGHT)),
    }))
    .await;
    let home = temp_home();
    let mut cmd = rgd(home.path(), &server.base_url());
    cmd.args(["run", "--dataset", "sample", "--task", "Sample/1", "--strategy", "ldb"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = server.requests();
    assert_eq!(purposes(&requests), ["ldb_seed", "ldb_verdict", "ldb_fix"]);
    assert_eq!(roles(&requests[1]), ["system", "user", "assistant", "user"]);
    let verdict = requests[1].body["messages"][3]["content"].as_str().unwrap();
    // The real execution of one failing visible test (add(2, 3) or add(-1, 1)), block by block.
    let real = (verdict.contains("before: a=2, b=3") && verdict.contains("s=-1"))
        || (verdict.contains("before: a=-1, b=1") && verdict.contains("s=-2"));
    assert!(real && verdict.contains("[BLOCK-1] add, lines 2-3"), "{verdict}");
    assert!(verdict.contains("it raised AssertionError"), "{verdict}");
    assert_eq!(roles(&requests[2]), ["system", "user", "assistant", "user", "assistant", "user"]);
    assert_eq!(
        requests[2].body["messages"][4]["content"],
        "[BLOCK-1] wrong: it subtracts b instead of adding it"
    );
    assert!(
        stdout.contains("⌁ traced `assert add(") && stdout.contains("solved at iteration 2"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rgd_with_trace_gives_the_feedback_agent_a_real_execution() {
    let (requests, manifest, stdout) = run(&["--trace", "block"]).await;
    assert_eq!(
        purposes(&requests),
        ["guide_init", "debug_init", "feedback", "guide_refine", "debug_fix"]
    );
    let feedback = &requests[2].user;
    assert!(
        feedback.contains("## Real execution of `assert add(") && feedback.contains("[BLOCK-1] add, lines 2-2"),
        "{feedback}"
    );
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    assert_eq!(manifest["trace"], "block");

    let (requests, manifest, _) = run(&["--trace", "calls"]).await;
    let feedback = &requests[2].user;
    assert!(feedback.contains("add(a=") && feedback.contains(") -> "), "{feedback}");
    assert_eq!(manifest["trace"], "calls");

    // Off, as in the paper, by default.
    let (requests, manifest, _) = run(&[]).await;
    assert!(!requests[2].user.contains("Real execution"));
    assert!(manifest.get("trace").is_none());
}

/// Runs Sample/1 with `args` and seeds from a samples.jsonl holding `seed` for it.
async fn seeded(args: &[&str], seed: &str) -> (Vec<support::Request>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("samples.jsonl");
    std::fs::write(
        &file,
        serde_json::json!({"task_id": "Sample/1", "completion": seed}).to_string() + "\n",
    )
    .unwrap();
    let mut all = args.to_vec();
    let path = file.to_str().unwrap().to_string();
    all.extend(["--seed-from", path.as_str()]);
    run(&all).await
}

#[tokio::test(flavor = "multi_thread")]
async fn seeds_replace_the_first_program_and_count_only_after_the_visible_tests() {
    // A right seed: no model call at all, solved at iteration 1 (hidden tests decide).
    let (requests, manifest, stdout) = seeded(&[], RIGHT).await;
    assert!(requests.is_empty(), "{:?}", purposes(&requests));
    assert!(stdout.contains("solved at iteration 1"), "{stdout}");
    assert!(manifest["seed_from"].as_str().unwrap().starts_with("file:"));

    // A wrong seed under ldb: the conversation opens with the seed as the model's own answer.
    let (requests, _, stdout) = seeded(&["--strategy", "ldb"], WRONG).await;
    assert_eq!(purposes(&requests)[0], "ldb_verdict", "no seed call");
    let opening = requests[0].body["messages"][2]["content"].as_str().unwrap();
    assert!(requests[0].body["messages"][2]["role"] == "assistant" && opening.contains("return a - b"));
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");

    // A seed that passes the visible tests by rote but not the hidden ones is not a solution.
    let rote = "def add(a: int, b: int) -> int:\n    return {(2, 3): 5, (-1, 1): 0}[(a, b)]\n";
    let (requests, _, stdout) = seeded(&[], rote).await;
    assert_eq!(purposes(&requests)[0], "feedback", "RGD debugs it: {:?}", purposes(&requests));
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn seeds_from_another_run_are_its_final_programs() {
    let server = ScriptedServer::start(script()).await;
    let home = temp_home();
    let run = |args: &[&str]| {
        let out = rgd(home.path(), &server.base_url()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A Direct run leaves a wrong program for Sample/1.
    tokio::task::block_in_place(|| run(&["run", "--dataset", "sample", "--task", "Sample/1", "--strategy", "direct"]));
    let direct = std::fs::read_dir(home.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let direct = direct.to_str().unwrap().to_string();
    let before = server.requests().len();
    let out = tokio::task::block_in_place(|| {
        run(&[
            "run",
            "--dataset",
            "sample",
            "--task",
            "Sample/1",
            "--no-memory",
            "--seed-from",
            &direct[..8],
        ])
    });
    let purposes: Vec<&str> = server.requests()[before..].iter().map(|r| r.purpose).collect();
    assert_eq!(purposes, ["feedback", "guide_refine", "debug_fix"], "RGD debugs the seed: {out}");
    assert!(out.contains("solved at iteration 2"), "{out}");
}

/// Sample/1's visible tests: Reflexion must never show them to the model.
const VISIBLE: [&str; 2] = ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"];

fn reflexion_script(tests: &'static str, first: &'static str) -> support::Script {
    Arc::new(move |req| match req.purpose {
        "self_tests" => Reply::Text(tests.into()),
        "reflexion_implement" => Reply::Text(fenced(first)),
        "reflect" => Reply::Text("The implementation subtracts b where the task asks for the sum.".into()),
        "reflexion_fix" => Reply::Text(fenced(RIGHT)),
        other => Reply::Text(format!("unexpected call {other}")),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn reflexion_writes_its_own_tests_reflects_on_them_and_never_sees_a_visible_test() {
    const TESTS: &str = "```python\nassert add(1, 1) == 2\nassert add(0, 5) == 5\nassert sub(1, 1) == 0\nassert add(1,, 1) == 2\n```";
    let (requests, manifest, stdout) = run_scripted(reflexion_script(TESTS, WRONG), &["--strategy", "reflexion"]).await;
    assert_eq!(
        purposes(&requests),
        ["self_tests", "reflexion_implement", "reflect", "reflexion_fix"]
    );
    assert!(
        requests[0].user.contains("unit tests for `add`"),
        "the first request asks for tests: {}",
        requests[0].user
    );
    for r in &requests {
        for v in VISIBLE {
            assert!(
                !r.user.contains(v) && !r.system.contains(v),
                "{} shows the visible test {v}",
                r.purpose
            );
        }
    }
    // The reflection reads the model's own tests, with the real outputs of its program.
    let reflect = &requests[2].user;
    assert!(reflect.contains("failed: `assert add(1, 1) == 2` # output: 0"), "{reflect}");
    assert!(reflect.contains("failed: `assert add(0, 5) == 5` # output: -5"), "{reflect}");
    assert!(!reflect.contains("sub(1, 1)"), "a test of another function is dropped: {reflect}");
    let fix = &requests[3].user;
    assert!(
        fix.contains("subtracts b where the task asks") && fix.contains("return a - b"),
        "{fix}"
    );
    assert!(stdout.contains("own tests written: 2 kept, 2 dropped"), "{stdout}");
    assert!(
        stdout.contains("own tests: 0/2 passed") && stdout.contains("own tests: 2/2 passed"),
        "{stdout}"
    );
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    assert_eq!(manifest["strategy"], "reflexion");
}

#[tokio::test(flavor = "multi_thread")]
async fn reflexions_own_tests_steer_but_the_tasks_tests_judge() {
    // The model's test is wrong: the right program never passes it, and is still judged solved.
    const WRONG_TEST: &str = "assert add(1, 1) == 3";
    let (requests, _, stdout) = run_scripted(
        reflexion_script(WRONG_TEST, RIGHT),
        &["--strategy", "reflexion", "--max-iters", "2"],
    )
    .await;
    assert_eq!(
        purposes(&requests),
        ["self_tests", "reflexion_implement", "reflect", "reflexion_fix"]
    );
    assert!(stdout.contains("own tests: 0/1 passed"), "{stdout}");
    assert!(
        stdout.contains("visible tests: 2/2 passed") && stdout.contains("hidden tests: 1/1 passed"),
        "{stdout}"
    );
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
}

const RECALLED: &str = "<root>\n<problem>\n<description>Recalled A: sum a list</description>\n<code>def s(xs):\n    return sum(x for x in xs if x < 10**9)</code>\n<planning>Walk the list and add.</planning>\n</problem>\n<problem>\n<description>Recalled B: product</description>\n<code>print(2 * 3)</code>\n<planning>Multiply.</planning>\n</problem>\n<algorithm>Arithmetic & loops</algorithm>\n</root>";

fn mapcoder_script(recall: &'static str) -> support::Script {
    Arc::new(move |req| match req.purpose {
        "recall" => Reply::Text(format!("```xml\n{recall}\n```")),
        "map_plan" if req.user.contains("Recalled B") => Reply::Text("PLAN-B: multiply a and b.".into()),
        "map_plan" => Reply::Text("PLAN-A: return a + b.".into()),
        "confidence" if req.user.contains("PLAN-B") => {
            Reply::Text("<root><explanation>likely</explanation><confidence>80</confidence></root>".into())
        }
        "confidence" => Reply::Text("I am fairly sure, say 30.".into()),
        "map_code" if req.user.contains("PLAN-B") => Reply::Text(fenced(WRONG)),
        "map_code" => Reply::Text(fenced(RIGHT)),
        "map_debug" => Reply::Text(format!("Plan: still subtract.\n{}", fenced(WRONG))),
        other => Reply::Text(format!("unexpected call {other}")),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn mapcoder_plans_from_each_recalled_problem_tries_the_most_confident_first_then_the_next() {
    let (requests, manifest, stdout) = run_scripted(mapcoder_script(RECALLED), &["--strategy", "mapcoder", "--k", "2", "--t", "1"]).await;
    assert_eq!(
        purposes(&requests),
        [
            "recall",
            "map_plan",
            "confidence",
            "map_plan",
            "confidence",
            "map_code",
            "map_debug",
            "map_code"
        ]
    );
    assert!(
        requests[0].user.contains("Recall 2 relevant and distinct problems"),
        "{}",
        requests[0].user
    );
    // Each plan starts from its recalled problem (with its code, '<' intact) and the algorithm.
    assert!(
        requests[1].user.contains("Recalled A") && requests[1].user.contains("x < 10**9"),
        "{}",
        requests[1].user
    );
    assert!(requests[1].user.contains("Arithmetic & loops"), "{}", requests[1].user);
    assert!(requests[3].user.contains("Recalled B"), "{}", requests[3].user);
    // The unreadable confidence counts as 0 (recorded), so PLAN-B (80) is coded first, debugged
    // once (t = 1), then PLAN-A is coded.
    assert!(stdout.contains("confidence answer could not be read"), "{stdout}");
    assert!(stdout.contains("plans by confidence: plan 2 (80), plan 1 (0)"), "{stdout}");
    assert!(requests[5].user.contains("PLAN-B") && requests[7].user.contains("PLAN-A"));
    assert!(
        requests[6].user.contains("## Test report") && requests[6].user.contains("got -1"),
        "{}",
        requests[6].user
    );
    assert!(stdout.contains("solved at iteration 3"), "{stdout}");
    assert_eq!(
        (manifest["strategy"].as_str(), &manifest["mapcoder"]),
        (Some("mapcoder"), &serde_json::json!({"k": 2, "t": 1}))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mapcoder_recovers_from_malformed_xml() {
    // Unclosed <description>: the recall is recorded as unreadable and one plan is made from the
    // task alone.
    const BROKEN: &str = "<root><problem><description>Recalled A<planning>add</planning></problem></root>";
    let (requests, _, stdout) = run_scripted(mapcoder_script(BROKEN), &["--strategy", "mapcoder"]).await;
    assert_eq!(purposes(&requests), ["recall", "map_plan", "confidence", "map_code"]);
    assert!(!requests[1].user.contains("## A similar problem"), "{}", requests[1].user);
    assert!(
        stdout.contains("the mapcoder/recall answer could not be read (malformed XML"),
        "{stdout}"
    );
    assert!(stdout.contains("solved at iteration 1"), "{stdout}");
}

/// CodeSIM on Sample/1 (add): the first plan is simulated, found wrong, revised, coded wrong and
/// debugged once (d = 1); the second plan comes back empty once and its simulation without a
/// verdict once (each asked again, recorded), then it is coded right.
fn codesim_script() -> support::Script {
    let plans = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let simulations_of_two = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |req| {
        use std::sync::atomic::Ordering::SeqCst;
        match req.purpose {
            "sim_plan" => Reply::Text(match plans.fetch_add(1, SeqCst) {
                0 => "### Problem Understanding\nAdd two numbers.\n### Recall Example Problem\nSum a list.\n### Plan\n1. PLAN-ONE: subtract b from a.".into(),
                1 => "### Plan\n".into(),
                _ => "### Plan\n1. PLAN-TWO: return a + b.".into(),
            }),
            "simulate" if req.user.contains("PLAN-ONE") => {
                Reply::Text("Input 2, 3: 2 - 3 = -1, expected 5.\nPlan Modification Needed".into())
            }
            "simulate" => Reply::Text(match simulations_of_two.fetch_add(1, SeqCst) {
                0 => "Input 2, 3: 2 + 3 = 5.".into(),
                _ => "Input 2, 3: 2 + 3 = 5, as expected.\nNo Plan Modification Needed".into(),
            }),
            "sim_refine" => Reply::Text("### Plan\n1. PLAN-ONE-REVISED: still subtract.".into()),
            "sim_code" if req.user.contains("PLAN-TWO") => Reply::Text(fenced(RIGHT)),
            "sim_code" => Reply::Text(fenced(WRONG)),
            "sim_debug" => Reply::Text(format!("Simulating add(2, 3): 2 - 3 = -1.\n{}", fenced(WRONG))),
            other => Reply::Text(format!("unexpected call {other}")),
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn codesim_simulates_each_plan_revises_debugs_then_plans_again_and_recovers_from_unreadable_answers() {
    let (requests, manifest, stdout) =
        run_scripted(codesim_script(), &["--strategy", "codesim", "--plans", "2", "--debug-rounds", "1"]).await;
    assert_eq!(
        purposes(&requests),
        [
            "sim_plan",
            "simulate",
            "sim_refine",
            "sim_code",
            "sim_debug",
            "sim_plan",
            "sim_plan",
            "simulate",
            "simulate",
            "sim_code"
        ]
    );
    // The simulation sees the plan and the visible tests; the revision sees the simulation.
    assert!(requests[1].user.contains("PLAN-ONE") && requests[1].user.contains("assert add(2, 3) == 5"));
    assert!(requests[2].user.contains("2 - 3 = -1, expected 5"), "{}", requests[2].user);
    assert!(requests[3].user.contains("PLAN-ONE-REVISED"), "{}", requests[3].user);
    // The debugging agent sees the code and what the failing visible test got.
    assert!(
        requests[4].user.contains("a - b") && requests[4].user.contains("got -1"),
        "{}",
        requests[4].user
    );
    assert!(
        stdout.contains("the codesim/plan answer could not be read (the answer holds no plan): asked once more"),
        "{stdout}"
    );
    assert!(stdout.contains("the codesim/simulate answer could not be read"), "{stdout}");
    assert!(stdout.contains("solved at iteration 3"), "{stdout}");
    assert_eq!(
        (manifest["strategy"].as_str(), &manifest["codesim"], manifest["max_iters"].as_u64()),
        (Some("codesim"), &serde_json::json!({"p": 2, "d": 1}), Some(4))
    );
    // The hidden tests are never in a request.
    for r in &requests {
        assert!(!r.user.contains("10**12") && !r.user.contains("candidate(0, 0)"), "{}", r.user);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn codesim_ends_after_p_plans_of_d_rounds_each_and_never_hears_the_hidden_tests() {
    // Every code is wrong: p = 2 plans x (1 code + 1 debug) = 4 iterations, then the task fails.
    let script: support::Script = Arc::new(|req| match req.purpose {
        "sim_plan" => Reply::Text("### Plan\n1. Subtract.".into()),
        "simulate" => Reply::Text("No Plan Modification Needed".into()),
        _ => Reply::Text(fenced(WRONG)),
    });
    let (requests, _, stdout) = run_scripted(script, &["--strategy", "codesim", "--plans", "2", "--debug-rounds", "1"]).await;
    assert_eq!(
        purposes(&requests),
        [
            "sim_plan",
            "simulate",
            "sim_code",
            "sim_debug",
            "sim_plan",
            "simulate",
            "sim_code",
            "sim_debug"
        ]
    );
    assert!(
        stdout.contains("failed after 4 iterations") || stdout.contains("failed"),
        "{stdout}"
    );
}

/// Both visible tests of Sample/1 verified, each ending in `verdict`.
fn lpw_verification(verdict: &str) -> String {
    format!(
        "[Verification for assert add(2, 3) == 5]\n[Record]: 2 + 3 = 5\n[Results Compare] 5 = 5\n{verdict}\n\n[Verification for assert add(-1, 1) == 0]\n[Record]: -1 + 1 = 0\n{verdict}"
    )
}

/// LPW on Sample/1: the first plan comes back without steps (asked again), its verification
/// finds it wrong and revises it, the revised plan's first verification has no verdicts
/// (verified again), the second holds and is checked; the code is wrong, so it is printed, run,
/// explained, analysed against the verification and rewritten right.
fn lpw_script() -> support::Script {
    let plans = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let verifications = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |req| {
        use std::sync::atomic::Ordering::SeqCst;
        match req.purpose {
            "lpw_plan" => Reply::Text(match plans.fetch_add(1, SeqCst) {
                0 => "Let's think step by step.\n[Start Plan]\n[End Plan]".into(),
                _ => "[Start Plan]\n1. PLAN-A: subtract b from a.\n[End Plan]".into(),
            }),
            "lpw_verify" => Reply::Text(match verifications.fetch_add(1, SeqCst) {
                0 => "[Verification for assert add(2, 3) == 5]\n2 - 3 = -1, not 5.\n[Incorrect Plan]\n[Start Revised Plan]\n1. PLAN-B: return a + b.\n[End Revised Plan]".into(),
                1 => "[Verification for assert add(2, 3) == 5]\nthe result is 5".into(),
                _ => lpw_verification("[Correct Plan]"),
            }),
            "lpw_check" => Reply::Text("Each step is right.\n[Correct Analysis]\n...\n[Correct Analysis]".into()),
            "lpw_code" => Reply::Text(fenced(WRONG)),
            "lpw_print" => Reply::Text(fenced("def add(a: int, b: int) -> int:\n    r = a - b\n    print('PRINTED r =', r)\n    return r\n")),
            "lpw_explain" => Reply::Text("EXPLAINED: it returns a minus b.".into()),
            "lpw_analyse" => Reply::Text("ANALYSED: r is -1 where the verification records 5.".into()),
            "lpw_fix" => Reply::Text(fenced(RIGHT)),
            other => Reply::Text(format!("unexpected call {other}")),
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn lpw_verifies_the_plan_on_each_visible_test_before_coding_then_debugs_from_printed_values() {
    let (requests, manifest, stdout) =
        run_scripted(lpw_script(), &["--strategy", "lpw", "--verify-rounds", "3", "--refine-rounds", "2"]).await;
    assert_eq!(
        purposes(&requests),
        [
            "lpw_plan",
            "lpw_plan",
            "lpw_verify",
            "lpw_verify",
            "lpw_verify",
            "lpw_check",
            "lpw_code",
            "lpw_print",
            "lpw_explain",
            "lpw_analyse",
            "lpw_fix"
        ]
    );
    // The verification sees the plan and every visible test; the revised plan is verified next.
    assert!(requests[2].user.contains("PLAN-A") && requests[2].user.contains("assert add(-1, 1) == 0"));
    assert!(requests[3].user.contains("PLAN-B"), "{}", requests[3].user);
    // The check and the code see the verification.
    assert!(requests[5].user.contains("[Record]: 2 + 3 = 5"), "{}", requests[5].user);
    assert!(requests[6].user.contains("PLAN-B") && requests[6].user.contains("[Record]: -1 + 1 = 0"));
    // The analysis compares what the printed program printed on the first failing test with
    // that test's verification; the rewrite sees the explanation, the analysis and the failed code.
    let analyse = &requests[9].user;
    assert!(
        analyse.contains("PRINTED r = -1") && analyse.contains("`assert add(2, 3) == 5`") && analyse.contains("[Record]: 2 + 3 = 5"),
        "{analyse}"
    );
    assert!(
        !analyse.contains("[Record]: -1 + 1 = 0"),
        "only the failing test's verification: {analyse}"
    );
    let fix = &requests[10].user;
    assert!(
        fix.contains("EXPLAINED") && fix.contains("ANALYSED") && fix.contains("a - b"),
        "{fix}"
    );
    assert!(
        stdout.contains("the lpw/plan answer could not be read (the answer holds no plan): asked once more"),
        "{stdout}"
    );
    assert!(stdout.contains("revised it"), "{stdout}");
    assert!(stdout.contains("the lpw/verify answer could not be read"), "{stdout}");
    assert!(stdout.contains("printed run"), "{stdout}");
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    assert_eq!(
        (manifest["strategy"].as_str(), &manifest["lpw"], manifest["max_iters"].as_u64()),
        (Some("lpw"), &serde_json::json!({"verify_rounds": 3, "refine_rounds": 2}), Some(3))
    );
    for r in &requests {
        assert!(!r.user.contains("10**12") && !r.user.contains("candidate(0, 0)"), "{}", r.user);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn lpw_writes_no_code_from_a_plan_never_verified() {
    // The first verification holds but its check finds wrong reasoning; the second has no
    // verdicts; after 2 rounds there is no verified plan, so no code is ever asked for.
    let verifications = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let script: support::Script = Arc::new(move |req| match req.purpose {
        "lpw_plan" => Reply::Text("[Start Plan]\n1. Add.\n[End Plan]".into()),
        "lpw_verify" => Reply::Text(match verifications.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => lpw_verification("[Correct Plan]"),
            _ => "It works.".into(),
        }),
        "lpw_check" => Reply::Text("[Correct Analysis]\n[Incorrect Analysis] 2 + 3 is not 6".into()),
        _ => Reply::Text(fenced(RIGHT)),
    });
    let (requests, _, stdout) = run_scripted(script, &["--strategy", "lpw", "--verify-rounds", "2"]).await;
    assert_eq!(purposes(&requests), ["lpw_plan", "lpw_verify", "lpw_check", "lpw_verify"]);
    assert!(stdout.contains("wrong reasoning in 1 verification"), "{stdout}");
    assert!(stdout.contains("no plan was verified in 2 round(s)"), "{stdout}");
    assert!(!stdout.contains("solved"), "{stdout}");
}

/// MGDebugger on Sample/1: Direct's seed (a - b) fails; the first decomposition drops `add`
/// (asked again), the second splits it into `add` calling `combine`; `combine` comes first, its
/// unit tests come back without JSON once (asked again), fail for real, and it is repaired;
/// then `add`'s pass; the recomposed program passes.
fn mgdebugger_script() -> support::Script {
    let decompositions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tests_of_combine = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |req| {
        use std::sync::atomic::Ordering::SeqCst;
        match req.purpose {
            "direct" => Reply::Text(fenced(WRONG)),
            "mg_decompose" => Reply::Text(match decompositions.fetch_add(1, SeqCst) {
                0 => fenced("def plus(a, b):\n    return a - b\n"),
                _ => format!(
                    "Step 1 combines the numbers.\n{}",
                    fenced("def add(a: int, b: int) -> int:\n    return combine(a, b)\n\ndef combine(a, b):\n    return a - b\n")
                ),
            }),
            "mg_tests" if req.user.contains("## The function to test: `combine`") => {
                Reply::Text(match tests_of_combine.fetch_add(1, SeqCst) {
                    0 => "combine(2, 3) should be 5".into(),
                    _ => "```json\n{\"test_cases\": [{\"input\": {\"a\": 2, \"b\": 3}, \"expected_output\": 5}, {\"input\": {\"a\": -1, \"b\": 1}, \"expected_output\": \"0\"}]}\n```".into(),
                })
            }
            "mg_tests" => Reply::Text("```json\n{\"test_cases\": [{\"input\": {\"a\": 2, \"b\": 3}, \"expected_output\": 5}]}\n```".into()),
            "mg_debug" => Reply::Text(format!("a = 2, b = 3: a - b = -1.\n{}", fenced("def combine(a, b):\n    return a + b\n"))),
            other => Reply::Text(format!("unexpected call {other}")),
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn mgdebugger_debugs_the_seeds_subfunctions_bottom_up_from_their_own_unit_tests() {
    let (requests, manifest, stdout) = run_scripted(mgdebugger_script(), &["--strategy", "mgdebugger"]).await;
    assert_eq!(
        purposes(&requests),
        [
            "direct",
            "mg_decompose",
            "mg_decompose",
            "mg_tests",
            "mg_tests",
            "mg_debug",
            "mg_tests"
        ]
    );
    // The decomposition sees the seed; unit tests are derived from the visible tests only.
    assert!(requests[1].user.contains("return a - b"), "{}", requests[1].user);
    assert!(requests[3].user.contains("assert add(-1, 1) == 0"), "{}", requests[3].user);
    // The repair simulates (the paper's default) and sees the real results of the unit tests.
    let debug = &requests[5].user;
    assert!(
        debug.contains("Act as a Python interpreter") && debug.contains("assert combine(a=2, b=3) == 5") && debug.contains("failed"),
        "{debug}"
    );
    assert!(requests[6].user.contains("## The function to test: `add`"), "{}", requests[6].user);
    assert!(
        stdout
            .contains("the mgdebugger/decompose answer could not be read (the decomposition drops the entry point `add`): asked once more"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the mgdebugger/tests answer could not be read (the answer holds no JSON)"),
        "{stdout}"
    );
    assert!(stdout.contains("2 function(s), debugged bottom up: combine → add"), "{stdout}");
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
    assert_eq!(
        (
            manifest["strategy"].as_str(),
            &manifest["mgdebugger"],
            manifest["max_iters"].as_u64()
        ),
        (
            Some("mgdebugger"),
            &serde_json::json!({"retries": 10, "repairs": 3, "trace": "simulated"}),
            Some(11)
        )
    );
    for r in &requests {
        assert!(!r.user.contains("10**12") && !r.user.contains("candidate(0, 0)"), "{}", r.user);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mgdebugger_with_real_traces_shows_the_failing_unit_test_run_for_real() {
    let (requests, manifest, _) = run_scripted(mgdebugger_script(), &["--strategy", "mgdebugger", "--trace", "real"]).await;
    let debug = requests.iter().find(|r| r.purpose == "mg_debug").unwrap();
    assert!(
        debug.user.contains("A real run of `assert combine(a=2, b=3) == 5`") && !debug.user.contains("Act as a Python interpreter"),
        "{}",
        debug.user
    );
    assert_eq!(manifest["mgdebugger"]["trace"], "real");
}

#[tokio::test(flavor = "multi_thread")]
async fn mgdebugger_stops_at_once_when_the_seed_already_passes() {
    let script: support::Script = Arc::new(|_| Reply::Text(fenced(RIGHT)));
    let (requests, _, stdout) = run_scripted(script, &["--strategy", "mgdebugger"]).await;
    assert_eq!(purposes(&requests), ["direct"]);
    assert!(
        stdout.contains("the seed program passes the visible tests: MGDebugger has nothing to debug"),
        "{stdout}"
    );
    assert!(stdout.contains("solved at iteration 1"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_lpw_fork_replays_the_verified_plan_and_goes_on_live_from_the_refinement() {
    // The parent's rewrite is as wrong as its first program: it fails after 2 iterations.
    let parent_script: support::Script = Arc::new(|req| match req.purpose {
        "lpw_plan" => Reply::Text("[Start Plan]\n1. PLAN-P: add.\n[End Plan]".into()),
        "lpw_verify" => Reply::Text(lpw_verification("[Correct Plan]")),
        "lpw_check" => Reply::Text("[Correct Analysis]\n[Correct Analysis]".into()),
        "lpw_explain" | "lpw_analyse" => Reply::Text("It subtracts.".into()),
        _ => Reply::Text(fenced(WRONG)),
    });
    let server = ScriptedServer::start(parent_script).await;
    let home = temp_home();
    let mut cmd = sample_run(home.path(), &server.base_url());
    cmd.args(["--strategy", "lpw", "--refine-rounds", "1"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("failed after 2 iterations"), "{stdout}");
    let parent = std::fs::read_dir(home.path().join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();

    // The fork from iteration 2 makes only that iteration's calls; the plan, its verification
    // and the first program are the parent's.
    let fork_server = ScriptedServer::start(Arc::new(|req: &support::Request| match req.purpose {
        "lpw_print" => Reply::Text(fenced(WRONG)),
        "lpw_explain" | "lpw_analyse" => Reply::Text("It subtracts; it should add.".into()),
        "lpw_fix" => Reply::Text(fenced(RIGHT)),
        other => panic!("the fork asked for {other}"),
    }))
    .await;
    let mut cmd = rgd(home.path(), &fork_server.base_url());
    cmd.args(["fork", parent.to_str().unwrap(), "--task", "Sample/1", "--at", "2"]);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = fork_server.requests();
    assert_eq!(purposes(&requests), ["lpw_print", "lpw_explain", "lpw_analyse", "lpw_fix"]);
    assert!(requests[2].user.contains("[Record]: 2 + 3 = 5"), "{}", requests[2].user);
    assert!(stdout.contains("solved at iteration 2"), "{stdout}");
}
