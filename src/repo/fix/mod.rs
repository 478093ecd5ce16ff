//! `rgd fix` as a library: from a located fault to a repaired project. The agents repair the
//! ranked suspects one function at a time, the failing tests visible and the selection's passing
//! tests the hidden regression suite; the first repair that makes every failing test pass and
//! breaks no passing test wins. When no single function does, pairs of the first suspects are
//! tried: the first's repair (kept only if it broke no passing test) is staged in a copy of the
//! project, and the second is repaired on top of it.
//!
//! What runs the agents is the caller's (`Agents`: the command's model, printer or view); what
//! the attempts are, in which order, and how each verdict counts is decided here, so `rgd fix` and
//! `rgd bench real --fix` repair alike. Progress is a stream of `FixEvent`s.

pub mod event;
pub mod record;

use std::path::Path;

use anyhow::Context;

use crate::record::TaskResult;
use crate::repo::RepoIndex;
use crate::repo::locate::Candidate;
use crate::repo::locate::localise::Localisation;
use crate::repo::run::testrun::{ProjectTests, RunSpec, TestLimits};
use event::FixEvent;
use record::{Change, Repair, Tried, changes_of, skipped, stage_dir};

/// How far a fix goes.
#[derive(Debug, Clone, Copy)]
pub struct FixPlan {
    /// How many ranked suspects are repaired, one at a time.
    pub candidates: usize,
    /// Pairs among the first N suspects when no single repair fixes it (below 2: none).
    pub pairs_of: usize,
    /// A repair judged with the program in the tests' process (unverified) is taken as the fix.
    pub allow_in_process: bool,
}

/// One run of the agents on a target, as the caller ran it.
pub struct AgentsRan {
    pub run_id: String,
    /// None when the run recorded no result (it was stopped).
    pub result: Option<TaskResult>,
}

/// What runs the agents on one target function of the project at `root` (a copy, when a pair's
/// first repair is staged under it).
#[allow(async_fn_in_trait)]
pub trait Agents {
    async fn repair(&self, root: &Path, target: &str) -> anyhow::Result<AgentsRan>;
}

/// What the attempts came to.
pub struct Ended {
    pub tried: Vec<Tried>,
    pub fixed: Option<Vec<Repair>>,
    pub changes: Vec<Change>,
    /// "TARGET (in-process: why)" of the repair that passed only in the tests' process: the one
    /// taken under --allow-in-process, else the first tried.
    pub unverified: Option<String>,
}

/// Everything the attempts share.
pub struct Fixer<'a, A: Agents> {
    pub agents: &'a A,
    pub runner: &'a ProjectTests,
    pub index: &'a RepoIndex,
    pub visible: &'a [String],
    pub hidden: &'a [String],
    pub plan: FixPlan,
    /// The state directory: staged copies and records go under its `fix/`.
    pub state: &'a Path,
    pub report: &'a (dyn Fn(FixEvent) + Sync),
}

impl<A: Agents> Fixer<'_, A> {
    /// The attempts in rank order, then pairs; ends with the `Finished` event.
    pub async fn drive(&self, root: &Path, found: &Localisation) -> anyhow::Result<Ended> {
        let mut tried = Vec::new();
        let mut singles: Vec<Repair> = Vec::new();
        let mut fixed: Option<Vec<Repair>> = None;
        let shortlist: Vec<&Candidate> = found.ranked.iter().take(self.plan.candidates).collect();
        for (i, c) in shortlist.iter().enumerate() {
            (self.report)(FixEvent::Trying {
                target: c.target(),
                nth: i + 1,
                of: shortlist.len(),
                why: c.why(found.failing_spectra),
            });
            let Some(repair) = self.attempt(root, c, false).await? else {
                self.record_tried(&mut tried, skipped(c, None));
                continue;
            };
            self.record_tried(&mut tried, repair.tried(None));
            if repair.fixed {
                fixed = Some(vec![repair]);
                break;
            }
            singles.push(repair);
        }
        if fixed.is_none() && self.plan.pairs_of >= 2 {
            fixed = self.pairs(root, found, &singles, &mut tried).await?;
        }
        let changes = fixed.as_deref().map(changes_of).unwrap_or_default();
        let unverified = match &fixed {
            Some(repairs) => repairs.iter().find(|r| r.in_process.is_some()).map(|r| (&r.target, &r.in_process)),
            None => tried.iter().find(|t| t.in_process.is_some()).map(|t| (&t.target, &t.in_process)),
        }
        .map(|(target, why)| format!("{target} (in-process: {})", why.as_deref().unwrap_or_default()));
        (self.report)(FixEvent::Finished {
            fixed_by: fixed.as_ref().map(|r| r.iter().map(|r| r.target.clone()).collect()),
            diff: changes.iter().map(Change::diff).collect::<Vec<_>>().join("\n"),
            tried: shortlist.len(),
            unverified: unverified.clone(),
        });
        Ok(Ended {
            tried,
            fixed,
            changes,
            unverified,
        })
    }

    fn note(&self, text: String) {
        (self.report)(FixEvent::Note { text });
    }

    /// The agents repair `c` in the project at `root` (the original, or a copy with a pair's
    /// first repair staged); `None` when the function cannot be a target (said why).
    async fn attempt(&self, root: &Path, c: &Candidate, staged: bool) -> anyhow::Result<Option<Repair>> {
        let target = c.target();
        let before = std::fs::read_to_string(root.join(&c.file)).with_context(|| format!("reading {}", c.file))?;
        if let Err(e) = crate::code::find_function(&before, &c.name) {
            self.note(format!("{target}: skipped ({e})"));
            return Ok(None);
        }
        if self.index.target(&target).is_err() {
            self.note(format!("{target}: skipped (not a function the index knows)"));
            return Ok(None);
        }
        let ran = self.agents.repair(root, &target).await?;
        let mut repair = Repair {
            target,
            file: c.file.clone(),
            name: c.name.clone(),
            before: before.clone(),
            program: before,
            run_id: ran.run_id,
            fixed: false,
            in_process: None,
            outcome: "the run recorded no result".into(),
            calls: 0,
            tokens: 0,
        };
        let Some(result) = ran.result else {
            return Ok(Some(repair));
        };
        for t in result.tokens.values() {
            repair.calls += t.calls;
            repair.tokens += t.input + t.output;
        }
        if !result.completion.is_empty() {
            repair.program = result.completion.clone();
        }
        if repair.program == repair.before {
            repair.outcome = format!("{:?}: no change", result.status);
            return Ok(Some(repair));
        }
        let all: Vec<String> = self.visible.iter().chain(self.hidden).cloned().collect();
        let checked = result
            .proven()
            .map_err(anyhow::Error::msg)
            .and_then(|()| self.runner.rerun(root, &repair.file, &repair.name, &all, &repair.program));
        self.judge(&mut repair, checked, staged);
        Ok(Some(repair))
    }

    /// How the attempt's verdict counts: fixed, unverified (passed only with the program in the
    /// tests' process: never fixed, unless the user's leave takes it), or not fixed.
    fn judge(&self, repair: &mut Repair, checked: anyhow::Result<Option<String>>, staged: bool) {
        let with_first = if staged { " (with the first)" } else { "" };
        match checked {
            Ok(None) => {
                repair.fixed = true;
                repair.outcome = format!("fixed{with_first}");
            }
            Ok(Some(why)) => {
                let allow = self.plan.allow_in_process;
                repair.fixed = allow;
                repair.outcome = format!(
                    "unverified{with_first}: passed with the program in the tests' process ({why}); {}",
                    if allow {
                        "taken as the repair (--allow-in-process)"
                    } else {
                        "not counted as fixed (--allow-in-process takes it)"
                    }
                );
                repair.in_process = Some(why);
            }
            Err(why) => repair.outcome = format!("not fixed: {why:#}"),
        }
    }

    /// Pairs among the first `pairs_of` suspects, in rank order: the first's repair staged (when
    /// it changed something and broke no passing test), the second repaired on top of it.
    async fn pairs(
        &self,
        root: &Path,
        found: &Localisation,
        singles: &[Repair],
        tried: &mut Vec<Tried>,
    ) -> anyhow::Result<Option<Vec<Repair>>> {
        let top: Vec<&Candidate> = found.ranked.iter().take(self.plan.pairs_of).collect();
        let first_of = |c: &Candidate| singles.iter().find(|r| r.target == c.target());
        for (i, a) in top.iter().enumerate() {
            let Some(first) = first_of(a) else { continue };
            if first.program == first.before {
                continue;
            }
            if let Err(why) = self.keeps_passing(root, first) {
                self.note(format!("{}'s repair is not staged for a pair: {why}", first.target));
                continue;
            }
            let stage = stage_dir(self.state, root, first)?;
            for b in &top[i + 1..] {
                if b.file == a.file && b.name == a.name {
                    continue;
                }
                (self.report)(FixEvent::TryingPair {
                    target: b.target(),
                    on_top_of: first.target.clone(),
                });
                let Some(second) = self.attempt(&stage, b, true).await? else {
                    self.record_tried(tried, skipped(b, Some(&first.target)));
                    continue;
                };
                self.record_tried(tried, second.tried(Some(&first.target)));
                if second.fixed {
                    let first = Repair {
                        fixed: true,
                        ..first.clone()
                    };
                    return Ok(Some(vec![first, second]));
                }
            }
        }
        Ok(None)
    }

    /// A pair's first repair is kept only when every regression test still passes with it.
    fn keeps_passing(&self, root: &Path, r: &Repair) -> Result<(), String> {
        if self.hidden.is_empty() {
            return Ok(());
        }
        let spec = RunSpec {
            replace: Some((&r.file, &r.program)),
            target: Some(&r.name),
            ids: self.hidden,
            withhold: &[],
        };
        let run = self.runner.run(root, &spec, TestLimits::default()).map_err(|e| format!("{e:#}"))?;
        run.all_passed().map_err(|why| format!("it breaks {why}"))
    }

    /// An attempt's end, told and kept.
    fn record_tried(&self, tried: &mut Vec<Tried>, t: Tried) {
        (self.report)(FixEvent::Tried {
            target: t.target.clone(),
            on_top_of: t.on_top_of.clone(),
            outcome: t.outcome.clone(),
            fixed: t.fixed && t.in_process.is_none(),
            unverified: t.in_process.is_some(),
        });
        tried.push(t);
    }
}
