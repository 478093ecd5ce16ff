//! What the views show, built only by applying recorded events in order. Live runs and replays
//! feed the same `apply`, so the screen after event N is the same in both.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::agents::{Agent, Purpose};
use crate::code::ExtractProblem;
use crate::engine::{Envelope, Event, EventPart, Manifest, Pending, RunSummary, Suite, TaskResult, TaskStatus, Tokens};
use crate::llm::Message;
use crate::sandbox::RunReport;

/// Where a task is in the loop, as the sweep grid shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TaskStage {
    Queued,
    Guiding,
    Coding,
    Testing,
    Analysing,
    Remembering,
    /// Held by the debugger before its next effect.
    Paused,
    Solved(u32),
    /// Passed, with the program in the tests' process: not counted as solved.
    Unverified,
    Failed,
    Error,
    /// Ended by the endpoint failing; a resume runs it again.
    Unfinished,
}

impl TaskStage {
    pub fn label(self) -> String {
        match self {
            TaskStage::Queued => "queued".into(),
            TaskStage::Guiding => "guiding".into(),
            TaskStage::Coding => "coding".into(),
            TaskStage::Testing => "testing".into(),
            TaskStage::Analysing => "analysing".into(),
            TaskStage::Remembering => "memory".into(),
            TaskStage::Paused => "paused".into(),
            TaskStage::Solved(k) => format!("solved @{k}"),
            TaskStage::Unverified => "unverified".into(),
            TaskStage::Failed => "failed".into(),
            TaskStage::Error => "error".into(),
            TaskStage::Unfinished => "endpoint failed".into(),
        }
    }

    pub fn is_done(self) -> bool {
        matches!(
            self,
            TaskStage::Solved(_) | TaskStage::Unverified | TaskStage::Failed | TaskStage::Error | TaskStage::Unfinished
        )
    }
}

/// One agent call: the request, the answer as it streams in, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub call_id: u64,
    pub agent: Agent,
    pub purpose: Purpose,
    pub messages: Vec<Message>,
    pub text: String,
    pub done: bool,
    pub error: Option<String>,
    pub retries: u32,
    pub latency_ms: Option<u64>,
    /// What was adjusted or went wrong around it (fitted to the context, cut off by length).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Iteration {
    pub number: u32,
    pub calls: Vec<Call>,
    pub code: Option<String>,
    pub diff: Option<String>,
    pub problem: Option<ExtractProblem>,
    pub visible: Option<RunReport>,
    /// The run of the model's own tests (Reflexion).
    pub own: Option<RunReport>,
    /// Passed and total hidden tests: counts only, as the agents saw nothing more.
    pub hidden: Option<(usize, usize)>,
    pub memory_query: Option<String>,
    /// What memory offered (`Some(None)`: asked, nothing above the threshold).
    pub memory_hit: Option<Option<crate::agents::Retrieved>>,
}

impl Iteration {
    /// The latest call for `purpose` in this iteration.
    pub fn call(&self, purposes: &[Purpose]) -> Option<&Call> {
        self.calls.iter().rev().find(|c| purposes.contains(&c.purpose))
    }

    /// The latest call of an agent role in this iteration (keyword extraction aside).
    pub fn call_of(&self, agent: crate::agents::Agent) -> Option<&Call> {
        self.calls
            .iter()
            .rev()
            .find(|c| c.purpose.agent() == agent && c.purpose != Purpose::Keywords)
    }

    pub fn visible_counts(&self) -> Option<(usize, usize)> {
        self.visible.as_ref().map(|r| (r.passed(), r.tests.len()))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TaskView {
    pub id: String,
    pub entry_point: String,
    pub prompt: String,
    pub visible_tests: Vec<String>,
    /// The tests the model wrote itself (Reflexion).
    pub own_tests: Vec<String>,
    pub hidden_tests: usize,
    pub attempt: u32,
    pub stage: TaskStage,
    pub iterations: Vec<Iteration>,
    pub result: Option<TaskResult>,
    pub started_at: Option<DateTime<Utc>>,
    /// The memory entry this solved task became, or why it did not.
    pub remembered: Option<Result<String, String>>,
    /// Notes for the next call (a trace and a fitting are recorded just before its request).
    pending_notes: Vec<String>,
    /// Held by the debugger: why, and the effect it will run next.
    pub paused: Option<(String, Pending)>,
    /// The stage to show again when the task goes on.
    stage_before_pause: Option<TaskStage>,
    /// What people changed, in order: the field and the diff.
    pub interventions: Vec<(u32, String, String)>,
    /// The visible test an agent flagged as contradicting the specification (`--allow-flag`).
    pub flagged: Option<String>,
}

impl TaskView {
    fn queued(id: &str) -> TaskView {
        TaskView {
            id: id.to_string(),
            entry_point: String::new(),
            prompt: String::new(),
            visible_tests: Vec::new(),
            own_tests: Vec::new(),
            hidden_tests: 0,
            attempt: 0,
            stage: TaskStage::Queued,
            iterations: Vec::new(),
            result: None,
            started_at: None,
            remembered: None,
            pending_notes: Vec::new(),
            paused: None,
            stage_before_pause: None,
            interventions: Vec::new(),
            flagged: None,
        }
    }

    /// The Guide's newest finished guidance (what a debugger edit of the guidance starts from).
    pub fn latest_guidance(&self) -> Option<&str> {
        self.iterations
            .iter()
            .rev()
            .flat_map(|it| it.calls.iter().rev())
            .find(|c| c.done && c.error.is_none() && matches!(c.purpose, Purpose::GuideInit | Purpose::GuideRefine))
            .map(|c| c.text.as_str())
    }

    /// The guidance the Debug agent worked from in iteration `i` (0-based): the first Guide answer
    /// for the first iteration, the refinement made at the end of the one before for the others.
    /// Other strategies' Guide-role answer (a plan, own tests) shows instead: the iteration's own,
    /// or the latest before it (Reflexion writes its tests once, in the first iteration).
    pub fn guidance_for(&self, i: usize) -> Option<&Call> {
        let own = [Purpose::GuideInit, Purpose::Plan, Purpose::SelfTests, Purpose::MapPlan];
        if let Some(call) = self.iterations.get(i)?.call(&own) {
            return Some(call);
        }
        if i > 0
            && let Some(call) = self.iterations[i - 1].call(&[Purpose::GuideRefine])
        {
            return Some(call);
        }
        self.iterations[..i].iter().rev().find_map(|it| it.call(&own))
    }

    pub fn iteration_mut(&mut self, number: u32) -> &mut Iteration {
        if let Some(pos) = self.iterations.iter().position(|it| it.number == number) {
            return &mut self.iterations[pos];
        }
        let pos = self.iterations.len();
        self.iterations.push(Iteration {
            number,
            ..Iteration::default()
        });
        &mut self.iterations[pos]
    }

    fn call_mut(&mut self, call_id: u64) -> Option<&mut Call> {
        self.iterations
            .iter_mut()
            .rev()
            .flat_map(|it| it.calls.iter_mut())
            .find(|c| c.call_id == call_id)
    }

    /// The latest visible-test counts (for the sweep grid).
    pub fn last_visible(&self) -> Option<(usize, usize)> {
        self.iterations.iter().rev().find_map(Iteration::visible_counts)
    }
}

/// Everything known about one run so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunModel {
    pub manifest: Option<Manifest>,
    pub tasks: Vec<TaskView>,
    index: HashMap<String, usize>,
    pub tokens: BTreeMap<Agent, Tokens>,
    pub first_at: Option<DateTime<Utc>>,
    pub last_at: Option<DateTime<Utc>>,
    pub summary: Option<RunSummary>,
    /// Events applied so far (the replay cursor).
    pub applied: usize,
    /// Tasks already finished before this process resumed the run.
    pub resumed: Vec<String>,
    /// The last debugger command that could not be carried out, and why.
    pub control_error: Option<String>,
    last_seq: Option<u64>,
}

impl RunModel {
    pub fn new() -> RunModel {
        RunModel::default()
    }

    pub fn task(&self, id: &str) -> Option<&TaskView> {
        self.index.get(id).map(|&i| &self.tasks[i])
    }

    fn task_mut(&mut self, id: &str) -> &mut TaskView {
        let i = match self.index.get(id) {
            Some(&i) => i,
            None => {
                self.tasks.push(TaskView::queued(id));
                self.index.insert(id.to_string(), self.tasks.len() - 1);
                self.tasks.len() - 1
            }
        };
        &mut self.tasks[i]
    }

    pub fn finished(&self) -> usize {
        self.tasks.iter().filter(|t| t.stage.is_done()).count()
    }

    pub fn solved(&self) -> usize {
        self.tasks.iter().filter(|t| matches!(t.stage, TaskStage::Solved(_))).count()
    }

    /// Tasks first solved at each iteration.
    pub fn solved_by_iteration(&self) -> BTreeMap<u32, usize> {
        let mut map = BTreeMap::new();
        for t in &self.tasks {
            if let TaskStage::Solved(k) = t.stage {
                *map.entry(k).or_default() += 1;
            }
        }
        map
    }

    pub fn is_live(&self) -> bool {
        self.manifest.is_some() && self.summary.is_none()
    }

    /// Applies one event. An event already applied (same or lower sequence number) is ignored, so
    /// a live view can read the recorded prefix and then the live stream without double counting.
    pub fn apply(&mut self, envelope: &Envelope) {
        if self.last_seq.is_some_and(|s| envelope.seq <= s) {
            return;
        }
        self.last_seq = Some(envelope.seq);
        self.applied += 1;
        self.first_at.get_or_insert(envelope.at);
        self.last_at = Some(envelope.at);
        match envelope.event.part() {
            EventPart::Call => return self.apply_call(envelope),
            EventPart::Task => return self.apply_task(envelope),
            EventPart::Debugger => return self.apply_debugger(envelope),
            EventPart::Run => {}
        }
        match &envelope.event {
            Event::RunStarted { manifest } => {
                for id in &manifest.dataset.selected {
                    self.task_mut(id);
                }
                self.manifest = Some((**manifest).clone());
            }
            Event::RunResumed { finished } => {
                self.resumed = finished.clone();
                self.summary = None;
            }
            Event::RunFinished { summary } => {
                self.summary = Some(summary.clone());
            }
            Event::ControlError { message } => self.control_error = Some(message.clone()),
            _ => {}
        }
    }

    /// An agent's call: its request, streamed tokens, retries, answer or failure, and what the engine made of it.
    fn apply_call(&mut self, envelope: &Envelope) {
        match &envelope.event {
            Event::AgentRequest {
                task_id,
                iteration,
                call_id,
                agent,
                purpose,
                messages,
                ..
            } => {
                let t = self.task_mut(task_id);
                t.stage = match agent {
                    Agent::Guide => TaskStage::Guiding,
                    Agent::Debug => TaskStage::Coding,
                    Agent::Feedback => TaskStage::Analysing,
                };
                let notes = std::mem::take(&mut t.pending_notes);
                t.iteration_mut(*iteration).calls.push(Call {
                    call_id: *call_id,
                    agent: *agent,
                    purpose: *purpose,
                    messages: messages.clone(),
                    text: String::new(),
                    done: false,
                    error: None,
                    retries: 0,
                    latency_ms: None,
                    notes,
                });
            }
            Event::AgentTokens { task_id, call_id, text } => {
                if let Some(c) = self.task_mut(task_id).call_mut(*call_id) {
                    c.text.push_str(text);
                }
            }
            Event::AgentRetry { task_id, call_id, .. } => {
                if let Some(c) = self.task_mut(task_id).call_mut(*call_id) {
                    // The partial answer is void; the next attempt streams from the start.
                    c.text.clear();
                    c.retries += 1;
                }
            }
            Event::AgentResponse {
                task_id,
                call_id,
                agent,
                text,
                usage,
                latency_ms,
                finish_reason,
                ..
            } => {
                self.tokens.entry(*agent).or_default().add(usage);
                if let Some(c) = self.task_mut(task_id).call_mut(*call_id) {
                    c.text = text.clone();
                    c.done = true;
                    c.latency_ms = Some(*latency_ms);
                    if finish_reason.as_deref() == Some("length") {
                        c.notes.push(crate::agents::budget::CUT_OFF.to_string());
                    }
                }
            }
            Event::TestTraced { task_id, test, trace, .. } => {
                // Shown with the verdict call it leads to, as a note.
                let note = format!("traced `{test}`: {} blocks", trace.records.len());
                self.task_mut(task_id).pending_notes.push(note);
            }
            Event::SelfTests {
                task_id, kept, dropped, ..
            } => {
                let t = self.task_mut(task_id);
                t.own_tests = kept.clone();
                t.pending_notes
                    .push(format!("wrote {} own tests ({} dropped)", kept.len(), dropped.len()));
            }
            Event::AnswerMalformed {
                task_id, error, handled, ..
            } => {
                let note = format!("the last answer could not be read ({error}): {handled}");
                self.task_mut(task_id).pending_notes.push(note);
            }
            Event::StrategyNote { task_id, text, .. } => {
                self.task_mut(task_id).pending_notes.push(text.clone());
            }
            Event::PlansRanked { task_id, plans, .. } => {
                let order: Vec<String> = plans.iter().map(|(n, c)| format!("plan {n} ({c})")).collect();
                self.task_mut(task_id)
                    .pending_notes
                    .push(format!("plans by confidence: {}", order.join(", ")));
            }
            Event::PromptFitted {
                task_id,
                context,
                prompt_tokens,
                max_tokens,
                asked_max_tokens,
                trimmed,
                ..
            } => {
                self.task_mut(task_id).pending_notes.push(crate::agents::budget::describe(
                    *context,
                    *prompt_tokens,
                    *max_tokens,
                    *asked_max_tokens,
                    trimmed,
                ));
            }
            Event::AgentFailed {
                task_id, call_id, error, ..
            } => {
                if let Some(c) = self.task_mut(task_id).call_mut(*call_id) {
                    c.done = true;
                    c.error = Some(error.to_string());
                }
            }
            _ => {}
        }
    }

    /// A task's progress: code, tests, memory, its end.
    fn apply_task(&mut self, envelope: &Envelope) {
        match &envelope.event {
            Event::TaskStarted {
                task_id,
                attempt,
                entry_point,
                prompt,
                visible_tests,
                hidden_tests,
            } => {
                let t = self.task_mut(task_id);
                *t = TaskView {
                    entry_point: entry_point.clone(),
                    prompt: prompt.clone(),
                    visible_tests: visible_tests.clone(),
                    hidden_tests: *hidden_tests,
                    attempt: *attempt,
                    stage: TaskStage::Guiding,
                    started_at: Some(envelope.at),
                    ..TaskView::queued(task_id)
                };
            }
            Event::IterationStarted { task_id, iteration } => {
                self.task_mut(task_id).iteration_mut(*iteration);
            }
            Event::CodeExtracted {
                task_id,
                iteration,
                code,
                diff,
                problem,
            } => {
                let it = self.task_mut(task_id).iteration_mut(*iteration);
                it.code = code.clone();
                it.diff = diff.clone();
                it.problem = problem.clone();
            }
            Event::TestsStarted { task_id, .. } => {
                self.task_mut(task_id).stage = TaskStage::Testing;
            }
            Event::TestsRun {
                task_id,
                iteration,
                suite,
                passed,
                total,
                report,
            } => {
                let it = self.task_mut(task_id).iteration_mut(*iteration);
                match suite {
                    Suite::Visible => it.visible = Some(report.clone()),
                    Suite::Hidden => it.hidden = Some((*passed, *total)),
                    Suite::Own => it.own = Some(report.clone()),
                    // What a printed run showed goes to the prompts that ask about it.
                    Suite::Printed => {}
                }
            }
            Event::MemoryQuery { task_id, iteration, query } => {
                let t = self.task_mut(task_id);
                t.stage = TaskStage::Remembering;
                t.iteration_mut(*iteration).memory_query = Some(query.clone());
            }
            Event::MemoryHit { task_id, iteration, hit } => {
                self.task_mut(task_id).iteration_mut(*iteration).memory_hit = Some(hit.clone());
            }
            Event::MemoryStored { task_id, entry_id, error } => {
                self.task_mut(task_id).remembered = Some(match (entry_id, error) {
                    (Some(id), _) => Ok(id.clone()),
                    (None, e) => Err(e.clone().unwrap_or_default()),
                });
            }
            Event::TaskFinished { result } => {
                let t = self.task_mut(&result.task_id);
                t.stage = match result.status {
                    // (A record from before rgd said "unverified" is shown as it would be now.)
                    TaskStatus::Solved if result.best_effort.is_some() => TaskStage::Unverified,
                    TaskStatus::Solved => TaskStage::Solved(result.first_pass_iteration.unwrap_or(result.iterations)),
                    TaskStatus::Unverified => TaskStage::Unverified,
                    TaskStatus::Failed => TaskStage::Failed,
                    TaskStatus::Error => TaskStage::Error,
                    TaskStatus::EndpointFailed => TaskStage::Unfinished,
                };
                t.result = Some(result.clone());
            }
            _ => {}
        }
    }

    /// What the debugger and the people at it did to a task: a pause, going on, an edit by hand, a test flagged.
    fn apply_debugger(&mut self, envelope: &Envelope) {
        match &envelope.event {
            Event::Paused {
                task_id, reason, pending, ..
            } => {
                let t = self.task_mut(task_id);
                if t.stage != TaskStage::Paused {
                    t.stage_before_pause = Some(t.stage);
                }
                t.stage = TaskStage::Paused;
                t.paused = Some((reason.clone(), pending.clone()));
                // Code edited by hand is the iteration's code from now on (the Code pane shows it).
                if let (Pending::Tests { code, .. }, Some(it)) = (pending, t.iterations.last_mut())
                    && it.code.as_ref().is_some_and(|c| c != code)
                {
                    it.code = Some(code.clone());
                }
            }
            Event::Resumed { task_id, .. } => {
                let t = self.task_mut(task_id);
                t.paused = None;
                if let Some(stage) = t.stage_before_pause.take() {
                    t.stage = stage;
                }
            }
            Event::Intervened {
                task_id,
                iteration,
                field,
                diff,
            } => {
                let t = self.task_mut(task_id);
                t.interventions.push((*iteration, field.clone(), diff.clone()));
                t.pending_notes.push(format!("edited by hand: {field}"));
            }
            Event::TestFlagged { task_id, test, reason, .. } => {
                let t = self.task_mut(task_id);
                t.pending_notes
                    .push(format!("⚑ flagged as contradicting the specification: {test} ({reason})"));
                t.flagged = Some(test.clone());
            }
            _ => {}
        }
    }

    /// Seconds between the first and the last event.
    pub fn elapsed_secs(&self) -> f64 {
        match (self.first_at, self.last_at) {
            (Some(a), Some(b)) => (b - a).num_milliseconds().max(0) as f64 / 1000.0,
            _ => 0.0,
        }
    }
}
