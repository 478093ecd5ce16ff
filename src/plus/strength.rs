//! How much stronger a plus dataset's hidden tests are: wrong variants of each reference solution
//! (the single-fault mutants `rgd bench fix` plants, `code::mutate`) run against the base
//! dataset's hidden tests and the plus dataset's; a variant the base accepts and the plus rejects
//! is a wrong program the extra tests catch.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;

use crate::dataset::Task;
use crate::sandbox::{Executor, Limits};

/// What the variants of one task came to.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TaskStrength {
    pub id: String,
    pub variants: usize,
    /// Variants every base hidden test accepts (wrong programs the base judges right) ...
    pub base_accepts: usize,
    /// ... and of those, the ones the plus tests reject.
    pub plus_rejects: usize,
}

async fn accepts(executor: &dyn Executor, task: &Task, program: &str) -> bool {
    let limits = Limits {
        per_test: Duration::from_secs(2),
        max_total: Duration::from_secs(60),
        ..Limits::default()
    };
    super::run_hidden(executor, task, program, &limits)
        .await
        .is_ok_and(|r| r.all_passed())
}

async fn one(executor: Arc<dyn Executor>, base: Task, plus: Task, per_task: usize) -> TaskStrength {
    let mut s = TaskStrength {
        id: base.id.clone(),
        ..TaskStrength::default()
    };
    let Some(reference) = base.canonical.as_deref() else {
        return s;
    };
    for program in super::reduce::spread_mutants(reference, per_task) {
        s.variants += 1;
        if accepts(&*executor, &base, &program).await {
            s.base_accepts += 1;
            if !accepts(&*executor, &plus, &program).await {
                s.plus_rejects += 1;
            }
        }
    }
    s
}

/// Each task of `plus` that `base` has (by id), measured with `per_task` variants, `parallel`
/// tasks at once; in `plus`'s order. A task whose measuring stopped is an error, not a task left
/// out of the counts.
pub async fn measure(
    executor: Arc<dyn Executor>,
    base: &[Task],
    plus: &[Task],
    per_task: usize,
    parallel: usize,
) -> anyhow::Result<Vec<TaskStrength>> {
    let pairs: Vec<(Task, Task)> = plus
        .iter()
        .filter_map(|p| base.iter().find(|b| b.id == p.id).map(|b| (b.clone(), p.clone())))
        .collect();
    futures::stream::iter(pairs)
        .map(|(b, p)| tokio::spawn(one(executor.clone(), b, p, per_task)))
        .buffered(parallel.max(1))
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("a task's variants stopped: {e}"))
}
