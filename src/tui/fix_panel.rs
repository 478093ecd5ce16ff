//! `rgd fix --tui`: the fix's own state beside the attempt being watched. It holds the suspects
//! (ranked), every attempt with its outcome, the notes, and the end with its diff, all from the
//! fix's events (`repo::fix::event`), the same the headless printer prints. Each attempt's run is
//! followed through its journal like a detached run, so the run's panes are the usual ones (the
//! app does that when `next` says so).

use crate::repo::fix::event::{FixEvent, Suspect};

/// One attempt: a function repaired (on top of a pair's first, if any), and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRow {
    pub target: String,
    pub on_top_of: Option<String>,
    pub run_id: Option<String>,
    /// `None` while it runs.
    pub outcome: Option<String>,
    pub fixed: bool,
    /// Passed with the program in the tests' process: never shown as fixed.
    pub unverified: bool,
}

impl AttemptRow {
    fn started(target: &str, on_top_of: Option<&String>) -> AttemptRow {
        AttemptRow {
            target: target.to_string(),
            on_top_of: on_top_of.cloned(),
            run_id: None,
            outcome: None,
            fixed: false,
            unverified: false,
        }
    }
}

#[derive(Debug, Default)]
pub struct FixPanel {
    pub suspects: Vec<Suspect>,
    /// How many suspects are repaired one at a time.
    pub candidates: usize,
    pub visible: usize,
    pub hidden: usize,
    pub attempts: Vec<AttemptRow>,
    pub notes: Vec<String>,
    /// The end: the functions whose repair fixed it (none: not fixed), and the diff.
    pub finished: Option<(Option<Vec<String>>, String)>,
}

/// What a suspect's row shows of its attempts: running, fixed, not fixed, or untried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Untried,
    Running,
    Fixed,
    /// Passed only in the tests' process.
    Unverified,
    Failed,
}

impl FixPanel {
    pub fn apply(&mut self, event: &FixEvent) {
        match event {
            FixEvent::Suspects {
                suspects,
                candidates,
                visible,
                hidden,
            } => {
                self.suspects = suspects.clone();
                self.candidates = *candidates;
                (self.visible, self.hidden) = (*visible, *hidden);
            }
            FixEvent::Trying { target, .. } => self.attempts.push(AttemptRow::started(target, None)),
            FixEvent::TryingPair { target, on_top_of } => self.attempts.push(AttemptRow::started(target, Some(on_top_of))),
            FixEvent::Running { run_id, .. } => {
                if let Some(last) = self.attempts.last_mut() {
                    last.run_id = Some(run_id.clone());
                }
            }
            FixEvent::Tried {
                outcome,
                fixed,
                unverified,
                ..
            } => {
                if let Some(last) = self.attempts.last_mut() {
                    last.outcome = Some(outcome.clone());
                    last.fixed = *fixed;
                    last.unverified = *unverified;
                }
            }
            FixEvent::Note { text } => self.notes.push(text.clone()),
            FixEvent::Finished { fixed_by, diff, .. } => self.finished = Some((fixed_by.clone(), diff.clone())),
        }
    }

    /// How the suspect's single-function attempt stands.
    pub fn mark(&self, target: &str) -> Mark {
        match self.attempts.iter().find(|a| a.target == target && a.on_top_of.is_none()) {
            None => Mark::Untried,
            Some(a) if a.outcome.is_none() => Mark::Running,
            Some(a) if a.fixed => Mark::Fixed,
            Some(a) if a.unverified => Mark::Unverified,
            Some(_) => Mark::Failed,
        }
    }

    /// The pairs tried, as "first + second" with their attempt.
    pub fn pairs(&self) -> impl Iterator<Item = &AttemptRow> {
        self.attempts.iter().filter(|a| a.on_top_of.is_some())
    }
}

/// What the app shows next after a fix event: the new attempt's run, followed from its start, or
/// the end (the diff, or why not).
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Follow { run_id: String, task_id: String },
    End { title: String, lines: Vec<String> },
}

impl FixPanel {
    /// Applies `event`; what the app should show next, if anything changes there.
    pub fn next(&mut self, event: FixEvent) -> Option<Next> {
        self.apply(&event);
        match event {
            FixEvent::Running { run_id, task_id } => Some(Next::Follow { run_id, task_id }),
            FixEvent::Finished {
                fixed_by,
                diff,
                unverified,
                ..
            } => Some(match (fixed_by, unverified) {
                (by, Some(which)) => Next::End {
                    title: format!(
                        " unverified: {which} passed only in the tests' process{} (q closes) ",
                        if by.is_some() { ", taken (--allow-in-process)" } else { "" }
                    ),
                    lines: match by {
                        Some(_) => diff.lines().map(str::to_string).collect(),
                        None => self.attempts.iter().map(attempt_line).collect(),
                    },
                },
                (Some(by), None) => Next::End {
                    title: format!(" fixed by repairing {} (↑↓ scroll, q closes) ", by.join(" and ")),
                    lines: diff.lines().map(str::to_string).collect(),
                },
                (None, None) => Next::End {
                    title: " not fixed (q closes) ".to_string(),
                    lines: self.attempts.iter().map(attempt_line).collect(),
                },
            }),
            _ => None,
        }
    }
}

/// "target: outcome", or "first + target: outcome" for a pair.
pub fn attempt_line(a: &AttemptRow) -> String {
    let who = match &a.on_top_of {
        Some(first) => format!("{first} + {}", a.target),
        None => a.target.clone(),
    };
    format!("{who}: {}", a.outcome.as_deref().unwrap_or("running"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suspect(target: &str) -> Suspect {
        Suspect {
            target: target.into(),
            line: 1,
            score: 1.0,
            why: String::new(),
        }
    }

    #[test]
    fn each_suspect_is_marked_by_its_own_attempt_and_a_pair_is_listed_apart() {
        let mut p = FixPanel::default();
        p.apply(&FixEvent::Suspects {
            suspects: vec![suspect("m.py::f"), suspect("m.py::g"), suspect("m.py::h")],
            candidates: 3,
            visible: 1,
            hidden: 2,
        });
        let trying = |target: &str, on: Option<&str>| match on {
            None => FixEvent::Trying {
                target: target.into(),
                nth: 1,
                of: 3,
                why: String::new(),
            },
            Some(first) => FixEvent::TryingPair {
                target: target.into(),
                on_top_of: first.into(),
            },
        };
        let tried = |target: &str, on: Option<&str>, fixed| FixEvent::Tried {
            target: target.into(),
            on_top_of: on.map(str::to_string),
            outcome: if fixed { "fixed" } else { "not fixed: it breaks t" }.into(),
            fixed,
            unverified: false,
        };
        p.apply(&trying("m.py::f", None));
        assert_eq!(p.mark("m.py::f"), Mark::Running);
        p.apply(&tried("m.py::f", None, false));
        p.apply(&trying("m.py::g", None));
        p.apply(&tried("m.py::g", None, false));
        p.apply(&trying("m.py::g", Some("m.py::f")));
        p.apply(&tried("m.py::g", Some("m.py::f"), true));
        assert_eq!(p.mark("m.py::f"), Mark::Failed);
        assert_eq!(p.mark("m.py::g"), Mark::Failed, "failed alone; the pair does not mark it");
        assert_eq!(p.mark("m.py::h"), Mark::Untried);
        let pairs: Vec<String> = p.pairs().map(attempt_line).collect();
        assert_eq!(pairs, ["m.py::f + m.py::g: fixed"]);
    }

    /// A panel whose one attempt, on `m.py::f`, has started.
    fn trying_f() -> FixPanel {
        let mut p = FixPanel::default();
        p.apply(&FixEvent::Trying {
            target: "m.py::f".into(),
            nth: 1,
            of: 1,
            why: String::new(),
        });
        p
    }

    #[test]
    fn an_unverified_repair_is_never_marked_fixed_and_the_end_says_unverified() {
        let mut p = trying_f();
        p.apply(&FixEvent::Tried {
            target: "m.py::f".into(),
            on_top_of: None,
            outcome: "unverified: passed with the program in the tests' process (a mock)".into(),
            fixed: false,
            unverified: true,
        });
        assert_eq!(p.mark("m.py::f"), Mark::Unverified);
        let end = p.next(FixEvent::Finished {
            fixed_by: None,
            diff: String::new(),
            tried: 1,
            unverified: Some("m.py::f (in-process: a mock)".into()),
        });
        let Some(Next::End { title, .. }) = end else { panic!("{end:?}") };
        assert!(title.contains("unverified") && !title.contains("fixed by"), "{title}");
    }

    #[test]
    fn a_run_is_followed_from_its_start_and_the_end_shows_the_diff_or_every_attempt() {
        let mut p = trying_f();
        let next = p.next(FixEvent::Running {
            run_id: "01R".into(),
            task_id: "m.py::f".into(),
        });
        assert_eq!(
            next,
            Some(Next::Follow {
                run_id: "01R".into(),
                task_id: "m.py::f".into()
            })
        );
        assert_eq!(p.attempts[0].run_id.as_deref(), Some("01R"));
        p.apply(&FixEvent::Tried {
            target: "m.py::f".into(),
            on_top_of: None,
            outcome: "not fixed: it breaks t.py::test_b".into(),
            fixed: false,
            unverified: false,
        });
        let not_fixed = p.clone_end(None);
        assert_eq!(
            not_fixed,
            Some(Next::End {
                title: " not fixed (q closes) ".into(),
                lines: vec!["m.py::f: not fixed: it breaks t.py::test_b".into()]
            })
        );
        let Some(Next::End { title, lines }) = p.clone_end(Some("--- a/m.py\n+++ b/m.py")) else {
            panic!()
        };
        assert!(title.contains("fixed by repairing m.py::f"), "{title}");
        assert_eq!(lines, ["--- a/m.py", "+++ b/m.py"]);
    }

    impl FixPanel {
        fn clone_end(&self, diff: Option<&str>) -> Option<Next> {
            let mut p = FixPanel {
                attempts: self.attempts.clone(),
                ..FixPanel::default()
            };
            p.next(FixEvent::Finished {
                fixed_by: diff.map(|_| vec!["m.py::f".to_string()]),
                diff: diff.unwrap_or_default().to_string(),
                tried: 1,
                unverified: None,
            })
        }
    }
}
