//! What a project's test run proves, read from the channel of rgd's pytest plugin
//! (`sandbox/pytest_verdict.py`), never from pytest's printed output: the program under test runs
//! in pytest's process and can print anything, a `PASSED tests/t.py::test_x` line included.
//!
//! The plugin writes one JSON record per line, each with the run's key and a sequence number.
//! Anything else on the channel (a line without the key, a number out of order, a phase reported
//! twice, a line after the closing record) is a line the plugin did not write: the run is
//! tampered. A run without the closing record ended before pytest did: its tests without every
//! phase are not run, and a process that exited by itself there is tampered (`os._exit`).

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

/// One test's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// pytest's node id: `tests/test_core.py::test_render`.
    pub id: String,
    /// passed, failed, error, skipped, or "not run" (the run ended before it).
    pub status: String,
    /// The failure's one-line summary (`AssertionError: assert 1 == 2`).
    pub message: String,
    /// pytest's report of the failure (`--tb=short`), when it failed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.status == "passed"
    }
}

/// One record of the plugin's.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
enum Record {
    Collected {
        ids: Vec<String>,
    },
    CollectError {
        id: String,
        #[serde(default)]
        msg: String,
        #[serde(default)]
        text: String,
    },
    Phase {
        id: String,
        when: String,
        outcome: String,
        #[serde(default)]
        exc: String,
        #[serde(default)]
        msg: String,
    },
    Report {
        id: String,
        when: String,
        text: String,
    },
    Tamper {
        why: String,
    },
    /// The tests handed an isolated target something that is not data (`sandbox/rgd_isolate/`).
    NotIsolated {
        why: String,
        /// Its key in `FALLBACK_CAUSES` (`sandbox/rgd_isolate/`).
        #[serde(default)]
        cause: Option<String>,
    },
    End {},
}

/// The records of one run, checked.
#[derive(Debug, Default)]
pub struct Channel {
    pub collected: Option<Vec<String>>,
    /// A file that failed to import: its message and pytest's report.
    collect_errors: Vec<(String, String, String)>,
    /// (node id, phase) → (outcome, exception type, message).
    phases: HashMap<(String, String), (String, String, String)>,
    /// (node id, phase) → pytest's report and captured output: for a reader, never an outcome.
    reports: HashMap<(String, String), String>,
    /// Why the run counts as tampered (the plugin's findings and the channel's own).
    pub tampered: Vec<String>,
    /// Why the target could not be isolated (the tests handed it something that is not data).
    pub not_isolated: Vec<String>,
    /// The first of those as its cause's key.
    pub cause: Option<String>,
    /// The closing record arrived.
    pub ended: bool,
    /// Records read (a run whose plugin never spoke did not load it).
    pub records: usize,
}

impl Channel {
    /// Checks and reads the channel's text, written under `key`.
    pub fn read(text: &str, key: &str) -> Channel {
        let mut c = Channel::default();
        let mut expected: u64 = 0;
        let mut seen_phase: HashSet<(String, String)> = HashSet::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
                c.tamper("a line on rgd's verdict channel that its plugin did not write (not JSON)");
                continue;
            };
            if value.get("k").and_then(|k| k.as_str()) != Some(key) {
                c.tamper("a line on rgd's verdict channel without the run's key");
                continue;
            }
            if value.get("seq").and_then(|s| s.as_u64()) != Some(expected) {
                c.tamper("a line on rgd's verdict channel out of sequence");
            }
            expected += 1;
            if c.ended {
                c.tamper("a line on rgd's verdict channel after its closing record");
                continue;
            }
            let Ok(record) = serde_json::from_value::<Record>(value) else {
                c.tamper("a record on rgd's verdict channel that its plugin does not write");
                continue;
            };
            c.records += 1;
            match record {
                Record::Collected { ids } => c.collected = Some(ids),
                Record::CollectError { id, msg, text } => c.collect_errors.push((id, msg, text)),
                Record::Phase {
                    id,
                    when,
                    outcome,
                    exc,
                    msg,
                } => {
                    let key = (id, when);
                    if !seen_phase.insert(key.clone()) {
                        c.tamper(&format!("{} of {} was reported twice", key.1, key.0));
                        continue;
                    }
                    c.phases.insert(key, (outcome, exc, msg));
                }
                Record::Report { id, when, text } => {
                    c.reports.entry((id, when)).or_insert(text);
                }
                Record::Tamper { why } => c.tamper(&why),
                Record::NotIsolated { why, cause } => {
                    if c.not_isolated.is_empty() {
                        c.cause = cause;
                    }
                    if !c.not_isolated.contains(&why) {
                        c.not_isolated.push(why);
                    }
                }
                Record::End { .. } => c.ended = true,
            }
        }
        c
    }

    fn tamper(&mut self, why: &str) {
        if !self.tampered.iter().any(|w| w == why) {
            self.tampered.push(why.to_string());
        }
    }

    /// A file that failed to import, with its message (for `ids` of that file).
    pub fn collect_error_of(&self, id: &str) -> Option<(&str, &str)> {
        let file = id.split("::").next().unwrap_or(id);
        self.collect_errors
            .iter()
            .find(|(f, _, _)| f == file || f.is_empty())
            .map(|(_, m, t)| (m.as_str(), t.as_str()))
    }

    /// Messages of every file that failed to import.
    pub fn collect_errors(&self) -> impl Iterator<Item = (&str, &str)> {
        self.collect_errors.iter().map(|(f, m, _)| (f.as_str(), m.as_str()))
    }

    /// One expected test's outcome: passed only when setup, call and teardown all ran and passed.
    pub fn outcome(&self, id: &str) -> Outcome {
        let phase = |when: &str| self.phases.get(&(id.to_string(), when.to_string()));
        let report = ["call", "setup", "teardown"]
            .iter()
            .find_map(|w| self.reports.get(&(id.to_string(), w.to_string())))
            .cloned()
            .unwrap_or_default();
        let made = |status: &str, (_, exc, msg): &(String, String, String)| Outcome {
            id: id.to_string(),
            status: status.to_string(),
            message: match (exc.is_empty(), msg.is_empty()) {
                (true, _) => msg.clone(),
                (false, true) => exc.clone(),
                (false, false) => format!("{exc}: {msg}"),
            },
            detail: report.clone(),
        };
        type Phase = (String, String, String);
        fn with<'p>(p: Option<&'p Phase>, outcome: &str) -> Option<&'p Phase> {
            p.filter(|p| p.0 == outcome)
        }
        let failed = |p| with(p, "failed");
        let skipped = |p| with(p, "skipped");
        if let Some(p) = failed(phase("setup")) {
            return made("error", p);
        }
        if let Some(p) = skipped(phase("setup")).or_else(|| skipped(phase("call"))) {
            return made("skipped", p);
        }
        if let Some(p) = failed(phase("call")) {
            return made("failed", p);
        }
        if let Some(p) = failed(phase("teardown")) {
            return made("error", p);
        }
        let all = ["setup", "call", "teardown"]
            .iter()
            .all(|w| phase(w).is_some_and(|p| p.0 == "passed"));
        if all {
            return Outcome {
                id: id.to_string(),
                status: "passed".into(),
                message: String::new(),
                detail: String::new(),
            };
        }
        if let Some((msg, text)) = self.collect_error_of(id) {
            return Outcome {
                id: id.to_string(),
                status: "error".into(),
                message: msg.to_string(),
                detail: text.to_string(),
            };
        }
        Outcome {
            id: id.to_string(),
            status: "not run".into(),
            message: String::new(),
            detail: report,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(key: &str, seq: u64, body: &str) -> String {
        format!("{{\"k\": \"{key}\", \"seq\": {seq}, {body}}}\n")
    }

    fn passed(key: &str, from: u64, id: &str) -> String {
        ["setup", "call", "teardown"]
            .iter()
            .enumerate()
            .map(|(i, w)| {
                line(
                    key,
                    from + i as u64,
                    &format!("\"t\": \"phase\", \"id\": \"{id}\", \"when\": \"{w}\", \"outcome\": \"passed\""),
                )
            })
            .collect()
    }

    #[test]
    fn a_test_passes_only_with_every_phase_passed_under_the_key() {
        let text = passed("K", 0, "t.py::a") + &line("K", 3, "\"t\": \"end\", \"status\": 0");
        let c = Channel::read(&text, "K");
        assert!(c.ended && c.tampered.is_empty(), "{c:?}");
        assert!(c.outcome("t.py::a").passed());
        // A test with no record did not run.
        assert_eq!(c.outcome("t.py::b").status, "not run");
    }

    #[test]
    fn lines_the_plugin_did_not_write_make_the_run_tampered() {
        // Without the key (the program printed to the channel's descriptor).
        let forged = "{\"t\": \"end\"}\n".to_string();
        assert!(!Channel::read(&forged, "K").tampered.is_empty());
        // With the key but a phase again (the program learnt the key and wrote a passed call).
        let twice = passed("K", 0, "t.py::a")
            + &line(
                "K",
                3,
                "\"t\": \"phase\", \"id\": \"t.py::a\", \"when\": \"call\", \"outcome\": \"failed\"",
            );
        let c = Channel::read(&twice, "K");
        assert!(c.tampered.iter().any(|w| w.contains("twice")), "{c:?}");
        // Out of sequence.
        let skipped_number = line("K", 0, "\"t\": \"collected\", \"ids\": []") + &line("K", 2, "\"t\": \"end\"");
        assert!(Channel::read(&skipped_number, "K").tampered.iter().any(|w| w.contains("sequence")));
        // After the end.
        let after = line("K", 0, "\"t\": \"end\"") + &line("K", 1, "\"t\": \"collected\", \"ids\": []");
        assert!(Channel::read(&after, "K").tampered.iter().any(|w| w.contains("after")));
    }

    #[test]
    fn failures_skips_and_import_errors_are_named() {
        let text = line(
            "K",
            0,
            "\"t\": \"phase\", \"id\": \"t.py::a\", \"when\": \"setup\", \"outcome\": \"passed\"",
        ) + &line(
            "K",
            1,
            "\"t\": \"phase\", \"id\": \"t.py::a\", \"when\": \"call\", \"outcome\": \"failed\", \"exc\": \"AssertionError\", \"msg\": \"assert 1 == 2\"",
        ) + &line(
            "K",
            2,
            "\"t\": \"report\", \"id\": \"t.py::a\", \"when\": \"call\", \"text\": \"E  assert 1 == 2\"",
        ) + &line(
            "K",
            3,
            "\"t\": \"phase\", \"id\": \"t.py::a\", \"when\": \"teardown\", \"outcome\": \"passed\"",
        ) + &line(
            "K",
            4,
            "\"t\": \"phase\", \"id\": \"t.py::s\", \"when\": \"setup\", \"outcome\": \"skipped\", \"exc\": \"Skipped\", \"msg\": \"no db\"",
        ) + &line(
            "K",
            5,
            "\"t\": \"collect_error\", \"id\": \"u.py\", \"msg\": \"SyntaxError: bad\", \"text\": \"E SyntaxError\"",
        );
        let c = Channel::read(&text, "K");
        let a = c.outcome("t.py::a");
        assert_eq!((a.status.as_str(), a.message.as_str()), ("failed", "AssertionError: assert 1 == 2"));
        assert_eq!(a.detail, "E  assert 1 == 2");
        assert_eq!(c.outcome("t.py::s").status, "skipped");
        let u = c.outcome("u.py::test_x");
        assert_eq!((u.status.as_str(), u.message.as_str()), ("error", "SyntaxError: bad"));
        assert!(!c.ended);
    }
}
