//! LPW (Lei et al., "Planning-Driven Programming: A Large Language Model Programming Workflow",
//! ACL 2025). Solution generation: a plan in numbered steps, verified by hand on every visible
//! test (the model records the intermediate values and compares the result with the test's);
//! a verification that finds the plan wrong brings a revised plan, verified again; a
//! verification that holds is checked for wrong reasoning; up to `verify_rounds` rounds. Code
//! implementation: code from the plan and its verification; while the visible tests fail (up to
//! `refine_rounds`), the code is given print statements and run on the visible tests, explained,
//! the printed values of the first failing test compared with that test's verification, and the
//! code rewritten with the earlier failed programs shown.
//!
//! As the authors' code, no code is written from a plan that was never verified: the task ends
//! without a program. Unlike it, the program judged is the one without prints (the authors judge
//! the printed one); the printed run only shows values. The hidden tests decide once the visible
//! ones pass, and are never fed back.

use crate::agents::Purpose;
use crate::dataset::{TaskKind, TestCase};
use crate::record::{Event, TaskStatus};
use crate::sandbox::{RunReport, TestStatus};

use super::{Effect, Phase, Step, TaskMachine, Transition};

/// Earlier failed programs shown to the rewrite, at most (the most recent).
const HISTORY: usize = 3;
/// What a printed run shows the analysis, at most.
const PRINTED_CHARS: usize = 4_000;

/// What LPW keeps besides the shared state.
#[derive(Debug, Default)]
pub(super) struct Lpw {
    verify_rounds: u32,
    refine_rounds: u32,
    /// The verification of each visible test, in order (awaiting its check, then accepted).
    sections: Vec<String>,
    /// The first failing visible test of the current program.
    failing: Option<usize>,
    printed_code: String,
    printed_output: String,
    explanation: String,
    history: Vec<String>,
}

impl Lpw {
    pub(super) fn fill(&self, ctx: &mut crate::agents::TurnContext, visible: &[TestCase]) {
        ctx.verification = self.sections.join("\n\n");
        if let Some(i) = self.failing {
            ctx.failing_test = visible.get(i).map(TestCase::label).unwrap_or_default();
            ctx.failing_verification = self.sections.get(i).cloned().unwrap_or_else(|| ctx.verification.clone());
        }
        ctx.printed_code = self.printed_code.clone();
        ctx.printed_output = self.printed_output.clone();
        ctx.explanation = self.explanation.clone();
        ctx.history = self.history.clone();
    }
}

/// What a verification answer says.
#[derive(Debug, PartialEq, Eq)]
enum Verification {
    /// The plan gives every test's result: one section per test.
    Holds(Vec<String>),
    /// A test showed the plan wrong, and this is the revised plan.
    Revised(String),
    /// Not what was asked (why).
    Unreadable(String),
}

/// The text between a line holding `start` and one holding `end` (case-insensitive), or after
/// `start` to the end when `end` never comes.
fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let from = lower.find(&start.to_ascii_lowercase())? + start.len();
    let rest = &text[from..];
    let to = rest.to_ascii_lowercase().find(&end.to_ascii_lowercase()).unwrap_or(rest.len());
    Some(rest[..to].trim().to_string())
}

/// A plan holds a step when some line has a word in it.
fn has_steps(plan: &str) -> bool {
    plan.lines().any(|l| l.chars().any(char::is_alphanumeric))
}

/// The plan of an answer: between `[Start Plan]` and `[End Plan]`, else the whole answer.
fn plan_of(answer: &str) -> String {
    let plan = between(answer, "[Start Plan]", "[End Plan]").unwrap_or_else(|| answer.trim().to_string());
    if has_steps(&plan) { plan } else { String::new() }
}

/// Whether a line opens the verification of one test.
fn opens_section(line: &str) -> bool {
    let l = line
        .trim_start_matches(|c: char| c == '#' || c == '[' || c == '*' || c.is_whitespace())
        .to_ascii_lowercase();
    l.starts_with("verification for") || l.starts_with("plan verification for")
}

fn parse_verification(answer: &str, tests: usize) -> Verification {
    if let Some(plan) = between(answer, "[Start Revised Plan]", "[End Revised Plan]")
        .or_else(|| between(answer, "[Start Revised Solution Plan]", "[End Revised Solution Plan]"))
        .filter(|p| has_steps(p))
    {
        return Verification::Revised(plan);
    }
    let mut sections: Vec<String> = Vec::new();
    for line in answer.lines() {
        if opens_section(line) {
            sections.push(String::new());
        }
        if let Some(current) = sections.last_mut() {
            current.push_str(line);
            current.push('\n');
        }
    }
    if sections.len() != tests {
        return Verification::Unreadable(format!("{} verifications for {tests} visible tests", sections.len()));
    }
    for (i, s) in sections.iter().enumerate() {
        let lower = s.to_ascii_lowercase();
        if lower.contains("[incorrect plan]") {
            return Verification::Unreadable(format!(
                "the verification of test {} found the plan wrong but gave no revised plan",
                i + 1
            ));
        }
        if !lower.contains("[correct plan]") {
            return Verification::Unreadable(format!(
                "the verification of test {} ends in neither [Correct Plan] nor [Incorrect Plan]",
                i + 1
            ));
        }
    }
    Verification::Holds(sections.into_iter().map(|s| s.trim().to_string()).collect())
}

/// What the check of a verification concluded: `Ok` when every test's reasoning is right.
fn parse_check(answer: &str, tests: usize) -> Result<(), String> {
    let lower = answer.to_ascii_lowercase();
    let wrong = lower.matches("[incorrect analysis]").count();
    let right = lower.matches("[correct analysis]").count();
    match (right, wrong) {
        (0, 0) => Err("the check ends in neither [Correct Analysis] nor [Incorrect Analysis]".into()),
        (_, 0) if right == tests => Ok(()),
        (_, 0) => Err(format!("the check judged {right} of {tests} verifications")),
        _ => Err(format!("the check found wrong reasoning in {wrong} verification(s)")),
    }
}

impl TaskMachine {
    /// A plan was answered: verify it, or ask again once when it holds no step.
    pub(super) fn lpw_planned(&mut self, answer: &str) -> Transition {
        let plan = plan_of(answer);
        if plan.is_empty() {
            if let Some(repeat) = self.ask_again(Purpose::LpwPlan, "the answer holds no plan") {
                return repeat;
            }
            let event = self.malformed(
                Purpose::LpwPlan,
                "the answer holds no plan".into(),
                "LPW codes only from a verified plan",
            );
            return self.lpw_unverified(vec![event]);
        }
        self.plan = plan;
        self.call(vec![], Purpose::LpwVerify)
    }

    /// A verification was answered: check it, verify the revised plan, or verify again.
    pub(super) fn lpw_verified(&mut self, answer: &str) -> Transition {
        match parse_verification(answer, self.task.visible.len()) {
            Verification::Holds(sections) => {
                self.lpw.sections = sections;
                self.call(vec![], Purpose::LpwCheck)
            }
            Verification::Revised(plan) => {
                self.plan = plan;
                let note = self.note("the verification found the plan wrong on a visible test and revised it".into());
                self.lpw_verify_again(vec![note])
            }
            Verification::Unreadable(why) => {
                let event = self.malformed(Purpose::LpwVerify, why, "the plan is verified again");
                self.lpw_verify_again(vec![event])
            }
        }
    }

    /// The check of a verification was answered: code from the verified plan, or verify again.
    pub(super) fn lpw_checked(&mut self, answer: &str) -> Transition {
        match parse_check(answer, self.task.visible.len()) {
            Ok(()) => {
                let note = self.note(format!(
                    "the plan is verified on {} visible test(s) and the verification checked",
                    self.task.visible.len()
                ));
                self.call(vec![note], Purpose::LpwCode)
            }
            Err(why) => {
                let event = self.malformed(Purpose::LpwCheck, why, "the plan is verified again");
                self.lpw_verify_again(vec![event])
            }
        }
    }

    fn lpw_verify_again(&mut self, events: Vec<Event>) -> Transition {
        self.lpw.verify_rounds += 1;
        if self.lpw.verify_rounds >= self.config.lpw.verify_rounds {
            return self.lpw_unverified(events);
        }
        self.lpw.sections.clear();
        self.call(events, Purpose::LpwVerify)
    }

    /// No plan was verified: as the authors' code, no program is written.
    fn lpw_unverified(&mut self, mut events: Vec<Event>) -> Transition {
        events.push(self.note(format!(
            "no plan was verified in {} round(s): LPW writes code only from a verified plan, so the task ends without a program",
            self.config.lpw.verify_rounds
        )));
        self.finish(events, TaskStatus::Failed, None)
    }

    /// The visible tests failed (or the answer held no code): a refinement round, or the end.
    pub(super) fn lpw_next(&mut self, mut events: Vec<Event>) -> Transition {
        if self.lpw.refine_rounds >= self.config.lpw.refine_rounds {
            return self.finish(events, TaskStatus::Failed, None);
        }
        self.lpw.refine_rounds += 1;
        self.iteration += 1;
        events.push(self.iteration_started());
        let (Some(code), Some(report)) = (self.code.clone(), self.visible.as_ref().filter(|_| self.problem.is_none())) else {
            // No program to refine: coded again from the plan.
            return self.call(events, Purpose::LpwCode);
        };
        self.lpw.failing = report.tests.iter().find(|t| t.status != TestStatus::Passed).map(|t| t.index);
        self.lpw.history.push(code);
        if self.lpw.history.len() > HISTORY {
            self.lpw.history.remove(0);
        }
        self.lpw.printed_code.clear();
        if self.task.kind == TaskKind::Stdio {
            // Its prints would be its output: the analysis works from the test results alone.
            self.lpw.printed_output = "(none: this program's output is its answer, so it was not run with prints)".into();
            return self.call(events, Purpose::LpwExplain);
        }
        self.call(events, Purpose::LpwPrint)
    }

    /// The code with prints was answered: run it on the visible tests for what it prints.
    pub(super) fn lpw_printed(&mut self, answer: &str) -> Transition {
        let extracted = crate::code::extract_code(answer, &self.task.entry_point);
        match extracted.code.filter(|_| extracted.problem.is_none()) {
            Some(code) => {
                let code = super::with_prompt_imports(&self.task.prompt, &code);
                self.lpw.printed_code = code.clone();
                self.phase = Phase::Printed;
                Transition {
                    events: vec![],
                    step: Step::Run(Effect::RunPrinted { code }),
                }
            }
            None => {
                self.lpw.printed_output = "(none: the answer held no program with print statements)".into();
                let event = self.malformed(
                    Purpose::LpwPrint,
                    "the answer holds no program with print statements".into(),
                    "explained without a printed run",
                );
                self.call(vec![event], Purpose::LpwExplain)
            }
        }
    }

    /// The printed run: what the first failing test printed goes to the analysis.
    pub(super) fn lpw_ran_printed(&mut self, report: Result<RunReport, String>) -> Transition {
        self.lpw.printed_output = match (report, self.lpw.failing) {
            (Ok(report), Some(i)) => match report.tests.iter().find(|t| t.index == i) {
                Some(t) => {
                    let mut shown = clip(t.stdout.clone().unwrap_or_default());
                    if shown.trim().is_empty() {
                        shown = "(nothing was printed)".into();
                    }
                    if let Some(e) = &t.exc_type {
                        shown.push_str(&format!(
                            "\n(then it raised {e}{})",
                            t.exc_msg.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
                        ));
                    }
                    shown
                }
                None => "(the test did not run)".into(),
            },
            (Ok(_), None) => "(no visible test failed)".into(),
            (Err(e), _) => format!("(the printed run failed: {e})"),
        };
        self.call(vec![], Purpose::LpwExplain)
    }

    pub(super) fn lpw_explained(&mut self, answer: &str) -> Transition {
        self.lpw.explanation = answer.trim().to_string();
        self.call(vec![], Purpose::LpwAnalyse)
    }

    pub(super) fn lpw_analysed(&mut self, answer: &str) -> Transition {
        self.analysis = answer.trim().to_string();
        self.call(vec![], Purpose::LpwFix)
    }
}

fn clip(text: String) -> String {
    crate::text::clip(&text, PRINTED_CHARS, PRINTED_CHARS, "\n... (the rest of the output is cut)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verification_holds_only_with_one_verdict_per_test() {
        let two =
            "[Verification for assert f(1) == 2]\n[Record]: x = 2\n[Correct Plan]\n\n[Verification for assert f(2) == 3]\n[Correct Plan]";
        assert!(matches!(parse_verification(two, 2), Verification::Holds(s) if s.len() == 2 && s[1].contains("f(2)")));
        assert_eq!(
            parse_verification(two, 3),
            Verification::Unreadable("2 verifications for 3 visible tests".into())
        );
        let no_verdict = "### Verification for assert f(1) == 2\nthe result is 2";
        assert!(matches!(parse_verification(no_verdict, 1), Verification::Unreadable(w) if w.contains("neither")));
        let revised =
            "[Verification for assert f(1) == 2]\n[Incorrect Plan]\nstep 2 adds 2\n[Start Revised Plan]\n1. Add one.\n[End Revised Plan]";
        assert_eq!(parse_verification(revised, 1), Verification::Revised("1. Add one.".into()));
        let wrong_unrevised = "[Verification for assert f(1) == 2]\n[Incorrect Plan]";
        assert!(matches!(parse_verification(wrong_unrevised, 1), Verification::Unreadable(w) if w.contains("no revised plan")));
    }

    #[test]
    fn the_check_counts_verdicts_and_plans_need_steps() {
        assert_eq!(parse_check("ok\n[Correct Analysis]\n...\n[Correct Analysis]", 2), Ok(()));
        assert!(
            parse_check("[Correct Analysis]\n[Incorrect Analysis]", 2)
                .unwrap_err()
                .contains("wrong reasoning")
        );
        assert!(parse_check("[Correct Analysis]", 2).unwrap_err().contains("1 of 2"));
        assert!(parse_check("looks fine", 1).unwrap_err().contains("neither"));
        assert_eq!(plan_of("Let's think.\n[Start Plan]\n1. a\n2. b\n[END Plan]"), "1. a\n2. b");
        assert_eq!(plan_of("[Start Plan]\n\n[End Plan]"), "");
        assert_eq!(plan_of("1. just steps"), "1. just steps");
    }
}
