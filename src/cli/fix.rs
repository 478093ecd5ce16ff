//! `rgd fix --repo DIR --failing ID... [--tests SEL] [--candidates N] [--pairs-of N] [--write]`:
//! from a red test to a repaired project. The fault is located first (`repo/localise.rs`); then
//! the agents repair the ranked candidates one function at a time, as `rgd solve --repo` does,
//! with the failing tests visible (their source and, from the engine, their failures) and the
//! selection's passing tests as the hidden regression suite that decides success. The first
//! candidate whose repair makes every failing test pass and breaks no passing test wins. When no
//! single function does, pairs of the first candidates are tried: the first's repair (kept only
//! if it broke no passing test) is staged in a copy of the project, and the second is repaired on
//! top of it. The result is one diff; `--write` applies it, keeping FILE.orig.
//!
//! Every attempt is a run of its own (replayed and forked like any run); `~/.rgd/fix/` keeps a
//! record of the ranking, the attempts and the events. What the fix reports is a stream of
//! `FixEvent`s: printed as lines headless, shown by the TUI's fix panel with `--tui`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context;
use clap::Args;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::args::CommonArgs;
use crate::config::LlmArgs;
use crate::front::attempt::{Watcher, run_agents, write_keeping_backup};
use crate::launch::project::{FailureArgs, print_ranking, suspects};
use crate::launch::project::{RepoSolveArgs, open, print_report, project_root, rerun, target_task};
use crate::repo::fix_event::{FixEvent, Suspect};
use crate::repo::index::Embed;
use crate::repo::localise::Localisation;
use crate::repo::locate::Candidate;
use crate::repo::task::RepoTaskSpec;
use crate::repo::testrun::{ProjectTests, RunSpec, TestLimits, copy_project};
use crate::store::Home;

#[derive(Debug, Args)]
pub struct FixArgs {
    /// The project, the failing tests, and the selection whose passing tests a repair must not
    /// break
    #[command(flatten)]
    pub failure: FailureArgs,
    /// How many of the ranked candidates the agents repair, one function at a time
    #[arg(long, default_value_t = 3, value_parser = crate::validate::parse_count)]
    pub candidates: usize,
    /// When no single function's repair fixes it: try pairs among the first N candidates (0: none)
    #[arg(long, default_value_t = 3)]
    pub pairs_of: usize,
    /// Apply the fix to the project (each changed file's old version kept as FILE.orig)
    #[arg(long)]
    pub write: bool,
    /// Only print the ranking, the outcome and the diff
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub repo_args: RepoSolveArgs,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

/// One repair the agents tried.
#[derive(Debug, Clone, Serialize)]
pub struct Tried {
    /// The function repaired, and the one staged under it (a pair's first).
    pub target: String,
    pub on_top_of: Option<String>,
    pub run_id: String,
    /// "fixed", or why not.
    pub outcome: String,
    /// It passed every test, proven and run again (with `in_process`: unverified, and taken only
    /// under --allow-in-process).
    #[serde(default)]
    pub fixed: bool,
    /// Why the verdict that fixed it was reached in the tests' process (`--allow-in-process`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<String>,
    /// The model calls the attempt made, and their tokens (prompt and answer).
    pub calls: u32,
    pub tokens: u64,
}

/// A file the fix changes.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub file: String,
    pub before: String,
    pub after: String,
}

impl Change {
    /// For `patch -p1`.
    fn diff(&self) -> String {
        crate::code::unified_diff_named(&self.before, &self.after, &format!("a/{}", self.file), &format!("b/{}", self.file))
    }
}

/// What `rgd fix` keeps in `fix/` (and prints with --json).
#[derive(Debug, Serialize)]
pub struct FixRecord {
    pub root: String,
    pub failing: Vec<String>,
    pub regression: Vec<String>,
    pub ranking: Vec<Candidate>,
    pub tried: Vec<Tried>,
    pub fixed_by: Option<Vec<String>>,
    /// A repair passed only with the program in the tests' process: which, and why it could not
    /// be isolated. Never counted as fixed; `fixed_by` names it only under --allow-in-process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified: Option<String>,
    pub changes: Vec<Change>,
    /// What the printer printed and the view showed, in order.
    pub events: Vec<FixEvent>,
}

/// Where the fix's events go (a printer or the view), each kept for the record.
struct Reporter<'a> {
    out: &'a (dyn Fn(&FixEvent) + Sync),
    kept: Mutex<Vec<FixEvent>>,
}

impl Reporter<'_> {
    fn send(&self, event: FixEvent) {
        (self.out)(&event);
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }

    fn note(&self, text: String) {
        self.send(FixEvent::Note { text });
    }
}

/// Everything the attempts share.
struct Ctx<'a> {
    home: &'a Home,
    from: &'a crate::config::Configured<'a>,
    args: &'a FixArgs,
    runner: &'a ProjectTests,
    index: &'a crate::repo::RepoIndex,
    python: &'a Path,
    visible: &'a [String],
    hidden: &'a [String],
    report: &'a Reporter<'a>,
    /// The attempts print nothing of their own (another command's output is around them).
    silent: bool,
}

/// What one attempt left.
#[derive(Clone)]
struct Repair {
    target: String,
    file: String,
    name: String,
    before: String,
    program: String,
    run_id: String,
    /// It passed every failing and every regression test, proven and run again.
    fixed: bool,
    /// Why that verdict was reached in the tests' process (best effort), when it was.
    in_process: Option<String>,
    outcome: String,
    calls: u32,
    tokens: u64,
}

pub async fn execute(home: &Home, config: Option<&Path>, llm: &LlmArgs, args: FixArgs) -> anyhow::Result<ExitCode> {
    if args.common.tui && (args.common.breakpoints.is_some() || args.common.control.is_some()) {
        anyhow::bail!("rgd fix --tui follows each attempt and cannot drive the debugger: give --break without --tui (commands on stdin)");
    }
    let from = crate::config::Configured::load(config, &home.root, llm)?;
    let p = prepare(home, &from, &args, None, true).await?;
    // Headless, the events are lines on stderr; with --tui, the view's (printed after it closes).
    let (to_view, from_fix) = tokio::sync::mpsc::unbounded_channel::<FixEvent>();
    let send = move |e: &FixEvent| {
        let _ = to_view.send(e.clone());
    };
    let reporter = Reporter {
        out: if args.common.tui { &send } else { &print_event },
        kept: Mutex::new(Vec::new()),
    };
    let cx = p.context(home, &from, &args, &reporter, false);
    let ended = match args.common.tui {
        false => drive(&cx, &p.root, &p.found).await?,
        true => match watched(&cx, &p.root, &p.found, from_fix).await? {
            Some(ended) => {
                for e in reporter.kept.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    if let FixEvent::Finished { .. } = e {
                        print_event(e);
                    }
                }
                ended
            }
            None => {
                eprintln!("stopped: the view closed before the fix ended; nothing was written (each attempt so far is a recorded run)");
                return Ok(crate::front::exit::code(crate::front::exit::INTERRUPTED));
            }
        },
    };
    let (record, saved) = p.recorded(home, ended, reporter)?;
    if args.common.json {
        println!("{}", serde_json::to_string(&record)?);
    }
    eprintln!("\nattempts ({} recorded): {}", saved.display(), {
        let ids: Vec<String> = record
            .tried
            .iter()
            .filter(|t| !t.run_id.is_empty())
            .map(|t| format!("rgd replay {}", t.run_id))
            .collect();
        ids.join("; ")
    });
    // An unverified repair is never a fix: its own status, written or not (`exit::UNVERIFIED`).
    let ended = match record.unverified {
        Some(_) => crate::front::exit::code(crate::front::exit::UNVERIFIED),
        None => ExitCode::SUCCESS,
    };
    if record.fixed_by.is_none() {
        return Ok(if record.unverified.is_some() { ended } else { ExitCode::FAILURE });
    }
    if !args.common.json {
        for c in &record.changes {
            println!("{}", crate::terminal::clean(&c.diff()));
        }
    }
    if args.write {
        for c in &record.changes {
            write_keeping_backup(&p.root.join(&c.file), &c.after)?;
        }
    } else {
        eprintln!("the project is unchanged (--write applies the fix)");
    }
    Ok(ended)
}

/// `rgd fix` as part of another command (`rgd bench real`): nothing printed, each event handed
/// to `events`, the project never written; the record it kept in `fix/`. With `found`, the
/// caller's localisation of these failing tests in this project stands for `rgd fix`'s own.
pub async fn fix_for(
    home: &Home,
    from: &crate::config::Configured<'_>,
    args: &FixArgs,
    found: Option<Localisation>,
    events: &(dyn Fn(&FixEvent) + Sync),
) -> anyhow::Result<FixRecord> {
    let p = prepare(home, from, args, found, false).await?;
    let reporter = Reporter {
        out: events,
        kept: Mutex::new(Vec::new()),
    };
    let ended = drive(&p.context(home, from, args, &reporter, true), &p.root, &p.found).await?;
    Ok(p.recorded(home, ended, reporter)?.0)
}

fn print_event(e: &FixEvent) {
    if let Some(line) = e.line() {
        eprintln!("{line}");
    }
}

/// The fault located, the tests split and the project indexed: what every attempt shares.
struct Prepared {
    root: PathBuf,
    runner: ProjectTests,
    python: PathBuf,
    found: Localisation,
    visible: Vec<String>,
    hidden: Vec<String>,
    index: crate::repo::RepoIndex,
}

/// Locates the fault and opens the project's index, saying what it found when `print`.
async fn prepare(
    home: &Home,
    from: &crate::config::Configured<'_>,
    args: &FixArgs,
    found: Option<Localisation>,
    print: bool,
) -> anyhow::Result<Prepared> {
    let root = project_root(&args.failure.repo)?;
    let runner = ProjectTests::with(args.repo_args.python.as_deref())?;
    let python = runner.python().to_path_buf();
    let found = match found {
        Some(found) => found,
        None => {
            let test_seconds = args.common.test_timeout.unwrap_or(crate::repo::localise::TEST_SECONDS);
            suspects(from, &runner, &root, &args.failure, test_seconds).await?
        }
    };
    let (visible, hidden) = split_tests(&found);
    if print {
        eprintln!(
            "{} failing tests (visible to the agents), {} passing tests as the regression suite (hidden); {}; {}",
            visible.len(),
            hidden.len(),
            runner.confinement().describe(),
            runner.confinement().program_reads()
        );
        if !found.also_failing.is_empty() {
            eprintln!(
                "{} other tests of the selection fail too and are left out (e.g. {})",
                found.also_failing.len(),
                found.also_failing[0]
            );
        }
    }
    crate::repo::withhold::Withheld::plan(&crate::repo::index::project_files(&root)?, &visible, &hidden)?;
    let shown = args.candidates.max(args.pairs_of);
    if print && !args.common.tui {
        println!("suspects:");
        print_ranking(&found.ranked, found.failing_spectra, shown);
    }
    let (mut index, report) = open(home, &root, Embed::Ready)?;
    if print && !args.common.json {
        print_report(&report, &root);
    }
    let targets: Vec<String> = found.ranked.iter().take(shown).map(|c| c.target()).collect();
    crate::launch::project::prepare_targets(&mut index, &root, &targets, &args.repo_args)?;
    Ok(Prepared {
        root,
        runner,
        python,
        found,
        visible,
        hidden,
        index,
    })
}

impl Prepared {
    /// What the attempts share; the suspects are announced to `report` first.
    fn context<'a>(
        &'a self,
        home: &'a Home,
        from: &'a crate::config::Configured<'a>,
        args: &'a FixArgs,
        report: &'a Reporter<'a>,
        silent: bool,
    ) -> Ctx<'a> {
        report.send(FixEvent::Suspects {
            suspects: self
                .found
                .ranked
                .iter()
                .take(args.candidates.max(args.pairs_of))
                .map(|c| Suspect::of(c, self.found.failing_spectra))
                .collect(),
            candidates: args.candidates,
            visible: self.visible.len(),
            hidden: self.hidden.len(),
        });
        Ctx {
            home,
            from,
            args,
            runner: &self.runner,
            index: &self.index,
            python: &self.python,
            visible: &self.visible,
            hidden: &self.hidden,
            report,
            silent,
        }
    }

    /// The record of what the attempts came to, kept in `fix/` (and where).
    fn recorded(&self, home: &Home, ended: Ended, reporter: Reporter<'_>) -> anyhow::Result<(FixRecord, PathBuf)> {
        let Ended {
            tried,
            fixed,
            changes,
            unverified,
        } = ended;
        let record = FixRecord {
            root: self.root.display().to_string(),
            failing: self.found.failing.clone(),
            regression: self.hidden.clone(),
            ranking: self.found.ranked[..self.found.ranked.len().min(20)].to_vec(),
            tried,
            fixed_by: fixed.as_ref().map(|r| r.iter().map(|r| r.target.clone()).collect()),
            unverified,
            changes,
            events: reporter.kept.into_inner().unwrap_or_else(|e| e.into_inner()),
        };
        let saved = save_record(home, &record)?;
        Ok((record, saved))
    }
}

/// What the attempts came to.
struct Ended {
    tried: Vec<Tried>,
    fixed: Option<Vec<Repair>>,
    changes: Vec<Change>,
    /// "TARGET (in-process: why)" of the repair that passed only in the tests' process: the one
    /// taken under --allow-in-process, else the first tried.
    unverified: Option<String>,
}

/// The attempts in rank order, then pairs; ends with the `Finished` event.
async fn drive(cx: &Ctx<'_>, root: &Path, found: &Localisation) -> anyhow::Result<Ended> {
    let mut tried = Vec::new();
    let mut singles: Vec<Repair> = Vec::new();
    let mut fixed: Option<Vec<Repair>> = None;
    let shortlist: Vec<&Candidate> = found.ranked.iter().take(cx.args.candidates).collect();
    for (i, c) in shortlist.iter().enumerate() {
        cx.report.send(FixEvent::Trying {
            target: c.target(),
            nth: i + 1,
            of: shortlist.len(),
            why: c.why(found.failing_spectra),
        });
        let Some(repair) = attempt(cx, root, c, None).await? else {
            record_tried(cx, &mut tried, skipped(c, None));
            continue;
        };
        record_tried(cx, &mut tried, tried_of(&repair, None));
        if repair.fixed {
            fixed = Some(vec![repair]);
            break;
        }
        singles.push(repair);
    }
    if fixed.is_none() && cx.args.pairs_of >= 2 {
        fixed = pairs(cx, root, found, &singles, &mut tried).await?;
    }
    let changes = fixed.as_deref().map(changes_of).unwrap_or_default();
    let unverified = match &fixed {
        Some(repairs) => repairs.iter().find(|r| r.in_process.is_some()).map(|r| (&r.target, &r.in_process)),
        None => tried.iter().find(|t| t.in_process.is_some()).map(|t| (&t.target, &t.in_process)),
    }
    .map(|(target, why)| format!("{target} (in-process: {})", why.as_deref().unwrap_or_default()));
    cx.report.send(FixEvent::Finished {
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

/// `drive` while the TUI shows its events (the view runs on a thread of its own, so a test run
/// that blocks this task never freezes it). `None` when the user closed the view first: the fix
/// stops there.
async fn watched(
    cx: &Ctx<'_>,
    root: &Path,
    found: &Localisation,
    events: tokio::sync::mpsc::UnboundedReceiver<FixEvent>,
) -> anyhow::Result<Option<Ended>> {
    let view = crate::tui::watch_fix(cx.home.clone(), events);
    let mut closed = tokio::task::spawn_blocking(move || view.join());
    let view_ended = |joined: Result<std::thread::Result<anyhow::Result<()>>, tokio::task::JoinError>| match joined {
        Ok(Ok(result)) => result,
        _ => Err(anyhow::anyhow!("the fix view ended abnormally")),
    };
    tokio::select! {
        ended = drive(cx, root, found) => {
            if let Err(e) = &ended {
                cx.report.send(FixEvent::Note { text: format!("the fix failed: {e:#}") });
            }
            // The view stays until the user leaves it.
            view_ended(closed.await)?;
            ended.map(Some)
        }
        joined = &mut closed => {
            view_ended(joined)?;
            Ok(None)
        }
    }
}

/// The failing tests and their parametrised siblings that passed are shown to the agents (the
/// siblings' source is the failing test's); every other passing test is the regression suite.
fn split_tests(found: &Localisation) -> (Vec<String>, Vec<String>) {
    let function = |id: &str| id.split('[').next().unwrap_or(id).to_string();
    let failing: std::collections::HashSet<String> = found.failing.iter().map(|id| function(id)).collect();
    let (siblings, regression): (Vec<String>, Vec<String>) = found.passing.iter().cloned().partition(|id| failing.contains(&function(id)));
    let mut visible = found.failing.clone();
    visible.extend(siblings);
    (visible, regression)
}

/// The agents repair `c` in the project at `root` (the original, or a copy with a pair's first
/// repair staged); `None` when the function cannot be a target (said why).
async fn attempt(cx: &Ctx<'_>, root: &Path, c: &Candidate, staged: Option<&Repair>) -> anyhow::Result<Option<Repair>> {
    let target = c.target();
    let before = std::fs::read_to_string(root.join(&c.file)).with_context(|| format!("reading {}", c.file))?;
    if let Err(e) = crate::code::find_function(&before, &c.name) {
        cx.report.note(format!("{target}: skipped ({e})"));
        return Ok(None);
    }
    if cx.index.target(&target).is_err() {
        cx.report.note(format!("{target}: skipped (not a function the index knows)"));
        return Ok(None);
    }
    let spec = RepoTaskSpec {
        root,
        python: cx.python,
        target: &target,
        visible: cx.visible,
        hidden: cx.hidden,
        context: None,
    };
    let say = |line: &str| cx.report.note(line.to_string());
    let task = target_task(cx.from, cx.index, &cx.args.repo_args, &spec, &say).await?;
    let watch = |run_id: &str, task_id: &str| {
        cx.report.send(FixEvent::Running {
            run_id: run_id.into(),
            task_id: task_id.into(),
        })
    };
    let watcher: Option<Watcher<'_>> = (cx.args.common.tui || cx.silent).then_some(&watch);
    let mut common = cx.args.common.clone();
    common.allow_in_process = cx.args.repo_args.allow_in_process;
    // A user's red test can be the thing that is wrong: the Feedback agent may say so.
    common.allow_flag = true;
    let attempt = run_agents(cx.home, cx.from, common.attempt(), cx.args.quiet, &task, watcher).await?;
    let mut repair = Repair {
        target: target.clone(),
        file: c.file.clone(),
        name: c.name.clone(),
        before: before.clone(),
        program: before,
        run_id: attempt.run_id,
        fixed: false,
        in_process: None,
        outcome: "the run recorded no result".into(),
        calls: 0,
        tokens: 0,
    };
    let Some(result) = attempt.result else {
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
    let all: Vec<String> = cx.visible.iter().chain(cx.hidden).cloned().collect();
    let checked = result
        .proven()
        .map_err(anyhow::Error::msg)
        .and_then(|()| rerun(cx.runner, root, &repair.file, &repair.name, &all, &repair.program));
    let with_first = if staged.is_some() { " (with the first)" } else { "" };
    match checked {
        Ok(None) => {
            repair.fixed = true;
            repair.outcome = format!("fixed{with_first}");
        }
        // Passed, but with the program in the tests' process: never counted as fixed. Only the
        // user's leave (--allow-in-process) makes it the repair rgd fix ends with and writes.
        Ok(Some(why)) => {
            let allow = cx.args.repo_args.allow_in_process;
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
    Ok(Some(repair))
}

/// Pairs among the first `--pairs-of` candidates, in rank order: the first's repair staged (when
/// it changed something and broke no passing test), the second repaired on top of it.
async fn pairs(
    cx: &Ctx<'_>,
    root: &Path,
    found: &Localisation,
    singles: &[Repair],
    tried: &mut Vec<Tried>,
) -> anyhow::Result<Option<Vec<Repair>>> {
    let top: Vec<&Candidate> = found.ranked.iter().take(cx.args.pairs_of).collect();
    let first_of = |c: &Candidate| singles.iter().find(|r| r.target == c.target());
    for (i, a) in top.iter().enumerate() {
        let Some(first) = first_of(a) else { continue };
        if first.program == first.before {
            continue;
        }
        if let Err(why) = keeps_passing(cx, root, first) {
            cx.report.note(format!("{}'s repair is not staged for a pair: {why}", first.target));
            continue;
        }
        let stage = stage_dir(cx.home, root, first)?;
        for b in &top[i + 1..] {
            if b.file == a.file && b.name == a.name {
                continue;
            }
            cx.report.send(FixEvent::TryingPair {
                target: b.target(),
                on_top_of: first.target.clone(),
            });
            let Some(second) = attempt(cx, &stage, b, Some(first)).await? else {
                record_tried(cx, tried, skipped(b, Some(&first.target)));
                continue;
            };
            record_tried(cx, tried, tried_of(&second, Some(&first.target)));
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
fn keeps_passing(cx: &Ctx<'_>, root: &Path, r: &Repair) -> anyhow::Result<(), String> {
    if cx.hidden.is_empty() {
        return Ok(());
    }
    let spec = RunSpec {
        replace: Some((&r.file, &r.program)),
        target: Some(&r.name),
        ids: cx.hidden,
        withhold: &[],
    };
    let run = cx.runner.run(root, &spec, TestLimits::default()).map_err(|e| format!("{e:#}"))?;
    run.all_passed().map_err(|why| format!("it breaks {why}"))
}

/// A copy of the project with `r`'s repair in place, under the state directory (named by its
/// content, so a fork of the pair's run finds it again).
fn stage_dir(home: &Home, root: &Path, r: &Repair) -> anyhow::Result<PathBuf> {
    let mut hash = Sha256::new();
    hash.update(root.display().to_string());
    hash.update(&r.file);
    hash.update(&r.program);
    let dir = home.root.join("fix").join(format!("stage-{}", hex::encode(&hash.finalize()[..6])));
    if !dir.join(&r.file).exists() {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        copy_project(root, &dir)?;
        std::fs::write(dir.join(&r.file), &r.program)?;
    }
    Ok(dir)
}

/// The files a fix changes; a pair in one file is one change (the second's program holds both).
fn changes_of(fix: &[Repair]) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    for r in fix {
        match out.iter_mut().find(|c| c.file == r.file) {
            Some(c) => c.after = r.program.clone(),
            None => out.push(Change {
                file: r.file.clone(),
                before: r.before.clone(),
                after: r.program.clone(),
            }),
        }
    }
    out
}

fn tried_of(r: &Repair, on_top_of: Option<&String>) -> Tried {
    Tried {
        target: r.target.clone(),
        on_top_of: on_top_of.cloned(),
        run_id: r.run_id.clone(),
        outcome: r.outcome.clone(),
        fixed: r.fixed,
        in_process: r.in_process.clone(),
        calls: r.calls,
        tokens: r.tokens,
    }
}

/// An attempt's end, told and kept.
fn record_tried(cx: &Ctx<'_>, tried: &mut Vec<Tried>, t: Tried) {
    cx.report.send(FixEvent::Tried {
        target: t.target.clone(),
        on_top_of: t.on_top_of.clone(),
        outcome: t.outcome.clone(),
        fixed: t.fixed && t.in_process.is_none(),
        unverified: t.in_process.is_some(),
    });
    tried.push(t);
}

fn skipped(c: &Candidate, on_top_of: Option<&String>) -> Tried {
    Tried {
        target: c.target(),
        on_top_of: on_top_of.cloned(),
        run_id: String::new(),
        outcome: "skipped: not a function the agents can repair".into(),
        fixed: false,
        in_process: None,
        calls: 0,
        tokens: 0,
    }
}

fn save_record(home: &Home, record: &FixRecord) -> anyhow::Result<PathBuf> {
    let dir = home.root.join("fix");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S%.3f");
    let path = dir.join(format!("{stamp}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(record)?)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_of_a_failing_test_are_visible_and_the_rest_is_the_regression_suite() {
        let found = Localisation {
            failing: vec!["t.py::test_a[1]".into()],
            passing: vec!["t.py::test_a[2]".into(), "t.py::test_b".into()],
            also_failing: vec![],
            stopped: vec![],
            ranked: vec![],
            failures: vec![],
            failing_spectra: 1,
            passing_spectra: 2,
        };
        let (visible, hidden) = split_tests(&found);
        assert_eq!(visible, ["t.py::test_a[1]", "t.py::test_a[2]"]);
        assert_eq!(hidden, ["t.py::test_b"]);
    }

    #[test]
    fn a_pair_in_one_file_is_one_change_holding_both_repairs() {
        let r = |target: &str, file: &str, before: &str, program: &str| Repair {
            target: target.into(),
            file: file.into(),
            name: "f".into(),
            before: before.into(),
            program: program.into(),
            run_id: String::new(),
            fixed: true,
            in_process: None,
            outcome: String::new(),
            calls: 0,
            tokens: 0,
        };
        let changes = changes_of(&[r("m.py::f", "m.py", "v0", "v1"), r("m.py::g", "m.py", "v1", "v2")]);
        assert_eq!(changes.len(), 1);
        assert_eq!((changes[0].before.as_str(), changes[0].after.as_str()), ("v0", "v2"));
        let changes = changes_of(&[r("a.py::f", "a.py", "a0", "a1"), r("b.py::g", "b.py", "b0", "b1")]);
        assert_eq!(changes.len(), 2);
    }
}
