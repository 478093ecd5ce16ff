//! Keeping a call within the endpoint's context (prompt + answer, in tokens). Without this a
//! 4,096-token llama-server cut answers at prompt + answer = 4,096 and rambling analyses grew the
//! next prompt past it.
//!
//! The rule, applied before each call when the context size is known:
//! 1. Room is kept for the answer: the agent's `max_tokens`, but at most a quarter of the
//!    context (and at least 256 tokens when the context allows).
//! 2. If the prompt does not fit in the rest, material that earlier answers and runs wrote is cut,
//!    longest first, each cut halving a field while keeping its beginning and end: the previous
//!    analysis, the previous guidance, the remembered task's guidance and description, then the
//!    real outputs, exceptions and printed text of the visible tests. The task description, the
//!    entry point, the visible tests and the code under test are never cut; no field goes below
//!    200 characters.
//! 3. `max_tokens` becomes what is left after the prompt.
//!
//! Tokens are estimated as one per 3 characters (plus 4 a message): rgd has no tokenizer for an
//! endpoint's model, and code and English average 3.5-4 characters a token, so the estimate errs
//! towards room. Every change is recorded (`Event::PromptFitted`).

use serde::{Deserialize, Serialize};

use super::Purpose;
use super::context::TurnContext;
use super::prompts::{PromptError, Prompts};
use crate::llm::{CallParams, Message};

const CHARS_PER_TOKEN: usize = 3;
const FLOOR_CHARS: usize = 200;

/// One field cut to fit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trim {
    pub field: String,
    pub from_chars: usize,
    pub to_chars: usize,
}

/// A call fitted to the context.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub messages: Vec<Message>,
    pub params: CallParams,
    /// The prompt's estimated tokens.
    pub prompt_tokens: u32,
    pub trimmed: Vec<Trim>,
}

impl Fitted {
    /// Whether fitting changed anything (the call as the agent would have made it otherwise).
    pub fn changed(&self, asked_max_tokens: u32) -> bool {
        !self.trimmed.is_empty() || self.params.max_tokens < asked_max_tokens
    }
}

/// One line for views: "fitted to the 4096-token context: prompt ~2900 tokens, answer up to 1196
/// (asked 2048); cut analysis 12000 -> 3100 chars".
pub fn describe(context: u32, prompt_tokens: u32, max_tokens: u32, asked: u32, trimmed: &[Trim]) -> String {
    let mut line = format!("fitted to the {context}-token context: prompt ~{prompt_tokens} tokens, answer up to {max_tokens}");
    if max_tokens < asked {
        line.push_str(&format!(" (asked {asked})"));
    }
    if !trimmed.is_empty() {
        let cuts: Vec<String> = trimmed
            .iter()
            .map(|t| format!("{} {} -> {} chars", t.field, t.from_chars, t.to_chars))
            .collect();
        line.push_str(&format!("; cut {}", cuts.join(", ")));
    }
    line
}

/// The warning for an answer the length limit ended.
pub const CUT_OFF: &str = "the answer was cut off by its length limit (finish reason: length)";

pub fn estimate_tokens(messages: &[Message]) -> u32 {
    let chars: usize = messages.iter().map(|m| m.content.chars().count() + 4 * CHARS_PER_TOKEN).sum();
    u32::try_from(chars.div_ceil(CHARS_PER_TOKEN)).unwrap_or(u32::MAX)
}

/// Renders the call for `purpose`, cut to fit `context` tokens by the rule above.
pub fn fit(prompts: &Prompts, purpose: Purpose, ctx: &TurnContext, params: &CallParams, context: u32) -> Result<Fitted, PromptError> {
    let budget = prompt_budget(params, context);
    let mut ctx = ctx.clone();
    let mut trimmed: Vec<Trim> = Vec::new();
    let mut messages = prompts.render(purpose, &ctx)?;
    let mut tokens = estimate_tokens(&messages);
    while tokens > budget {
        let Some((name, field)) = longest_cuttable(&mut ctx) else { break };
        let before = field.chars().count();
        let halved = halve(field);
        let after = halved.chars().count();
        // The longest field no longer shrinks (it is at the floor, marker included), so no shorter
        // one can: what does not fit is what is never cut (the task, the code under test), and
        // the call goes as it is, its answer's room what is left.
        if after >= before {
            break;
        }
        *field = halved;
        match trimmed.iter_mut().find(|t| t.field == name) {
            Some(t) => t.to_chars = after,
            None => trimmed.push(Trim {
                field: name,
                from_chars: before,
                to_chars: after,
            }),
        }
        messages = prompts.render(purpose, &ctx)?;
        tokens = estimate_tokens(&messages);
    }
    Ok(Fitted {
        messages,
        params: answer_params(params, context, tokens),
        prompt_tokens: tokens,
        trimmed,
    })
}

/// Tokens the prompt may take: the context less the room kept for the answer (the agent's
/// `max_tokens`, at most a quarter of the context, at least 256 tokens when the context allows).
fn prompt_budget(params: &CallParams, context: u32) -> u32 {
    let answer_room = params.max_tokens.min(context / 4).max(256.min(context / 2));
    context.saturating_sub(answer_room)
}

/// The call's parameters with `max_tokens` lowered to what a prompt of `tokens` leaves.
fn answer_params(params: &CallParams, context: u32, tokens: u32) -> CallParams {
    let mut params = params.clone();
    params.max_tokens = params.max_tokens.min(context.saturating_sub(tokens).max(1));
    params
}

/// A conversation (system, first user message, then answer and feedback turns) fitted the same
/// way: room kept for the answer; if the rest does not fit, the oldest answer-and-feedback pairs
/// after the first user message go first (the task and the latest turns stay).
pub fn fit_conversation(mut messages: Vec<Message>, params: &CallParams, context: u32) -> Fitted {
    let budget = prompt_budget(params, context);
    let mut dropped = 0usize;
    let before: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    // Keep [system, first user] and at least the last user turn.
    while estimate_tokens(&messages) > budget && messages.len() > 4 {
        dropped += messages.drain(2..4).map(|m| m.content.chars().count()).sum::<usize>();
    }
    let tokens = estimate_tokens(&messages);
    let trimmed = if dropped > 0 {
        vec![Trim {
            field: "earlier turns".into(),
            from_chars: before,
            to_chars: before - dropped,
        }]
    } else {
        Vec::new()
    };
    Fitted {
        messages,
        params: answer_params(params, context, tokens),
        prompt_tokens: tokens,
        trimmed,
    }
}

/// The longest field that may still be cut, by name.
fn longest_cuttable(ctx: &mut TurnContext) -> Option<(String, &mut String)> {
    let mut fields: Vec<(String, &mut String)> = vec![("analysis".into(), &mut ctx.analysis), ("guidance".into(), &mut ctx.guidance)];
    if let Some(r) = ctx.retrieved.as_mut() {
        fields.push(("remembered guidance".into(), &mut r.guidance));
        fields.push(("remembered task".into(), &mut r.question));
    }
    for r in ctx.results.iter_mut() {
        let test = r.test.clone();
        for (what, value) in [("output", &mut r.got), ("exception", &mut r.error), ("printed", &mut r.stdout)] {
            if let Some(v) = value.as_mut() {
                fields.push((format!("{what} of {test}"), v));
            }
        }
    }
    fields
        .into_iter()
        .filter(|(_, f)| f.chars().count() > FLOOR_CHARS)
        .max_by_key(|(_, f)| f.chars().count())
}

/// Half the text, its beginning and its end, with a marker saying how much went.
fn halve(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let keep = (chars.len() / 2).max(FLOOR_CHARS);
    let head = keep * 2 / 3;
    let tail = keep - head;
    let cut = chars.len() - keep;
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}\n[... {cut} characters cut to fit the model's context ...]\n{end}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::{PromptTestResult, TurnContext};

    fn params(max_tokens: u32) -> CallParams {
        CallParams {
            model: "m".into(),
            temperature: 0.0,
            max_tokens,
            seed: None,
            stop: Vec::new(),
        }
    }

    #[test]
    fn a_long_conversation_loses_its_oldest_turns_first() {
        let mut messages = vec![Message::system("You debug."), Message::user("## Task\nAdd two numbers.")];
        for turn in 0..6 {
            messages.push(Message::assistant(format!("attempt {turn}: {}", "x".repeat(1500))));
            messages.push(Message::user(format!("feedback {turn}")));
        }
        let fitted = fit_conversation(messages, &params(512), 2048);
        assert!(fitted.prompt_tokens <= 2048 - 512, "{}", fitted.prompt_tokens);
        let text: Vec<&str> = fitted.messages.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(&text[..2], ["You debug.", "## Task\nAdd two numbers."], "the task stays");
        assert_eq!(text.last(), Some(&"feedback 5"), "the latest turn stays");
        assert!(!text.iter().any(|t| t.starts_with("attempt 0")), "the oldest went first");
        assert_eq!(fitted.trimmed[0].field, "earlier turns");
    }

    #[test]
    fn a_long_earlier_answer_is_cut_and_the_task_never_is() {
        let prompts = Prompts::builtin();
        let question = "Write a function that adds two numbers. ".repeat(20);
        let ctx = TurnContext {
            question: question.clone(),
            entry_point: "add".into(),
            code: "def add(a, b):\n    return a - b\n".into(),
            guidance: "Add them. ".repeat(400),
            analysis: "The code subtracts. ".repeat(600),
            results: vec![PromptTestResult {
                test: "assert add(1, 2) == 3".into(),
                status: "failed".into(),
                expected: Some("3".into()),
                got: Some("-1".into()),
                error: None,
                stdout: None,
            }],
            ..Default::default()
        };
        // The refinement shows the previous guidance and analysis: the longer (analysis) goes first.
        let fitted = fit(&prompts, Purpose::GuideRefine, &ctx, &params(1024), 4096).unwrap();
        assert!(fitted.prompt_tokens <= 4096 - 1024, "{}", fitted.prompt_tokens);
        assert!(fitted.params.max_tokens <= 4096 - fitted.prompt_tokens);
        assert_eq!(fitted.trimmed[0].field, "analysis", "{:?}", fitted.trimmed);
        assert!(fitted.messages[1].content.contains(question.trim()), "the task stays whole");
        // The feedback prompt shows the code under test and the test's real output: a huge
        // output is cut, the code never.
        let mut ctx = ctx;
        ctx.results[0].got = Some("[1, 2, 3] ".repeat(2000));
        let fitted = fit(&prompts, Purpose::Feedback, &ctx, &params(1024), 4096).unwrap();
        assert_eq!(fitted.trimmed[0].field, "output of assert add(1, 2) == 3", "{:?}", fitted.trimmed);
        let user = &fitted.messages[1].content;
        assert!(
            user.contains(question.trim()) && user.contains("return a - b"),
            "the task and code stay whole"
        );
        assert!(user.contains("characters cut to fit"));

        // A prompt that fits is left alone; only max_tokens shrinks to what the context leaves.
        let small = TurnContext {
            question: "Add.".into(),
            entry_point: "add".into(),
            ..Default::default()
        };
        let fitted = fit(&prompts, Purpose::GuideInit, &small, &params(4000), 4096).unwrap();
        assert!(fitted.trimmed.is_empty());
        assert_eq!(fitted.params.max_tokens, 4096 - fitted.prompt_tokens);
        assert!(fitted.changed(4000) && !fit(&prompts, Purpose::GuideInit, &small, &params(100), 4096).unwrap().changed(100));
    }

    /// A file too big for the context (a repository's whole module, on the embedded model's 4,096
    /// tokens) is never cut, so cutting the rest cannot make the prompt fit: fitting stops once
    /// nothing shrinks (it once went on halving a field at its floor forever).
    #[test]
    fn a_prompt_that_cannot_fit_stops_being_cut_once_nothing_shrinks() {
        let prompts = Prompts::builtin();
        let ctx = TurnContext {
            question: "Repair it.".into(),
            entry_point: "f".into(),
            code: "def f():\n    return 1\n".repeat(2000),
            results: vec![PromptTestResult {
                test: "assert f() == 2".into(),
                status: "failed".into(),
                expected: Some("2".into()),
                got: Some("1".repeat(FLOOR_CHARS + 10)),
                error: Some("e".repeat(FLOOR_CHARS * 6)),
                stdout: None,
            }],
            ..Default::default()
        };
        let fitted = fit(&prompts, Purpose::Feedback, &ctx, &params(512), 4096).unwrap();
        assert!(fitted.prompt_tokens > 4096, "the code stays whole: {}", fitted.prompt_tokens);
        assert!(fitted.params.max_tokens >= 1);
        let cut = fitted.trimmed.iter().find(|t| t.field == "exception of assert f() == 2");
        assert!(cut.is_some_and(|t| t.to_chars < FLOOR_CHARS * 6), "{:?}", fitted.trimmed);
    }
}
