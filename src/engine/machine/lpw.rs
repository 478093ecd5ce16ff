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

use super::method::{Advanced, Method};
use super::shared::{Prompted, Shared};
use super::{Effect, Outcome, Phase, Step, Transition};

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

impl Prompted for Lpw {
    fn fill(&self, ctx: &mut crate::agents::TurnContext, m: &Shared) {
        let visible = &m.task.visible;
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

impl Method for Lpw {
    fn start(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        m.call(self, events, Purpose::LpwPlan)
    }

    fn advance(&mut self, m: &mut Shared, phase: Phase, outcome: Outcome) -> Advanced {
        Ok(match (phase, outcome) {
            (Phase::LpwPlan, Outcome::Agent(Ok(resp))) => self.planned(m, &resp.text),
            (Phase::LpwVerify, Outcome::Agent(Ok(resp))) => self.verified(m, &resp.text),
            (Phase::LpwCheck, Outcome::Agent(Ok(resp))) => self.checked(m, &resp.text),
            (Phase::LpwPrint, Outcome::Agent(Ok(resp))) => self.printed(m, &resp.text),
            (Phase::Printed, Outcome::Tests(report)) => self.ran_printed(m, report),
            (Phase::LpwExplain, Outcome::Agent(Ok(resp))) => {
                self.explanation = resp.text.trim().to_string();
                m.call(self, vec![], Purpose::LpwAnalyse)
            }
            (Phase::LpwAnalyse, Outcome::Agent(Ok(resp))) => {
                m.analysis = resp.text.trim().to_string();
                m.call(self, vec![], Purpose::LpwFix)
            }
            (_, outcome) => return Err(Box::new(outcome)),
        })
    }

    /// The visible tests failed (or the answer held no code): a refinement round, or the end.
    fn next_round(&mut self, m: &mut Shared, mut events: Vec<Event>) -> Transition {
        if self.refine_rounds >= m.config.lpw.refine_rounds {
            return m.finish(events, TaskStatus::Failed, None);
        }
        self.refine_rounds += 1;
        m.iteration += 1;
        events.push(m.iteration_started());
        let (Some(code), Some(report)) = (m.code.clone(), m.visible.as_ref().filter(|_| m.problem.is_none())) else {
            // No program to refine: coded again from the plan.
            return m.call(self, events, Purpose::LpwCode);
        };
        self.failing = report.tests.iter().find(|t| t.status != TestStatus::Passed).map(|t| t.index);
        self.history.push(code);
        if self.history.len() > HISTORY {
            self.history.remove(0);
        }
        self.printed_code.clear();
        if m.task.kind == TaskKind::Stdio {
            // Its prints would be its output: the analysis works from the test results alone.
            self.printed_output = "(none: this program's output is its answer, so it was not run with prints)".into();
            return m.call(self, events, Purpose::LpwExplain);
        }
        m.call(self, events, Purpose::LpwPrint)
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

impl Lpw {
    /// A plan was answered: verify it, or ask again once when it holds no step.
    fn planned(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let plan = plan_of(answer);
        if plan.is_empty() {
            if let Some(repeat) = m.ask_again(self, Purpose::LpwPlan, "the answer holds no plan") {
                return repeat;
            }
            let event = m.malformed(
                Purpose::LpwPlan,
                "the answer holds no plan".into(),
                "LPW codes only from a verified plan",
            );
            return self.unverified(m, vec![event]);
        }
        m.plan = plan;
        m.call(self, vec![], Purpose::LpwVerify)
    }

    /// A verification was answered: check it, verify the revised plan, or verify again.
    fn verified(&mut self, m: &mut Shared, answer: &str) -> Transition {
        match parse_verification(answer, m.task.visible.len()) {
            Verification::Holds(sections) => {
                self.sections = sections;
                m.call(self, vec![], Purpose::LpwCheck)
            }
            Verification::Revised(plan) => {
                m.plan = plan;
                let note = m.note("the verification found the plan wrong on a visible test and revised it".into());
                self.verify_again(m, vec![note])
            }
            Verification::Unreadable(why) => {
                let event = m.malformed(Purpose::LpwVerify, why, "the plan is verified again");
                self.verify_again(m, vec![event])
            }
        }
    }

    /// The check of a verification was answered: code from the verified plan, or verify again.
    fn checked(&mut self, m: &mut Shared, answer: &str) -> Transition {
        match parse_check(answer, m.task.visible.len()) {
            Ok(()) => {
                let note = m.note(format!(
                    "the plan is verified on {} visible test(s) and the verification checked",
                    m.task.visible.len()
                ));
                m.call(self, vec![note], Purpose::LpwCode)
            }
            Err(why) => {
                let event = m.malformed(Purpose::LpwCheck, why, "the plan is verified again");
                self.verify_again(m, vec![event])
            }
        }
    }

    fn verify_again(&mut self, m: &mut Shared, events: Vec<Event>) -> Transition {
        self.verify_rounds += 1;
        if self.verify_rounds >= m.config.lpw.verify_rounds {
            return self.unverified(m, events);
        }
        self.sections.clear();
        m.call(self, events, Purpose::LpwVerify)
    }

    /// No plan was verified: as the authors' code, no program is written.
    fn unverified(&mut self, m: &mut Shared, mut events: Vec<Event>) -> Transition {
        events.push(m.note(format!(
            "no plan was verified in {} round(s): LPW writes code only from a verified plan, so the task ends without a program",
            m.config.lpw.verify_rounds
        )));
        m.finish(events, TaskStatus::Failed, None)
    }

    /// The code with prints was answered: run it on the visible tests for what it prints.
    fn printed(&mut self, m: &mut Shared, answer: &str) -> Transition {
        let extracted = crate::code::extract_code(answer, &m.task.entry_point);
        match extracted.code.filter(|_| extracted.problem.is_none()) {
            Some(code) => {
                let code = super::shared::with_prompt_imports(&m.task.prompt, &code);
                self.printed_code = code.clone();
                m.phase = Phase::Printed;
                Transition {
                    events: vec![],
                    step: Step::Run(Effect::RunPrinted { code }),
                }
            }
            None => {
                self.printed_output = "(none: the answer held no program with print statements)".into();
                let event = m.malformed(
                    Purpose::LpwPrint,
                    "the answer holds no program with print statements".into(),
                    "explained without a printed run",
                );
                m.call(self, vec![event], Purpose::LpwExplain)
            }
        }
    }

    /// The printed run: what the first failing test printed goes to the analysis.
    fn ran_printed(&mut self, m: &mut Shared, report: Result<RunReport, String>) -> Transition {
        self.printed_output = match (report, self.failing) {
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
        m.call(self, vec![], Purpose::LpwExplain)
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
