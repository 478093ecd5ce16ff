//! The start-a-run form on the home screen: a few fields edited in place.

use crate::engine::Strategy;
use crate::sandbox::SandboxKind;

/// What the form asks the CLI layer to start.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub dataset: String,
    pub tasks: Vec<String>,
    pub limit: Option<usize>,
    pub model: Option<String>,
    /// Per-agent models; `None` means the one above.
    pub guide_model: Option<String>,
    pub debug_model: Option<String>,
    pub feedback_model: Option<String>,
    pub max_iters: u32,
    pub concurrency: usize,
    /// Embedded model only: llama.cpp threads per context, and contexts; `None` = the defaults.
    pub threads: Option<i32>,
    pub contexts: Option<usize>,
    pub sandbox: SandboxKind,
    pub memory: bool,
    pub strategy: Strategy,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FormAction {
    Next,
    Prev,
    Char(char),
    Backspace,
    /// Left/right on a choice field.
    Cycle(bool),
    Submit,
}

pub const FIELDS: [&str; 14] = [
    "Dataset",
    "Tasks (ids, comma-separated; empty = all)",
    "Limit (first N)",
    "Model (all agents)",
    "Guide model (empty = the model above)",
    "Debug model (empty = the model above)",
    "Feedback model (empty = the model above)",
    "Max iterations",
    "Concurrency",
    "Embedded model threads per context (empty = cores / contexts)",
    "Embedded model contexts (empty = the concurrency, at most the cores)",
    "Strategy (rgd, or a baseline to compare with)",
    "Sandbox",
    "Memory pool (off = the paper's no-memory ablation)",
];
const STRATEGY: usize = FIELDS.len() - 3;
const SANDBOX: usize = FIELDS.len() - 2;
const MEMORY: usize = FIELDS.len() - 1;
/// Fields chosen with ←/→ rather than typed.
pub const CHOICES: [usize; 3] = [STRATEGY, SANDBOX, MEMORY];

#[derive(Debug, Clone)]
pub struct Form {
    pub values: [String; FIELDS.len()],
    pub focus: usize,
    pub error: Option<String>,
    /// Submitted; the run is being prepared.
    pub starting: bool,
}

impl Form {
    /// Pre-filled from what the home screen knows (`model` from the configuration).
    pub fn new(info: &[(String, String)]) -> Form {
        let model = info.iter().find(|(k, _)| k == "model").map(|(_, v)| v.clone()).unwrap_or_default();
        Form {
            values: [
                "sample".into(),
                String::new(),
                String::new(),
                model,
                String::new(),
                String::new(),
                String::new(),
                "10".into(),
                "4".into(),
                String::new(),
                String::new(),
                "rgd".into(),
                "wasm".into(),
                "on".into(),
            ],
            focus: 0,
            error: None,
            starting: false,
        }
    }

    /// Applies one edit; `Some` when the form was submitted and is valid.
    pub fn apply(&mut self, action: FormAction) -> Option<RunRequest> {
        match action {
            FormAction::Next => self.focus = (self.focus + 1) % FIELDS.len(),
            FormAction::Prev => self.focus = (self.focus + FIELDS.len() - 1) % FIELDS.len(),
            FormAction::Char(c) if !CHOICES.contains(&self.focus) => self.values[self.focus].push(c),
            FormAction::Char(_) => {}
            FormAction::Backspace if !CHOICES.contains(&self.focus) => {
                self.values[self.focus].pop();
            }
            FormAction::Backspace => {}
            FormAction::Cycle(_) if self.focus == SANDBOX => {
                let next = if self.values[SANDBOX] == "wasm" { "native" } else { "wasm" };
                self.values[SANDBOX] = next.into();
            }
            FormAction::Cycle(forward) if self.focus == STRATEGY => {
                let all = Strategy::ALL;
                let at = all.iter().position(|s| s.name() == self.values[STRATEGY]).unwrap_or(0);
                let next = if forward {
                    (at + 1) % all.len()
                } else {
                    (at + all.len() - 1) % all.len()
                };
                self.values[STRATEGY] = all[next].name().into();
            }
            FormAction::Cycle(_) if self.focus == MEMORY => {
                let next = if self.values[MEMORY] == "on" { "off" } else { "on" };
                self.values[MEMORY] = next.into();
            }
            FormAction::Cycle(_) => {}
            FormAction::Submit => match self.request() {
                Ok(r) => {
                    self.error = None;
                    return Some(r);
                }
                Err(e) => self.error = Some(e),
            },
        }
        None
    }

    fn request(&self) -> Result<RunRequest, String> {
        let v = &self.values;
        let number = |i: usize| -> Result<Option<usize>, String> {
            let t = v[i].trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<usize>()
                .map(Some)
                .map_err(|_| format!("{}: {t:?} is not a number", FIELDS[i]))
        };
        let text = |i: usize| Some(v[i].trim().to_string()).filter(|m| !m.is_empty());
        if v[0].trim().is_empty() {
            return Err("Dataset: required (see `rgd datasets list`)".into());
        }
        Ok(RunRequest {
            dataset: v[0].trim().into(),
            tasks: v[1].split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
            limit: number(2)?,
            model: text(3),
            guide_model: text(4),
            debug_model: text(5),
            feedback_model: text(6),
            max_iters: number(7)?.unwrap_or(10).max(1) as u32,
            concurrency: number(8)?.unwrap_or(4).max(1),
            // Settings::resolve turns zero into one; only the cast needs a bound here.
            threads: number(9)?.map(|n| n.min(i32::MAX as usize) as i32),
            contexts: number(10)?,
            sandbox: if v[SANDBOX] == "native" {
                SandboxKind::Native
            } else {
                SandboxKind::Wasm
            },
            memory: v[MEMORY] == "on",
            strategy: Strategy::from_name(&v[STRATEGY]).unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_cycling_and_submitting() {
        let mut form = Form::new(&[("model".into(), "m1".into())]);
        for _ in 0..6 {
            form.apply(FormAction::Backspace);
        }
        assert!(form.apply(FormAction::Submit).is_none(), "an empty dataset is refused");
        assert!(form.error.as_deref().unwrap().contains("Dataset"));
        "humaneval".chars().for_each(|c| {
            form.apply(FormAction::Char(c));
        });
        form.apply(FormAction::Next);
        "HumanEval/0, HumanEval/1".chars().for_each(|c| {
            form.apply(FormAction::Char(c));
        });
        form.apply(FormAction::Next);
        form.apply(FormAction::Next);
        form.apply(FormAction::Next);
        form.apply(FormAction::Next);
        "m2".chars().for_each(|c| {
            form.apply(FormAction::Char(c));
        });
        for _ in 0..6 {
            form.apply(FormAction::Prev);
        }
        form.apply(FormAction::Cycle(true));
        assert_eq!(form.focus, 13, "wrapped round to the last field, memory");
        form.apply(FormAction::Prev);
        form.apply(FormAction::Cycle(true));
        form.apply(FormAction::Prev);
        form.apply(FormAction::Cycle(false));
        assert_eq!(form.values[STRATEGY], "mgdebugger", "the strategies cycle both ways");
        form.apply(FormAction::Prev);
        form.apply(FormAction::Prev);
        form.apply(FormAction::Char('x'));
        assert!(form.apply(FormAction::Submit).is_none(), "threads must be a number");
        assert!(form.error.as_deref().unwrap().starts_with("Embedded model threads"));
        form.apply(FormAction::Backspace);
        form.apply(FormAction::Char('1'));
        form.apply(FormAction::Next);
        form.apply(FormAction::Char('2'));
        let request = form.apply(FormAction::Submit).expect("valid");
        assert_eq!(request.dataset, "humaneval");
        assert_eq!(request.tasks, ["HumanEval/0", "HumanEval/1"]);
        assert_eq!(request.model.as_deref(), Some("m1"));
        assert_eq!(request.debug_model.as_deref(), Some("m2"));
        assert_eq!(request.guide_model, None);
        assert_eq!(request.sandbox, SandboxKind::Native);
        assert!(!request.memory);
        assert_eq!(request.strategy, Strategy::MgDebugger);
        assert_eq!((request.max_iters, request.concurrency, request.limit), (10, 4, None));
        assert_eq!((request.threads, request.contexts), (Some(1), Some(2)));
    }
}
