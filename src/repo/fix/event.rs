//! What `rgd fix` reports as it works, as data: the suspects, each attempt as it starts and ends,
//! notes, and the end with its diff. The headless printer and the TUI's fix panel are both
//! subscribers (one direction of data); the fix record keeps the same events.

use serde::{Deserialize, Serialize};

use crate::repo::locate::Candidate;

/// One suspect as shown: where, how sure, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suspect {
    pub target: String,
    pub line: u32,
    pub score: f64,
    pub why: String,
}

impl Suspect {
    pub fn of(c: &Candidate, failing_total: usize) -> Suspect {
        Suspect {
            target: c.target(),
            line: c.line,
            score: c.score,
            why: c.why(failing_total),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FixEvent {
    /// The ranking, best first (as many as the attempts may reach), and the tests' split.
    Suspects {
        suspects: Vec<Suspect>,
        candidates: usize,
        visible: usize,
        hidden: usize,
    },
    /// The agents start on `target`, the `nth` of `of` suspects, ranked there for `why`.
    Trying {
        target: String,
        nth: usize,
        of: usize,
        why: String,
    },
    /// The agents start on `target` on top of `on_top_of`'s staged repair (a pair).
    TryingPair { target: String, on_top_of: String },
    /// The attempt's run is prepared: a view may follow its journal.
    Running { run_id: String, task_id: String },
    /// The attempt ended: `outcome` is "fixed" or why not.
    Tried {
        target: String,
        on_top_of: Option<String>,
        outcome: String,
        /// Fixed with a verdict reached in a process of its own (never an unverified one).
        fixed: bool,
        /// It passed, but with the program in the tests' process: unverified.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unverified: bool,
    },
    /// A line worth telling (a candidate skipped, a repair not staged, the context retrieved).
    Note { text: String },
    /// The end: the functions whose repair fixed it (none: not fixed) and the one diff.
    Finished {
        fixed_by: Option<Vec<String>>,
        diff: String,
        tried: usize,
        /// A repair that passed only with the program in the tests' process: "TARGET
        /// (in-process: why)". Never counted as fixed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unverified: Option<String>,
    },
}

impl FixEvent {
    /// The line the headless printer writes on stderr (none for what only a view follows).
    pub fn line(&self) -> Option<String> {
        Some(match self {
            FixEvent::Suspects { .. } | FixEvent::Running { .. } => return None,
            FixEvent::TryingPair { target, on_top_of } => format!("\npair: {target} on top of {on_top_of}'s repair"),
            FixEvent::Trying { target, nth, of, why } => format!("\ncandidate {nth}/{of}: {target} ({why})"),
            FixEvent::Tried {
                target,
                on_top_of: Some(first),
                outcome,
                ..
            } => format!("pair {first} + {target}: {outcome}"),
            FixEvent::Tried { target, outcome, .. } => format!("candidate {target}: {outcome}"),
            FixEvent::Note { text } => text.clone(),
            FixEvent::Finished {
                fixed_by,
                unverified: Some(which),
                ..
            } => format!(
                "0/1 fixed, 1 unverified: the repair of {which} passed with the program in the tests' process, which rgd cannot vouch for; {}",
                match fixed_by {
                    Some(_) => "taken all the same (--allow-in-process)",
                    None => "--allow-in-process takes it",
                }
            ),
            FixEvent::Finished { fixed_by: None, tried, .. } => format!(
                "not fixed: no repair of the first {tried} candidates (or of their pairs) made every failing test pass without breaking a passing one"
            ),
            FixEvent::Finished { fixed_by: Some(by), .. } => match by.as_slice() {
                [first, second] => {
                    format!("fixed by repairing {first} and {second} together (a pair: no single function's repair fixed it)")
                }
                _ => format!("fixed by repairing {}", by.join(" and ")),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_says_it_is_one_and_a_view_only_event_prints_nothing() {
        let pair = FixEvent::Finished {
            fixed_by: Some(vec!["m.py::f".into(), "m.py::g".into()]),
            diff: String::new(),
            tried: 3,
            unverified: None,
        };
        assert!(pair.line().unwrap().contains("together (a pair"));
        let running = FixEvent::Running {
            run_id: "r".into(),
            task_id: "t".into(),
        };
        assert_eq!(running.line(), None);
        // Recorded as tagged JSON, read back the same.
        let text = serde_json::to_string(&pair).unwrap();
        assert!(text.contains(r#""event":"finished""#), "{text}");
        assert_eq!(serde_json::from_str::<FixEvent>(&text).unwrap(), pair);
    }
}
