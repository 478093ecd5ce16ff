//! How the machine makes an agent call: a prompt rendered from what the agents may see (never
//! hidden tests), or a conversation so far, fitted to the endpoint's context when it is known.

use crate::agents::budget::{self, Fitted};
use crate::agents::{PromptError, PromptTestResult, Purpose, TurnContext};
use crate::llm::{CallParams, Message};
use crate::record::{Event, TaskStatus};

use super::shared::{Prompted, Shared, describe_problem};
use super::{Effect, Phase, Step, Transition};

impl Shared {
    /// Calls the agent `purpose` names with its prompt rendered from the current context.
    pub(super) fn call(&mut self, method: &dyn Prompted, events: Vec<Event>, purpose: Purpose) -> Transition {
        let (ctx, prompts) = (self.context(method), self.prompts.clone());
        self.send(events, purpose, |params, context| match context {
            Some(context) => budget::fit(&prompts, purpose, &ctx, params, context),
            None => Ok(unfitted(prompts.render(purpose, &ctx)?, params)),
        })
    }

    /// Calls with a whole conversation (self-debug's growing one).
    pub(super) fn call_with(&mut self, events: Vec<Event>, purpose: Purpose, messages: Vec<Message>) -> Transition {
        self.send(events, purpose, |params, context| {
            Ok(match context {
                Some(context) => budget::fit_conversation(messages, params, context),
                None => unfitted(messages, params),
            })
        })
    }

    /// The next user turn of a conversation (self-debug's feedback, LDB's verdict and fix
    /// requests): rendered from `purpose`'s prompt, added to the conversation, and the whole
    /// conversation sent. `new_iteration`: the answer will be a new program.
    pub(super) fn converse(&mut self, method: &dyn Prompted, mut events: Vec<Event>, purpose: Purpose, new_iteration: bool) -> Transition {
        let turn = match self.prompts.render(purpose, &self.context(method)) {
            Ok(mut rendered) => rendered.pop().map(|m| m.content).unwrap_or_default(),
            Err(e) => return self.finish(events, TaskStatus::Error, Some(e.to_string())),
        };
        self.conversation.push(Message::user(turn));
        if new_iteration {
            self.iteration += 1;
            events.push(self.iteration_started());
        }
        let conversation = self.conversation.clone();
        self.call_with(events, purpose, conversation)
    }

    fn send(
        &mut self,
        mut events: Vec<Event>,
        purpose: Purpose,
        build: impl FnOnce(&CallParams, Option<u32>) -> Result<Fitted, PromptError>,
    ) -> Transition {
        self.phase = Phase::of_call(purpose);
        let Some(params) = self.config.params.get(&purpose.agent()).cloned() else {
            let missing = format!("no model parameters for the {} agent", purpose.agent().name());
            return self.finish(events, TaskStatus::Error, Some(missing));
        };
        let context = self.config.context_size;
        let fitted = match build(&params, context) {
            Ok(fitted) => fitted,
            Err(e) => return self.finish(events, TaskStatus::Error, Some(e.to_string())),
        };
        self.last_purpose = Some(purpose);
        // A new call; `ask_again` marks its own repeat after this.
        self.asked_again = false;
        if matches!(purpose, Purpose::SelfDebugSeed | Purpose::LdbSeed) {
            // The conversation self-debug grows starts as the seed's prompt, whole.
            self.conversation = fitted.messages.clone();
        }
        if let Some(context) = context
            && fitted.changed(params.max_tokens)
        {
            events.push(Event::PromptFitted {
                task_id: self.task.id.clone(),
                iteration: self.iteration,
                purpose,
                context,
                prompt_tokens: fitted.prompt_tokens,
                max_tokens: fitted.params.max_tokens,
                asked_max_tokens: params.max_tokens,
                trimmed: fitted.trimmed,
            });
        }
        Transition {
            events,
            step: Step::Run(Effect::CallAgent {
                purpose,
                messages: fitted.messages,
                params: fitted.params,
            }),
        }
    }

    /// Everything the prompts may use: only the agent view of the task and visible results, and
    /// what the method adds of its own (`Prompted::fill`).
    pub(super) fn context(&self, method: &dyn Prompted) -> TurnContext {
        let view = self.task.agent_view();
        let mut ctx = TurnContext::for_task(&view);
        ctx.guidance = self.guidance.clone();
        ctx.code = self.code.clone().unwrap_or_default();
        ctx.problem = self.problem.as_ref().map(describe_problem);
        if let Some(report) = &self.visible {
            ctx.results = PromptTestResult::from_report(view.visible, report);
            ctx.passed = report.passed();
        }
        ctx.hidden_failed = self.hidden_failed;
        ctx.analysis = self.analysis.clone();
        ctx.retrieved = self.retrieved.clone();
        ctx.plan = self.plan.clone();
        ctx.feedback_mode = self.config.self_debug.name().to_string();
        ctx.allow_flag = self.config.allow_flag;
        ctx.trace_test = self.trace_shown.test.clone();
        ctx.trace_outcome = self.trace_shown.outcome.clone();
        ctx.trace = self.trace_shown.text.clone();
        method.fill(&mut ctx, self);
        ctx
    }
}

/// The call as rendered, when the context size is unknown.
fn unfitted(messages: Vec<Message>, params: &CallParams) -> Fitted {
    Fitted {
        prompt_tokens: budget::estimate_tokens(&messages),
        messages,
        params: params.clone(),
        trimmed: Vec::new(),
    }
}
