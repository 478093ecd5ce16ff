//! Prompt files: `# system` and `# user` sections, each a minijinja template.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::{Purpose, TurnContext};
use crate::llm::Message;

/// The prompt files compiled into the binary, so an installed rgd works without its source tree.
/// Named by their path under `assets/prompts/` without `.md`: one directory per strategy.
const BUILTIN: &[(&str, &str)] = &[
    ("rgd/guide_init", include_str!("../../assets/prompts/rgd/guide_init.md")),
    ("rgd/guide_refine", include_str!("../../assets/prompts/rgd/guide_refine.md")),
    ("rgd/debug_init", include_str!("../../assets/prompts/rgd/debug_init.md")),
    ("rgd/debug_fix", include_str!("../../assets/prompts/rgd/debug_fix.md")),
    ("rgd/feedback", include_str!("../../assets/prompts/rgd/feedback.md")),
    ("rgd/keywords", include_str!("../../assets/prompts/rgd/keywords.md")),
    ("direct/answer", include_str!("../../assets/prompts/direct/answer.md")),
    ("cot/answer", include_str!("../../assets/prompts/cot/answer.md")),
    ("self_planning/plan", include_str!("../../assets/prompts/self_planning/plan.md")),
    (
        "self_planning/implement",
        include_str!("../../assets/prompts/self_planning/implement.md"),
    ),
    ("self_debug/seed", include_str!("../../assets/prompts/self_debug/seed.md")),
    ("self_debug/feedback", include_str!("../../assets/prompts/self_debug/feedback.md")),
    ("ldb/seed", include_str!("../../assets/prompts/ldb/seed.md")),
    ("ldb/verdict", include_str!("../../assets/prompts/ldb/verdict.md")),
    ("ldb/fix", include_str!("../../assets/prompts/ldb/fix.md")),
    ("reflexion/tests", include_str!("../../assets/prompts/reflexion/tests.md")),
    ("reflexion/implement", include_str!("../../assets/prompts/reflexion/implement.md")),
    ("reflexion/reflect", include_str!("../../assets/prompts/reflexion/reflect.md")),
    ("reflexion/fix", include_str!("../../assets/prompts/reflexion/fix.md")),
    ("mapcoder/recall", include_str!("../../assets/prompts/mapcoder/recall.md")),
    ("mapcoder/plan", include_str!("../../assets/prompts/mapcoder/plan.md")),
    ("mapcoder/confidence", include_str!("../../assets/prompts/mapcoder/confidence.md")),
    ("mapcoder/code", include_str!("../../assets/prompts/mapcoder/code.md")),
    ("mapcoder/debug", include_str!("../../assets/prompts/mapcoder/debug.md")),
    ("codesim/plan", include_str!("../../assets/prompts/codesim/plan.md")),
    ("codesim/simulate", include_str!("../../assets/prompts/codesim/simulate.md")),
    ("codesim/refine", include_str!("../../assets/prompts/codesim/refine.md")),
    ("codesim/code", include_str!("../../assets/prompts/codesim/code.md")),
    ("codesim/debug", include_str!("../../assets/prompts/codesim/debug.md")),
    ("lpw/plan", include_str!("../../assets/prompts/lpw/plan.md")),
    ("lpw/verify", include_str!("../../assets/prompts/lpw/verify.md")),
    ("lpw/check", include_str!("../../assets/prompts/lpw/check.md")),
    ("lpw/code", include_str!("../../assets/prompts/lpw/code.md")),
    ("lpw/print", include_str!("../../assets/prompts/lpw/print.md")),
    ("lpw/explain", include_str!("../../assets/prompts/lpw/explain.md")),
    ("lpw/analyse", include_str!("../../assets/prompts/lpw/analyse.md")),
    ("lpw/fix", include_str!("../../assets/prompts/lpw/fix.md")),
    ("mgdebugger/decompose", include_str!("../../assets/prompts/mgdebugger/decompose.md")),
    ("mgdebugger/tests", include_str!("../../assets/prompts/mgdebugger/tests.md")),
    ("mgdebugger/debug", include_str!("../../assets/prompts/mgdebugger/debug.md")),
    ("repo/augment", include_str!("../../assets/prompts/repo/augment.md")),
    ("repo/describe", include_str!("../../assets/prompts/repo/describe.md")),
    ("repo/rerank", include_str!("../../assets/prompts/repo/rerank.md")),
    ("repo/suspects", include_str!("../../assets/prompts/repo/suspects.md")),
    // A fragment other prompts include (`{% include "shared/flag" %}`): no sections of its own.
    ("shared/flag", include_str!("../../assets/prompts/shared/flag.md")),
];

/// Prompts under this directory are fragments that other prompts include, not calls' prompts.
const FRAGMENTS: &str = "shared/";

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("prompt {name}: {message}")]
    Invalid { name: String, message: String },
    #[error("cannot read prompt file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub struct Prompts {
    env: minijinja::Environment<'static>,
    /// sha256 of each prompt file, recorded in run manifests.
    hashes: BTreeMap<String, String>,
    /// Where the prompts came from ("builtin" or a directory).
    source: String,
}

impl Prompts {
    #[allow(
        clippy::expect_used,
        reason = "the bundled prompts are compiled in; a unit test renders every one of them"
    )]
    pub fn builtin() -> Prompts {
        Self::from_sources(
            BUILTIN.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect(),
            "builtin".into(),
        )
        .expect("the bundled prompts are valid templates")
    }

    /// Loads every prompt from `dir` (the same layout as `assets/prompts/`: `rgd/guide_init.md`,
    /// `cot/answer.md`, ...), so prompts can be edited without rebuilding; the manifest records
    /// their hashes.
    pub fn from_dir(dir: &Path) -> Result<Prompts, PromptError> {
        let mut sources = Vec::new();
        for (name, _) in BUILTIN {
            let path = dir.join(format!("{name}.md"));
            let text = std::fs::read_to_string(&path).map_err(|source| PromptError::Io {
                path: path.display().to_string(),
                source,
            })?;
            sources.push((name.to_string(), text));
        }
        Self::from_sources(sources, dir.display().to_string())
    }

    #[allow(clippy::expect_used, reason = "minijinja's own default delimiters always build")]
    fn from_sources(sources: Vec<(String, String)>, source: String) -> Result<Prompts, PromptError> {
        let mut env = minijinja::Environment::new();
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .expect("default delimiters are valid"),
        );
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        let mut hashes = BTreeMap::new();
        for (name, text) in sources {
            hashes.insert(name.clone(), hex::encode(Sha256::digest(text.as_bytes())));
            if name.starts_with(FRAGMENTS) {
                env.add_template_owned(name.clone(), text).map_err(|e| PromptError::Invalid {
                    name: name.clone(),
                    message: e.to_string(),
                })?;
                continue;
            }
            let (system, user) = split_sections(&text).ok_or_else(|| PromptError::Invalid {
                name: name.clone(),
                message: "needs a `# system` line followed later by a `# user` line".into(),
            })?;
            for (part, body) in [("system", system), ("user", user)] {
                env.add_template_owned(format!("{name}.{part}"), body)
                    .map_err(|e| PromptError::Invalid {
                        name: name.clone(),
                        message: e.to_string(),
                    })?;
            }
        }
        Ok(Prompts { env, hashes, source })
    }

    pub fn hashes(&self) -> &BTreeMap<String, String> {
        &self.hashes
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The system and user messages for one agent call.
    pub fn render(&self, purpose: Purpose, ctx: &TurnContext) -> Result<Vec<Message>, PromptError> {
        self.render_named(purpose.prompt_name(), ctx)
    }

    /// The system and user messages of the prompt `name` (`repo/augment`) over `ctx`.
    pub fn render_named(&self, name: &str, ctx: &impl serde::Serialize) -> Result<Vec<Message>, PromptError> {
        let render = |part: &str| -> Result<String, PromptError> {
            let tmpl = self.env.get_template(&format!("{name}.{part}")).map_err(|e| PromptError::Invalid {
                name: name.into(),
                message: e.to_string(),
            })?;
            let text = tmpl.render(minijinja::value::Serde(ctx)).map_err(|e| PromptError::Invalid {
                name: name.into(),
                message: format!("{e:#}"),
            })?;
            Ok(tidy(&text))
        };
        Ok(vec![Message::system(render("system")?), Message::user(render("user")?)])
    }
}

fn split_sections(text: &str) -> Option<(String, String)> {
    let body = text.strip_prefix("# system\n")?;
    let at = body.find("\n# user\n")?;
    Some((body[..at].to_string(), body[at + "\n# user\n".len()..].to_string()))
}

/// Collapses the blank-line runs that optional template sections leave behind.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::Purpose;
    use crate::agents::context::{PromptTestResult, TurnContext};

    fn result(test: &str, error: &str) -> PromptTestResult {
        PromptTestResult {
            test: test.into(),
            status: "failed".into(),
            expected: None,
            got: Some("1".into()),
            error: Some(error.into()),
            stdout: None,
        }
    }

    /// trim_blocks eats the newline after a block tag: every test result must still start a line
    /// of its own, in every template that lists them (they were once glued into one line).
    #[test]
    fn test_results_are_one_a_line_in_every_template() {
        let prompts = Prompts::builtin();
        let ctx = TurnContext {
            question: "Q".into(),
            entry_point: "f".into(),
            code: "def f(): return 1".into(),
            results: vec![
                result("assert f() == 2", "AssertionError"),
                result("assert f() == 3", "AssertionError"),
            ],
            trace: "f() -> 1".into(),
            trace_test: "assert f() == 2".into(),
            trace_outcome: "it failed".into(),
            ..Default::default()
        };
        for purpose in [Purpose::Feedback, Purpose::DebugFix, Purpose::GuideRefine, Purpose::SelfDebugFix] {
            let text: String = prompts
                .render(purpose, &ctx)
                .unwrap()
                .into_iter()
                .map(|m| m.content)
                .collect::<Vec<_>>()
                .join("\n");
            let lines: Vec<&str> = text.lines().filter(|l| l.contains("assert f() == 3")).collect();
            assert!(!lines.is_empty(), "{purpose:?}: {text}");
            for l in lines {
                assert!(!l.contains("assert f() == 2"), "{purpose:?} glued two results: {l}");
            }
            assert!(
                !text.contains("AssertionError##") && !text.contains("AssertionError- "),
                "{purpose:?}: {text}"
            );
        }
    }

    /// The prompts that show an agent the visible results ask for the flag under
    /// `--allow-flag`, and only then (the papers' prompts stay as they are).
    #[test]
    fn the_prompts_that_may_flag_ask_for_it_only_when_allowed() {
        let prompts = Prompts::builtin();
        let all = [
            Purpose::Feedback,
            Purpose::SelfDebugFix,
            Purpose::LdbVerdict,
            Purpose::Reflect,
            Purpose::MapDebug,
            Purpose::SimDebug,
            Purpose::LpwAnalyse,
            Purpose::MgDebug,
            Purpose::DebugFix,
        ];
        for purpose in all {
            for allow_flag in [false, true] {
                let ctx = TurnContext {
                    question: "Q".into(),
                    entry_point: "f".into(),
                    code: "def f(): return 1".into(),
                    results: vec![result("assert f() == 2", "AssertionError")],
                    trace: "f() -> 1".into(),
                    trace_test: "assert f() == 2".into(),
                    allow_flag,
                    ..Default::default()
                };
                let text: String = prompts.render(purpose, &ctx).unwrap().into_iter().map(|m| m.content).collect();
                let asks = text.contains("CONTRADICTS: <the test, as written above> BECAUSE:");
                assert_eq!(
                    asks,
                    allow_flag && purpose.may_flag(),
                    "{purpose:?}, allow_flag {allow_flag}: {text}"
                );
            }
        }
    }
}
