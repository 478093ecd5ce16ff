//! The sweep screen: the table of tasks, its selection, filter and sort.

use super::super::action::Action;
use super::super::app_event::AppEvent;
use super::super::modal::{Filter, Modal};
use super::super::model::{RunModel, TaskStage, TaskView};
use super::{Outbox, moved, typed};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    Order,
    Status,
    Iterations,
    Time,
}

impl SortBy {
    fn next(self) -> SortBy {
        match self {
            SortBy::Order => SortBy::Status,
            SortBy::Status => SortBy::Iterations,
            SortBy::Iterations => SortBy::Time,
            SortBy::Time => SortBy::Order,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortBy::Order => "order",
            SortBy::Status => "status",
            SortBy::Iterations => "iterations",
            SortBy::Time => "time",
        }
    }
}

#[derive(Debug, Default)]
pub struct SweepState {
    pub selected: usize,
    pub filter: String,
    pub sort: Option<SortBy>,
}

impl SweepState {
    /// The table's rows after filter and sort: indexes into `model.tasks`.
    pub fn visible_tasks(&self, model: &RunModel) -> Vec<usize> {
        let needle = self.filter.to_lowercase();
        let tasks = &model.tasks;
        let mut rows: Vec<usize> = (0..tasks.len())
            .filter(|&i| needle.is_empty() || tasks[i].id.to_lowercase().contains(&needle) || tasks[i].stage.label().contains(&needle))
            .collect();
        match self.sort {
            None | Some(SortBy::Order) => {}
            Some(SortBy::Status) => rows.sort_by_key(|&i| tasks[i].stage),
            Some(SortBy::Iterations) => rows.sort_by_key(|&i| std::cmp::Reverse(tasks[i].iterations.len())),
            Some(SortBy::Time) => rows.sort_by(|&a, &b| {
                let secs = |t: &TaskView| t.result.as_ref().map(|r| r.seconds).unwrap_or(0.0);
                secs(&tasks[b]).total_cmp(&secs(&tasks[a]))
            }),
        }
        rows
    }

    /// The selected task's id.
    pub fn selected_task(&self, model: &RunModel) -> Option<String> {
        self.visible_tasks(model).get(self.selected).map(|&i| model.tasks[i].id.clone())
    }

    pub fn handle(&mut self, action: Action, model: &RunModel, page: usize, out: &mut Outbox) {
        let rows = self.visible_tasks(model);
        if let Some(to) = moved(self.selected, &action, rows.len(), page) {
            self.selected = to;
            return;
        }
        match action {
            Action::StartFilter => out.send(AppEvent::Popup(Modal::Filter(Filter::Tasks))),
            Action::CycleSort => self.sort = Some(self.sort.unwrap_or(SortBy::Order).next()),
            Action::Enter => {
                if let Some(&i) = rows.get(self.selected) {
                    out.send(AppEvent::OpenTask(model.tasks[i].id.clone()));
                }
            }
            _ => {}
        }
    }

    /// A click on row `index` of the table: selects it, or opens it when it was selected.
    pub fn click(&mut self, index: usize, model: &RunModel, out: &mut Outbox) {
        if index < self.visible_tasks(model).len() {
            if self.selected == index {
                self.handle(Action::Enter, model, 0, out);
            } else {
                self.selected = index;
            }
        }
    }

    /// Typing the filter; `Some(())` when the input ended.
    pub fn filter_key(&mut self, action: &Action) -> Option<()> {
        let ended = typed(&mut self.filter, action);
        if ended == Some(false) {
            self.filter.clear();
        }
        self.selected = 0;
        ended.map(|_| ())
    }
}

/// Tasks that have not finished, for the header.
pub fn stage_counts(model: &RunModel) -> [(TaskStage, usize); 3] {
    let count = |f: &dyn Fn(TaskStage) -> bool| model.tasks.iter().filter(|t| f(t.stage)).count();
    [
        (TaskStage::Queued, count(&|p| p == TaskStage::Queued)),
        (TaskStage::Coding, count(&|p| !p.is_done() && p != TaskStage::Queued)),
        (TaskStage::Failed, count(&|p| matches!(p, TaskStage::Failed | TaskStage::Error))),
    ]
}
