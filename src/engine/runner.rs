//! Executes the state machine's effects: agent calls, sandbox runs, memory queries, and reports
//! each as events on the bus.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::agents::{Prompts, Retrieved};
use crate::dataset::{Task, TestCase};
use crate::llm::{CallObserver, ChatModel, LlmError};
use crate::sandbox::{Executor, Job, Limits};

use super::bus::EventBus;
use super::control::{Control, Gate};
use super::machine::{Effect, LoopConfig, MemoryRecord, Outcome, Step, TaskMachine, suite_tests};
use super::replay::Replay;
use crate::record::TaskResult;
use crate::record::{Event, Suite};

/// Looks up past guidance for a task description (the memory pool, once it exists).
#[async_trait::async_trait]
pub trait MemoryLookup: Send + Sync {
    /// The best past guidance for `query` above the threshold, never one of `task_id` itself.
    async fn best_match(&self, task_id: &str, query: &str) -> Result<Option<Retrieved>, String>;
    /// Stores a solved task; returns the new entry's id.
    async fn store(&self, record: MemoryRecord) -> Result<String, String>;
}

pub struct TaskRunner {
    pub model: Arc<dyn ChatModel>,
    pub executor: Arc<dyn Executor>,
    pub memory: Option<Arc<dyn MemoryLookup>>,
    pub prompts: Arc<Prompts>,
    pub config: Arc<LoopConfig>,
    pub limits: Limits,
    pub bus: Arc<EventBus>,
    /// The debugger, when the run has one (breakpoints, a control channel, the TUI's keys).
    pub control: Option<Arc<Control>>,
    /// A fork: its task's first iterations replayed from the parent run's record.
    pub replay: Option<Replay>,
    call_ids: AtomicU64,
}

impl TaskRunner {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        model: Arc<dyn ChatModel>,
        executor: Arc<dyn Executor>,
        memory: Option<Arc<dyn MemoryLookup>>,
        prompts: Arc<Prompts>,
        config: Arc<LoopConfig>,
        limits: Limits,
        bus: Arc<EventBus>,
        first_call_id: u64,
    ) -> Self {
        TaskRunner {
            model,
            executor,
            memory,
            prompts,
            config,
            limits,
            bus,
            control: None,
            replay: None,
            call_ids: AtomicU64::new(first_call_id),
        }
    }

    pub fn with_control(mut self, control: Option<Arc<Control>>) -> Self {
        self.control = control;
        self
    }

    pub fn with_replay(mut self, replay: Option<Replay>) -> Self {
        self.replay = replay;
        self
    }

    /// Runs one task to its end. Never panics on model or program misbehaviour: every failure is
    /// an outcome recorded in the result.
    pub async fn run_task(&self, task: Arc<Task>, attempt: u32) -> TaskResult {
        let started = Instant::now();
        self.bus.emit(Event::TaskStarted {
            task_id: task.id.clone(),
            attempt,
            entry_point: task.entry_point.clone(),
            prompt: task.prompt.clone(),
            visible_tests: task.visible.iter().map(|t| t.label()).collect(),
            hidden_tests: task.hidden.len(),
        });
        let mut machine = TaskMachine::new(task.clone(), self.prompts.clone(), self.config.clone());
        let mut transition = machine.start();
        loop {
            for event in std::mem::take(&mut transition.events) {
                self.bus.emit(event);
            }
            match transition.step {
                Step::Finished(mut result) => {
                    result.seconds = started.elapsed().as_secs_f64();
                    self.bus.emit(Event::TaskFinished { result: result.clone() });
                    return result;
                }
                Step::Run(effect) => {
                    if let Some(replay) = self
                        .replay
                        .as_ref()
                        .filter(|r| r.task_id == task.id && machine.iteration() < r.before_iteration)
                    {
                        let mut effect = effect;
                        transition = match replay.next(&mut effect) {
                            Ok(outcome) => {
                                let outcome = self.execute(&task, machine.iteration(), effect, Some(outcome)).await;
                                machine.advance(outcome)
                            }
                            Err(why) => machine.end_with_error(why),
                        };
                        continue;
                    }
                    let effect = match &self.control {
                        None => effect,
                        Some(control) => match control.gate(&self.bus, &task, &mut machine, effect).await {
                            Gate::Run(effect) => effect,
                            Gate::Skip(outcome) => {
                                transition = machine.advance(outcome);
                                continue;
                            }
                            Gate::Abort => {
                                transition = machine.abort();
                                continue;
                            }
                        },
                    };
                    let suite = match &effect {
                        Effect::RunTests { suite, .. } => Some(*suite),
                        _ => None,
                    };
                    let outcome = self.execute(&task, machine.iteration(), effect, None).await;
                    if let Some(control) = &self.control {
                        control.observe(&task.id, suite, &outcome);
                    }
                    transition = machine.advance(outcome);
                }
            }
        }
    }

    /// Runs `effect`, or, when `recorded` holds its outcome (a fork replaying its parent), reports
    /// that outcome as if it had just happened: the same events, no LLM call, no sandbox run.
    async fn execute(&self, task: &Task, iteration: u32, effect: Effect, recorded: Option<Outcome>) -> Outcome {
        match effect {
            Effect::CallAgent { purpose, messages, params } => {
                let call_id = self.call_ids.fetch_add(1, Ordering::SeqCst);
                let agent = purpose.agent();
                self.bus.emit(Event::AgentRequest {
                    task_id: task.id.clone(),
                    iteration,
                    call_id,
                    agent,
                    purpose,
                    params: params.clone(),
                    messages: messages.clone(),
                });
                let observer = BusObserver {
                    bus: &self.bus,
                    task_id: &task.id,
                    call_id,
                };
                let result = match recorded {
                    Some(Outcome::Agent(result)) => result,
                    _ => self.model.chat(&messages, &params, &observer).await,
                };
                match &result {
                    Ok(resp) => self.bus.emit(Event::AgentResponse {
                        task_id: task.id.clone(),
                        iteration,
                        call_id,
                        agent,
                        purpose,
                        text: resp.text.clone(),
                        usage: resp.usage,
                        latency_ms: resp.latency_ms,
                        attempts: resp.attempts,
                        finish_reason: resp.finish_reason.clone(),
                        served_model: resp.served_model.clone(),
                    }),
                    Err(error) => self.bus.emit(Event::AgentFailed {
                        task_id: task.id.clone(),
                        iteration,
                        call_id,
                        agent,
                        purpose,
                        error: error.clone(),
                    }),
                }
                Outcome::Agent(result)
            }
            Effect::RunTests { suite, code } => {
                self.run_tests(task, iteration, suite, suite_tests(task, suite), &code, recorded)
                    .await
            }
            Effect::RunOwnTests { code, tests } => self.run_tests(task, iteration, Suite::Own, &tests, &code, recorded).await,
            Effect::RunPrinted { code } => {
                self.run_tests(task, iteration, Suite::Printed, suite_tests(task, Suite::Printed), &code, recorded)
                    .await
            }
            Effect::TraceTest { code, test, mode } => {
                let limits = self.limits.for_task(&task.id);
                let job = crate::sandbox::TraceJob {
                    kind: &task.kind,
                    code: &code,
                    call: &test,
                    mode,
                    max_events: 20_000,
                    limits: &limits,
                };
                let traced = match recorded {
                    Some(Outcome::Traced(traced)) => traced,
                    _ => self.executor.trace(job).await.map_err(|e| e.to_string()),
                };
                if let Ok(trace) = &traced {
                    self.bus.emit(Event::TestTraced {
                        task_id: task.id.clone(),
                        iteration,
                        test: test.lines().next().unwrap_or_default().to_string(),
                        trace: trace.clone(),
                    });
                }
                Outcome::Traced(traced)
            }
            Effect::QueryMemory { query } => {
                let hit = match (&self.memory, recorded) {
                    (_, Some(Outcome::Memory(hit))) => hit,
                    (Some(memory), _) => memory.best_match(&task.id, &query).await.unwrap_or_else(|e| {
                        // A failing lookup degrades to "no hit" (recorded), never to a failed task.
                        tracing::warn!("memory lookup for {}: {e}", task.id);
                        None
                    }),
                    (None, _) => None,
                };
                self.bus.emit(Event::MemoryHit {
                    task_id: task.id.clone(),
                    iteration,
                    hit: hit.clone(),
                });
                Outcome::Memory(hit)
            }
            Effect::StoreMemory { record } => {
                let stored = match (&self.memory, recorded) {
                    (_, Some(Outcome::Stored(stored))) => stored,
                    (Some(memory), _) => memory.store(record).await,
                    (None, _) => Err("no memory pool in this run".into()),
                };
                self.bus.emit(Event::MemoryStored {
                    task_id: task.id.clone(),
                    entry_id: stored.as_ref().ok().cloned(),
                    error: stored.as_ref().err().cloned(),
                });
                Outcome::Stored(stored)
            }
        }
    }
}

impl TaskRunner {
    /// Runs `tests` on `code` in the sandbox, reported as `suite`'s run.
    async fn run_tests(
        &self,
        task: &Task,
        iteration: u32,
        suite: Suite,
        tests: &[TestCase],
        code: &str,
        recorded: Option<Outcome>,
    ) -> Outcome {
        self.bus.emit(Event::TestsStarted {
            task_id: task.id.clone(),
            iteration,
            suite,
            tests: tests.len(),
        });
        let limits = self.limits.for_task(&task.id);
        let job = Job {
            code,
            kind: &task.kind,
            entry_point: &task.entry_point,
            tests,
            limits: &limits,
        };
        let result = match recorded {
            Some(Outcome::Tests(result)) => result,
            _ => self.executor.run(job).await.map_err(|e| e.to_string()),
        };
        if let Ok(report) = &result {
            self.bus.emit(Event::TestsRun {
                task_id: task.id.clone(),
                iteration,
                suite,
                passed: report.passed(),
                total: report.tests.len(),
                report: report.clone(),
            });
        }
        Outcome::Tests(result)
    }
}

struct BusObserver<'a> {
    bus: &'a EventBus,
    task_id: &'a str,
    call_id: u64,
}

impl CallObserver for BusObserver<'_> {
    fn token(&self, delta: &str) {
        self.bus.emit(Event::AgentTokens {
            task_id: self.task_id.to_string(),
            call_id: self.call_id,
            text: delta.to_string(),
        });
    }

    fn retry(&self, attempt: u32, error: &LlmError, wait: Duration) {
        self.bus.emit(Event::AgentRetry {
            task_id: self.task_id.to_string(),
            call_id: self.call_id,
            attempt,
            error: error.clone(),
            wait_ms: wait.as_millis() as u64,
        });
    }
}
