//! Runs a set of tasks (one or a whole benchmark) under one run id, concurrently, resumably.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;

use super::bus::EventBus;
use super::runner::TaskRunner;
use crate::dataset::Task;
use crate::record::{Event, RecordError, RunRecord, RunState, RunStatus, RunSummary, TaskResult};

pub struct Sweep {
    /// Where the run is recorded (the run store; the sweep only needs its record).
    pub record: Arc<dyn RunRecord>,
    pub bus: Arc<EventBus>,
    pub runner: Arc<TaskRunner>,
    pub tasks: Vec<Arc<Task>>,
    pub concurrency: usize,
    /// Stop starting tasks after this many in a row ended by the endpoint failing (0: never).
    pub halt_after: usize,
}

impl Sweep {
    /// Runs every task not already finished in the store. Finished tasks are never run again;
    /// tasks that had started before a kill run again with a higher attempt number.
    pub async fn run(self, resumed: bool) -> Result<RunSummary, RecordError> {
        let manifest = self.record.manifest()?;
        let finished: HashSet<String> = self
            .record
            .results()?
            .into_iter()
            .filter(TaskResult::is_final)
            .map(|r| r.task_id)
            .collect();
        let mut attempts: HashMap<String, u32> = HashMap::new();
        if resumed {
            attempts = self.record.attempts()?;
            let mut done: Vec<String> = finished.iter().cloned().collect();
            done.sort();
            self.bus.emit(Event::RunResumed { finished: done });
        } else {
            self.bus.emit(Event::RunStarted {
                manifest: Box::new(manifest.clone()),
            });
        }

        let pending: Vec<Arc<Task>> = self.tasks.iter().filter(|t| !finished.contains(&t.id)).cloned().collect();
        let mut status = RunStatus {
            state: RunState::Running,
            pid: std::process::id(),
            tasks: self.tasks.len(),
            finished: finished.len(),
            solved: self.record.results()?.iter().filter(|r| r.solved()).count(),
            updated_at: chrono::Utc::now(),
        };
        self.record.write_status(&status)?;

        let runner = self.runner.clone();
        let bus = self.bus.clone();
        let halted = Arc::new(AtomicBool::new(false));
        let halted_flag = halted.clone();
        let mut results = std::pin::pin!(
            futures::stream::iter(pending)
                .take_while(|_| {
                    let healthy = !bus.broken() && !halted_flag.load(Ordering::SeqCst);
                    async move { healthy }
                })
                .map(|task| {
                    let runner = runner.clone();
                    let attempt = attempts.get(&task.id).copied().unwrap_or(0) + 1;
                    async move { runner.run_task(task, attempt).await }
                })
                .buffer_unordered(self.concurrency.max(1))
        );
        // Tasks ended by the endpoint, in a row; the last such error.
        let mut failing = (0usize, String::new());
        let mut halt_reason = None;
        while let Some(result) = results.next().await {
            let result: TaskResult = result;
            if result.is_final() {
                failing = (0, String::new());
                status.finished += 1;
            } else {
                failing = (failing.0 + 1, result.error.clone().unwrap_or_default());
                if self.halt_after > 0 && failing.0 >= self.halt_after && halt_reason.is_none() {
                    halted.store(true, Ordering::SeqCst);
                    halt_reason = Some(format!(
                        "the endpoint {} failed {} tasks in a row (last: {})",
                        manifest.endpoint, failing.0, failing.1
                    ));
                }
            }
            status.solved += usize::from(result.passed);
            status.updated_at = chrono::Utc::now();
            self.record.write_status(&status)?;
        }

        let all = self.record.results()?;
        let mut summary = RunSummary::compute(
            &manifest.run_id,
            &manifest.dataset.name,
            &manifest.model_label(),
            &manifest.dataset.selected,
            &all,
            manifest.max_iters,
        );
        summary.halted = halt_reason;
        if summary.unfinished.is_empty() {
            self.bus.emit(Event::RunFinished { summary: summary.clone() });
            status.state = RunState::Finished;
        } else {
            status.state = RunState::Interrupted;
        }
        status.updated_at = chrono::Utc::now();
        self.record.write_status(&status)?;
        self.record.flush()?;
        Ok(summary)
    }
}
