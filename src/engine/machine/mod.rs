//! The RGD loop for one task as a state machine. It never performs I/O: each step returns the
//! next effect (call an agent, run tests, query memory) as data plus the domain events it implies,
//! and consumes the effect's outcome. A runner executes effects; tests drive it directly.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::agents::{Agent, Prompts, Purpose, Retrieved};
use crate::code::{ExtractProblem, extract_code, unified_diff};
use crate::dataset::{Task, TestCase};
use crate::llm::{CallParams, ChatResponse, LlmError, Message};
use crate::sandbox::RunReport;

use crate::record::{Event, Failure, Suite, TaskResult, TaskStatus, Tokens};

mod calls;
mod codesim;
mod ldb;
mod lpw;
mod mapcoder;
mod mgdebugger;
mod reflexion;
mod seed;
mod self_debug;

pub use self_debug::SelfDebugFeedback;

/// A traced failing test as prompts show it.
#[derive(Debug, Clone, Default)]
struct ShownTrace {
    /// The test's label.
    test: String,
    /// How the traced run ended ("it raised AssertionError at line 1: ...").
    outcome: String,
    /// Its records as text (a window of them), or why there is no trace.
    text: String,
}

/// Per-run settings the loop needs.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    pub strategy: Strategy,
    pub max_iters: u32,
    pub params: BTreeMap<Agent, CallParams>,
    pub memory: bool,
    /// What self-debug's feedback turns say.
    pub self_debug: SelfDebugFeedback,
    /// Programs to start from instead of generating (`--seed-from`), by task id: rgd, self-debug
    /// and ldb take them as their first iteration's code.
    pub seeds: Option<Arc<std::collections::HashMap<String, String>>>,
    /// RGD's Feedback agent reads a real execution of a failing visible test (`--trace`).
    pub trace: Option<crate::sandbox::TraceMode>,
    /// RGD's Guide agent (`--no-guide`: the Debug agent writes and repairs without guidance).
    pub guide: bool,
    /// RGD's Feedback agent (`--no-feedback`: refinement sees the raw visible-test results).
    pub feedback: bool,
    /// The endpoint's context in tokens, when known: every call is fitted to it
    /// (`agents::budget`).
    pub context_size: Option<u32>,
    /// MapCoder's recalled problems (k) and debug rounds per plan (t).
    pub mapcoder: crate::record::MapCoderParams,
    /// CodeSIM's plans (p) and debug rounds per plan (d).
    pub codesim: crate::record::CodeSimParams,
    /// LPW's verification and refinement rounds.
    pub lpw: crate::record::LpwParams,
    /// MGDebugger's passes, repairs per subfunction, and trace.
    pub mgdebugger: crate::record::MgDebuggerParams,
    /// A repository verdict reached in-process (best effort) may be remembered.
    pub allow_in_process: bool,
}

/// RGD, or a method the paper compares it with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// Guide, Debug and Feedback agents, memory, up to max-iters rounds.
    #[default]
    Rgd,
    /// One answer from the task alone, tested once.
    Direct,
    /// One answer after zero-shot chain-of-thought reasoning ("let's think step by step"), tested once.
    Cot,
    /// Self-planning (Jiang et al.): a numbered plan (few-shot, rgd's own examples), then the code
    /// from task and plan; tested once, no repair.
    SelfPlanning,
    /// Self-debugging (Chen et al.): a seed program, then feedback and fixes in one growing
    /// conversation until the visible tests pass (`--feedback`).
    SelfDebug,
    /// LDB (Zhong et al.): a seed program, then per round one failing visible test run traced in
    /// the sandbox, the model's verdict on each basic block of the real execution, and a fix.
    Ldb,
    /// Reflexion (Shinn et al.): the model's own unit tests (visible tests are never shown), then
    /// implement, self-test, reflect in words, re-implement.
    Reflexion,
    /// MapCoder (Islam et al.): k recalled problems, a plan from each with a confidence, code
    /// from the most confident plan, t debug rounds on the visible tests, then the next plan.
    #[value(name = "mapcoder")]
    #[serde(rename = "mapcoder")]
    MapCoder,
    /// CodeSIM (Islam et al., 2025): a plan from an example problem the model recalls itself,
    /// verified by simulating it by hand on a visible test (and revised when the simulation
    /// finds it wrong), code, then up to d debug rounds that simulate the code on a failing
    /// visible test; up to p plans.
    #[value(name = "codesim")]
    #[serde(rename = "codesim")]
    CodeSim,
    /// LPW (Lei et al., 2025): a plan verified by hand on each visible test (and checked) before
    /// any code; code from plan and verification; on failure, the printed intermediate values of
    /// a failing test compared with its verification, and the code rewritten.
    Lpw,
    /// MGDebugger (Shi et al.): a seed program (Direct's, or `--seed-from`) rewritten as a tree of
    /// subfunctions, each bottom up given unit tests from the visible ones and repaired from a
    /// simulated (or, with `--trace real`, a real) execution.
    #[value(name = "mgdebugger")]
    #[serde(rename = "mgdebugger")]
    MgDebugger,
}

impl Strategy {
    pub const ALL: [Strategy; 11] = [
        Strategy::Rgd,
        Strategy::Direct,
        Strategy::Cot,
        Strategy::SelfPlanning,
        Strategy::SelfDebug,
        Strategy::Ldb,
        Strategy::Reflexion,
        Strategy::MapCoder,
        Strategy::CodeSim,
        Strategy::Lpw,
        Strategy::MgDebugger,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Rgd => "rgd",
            Strategy::Direct => "direct",
            Strategy::Cot => "cot",
            Strategy::SelfPlanning => "self-planning",
            Strategy::SelfDebug => "self-debug",
            Strategy::Ldb => "ldb",
            Strategy::Reflexion => "reflexion",
            Strategy::MapCoder => "mapcoder",
            Strategy::CodeSim => "codesim",
            Strategy::Lpw => "lpw",
            Strategy::MgDebugger => "mgdebugger",
        }
    }

    /// The strategy a manifest names.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether it repairs code over iterations (MapCoder's are bounded by k and t, the others'
    /// by max-iters).
    pub fn iterates(self) -> bool {
        matches!(
            self,
            Strategy::Rgd
                | Strategy::SelfDebug
                | Strategy::Ldb
                | Strategy::Reflexion
                | Strategy::MapCoder
                | Strategy::CodeSim
                | Strategy::Lpw
                | Strategy::MgDebugger
        )
    }
}

#[derive(Debug, Clone)]
pub enum Effect {
    CallAgent {
        purpose: Purpose,
        messages: Vec<Message>,
        params: CallParams,
    },
    RunTests {
        suite: Suite,
        code: String,
    },
    /// Run tests the model wrote itself (Reflexion's; reported as `Suite::Own`).
    RunOwnTests {
        code: String,
        tests: Vec<TestCase>,
    },
    /// Run the visible tests on the program with the model's print statements (LPW; reported as
    /// `Suite::Printed`): for what it prints, never for a verdict.
    RunPrinted {
        code: String,
    },
    QueryMemory {
        query: String,
    },
    /// Remember a solved task (only after it passed visible and hidden tests).
    StoreMemory {
        record: MemoryRecord,
    },
    /// Run one visible test traced (LDB): `test` is its source (an `assert`, or a `check`
    /// function and its call).
    TraceTest {
        code: String,
        test: String,
        mode: crate::sandbox::TraceMode,
    },
}

/// What the memory pool keeps of a solved task: Q, G, K and the code.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRecord {
    pub task_id: String,
    pub entry_point: String,
    pub question: String,
    pub guidance: String,
    /// From the Keywords agent (empty if it failed); the pool adds identifiers from the code.
    pub keywords: Vec<String>,
    pub code: String,
}

#[derive(Debug)]
pub enum Outcome {
    Agent(Result<ChatResponse, LlmError>),
    Tests(Result<RunReport, String>),
    Memory(Option<Retrieved>),
    /// The stored entry's id, or why storing failed (the task is solved either way).
    Stored(Result<String, String>),
    Traced(Result<crate::sandbox::Trace, String>),
}

#[derive(Debug)]
pub enum Step {
    Run(Effect),
    /// The task is over; the runner adds wall time to the result.
    Finished(TaskResult),
}

#[derive(Debug)]
pub struct Transition {
    pub events: Vec<Event>,
    pub step: Step,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Plan,
    /// Reflexion: the model writes its tests; they run; it reflects.
    SelfTests,
    OwnTests,
    Reflect,
    /// MapCoder: recall, a plan, its confidence.
    Recall,
    MapPlan,
    Confidence,
    /// CodeSIM: a plan, its simulation, its revision.
    SimPlan,
    Simulate,
    SimRefine,
    /// LPW: a plan, its verification on the visible tests, the check of that verification.
    LpwPlan,
    LpwVerify,
    LpwCheck,
    /// LPW: the code with prints, its run, its explanation, the analysis of the failing test.
    LpwPrint,
    Printed,
    LpwExplain,
    LpwAnalyse,
    /// MGDebugger: the tree of subfunctions, one function's unit tests, their run, a real trace
    /// (`--trace real`), a repair.
    MgDecompose,
    MgTests,
    MgUnitTests,
    MgTrace,
    MgDebug,
    /// LDB: a failing visible test runs traced.
    Trace,
    /// LDB: the model judges each block.
    Verdict,
    GuideInit,
    Debug,
    Visible,
    Hidden,
    Feedback,
    Memory,
    Refine,
    /// Solved and remembering: the Guide extracts keywords, then the entry is stored.
    Keywords,
    Store,
    Done,
}

pub struct TaskMachine {
    task: Arc<Task>,
    prompts: Arc<Prompts>,
    config: Arc<LoopConfig>,
    phase: Phase,
    iteration: u32,
    guidance: String,
    plan: String,
    code: Option<String>,
    problem: Option<ExtractProblem>,
    visible: Option<RunReport>,
    hidden_failed: bool,
    analysis: String,
    retrieved: Option<Retrieved>,
    tokens: BTreeMap<Agent, Tokens>,
    tampered: Option<String>,
    /// The last test run's program ran in the tests' process: why (`RunReport::best_effort`).
    best_effort: Option<String>,
    /// Models the server said answered, in order of first answer.
    served: Vec<String>,
    /// The purpose of the call in flight.
    last_purpose: Option<Purpose>,
    /// Self-debug's and LDB's conversation so far.
    conversation: Vec<Message>,
    /// The traced failing test as the prompts show it (LDB, RGD's `--trace`).
    trace_shown: ShownTrace,
    reflexion: reflexion::Reflexion,
    mapcoder: mapcoder::MapCoder,
    codesim: codesim::CodeSim,
    lpw: lpw::Lpw,
    mgdebugger: mgdebugger::MgDebugger,
    /// The call in flight repeats one whose answer could not be read (`ask_again`).
    asked_again: bool,
    /// A person changed this task's course (the debugger).
    intervened: bool,
}

impl TaskMachine {
    pub fn new(task: Arc<Task>, prompts: Arc<Prompts>, config: Arc<LoopConfig>) -> Self {
        TaskMachine {
            task,
            prompts,
            config,
            phase: Phase::GuideInit,
            iteration: 0,
            guidance: String::new(),
            plan: String::new(),
            code: None,
            problem: None,
            visible: None,
            hidden_failed: false,
            analysis: String::new(),
            retrieved: None,
            tokens: BTreeMap::new(),
            tampered: None,
            best_effort: None,
            served: Vec::new(),
            last_purpose: None,
            conversation: Vec::new(),
            trace_shown: Default::default(),
            reflexion: Default::default(),
            mapcoder: Default::default(),
            codesim: Default::default(),
            lpw: Default::default(),
            mgdebugger: Default::default(),
            asked_again: false,
            intervened: false,
        }
    }

    pub fn iteration(&self) -> u32 {
        self.iteration
    }

    /// The memory hit the Guide's refinement is (or was last) shown.
    pub fn retrieved(&self) -> Option<&Retrieved> {
        self.retrieved.as_ref()
    }

    /// The debugger changed something: the result will say so.
    pub fn mark_intervened(&mut self) {
        self.intervened = true;
    }

    /// The program a pending test run will judge, edited by hand: it is this task's code from now on.
    pub fn set_code(&mut self, code: String) {
        self.code = Some(code);
    }

    /// New guidance, by hand. Returns the old guidance and, when the pending call is an RGD call
    /// rendered from it, that call rendered again.
    pub fn replace_guidance(&mut self, guidance: String) -> (String, Option<Effect>) {
        let old = std::mem::replace(&mut self.guidance, guidance);
        (old, self.rerender())
    }

    /// Withdraws the memory hit; returns its task id and the pending refinement rendered without it.
    pub fn drop_retrieved(&mut self) -> Option<(String, Option<Effect>)> {
        let hit = self.retrieved.take()?;
        Some((hit.task_id, self.rerender()))
    }

    /// The pending call again, from the current state (only calls rendered from a prompt, not
    /// conversations, and only while one is pending).
    fn rerender(&mut self) -> Option<Effect> {
        use Purpose::*;
        let purpose = self.last_purpose?;
        let rendered = matches!(purpose, GuideInit | GuideRefine | DebugInit | DebugFix | Feedback | Keywords)
            && self.config.strategy == Strategy::Rgd
            && self.phase != Phase::Done;
        if !rendered {
            return None;
        }
        match self.call(vec![], purpose).step {
            Step::Run(effect) => Some(effect),
            Step::Finished(_) => None,
        }
    }

    /// The person ended the task.
    pub fn abort(&mut self) -> Transition {
        self.intervened = true;
        self.end_with_error("aborted by hand".into())
    }

    /// Ends the task with an error the runner met (a fork whose record does not replay).
    pub fn end_with_error(&mut self, why: String) -> Transition {
        self.finish(vec![], TaskStatus::Error, Some(why))
    }

    /// Round 1: the Guide writes G_init from Q and E (no memory in the first round); without the
    /// Guide, the Debug agent writes from the task. The other strategies make their first call.
    pub fn start(&mut self) -> Transition {
        self.iteration = 1;
        self.phase = Phase::GuideInit;
        let events = vec![self.iteration_started()];
        if let Some(seed) = self.seed() {
            return self.start_from_seed(events, seed);
        }
        match self.config.strategy {
            Strategy::Rgd if self.config.guide => self.call(events, Purpose::GuideInit),
            Strategy::Rgd => self.call(events, Purpose::DebugInit),
            Strategy::Direct => self.call(events, Purpose::Direct),
            Strategy::Cot => self.call(events, Purpose::Cot),
            Strategy::SelfPlanning => self.call(events, Purpose::Plan),
            Strategy::SelfDebug => self.call(events, Purpose::SelfDebugSeed),
            Strategy::Ldb => self.call(events, Purpose::LdbSeed),
            Strategy::Reflexion => self.reflexion_start(events),
            Strategy::MapCoder => self.call(events, Purpose::Recall),
            Strategy::CodeSim => self.call(events, Purpose::SimPlan),
            Strategy::Lpw => self.call(events, Purpose::LpwPlan),
            // MGDebugger repairs a seed: Direct's first program, recorded as iteration 1.
            Strategy::MgDebugger => self.call(events, Purpose::Direct),
        }
    }

    pub fn advance(&mut self, outcome: Outcome) -> Transition {
        if let Outcome::Tests(Ok(report)) = &outcome {
            if self.tampered.is_none() {
                self.tampered = report.tampered().map(str::to_string);
            }
            // The verdict's strength is the last run's: the one that decided the task.
            self.best_effort = report.best_effort.clone();
        }
        // Every answer is counted once, for the agent of the call in flight.
        if let (Outcome::Agent(Ok(resp)), Some(purpose)) = (&outcome, self.last_purpose) {
            self.count(purpose.agent(), resp);
        }
        match (self.phase, outcome) {
            (Phase::Trace, Outcome::Traced(traced)) if self.config.strategy == Strategy::Ldb => self.ldb_verdict(traced),
            // RGD with `--trace`: the Feedback agent gets the real execution of a failing test.
            (Phase::Trace, Outcome::Traced(traced)) => {
                self.keep_trace(traced);
                self.call(vec![], Purpose::Feedback)
            }
            (Phase::Verdict, Outcome::Agent(Ok(resp))) => self.ldb_fix(&resp.text),
            (Phase::SelfTests, Outcome::Agent(Ok(resp))) => self.reflexion_tests_written(&resp.text),
            (Phase::OwnTests, Outcome::Tests(Ok(report))) => self.reflexion_tested(report),
            (Phase::Reflect, Outcome::Agent(Ok(resp))) => self.reflexion_reflected(&resp.text),
            (Phase::Recall, Outcome::Agent(Ok(resp))) => self.mapcoder_recalled(&resp.text),
            (Phase::MapPlan, Outcome::Agent(Ok(resp))) => self.mapcoder_planned(&resp.text),
            (Phase::Confidence, Outcome::Agent(Ok(resp))) => self.mapcoder_scored(&resp.text),
            (Phase::SimPlan, Outcome::Agent(Ok(resp))) => self.codesim_planned(&resp.text),
            (Phase::Simulate, Outcome::Agent(Ok(resp))) => self.codesim_simulated(&resp.text),
            (Phase::SimRefine, Outcome::Agent(Ok(resp))) => self.codesim_refined(&resp.text),
            (Phase::LpwPlan, Outcome::Agent(Ok(resp))) => self.lpw_planned(&resp.text),
            (Phase::LpwVerify, Outcome::Agent(Ok(resp))) => self.lpw_verified(&resp.text),
            (Phase::LpwCheck, Outcome::Agent(Ok(resp))) => self.lpw_checked(&resp.text),
            (Phase::LpwPrint, Outcome::Agent(Ok(resp))) => self.lpw_printed(&resp.text),
            (Phase::Printed, Outcome::Tests(report)) => self.lpw_ran_printed(report),
            (Phase::LpwExplain, Outcome::Agent(Ok(resp))) => self.lpw_explained(&resp.text),
            (Phase::LpwAnalyse, Outcome::Agent(Ok(resp))) => self.lpw_analysed(&resp.text),
            (Phase::MgDecompose, Outcome::Agent(Ok(resp))) => self.mg_decomposed(&resp.text),
            (Phase::MgTests, Outcome::Agent(Ok(resp))) => self.mg_tests_written(&resp.text),
            (Phase::MgUnitTests, Outcome::Tests(report)) => self.mg_tested(report),
            (Phase::MgTrace, Outcome::Traced(traced)) => self.mg_traced(traced),
            (Phase::MgDebug, Outcome::Agent(Ok(resp))) => self.mg_repaired(&resp.text),
            (
                Phase::Plan
                | Phase::GuideInit
                | Phase::Refine
                | Phase::Debug
                | Phase::Feedback
                | Phase::Verdict
                | Phase::SelfTests
                | Phase::Reflect
                | Phase::Recall
                | Phase::MapPlan
                | Phase::Confidence
                | Phase::SimPlan
                | Phase::Simulate
                | Phase::SimRefine
                | Phase::LpwPlan
                | Phase::LpwVerify
                | Phase::LpwCheck
                | Phase::LpwPrint
                | Phase::LpwExplain
                | Phase::LpwAnalyse
                | Phase::MgDecompose
                | Phase::MgTests
                | Phase::MgDebug,
                Outcome::Agent(Err(e)),
            ) => {
                // The call in flight (`send` records it with every call).
                let purpose = self.last_purpose.unwrap_or(Purpose::Feedback);
                // Refused for what this task asked (400, 413, 422): the task's own end. Anything
                // else is the endpoint's failure, and the task stays to be run again.
                let status = match e.status {
                    Some(400 | 413 | 422) => TaskStatus::Error,
                    _ => TaskStatus::EndpointFailed,
                };
                self.finish(vec![], status, Some(format!("{} agent: {e}", purpose.agent().name())))
            }
            (Phase::Plan, Outcome::Agent(Ok(resp))) => {
                self.plan = resp.text.trim().to_string();
                self.call(vec![], Purpose::Implement)
            }
            (Phase::GuideInit, Outcome::Agent(Ok(resp))) => {
                self.guidance = resp.text.trim().to_string();
                self.call(vec![], Purpose::DebugInit)
            }
            (Phase::Refine, Outcome::Agent(Ok(resp))) => {
                self.guidance = resp.text.trim().to_string();
                self.iteration += 1;
                let events = vec![self.iteration_started()];
                self.call(events, Purpose::DebugFix)
            }
            (Phase::Debug, Outcome::Agent(Ok(resp))) => {
                self.remember_answer(&resp.text);
                self.on_code(&resp.text)
            }
            (Phase::Visible, Outcome::Tests(Ok(report))) => {
                let all = report.all_passed();
                self.visible = Some(report);
                if all {
                    let mut events = vec![];
                    if self.config.strategy == Strategy::MgDebugger && self.iteration == 1 {
                        events.push(self.note("the seed program passes the visible tests: MGDebugger has nothing to debug".into()));
                    }
                    self.phase = Phase::Hidden;
                    let code = self.code.clone().unwrap_or_default();
                    Transition {
                        events,
                        step: Step::Run(Effect::RunTests {
                            suite: Suite::Hidden,
                            code,
                        }),
                    }
                } else if self.config.strategy == Strategy::Reflexion {
                    // Reflexion's last program was judged; the visible tests never steer it.
                    self.finish(vec![], TaskStatus::Failed, None)
                } else {
                    self.hidden_failed = false;
                    self.next_round(vec![])
                }
            }
            (Phase::Hidden, Outcome::Tests(Ok(report))) => {
                if report.all_passed() {
                    // Without guidance there is nothing worth remembering; a task caught tampering
                    // proves nothing (`proves`), so nothing of it is remembered.
                    let proven = crate::record::proves(true, self.tampered.as_deref()).is_ok()
                        && (self.best_effort.is_none() || self.config.allow_in_process);
                    if proven && self.config.memory && self.config.strategy == Strategy::Rgd && self.config.guide {
                        self.call(vec![], Purpose::Keywords)
                    } else {
                        self.solved()
                    }
                } else if self.config.strategy != Strategy::Rgd {
                    // Every other method stops once its visible (or own) tests pass; hidden ones
                    // are never fed back.
                    self.hidden_failed = true;
                    self.finish(vec![], TaskStatus::Failed, None)
                } else {
                    // The agents learn only that the code was not accepted, never which tests failed.
                    self.hidden_failed = true;
                    self.next_round(vec![])
                }
            }
            (Phase::Visible | Phase::Hidden | Phase::OwnTests, Outcome::Tests(Err(e))) => {
                self.finish(vec![], TaskStatus::Error, Some(format!("sandbox: {e}")))
            }
            (Phase::Feedback, Outcome::Agent(Ok(resp))) => {
                self.analysis = resp.text.trim().to_string();
                self.refine()
            }
            (Phase::Keywords, Outcome::Agent(answer)) => {
                // A failed keyword call costs the entry its LLM keywords, not the task its success.
                let keywords = answer.map(|resp| crate::agents::parse_keywords(&resp.text)).unwrap_or_default();
                self.phase = Phase::Store;
                let record = MemoryRecord {
                    task_id: self.task.id.clone(),
                    entry_point: self.task.entry_point.clone(),
                    question: self.task.prompt.clone(),
                    guidance: self.guidance.clone(),
                    keywords,
                    code: self.code.clone().unwrap_or_default(),
                };
                Transition {
                    events: vec![],
                    step: Step::Run(Effect::StoreMemory { record }),
                }
            }
            (Phase::Store, Outcome::Stored(_)) => self.solved(),
            (Phase::Memory, Outcome::Memory(hit)) => {
                self.retrieved = hit;
                self.call(vec![], Purpose::GuideRefine)
            }
            (phase, outcome) => {
                // A runner bug, not a model or program failure: end the task visibly rather than panic.
                self.finish(
                    vec![],
                    TaskStatus::Error,
                    Some(format!("internal: outcome {outcome:?} in phase {phase:?}")),
                )
            }
        }
    }

    /// After the analysis (or, without the Feedback agent, straight after the tests): the Guide
    /// refines (with the best past guidance when memory is on); without the Guide, the Debug
    /// agent repairs at once.
    fn refine(&mut self) -> Transition {
        if !self.config.guide {
            self.iteration += 1;
            let events = vec![self.iteration_started()];
            return self.call(events, Purpose::DebugFix);
        }
        if self.config.memory {
            self.phase = Phase::Memory;
            let query = self.task.prompt.clone();
            let events = vec![Event::MemoryQuery {
                task_id: self.task.id.clone(),
                iteration: self.iteration,
                query: query.clone(),
            }];
            return Transition {
                events,
                step: Step::Run(Effect::QueryMemory { query }),
            };
        }
        self.call(vec![], Purpose::GuideRefine)
    }

    fn on_code(&mut self, answer: &str) -> Transition {
        let extracted = extract_code(answer, &self.task.entry_point);
        let previous = self.code.clone();
        let code = extracted.code.map(|c| match &self.task.module {
            // A function of a user's file: the program is that file with the new function in it.
            Some(module) => crate::code::splice(module, &self.task.entry_point, &c),
            None => with_prompt_imports(&self.task.prompt, &c),
        });
        let diff = match (&previous, &code) {
            (Some(old), Some(new)) if old != new => Some(unified_diff(old, new)),
            _ => None,
        };
        self.problem = extracted.problem.clone();
        let event = Event::CodeExtracted {
            task_id: self.task.id.clone(),
            iteration: self.iteration,
            code: code.clone(),
            diff,
            problem: extracted.problem,
        };
        match code {
            Some(code) if self.config.strategy == Strategy::Reflexion => {
                self.code = Some(code.clone());
                self.reflexion_test(vec![event], code)
            }
            Some(code) => {
                self.code = Some(code.clone());
                self.phase = Phase::Visible;
                Transition {
                    events: vec![event],
                    step: Step::Run(Effect::RunTests {
                        suite: Suite::Visible,
                        code,
                    }),
                }
            }
            None => {
                // No usable code is an outcome of this iteration: the Feedback agent hears of it.
                self.visible = None;
                self.hidden_failed = false;
                self.next_round(vec![event])
            }
        }
    }

    fn next_round(&mut self, events: Vec<Event>) -> Transition {
        match self.config.strategy {
            Strategy::Reflexion => return self.reflexion_next(events),
            Strategy::MapCoder => return self.mapcoder_next(events),
            Strategy::CodeSim => return self.codesim_next(events),
            Strategy::Lpw => return self.lpw_next(events),
            Strategy::MgDebugger => return self.mg_next(events),
            _ => {}
        }
        if self.iteration >= self.config.max_iters || !self.config.strategy.iterates() {
            return self.finish(events, TaskStatus::Failed, None);
        }
        match self.config.strategy {
            Strategy::SelfDebug => return self.self_debug_turn(events),
            Strategy::Ldb => return self.ldb_trace(events),
            _ => {}
        }
        if let (Some(mode), true) = (self.config.trace, self.config.feedback) {
            return match self.trace_failing(events, mode) {
                Ok(transition) => transition,
                // Nothing to trace this round (no code, all visible passed, stdin tests).
                Err((events, _)) => self.call(events, Purpose::Feedback),
            };
        }
        if !self.config.feedback {
            // The refinement reads the raw results; the events of this round still go out.
            let mut next = self.refine();
            let mut all = events;
            all.append(&mut next.events);
            next.events = all;
            return next;
        }
        self.call(events, Purpose::Feedback)
    }

    fn count(&mut self, agent: Agent, resp: &ChatResponse) {
        self.tokens.entry(agent).or_default().add(&resp.usage);
        if let Some(m) = &resp.served_model
            && !self.served.contains(m)
        {
            self.served.push(m.clone());
        }
    }

    fn iteration_started(&self) -> Event {
        Event::IterationStarted {
            task_id: self.task.id.clone(),
            iteration: self.iteration,
        }
    }

    /// An answer that was not what was asked, and what was done about it.
    fn malformed(&self, purpose: Purpose, error: String, handled: &str) -> Event {
        Event::AnswerMalformed {
            task_id: self.task.id.clone(),
            iteration: self.iteration,
            purpose,
            error,
            handled: handled.into(),
        }
    }

    /// What a method decided that is neither a call nor a test run.
    fn note(&self, text: String) -> Event {
        Event::StrategyNote {
            task_id: self.task.id.clone(),
            iteration: self.iteration,
            text,
        }
    }

    /// An answer that could not be read (`error`): the same call once more, recorded as such; or,
    /// when the call in flight already was that repeat, `None`, and the caller's fallback follows.
    fn ask_again(&mut self, purpose: Purpose, error: &str) -> Option<Transition> {
        if self.asked_again {
            return None;
        }
        let event = self.malformed(purpose, error.into(), "asked once more");
        let repeat = self.call(vec![event], purpose);
        // Set after the call: `send` clears it for every other call.
        self.asked_again = true;
        Some(repeat)
    }

    /// Passed visible and hidden tests in this iteration.
    fn solved(&mut self) -> Transition {
        let first = self.iteration;
        let mut t = self.finish(vec![], TaskStatus::Solved, None);
        if let Step::Finished(r) = &mut t.step {
            r.first_pass_iteration = Some(first);
        }
        t
    }

    fn finish(&mut self, events: Vec<Event>, status: TaskStatus, error: Option<String>) -> Transition {
        self.phase = Phase::Done;
        let failure = self.failure(status, error.as_deref());
        let result = TaskResult {
            task_id: self.task.id.clone(),
            passed: status == TaskStatus::Solved,
            status,
            iterations: self.iteration,
            first_pass_iteration: None,
            tokens: self.tokens.clone(),
            seconds: 0.0,
            error,
            completion: self.code.clone().unwrap_or_default(),
            tampered: self.tampered.clone(),
            best_effort: self.best_effort.clone(),
            served_models: self.served.clone(),
            failure,
            intervened: self.intervened,
        };
        Transition {
            events,
            step: Step::Finished(result),
        }
    }

    /// Why an unsolved task ended: from its last program's results.
    fn failure(&self, status: TaskStatus, error: Option<&str>) -> Option<Failure> {
        match status {
            TaskStatus::Solved => None,
            TaskStatus::EndpointFailed => Some(Failure::LlmError),
            TaskStatus::Error if error.is_some_and(|e| e.starts_with("sandbox")) => Some(Failure::SandboxError),
            TaskStatus::Error => Some(Failure::LlmError),
            TaskStatus::Failed if self.code.is_none() || self.problem.is_some() => Some(Failure::NoCode),
            TaskStatus::Failed if self.hidden_failed => Some(Failure::WrongHidden),
            TaskStatus::Failed => Some(match &self.visible {
                Some(report) => Failure::of_report(report),
                None => Failure::WrongVisible,
            }),
        }
    }
}

fn describe_problem(p: &ExtractProblem) -> String {
    match p {
        ExtractProblem::NoCode => "The Debug agent's answer contained no Python code block.".into(),
        ExtractProblem::SyntaxError { line } => format!("The code has a syntax error near line {line}."),
        ExtractProblem::EntryPointMissing => "The code does not define the required function.".into(),
    }
}

/// Models often drop the prompt's `from typing import List` line; human-eval style harnesses run
/// prompt + completion, so the same imports are put in front of the code when it lacks them.
fn with_prompt_imports(prompt: &str, code: &str) -> String {
    let missing: Vec<&str> = prompt
        .lines()
        .filter(|l| (l.starts_with("import ") || l.starts_with("from ")) && !code.contains(l.trim()))
        .collect();
    if missing.is_empty() {
        code.to_string()
    } else {
        format!("{}\n{code}", missing.join("\n"))
    }
}

/// Used by tests and `datasets verify`: which tests an effect refers to.
pub fn suite_tests(task: &Task, suite: Suite) -> &[TestCase] {
    match suite {
        Suite::Visible => &task.visible,
        Suite::Hidden => &task.hidden,
        // A printed run runs the visible tests on the program with prints.
        Suite::Printed => &task.visible,
        // The model's own tests travel in their effect (`Effect::RunOwnTests`).
        Suite::Own => &[],
    }
}
