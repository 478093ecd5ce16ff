//! Comparing runs from the home screen: the marked runs compared in the background (the text of
//! `rgd compare`, in a popup), and a flipped task's two runs side by side.

use std::path::Path;

use super::super::app_event::AppEvent;
use super::super::modal::{Flip, Modal};
use super::Outbox;

/// The marked runs compared in the background, shown as a popup.
pub fn compare_marked(marked: &[String], dir: Option<&Path>, out: &mut Outbox) {
    if marked.len() < 2 {
        out.status("mark two or more runs (space), then c compares them");
        return;
    }
    let Some(dir) = dir.map(Path::to_path_buf) else { return };
    let ids = marked.to_vec();
    out.status(format!("comparing {} runs…", ids.len()));
    out.spawn(move || {
        let home = crate::store::Home { root: dir };
        let compared = ids
            .iter()
            .map(|id| crate::analysis::RunData::load(&home, id))
            .collect::<anyhow::Result<Vec<_>>>()
            .and_then(|runs| crate::analysis::compare(&runs))
            .map_err(|e| format!("{e:#}"));
        AppEvent::Compared(compared)
    });
}

/// The comparison as a popup, its flipped tasks selectable (n / N) and openable (Enter).
pub fn popup(comparison: &crate::analysis::Comparison) -> Modal {
    let mut lines: Vec<String> = crate::analysis::render(comparison).lines().map(str::to_string).collect();
    let (mut targets, mut flips) = (Vec::new(), Vec::new());
    lines.push(String::new());
    lines.push("flipped tasks (n / N select, Enter shows both runs on it)".into());
    for p in &comparison.paired {
        let by = [(&p.first, &p.only_first), (&p.other, &p.only_other)];
        for (winner, ids) in by {
            for id in ids {
                targets.push(lines.len() as u16);
                lines.push(format!("  {id:<16} solved only by {}", winner.get(..10).unwrap_or(winner)));
                flips.push(Flip {
                    task: id.clone(),
                    runs: [p.first.clone(), p.other.clone()],
                });
            }
        }
    }
    Modal::Text {
        title: format!(" {} runs compared (↑↓ scroll, Esc closes) ", comparison.runs.len()),
        lines,
        scroll: 0,
        targets,
        selected: None,
        flips,
    }
}

/// The flip's two runs on its task: each iteration's tests, and the diff of the final programs.
pub fn show_flip(flip: Flip, dir: Option<&Path>, out: &mut Outbox) {
    let Some(dir) = dir.map(Path::to_path_buf) else { return };
    out.spawn(move || {
        let home = crate::store::Home { root: dir };
        AppEvent::FlipShown(super::super::flip::lines(&home, &flip.runs, &flip.task).map_err(|e| format!("{e:#}")))
    });
}
