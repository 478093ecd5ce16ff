//! The debugger: breakpoints, pause, step, edit, skip and abort. The machine returns effects as
//! data, so the runner can hold any effect before it runs: `Control::gate` decides whether it
//! holds, and while it holds, takes the commands a person (the TUI) or a script (`--control
//! stdio`) sends. Every hold, resumption and edit is an event, so replays show them too.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde::Deserialize;
use tokio::sync::mpsc;

use super::bus::EventBus;
use super::machine::{Effect, Outcome, TaskMachine};
use crate::agents::Agent;
use crate::code::unified_diff;
use crate::dataset::Task;
use crate::llm::{ChatResponse, Message};
use crate::record::{Event, Pending, Suite};

/// Where tasks stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breakpoint {
    /// Before an effect of this kind.
    Before(EffectKind),
    /// Before the effect after this outcome.
    On(OutcomeKind),
    /// Before the first effect of this iteration.
    Iter(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectKind {
    /// A call to this agent.
    Agent(Agent),
    /// Any agent call.
    AnyAgent,
    /// A test run (visible, hidden or the model's own) or a traced test.
    Tests,
    /// A memory query or store.
    Memory,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeKind {
    VisibleFail,
    HiddenFail,
    LlmError,
}

impl Breakpoint {
    /// `before:guide`, `on:hidden-fail`, `iter:3`.
    pub fn parse(text: &str) -> Result<Breakpoint, String> {
        let (what, arg) = text
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("breakpoint {text:?}: expected before:KIND, on:OUTCOME or iter:N"))?;
        match what {
            "before" => Ok(Breakpoint::Before(match arg {
                "agent" | "call" => EffectKind::AnyAgent,
                "tests" | "test" => EffectKind::Tests,
                "memory" => EffectKind::Memory,
                other => EffectKind::Agent(
                    Agent::ALL
                        .into_iter()
                        .find(|a| a.name() == other)
                        .ok_or_else(|| format!("breakpoint {text:?}: before what? guide, debug, feedback, agent, tests or memory"))?,
                ),
            })),
            "on" => Ok(Breakpoint::On(match arg {
                "visible-fail" => OutcomeKind::VisibleFail,
                "hidden-fail" => OutcomeKind::HiddenFail,
                "llm-error" => OutcomeKind::LlmError,
                _ => return Err(format!("breakpoint {text:?}: on what? visible-fail, hidden-fail or llm-error")),
            })),
            "iter" => match arg.parse::<u32>() {
                Ok(k) if k >= 1 => Ok(Breakpoint::Iter(k)),
                _ => Err(format!("breakpoint {text:?}: the iteration is a number from 1")),
            },
            _ => Err(format!("breakpoint {text:?}: expected before:KIND, on:OUTCOME or iter:N")),
        }
    }

    /// A comma-separated list; empty clears.
    pub fn parse_list(text: &str) -> Result<Vec<Breakpoint>, String> {
        text.split(',').filter(|s| !s.trim().is_empty()).map(Breakpoint::parse).collect()
    }

    pub fn name(&self) -> String {
        match self {
            Breakpoint::Before(EffectKind::Agent(a)) => format!("before:{}", a.name()),
            Breakpoint::Before(EffectKind::AnyAgent) => "before:agent".into(),
            Breakpoint::Before(EffectKind::Tests) => "before:tests".into(),
            Breakpoint::Before(EffectKind::Memory) => "before:memory".into(),
            Breakpoint::On(OutcomeKind::VisibleFail) => "on:visible-fail".into(),
            Breakpoint::On(OutcomeKind::HiddenFail) => "on:hidden-fail".into(),
            Breakpoint::On(OutcomeKind::LlmError) => "on:llm-error".into(),
            Breakpoint::Iter(k) => format!("iter:{k}"),
        }
    }

    fn before(&self, effect: &Effect) -> bool {
        let Breakpoint::Before(kind) = self else { return false };
        match (kind, effect) {
            (EffectKind::AnyAgent, Effect::CallAgent { .. }) => true,
            (EffectKind::Agent(a), Effect::CallAgent { purpose, .. }) => purpose.agent() == *a,
            (EffectKind::Tests, Effect::RunTests { .. } | Effect::RunOwnTests { .. } | Effect::TraceTest { .. }) => true,
            (EffectKind::Memory, Effect::QueryMemory { .. } | Effect::StoreMemory { .. }) => true,
            _ => false,
        }
    }
}

/// What a command may change in a held effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// The program of a pending test run.
    Code,
    /// The messages of a pending agent call (a whole list, or a text for the last user message).
    Messages,
    /// RGD's guidance; a pending call that shows it is rendered again.
    Guidance,
    /// The query of a pending memory lookup.
    Query,
}

/// A debugger command: a JSON line of `--control stdio`, or a key in the TUI. `task` names the
/// held task a command is for; it may be left out when only one is held.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "cmd", rename_all = "kebab-case")]
pub enum Command {
    /// Go on; without a task, every held task, and stop pausing everything.
    Continue { task: Option<String> },
    /// Run the held effect, then hold again before the next one.
    Step { task: Option<String> },
    /// Hold every task (or one) before its next effect.
    Pause { task: Option<String> },
    /// Do not run the held effect: it gives its empty outcome (no answer, no memory hit).
    Skip { task: Option<String> },
    /// End the held task now.
    Abort { task: Option<String> },
    Edit {
        field: Field,
        value: serde_json::Value,
        task: Option<String>,
    },
    /// Withdraw the memory hit the pending Guide refinement would be shown.
    DropHit { task: Option<String> },
    /// Replace the breakpoints (`before:tests,iter:2`; empty clears them).
    Break { set: String },
}

impl Command {
    fn task(&self) -> Option<&str> {
        match self {
            Command::Continue { task }
            | Command::Step { task }
            | Command::Pause { task }
            | Command::Skip { task }
            | Command::Abort { task }
            | Command::Edit { task, .. }
            | Command::DropHit { task } => task.as_deref(),
            Command::Break { .. } => None,
        }
    }
}

/// What the runner does with a held effect once it is released.
pub enum Gate {
    Run(Effect),
    /// The effect is not run; the machine gets this outcome instead.
    Skip(Outcome),
    Abort,
}

#[derive(Default)]
struct State {
    breakpoints: Vec<Breakpoint>,
    pause_all: bool,
    /// Tasks to hold before their next effect, and why (a step, a pause, an outcome breakpoint).
    hold_next: HashMap<String, String>,
    /// The iteration an `iter:K` breakpoint last held each task at (it holds once per iteration).
    iter_held: HashMap<String, u32>,
    /// Held tasks and the way to reach them.
    held: BTreeMap<String, mpsc::UnboundedSender<Command>>,
}

/// Shared by the runner (which asks it before every effect) and the front end (which sends it
/// commands). Without breakpoints or a pause it costs one lock per effect.
#[derive(Default)]
pub struct Control {
    state: Mutex<State>,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Control")
    }
}

impl Control {
    pub fn new(breakpoints: Vec<Breakpoint>) -> Control {
        Control {
            state: Mutex::new(State {
                breakpoints,
                ..State::default()
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn breakpoints(&self) -> Vec<Breakpoint> {
        self.lock().breakpoints.clone()
    }

    /// Tasks held now.
    pub fn held(&self) -> Vec<String> {
        self.lock().held.keys().cloned().collect()
    }

    pub fn pausing_all(&self) -> bool {
        self.lock().pause_all
    }

    /// Carries out a command, or says why it cannot be.
    pub fn command(&self, command: Command) -> Result<(), String> {
        let mut state = self.lock();
        match command {
            Command::Break { set } => {
                state.breakpoints = Breakpoint::parse_list(&set)?;
                Ok(())
            }
            Command::Pause { task: None } => {
                state.pause_all = true;
                Ok(())
            }
            Command::Pause { task: Some(task) } => {
                state.hold_next.insert(task, "pause".into());
                Ok(())
            }
            Command::Continue { task: None } => {
                state.pause_all = false;
                state.hold_next.clear();
                for sender in state.held.values() {
                    let _ = sender.send(Command::Continue { task: None });
                }
                Ok(())
            }
            other => {
                let task = match other.task() {
                    Some(task) => task.to_string(),
                    None => match state.held.len() {
                        0 => return Err("no task is paused".into()),
                        1 => state.held.keys().next().cloned().unwrap_or_default(),
                        n => {
                            let ids: Vec<&str> = state.held.keys().map(String::as_str).collect();
                            return Err(format!("{n} tasks are paused ({}); name one with \"task\"", ids.join(", ")));
                        }
                    },
                };
                let sender = state.held.get(&task).ok_or_else(|| format!("task {task:?} is not paused"))?;
                sender.send(other).map_err(|_| format!("task {task:?} is no longer paused"))
            }
        }
    }

    /// Whether `effect` of the task should be held, and why.
    fn hold_reason(&self, task_id: &str, iteration: u32, effect: &Effect) -> Option<String> {
        let mut state = self.lock();
        if let Some(reason) = state.hold_next.remove(task_id) {
            return Some(reason);
        }
        if state.pause_all {
            return Some("pause".into());
        }
        let State {
            breakpoints, iter_held, ..
        } = &mut *state;
        for b in breakpoints.iter() {
            if b.before(effect) {
                return Some(b.name());
            }
            if let Breakpoint::Iter(k) = b
                && *k == iteration
                && iter_held.get(task_id) != Some(k)
            {
                iter_held.insert(task_id.to_string(), *k);
                return Some(b.name());
            }
        }
        None
    }

    /// After an effect ran: an outcome breakpoint holds the task before its next effect.
    pub fn observe(&self, task_id: &str, suite: Option<Suite>, outcome: &Outcome) {
        let kind = match (suite, outcome) {
            (Some(Suite::Visible), Outcome::Tests(Ok(r))) if !r.all_passed() => OutcomeKind::VisibleFail,
            (Some(Suite::Hidden), Outcome::Tests(Ok(r))) if !r.all_passed() => OutcomeKind::HiddenFail,
            (_, Outcome::Agent(Err(_))) => OutcomeKind::LlmError,
            _ => return,
        };
        let mut state = self.lock();
        let breakpoint = Breakpoint::On(kind);
        if state.breakpoints.contains(&breakpoint) {
            state.hold_next.insert(task_id.to_string(), breakpoint.name());
        }
    }

    /// Before the runner runs `effect`: holds the task if it should stop here, and while it is
    /// held, applies the commands sent to it.
    pub async fn gate(&self, bus: &EventBus, task: &Task, machine: &mut TaskMachine, mut effect: Effect) -> Gate {
        let iteration = machine.iteration();
        let Some(reason) = self.hold_reason(&task.id, iteration, &effect) else {
            return Gate::Run(effect);
        };
        let (sender, mut commands) = mpsc::unbounded_channel();
        self.lock().held.insert(task.id.clone(), sender);
        let paused = |effect: &Effect, machine: &TaskMachine| Event::Paused {
            task_id: task.id.clone(),
            iteration,
            reason: reason.clone(),
            pending: pending(task, machine, effect),
        };
        bus.emit(paused(&effect, machine));
        let resumed = |how: &str| Event::Resumed {
            task_id: task.id.clone(),
            iteration,
            how: how.to_string(),
        };
        let intervened = |field: &str, diff: String| Event::Intervened {
            task_id: task.id.clone(),
            iteration,
            field: field.to_string(),
            diff,
        };
        let gate = loop {
            // The sender lives in `held` until this loop ends, so the channel stays open.
            let Some(command) = commands.recv().await else {
                break Gate::Run(effect);
            };
            match command {
                Command::Continue { .. } => {
                    bus.emit(resumed("continue"));
                    break Gate::Run(effect);
                }
                Command::Step { .. } => {
                    self.lock().hold_next.insert(task.id.clone(), "step".into());
                    bus.emit(resumed("step"));
                    break Gate::Run(effect);
                }
                Command::Skip { .. } => {
                    machine.mark_intervened();
                    bus.emit(intervened(
                        "skip",
                        format!("skipped the {}", pending(task, machine, &effect).label()),
                    ));
                    bus.emit(resumed("skip"));
                    break Gate::Skip(skipped(&effect));
                }
                Command::Abort { .. } => {
                    machine.mark_intervened();
                    bus.emit(intervened("abort", "ended the task by hand".into()));
                    bus.emit(resumed("abort"));
                    break Gate::Abort;
                }
                Command::Edit { field, value, .. } => match edit(machine, &mut effect, field, &value) {
                    Ok(diff) => {
                        machine.mark_intervened();
                        bus.emit(intervened(field_name(field), diff));
                        bus.emit(paused(&effect, machine));
                    }
                    Err(message) => bus.emit(Event::ControlError { message }),
                },
                Command::DropHit { .. } => match machine.drop_retrieved() {
                    Some((dropped, rebuilt)) => {
                        effect = rebuilt.unwrap_or(effect);
                        machine.mark_intervened();
                        bus.emit(intervened("hit", format!("dropped the memory hit {dropped}")));
                        bus.emit(paused(&effect, machine));
                    }
                    None => bus.emit(Event::ControlError {
                        message: "there is no memory hit to drop".into(),
                    }),
                },
                // Routed by `command`, never sent to a held task.
                Command::Pause { .. } | Command::Break { .. } => {}
            }
        };
        self.lock().held.remove(&task.id);
        gate
    }
}

fn field_name(field: Field) -> &'static str {
    match field {
        Field::Code => "code",
        Field::Messages => "messages",
        Field::Guidance => "guidance",
        Field::Query => "query",
    }
}

/// The held effect as the debugger shows it.
fn pending(task: &Task, machine: &TaskMachine, effect: &Effect) -> Pending {
    match effect {
        Effect::CallAgent { purpose, messages, params } => Pending::Agent {
            agent: purpose.agent(),
            purpose: *purpose,
            messages: messages.clone(),
            params: params.clone(),
            memory_hit: (*purpose == crate::agents::Purpose::GuideRefine)
                .then(|| machine.retrieved().cloned())
                .flatten(),
        },
        Effect::RunTests { suite, code } => Pending::Tests {
            suite: *suite,
            code: code.clone(),
            // Hidden tests are never shown, not even here: a person's edit must not be steered by them.
            tests: match suite {
                Suite::Hidden => vec![format!(
                    "({} hidden test{})",
                    task.hidden.len(),
                    if task.hidden.len() == 1 { "" } else { "s" }
                )],
                _ => super::suite_tests(task, *suite).iter().map(|t| t.label()).collect(),
            },
        },
        Effect::RunOwnTests { code, tests } => Pending::Tests {
            suite: Suite::Own,
            code: code.clone(),
            tests: tests.iter().map(|t| t.label()).collect(),
        },
        Effect::RunPrinted { code } => Pending::Tests {
            suite: Suite::Printed,
            code: code.clone(),
            tests: super::suite_tests(task, Suite::Printed).iter().map(|t| t.label()).collect(),
        },
        Effect::TraceTest { code, test, .. } => Pending::Trace {
            code: code.clone(),
            test: test.clone(),
        },
        Effect::QueryMemory { query } => Pending::Memory { query: query.clone() },
        Effect::StoreMemory { record } => Pending::Store {
            guidance: record.guidance.clone(),
            keywords: record.keywords.clone(),
        },
    }
}

/// A skipped effect's outcome: what "nothing happened" means for it.
fn skipped(effect: &Effect) -> Outcome {
    const WHY: &str = "skipped by hand";
    match effect {
        Effect::CallAgent { .. } => Outcome::Agent(Ok(ChatResponse {
            text: String::new(),
            usage: Default::default(),
            finish_reason: Some("skipped".into()),
            attempts: 0,
            latency_ms: 0,
            served_model: None,
        })),
        Effect::RunTests { .. } | Effect::RunOwnTests { .. } | Effect::RunPrinted { .. } => Outcome::Tests(Err(WHY.into())),
        Effect::TraceTest { .. } => Outcome::Traced(Err(WHY.into())),
        Effect::QueryMemory { .. } => Outcome::Memory(None),
        Effect::StoreMemory { .. } => Outcome::Stored(Err(WHY.into())),
    }
}

/// Applies an edit to the held effect (and to the machine, where the field is its state);
/// returns the change as a diff.
fn edit(machine: &mut TaskMachine, effect: &mut Effect, field: Field, value: &serde_json::Value) -> Result<String, String> {
    let text = || {
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("the value of {} is a string", field_name(field)))
    };
    match (field, &mut *effect) {
        (Field::Code, Effect::RunTests { code, .. } | Effect::RunOwnTests { code, .. } | Effect::TraceTest { code, .. }) => {
            let new = text()?;
            let diff = unified_diff(code, &new);
            machine.set_code(new.clone());
            *code = new;
            Ok(diff)
        }
        (Field::Code, _) => Err("code can be edited before a test run (break before:tests)".into()),
        (Field::Messages, Effect::CallAgent { messages, .. }) => {
            let new: Vec<Message> = match value {
                serde_json::Value::String(s) => {
                    let mut new = messages.clone();
                    let last = new
                        .iter_mut()
                        .rev()
                        .find(|m| m.role == crate::llm::Role::User)
                        .ok_or("the call has no user message to replace")?;
                    last.content = s.clone();
                    new
                }
                other => serde_json::from_value(other.clone()).map_err(|e| {
                    format!("messages: a list of {{\"role\", \"content\"}} objects, or a text for the last user message ({e})")
                })?,
            };
            let diff = unified_diff(&render(messages), &render(&new));
            *messages = new;
            Ok(diff)
        }
        (Field::Messages, _) => Err("messages can be edited before an agent call".into()),
        (Field::Query, Effect::QueryMemory { query }) => {
            let new = text()?;
            let diff = unified_diff(query, &new);
            *query = new;
            Ok(diff)
        }
        (Field::Query, _) => Err("the query can be edited before a memory lookup (break before:memory)".into()),
        (Field::Guidance, _) => {
            let new = text()?;
            let (old, rebuilt) = machine.replace_guidance(new.clone());
            if let Some(rebuilt) = rebuilt {
                *effect = rebuilt;
            }
            Ok(unified_diff(&old, &new))
        }
    }
}

/// Messages as text, for diffs.
fn render(messages: &[Message]) -> String {
    messages.iter().map(|m| format!("[{:?}]\n{}\n", m.role, m.content)).collect()
}
