//! The home screen: the recorded runs, the selected one, runs marked for a comparison, and the
//! search across runs. Opening, comparing and searching run as background jobs.

use std::path::Path;

use super::super::action::Action;
use super::super::app_event::AppEvent;
use super::super::form::Form;
use super::super::modal::{Filter, Modal};
use super::super::run_list::RunRow;
use super::{Outbox, typed};

#[derive(Debug, Default)]
pub struct HomeScreen {
    pub selected: usize,
    /// The search across runs being typed.
    pub query: String,
}

/// What the home screen reads and changes beyond itself: the run list and the marks (the compare
/// popup and the views read them too), and what a new run needs.
pub struct HomeCx<'a> {
    pub runs: &'a [RunRow],
    pub marked: &'a mut Vec<String>,
    pub dir: Option<&'a Path>,
    pub info: &'a [(String, String)],
    pub can_launch: bool,
    pub live: bool,
}

impl HomeScreen {
    pub fn handle(&mut self, action: Action, cx: HomeCx<'_>, out: &mut Outbox) {
        let n = cx.runs.len();
        match action {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            Action::Top => self.selected = 0,
            Action::Bottom => self.selected = n.saturating_sub(1),
            Action::NewRun if cx.live => out.status("a run is already live in this window"),
            Action::NewRun if cx.can_launch => out.send(AppEvent::Popup(Modal::Form(Box::new(Form::new(cx.info))))),
            Action::Refresh => refresh(cx.dir, out),
            Action::OpenMemory => out.send(AppEvent::OpenMemory),
            Action::Mark => {
                if let Some(row) = cx.runs.get(self.selected) {
                    match cx.marked.iter().position(|id| *id == row.run_id) {
                        Some(at) => {
                            cx.marked.remove(at);
                        }
                        None => cx.marked.push(row.run_id.clone()),
                    }
                }
            }
            Action::Compare => super::compare::compare_marked(cx.marked, cx.dir, out),
            Action::StartFilter => {
                self.query.clear();
                out.send(AppEvent::Popup(Modal::Filter(Filter::Runs)));
            }
            Action::Enter => {
                if let Some(row) = cx.runs.get(self.selected) {
                    out.send(AppEvent::OpenRun {
                        run_id: row.run_id.clone(),
                        running: row.state == "running",
                    });
                }
            }
            _ => {}
        }
    }

    /// Typing the search; Enter runs it. `Some(())` when the input ended.
    pub fn query_key(&mut self, action: &Action, dir: Option<&Path>, out: &mut Outbox) -> Option<()> {
        let keep = typed(&mut self.query, action)?;
        if keep && !self.query.trim().is_empty() {
            search_runs(&self.query, dir, out);
        }
        Some(())
    }

    /// The run list changed: the selection stays inside it.
    pub fn listed(&mut self, runs: usize) {
        self.selected = self.selected.min(runs.saturating_sub(1));
    }
}

/// Reads every run's manifest and status (a background job: a home with many runs is slow).
pub fn refresh(dir: Option<&Path>, out: &mut Outbox) {
    let Some(dir) = dir.map(Path::to_path_buf) else { return };
    out.spawn(move || AppEvent::RunsListed(super::super::run_list::load_runs(&crate::store::Home { root: dir })));
}

/// Searches every recorded run (updating the index first) in the background.
fn search_runs(query: &str, dir: Option<&Path>, out: &mut Outbox) {
    let Some(dir) = dir.map(Path::to_path_buf) else { return };
    let query = query.to_string();
    out.status(format!("searching runs for {query:?}…"));
    out.spawn(move || {
        let home = crate::store::Home { root: dir };
        let hits = crate::store::RunIndex::open(&home)
            .and_then(|index| {
                index.update(&home)?;
                index.search(&query, 100)
            })
            .map_err(|e| e.to_string());
        AppEvent::RunsSearched { query, hits }
    });
}

/// The popup of a search's hits.
pub fn hits_popup(query: &str, hits: &[crate::store::RunHit]) -> Modal {
    let lines = hits
        .iter()
        .flat_map(|h| [format!("{}  {}  {}", h.run_id, h.task_id, h.kind), format!("    {}", h.snippet)])
        .collect();
    Modal::Text {
        title: format!(" {} hits for {query:?} (n / N next / previous, Esc closes) ", hits.len()),
        lines,
        scroll: 0,
        targets: (0..hits.len() as u16).map(|i| 2 * i).collect(),
        selected: None,
        flips: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, state: &str) -> RunRow {
        RunRow {
            run_id: id.into(),
            dataset: "sample".into(),
            model: "m".into(),
            strategy: "rgd".into(),
            tasks: 1,
            finished: 1,
            solved: 0,
            created: String::new(),
            state: state.into(),
            slurm: None,
        }
    }

    /// Marks toggle in marking order; Enter asks to open the selected run, followed when it is
    /// still running; a new run while one is live is refused on the status line.
    #[test]
    fn marks_open_and_new_runs() {
        let runs = [row("a", "finished"), row("b", "running")];
        let (mut marked, mut home) = (Vec::new(), HomeScreen::default());
        let mut out = Outbox::new(tokio::sync::mpsc::unbounded_channel().0);
        let mut act = |home: &mut HomeScreen, marked: &mut Vec<String>, action, live| {
            let cx = HomeCx {
                runs: &runs,
                marked,
                dir: None,
                info: &[],
                can_launch: true,
                live,
            };
            home.handle(action, cx, &mut out);
            std::iter::from_fn(|| out.next()).collect::<Vec<_>>()
        };
        act(&mut home, &mut marked, Action::Down, false);
        act(&mut home, &mut marked, Action::Mark, false);
        act(&mut home, &mut marked, Action::Up, false);
        act(&mut home, &mut marked, Action::Mark, false);
        assert_eq!(marked, ["b", "a"]);
        act(&mut home, &mut marked, Action::Mark, false);
        assert_eq!(marked, ["b"]);
        act(&mut home, &mut marked, Action::Bottom, false);
        let opened = act(&mut home, &mut marked, Action::Enter, false);
        assert!(matches!(&opened[..], [AppEvent::OpenRun { run_id, running: true }] if run_id == "b"));
        let refused = act(&mut home, &mut marked, Action::NewRun, true);
        assert!(matches!(&refused[..], [AppEvent::Status(Some(s))] if s.contains("already live")));
        let form = act(&mut home, &mut marked, Action::NewRun, false);
        assert!(matches!(&form[..], [AppEvent::Popup(Modal::Form(_))]));
    }
}
