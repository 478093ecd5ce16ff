//! `rgd fix` in front of its user: the fault located and said, the project's index readied, the
//! agents run on each suspect as `rgd solve --repo` would (`repo::fix` decides which, in what
//! order, and how each verdict counts), and the fix's events shown as lines or in the TUI's fix
//! view. `rgd bench real --fix` calls the same with nothing shown.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::config::Configured;
use crate::front::attempt::{AttemptSettings, Watcher, run_agents};
use crate::launch::project::{
    FailureArgs, RepoSolveArgs, open, prepare_targets, print_ranking, print_report, project_root, suspects, target_task,
};
use crate::repo::fix::event::{FixEvent, Suspect};
use crate::repo::fix::record::{FixRecord, save_record, split_tests};
use crate::repo::fix::{Agents, AgentsRan, Ended, FixPlan, Fixer};
use crate::repo::index::Embed;
use crate::repo::locate::localise::Localisation;
use crate::repo::run::testrun::ProjectTests;
use crate::repo::task::RepoTaskSpec;
use crate::store::Home;

/// What a fix is asked to do.
#[derive(Debug)]
pub struct FixOptions {
    /// The project, the failing tests, and the selection a repair must not break.
    pub failure: FailureArgs,
    pub plan: FixPlan,
    /// Each attempt prints only its outcome.
    pub quiet: bool,
    /// Context and interpreter, as for `rgd solve --repo` (the in-process leave that counts is
    /// `plan.allow_in_process`).
    pub repo: RepoSolveArgs,
    /// Each attempt's run: strategy, iterations, sandbox, and whether the TUI or JSON shows it.
    pub attempt: AttemptSettings,
    /// Seconds a test may take while the fault is located (rgd locate's default otherwise).
    pub test_seconds: Option<f64>,
}

impl FixOptions {
    /// `rgd fix`'s defaults on the project `repo` with its `failing` tests, run by `python`: for
    /// a command that repairs without a command line of its own (`rgd bench real --fix`).
    pub fn new(repo: PathBuf, failing: Vec<String>, python: Option<PathBuf>) -> FixOptions {
        FixOptions {
            failure: FailureArgs {
                repo,
                failing,
                tests: None,
                rerank_suspects: None,
            },
            plan: FixPlan {
                candidates: 3,
                pairs_of: 3,
                allow_in_process: false,
            },
            quiet: false,
            repo: RepoSolveArgs::with_python(python),
            attempt: AttemptSettings::new(crate::launch::RunPlan::new(crate::engine::Strategy::Rgd)),
            test_seconds: None,
        }
    }
}

/// Where the fix's events go (a printer, the view, or nowhere), each kept for the record.
struct Reporter<'a> {
    out: &'a (dyn Fn(&FixEvent) + Sync),
    kept: Mutex<Vec<FixEvent>>,
}

impl Reporter<'_> {
    fn send(&self, event: FixEvent) {
        (self.out)(&event);
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }

    fn into_events(self) -> Vec<FixEvent> {
        self.kept.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

/// The fault located, the tests split and the project indexed: what every attempt shares.
struct Prepared {
    root: PathBuf,
    runner: ProjectTests,
    found: Localisation,
    visible: Vec<String>,
    hidden: Vec<String>,
    index: crate::repo::RepoIndex,
}

/// Runs the agents on a target as `rgd solve --repo` would, each attempt a recorded run.
struct OnProject<'a> {
    home: &'a Home,
    from: &'a Configured<'a>,
    opts: &'a FixOptions,
    prepared: &'a Prepared,
    report: &'a Reporter<'a>,
    /// The attempts print nothing of their own (a view, or another command's output, is around).
    silent: bool,
}

impl Agents for OnProject<'_> {
    async fn repair(&self, root: &Path, target: &str) -> anyhow::Result<AgentsRan> {
        let p = self.prepared;
        let spec = RepoTaskSpec {
            root,
            python: p.runner.python(),
            target,
            visible: &p.visible,
            hidden: &p.hidden,
            context: None,
        };
        let say = |line: &str| self.report.send(FixEvent::Note { text: line.to_string() });
        let task = target_task(self.from, &p.index, &self.opts.repo, &spec, &say).await?;
        let watch = |run_id: &str, task_id: &str| {
            self.report.send(FixEvent::Running {
                run_id: run_id.into(),
                task_id: task_id.into(),
            })
        };
        let watcher: Option<Watcher<'_>> = self.silent.then_some(&watch);
        let mut settings = self.opts.attempt.clone();
        settings.plan.allow_in_process = self.opts.plan.allow_in_process;
        // A user's red test can be the thing that is wrong: the Feedback agent may say so.
        settings.plan.allow_flag = true;
        let attempt = run_agents(self.home, self.from, settings, self.opts.quiet, &task, watcher).await?;
        Ok(AgentsRan {
            run_id: attempt.run_id,
            result: attempt.result,
        })
    }
}

/// Locates the fault (unless `found` is given) and opens the project's index, saying what it
/// found when `print`.
async fn prepare(
    home: &Home,
    from: &Configured<'_>,
    opts: &FixOptions,
    found: Option<Localisation>,
    print: bool,
) -> anyhow::Result<Prepared> {
    let root = project_root(&opts.failure.repo)?;
    let runner = ProjectTests::with(opts.repo.python.as_deref())?;
    let found = match found {
        Some(found) => found,
        None => {
            let test_seconds = opts.test_seconds.unwrap_or(crate::repo::locate::localise::TEST_SECONDS);
            suspects(from, &runner, &root, &opts.failure, test_seconds).await?
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
    crate::repo::run::withhold::Withheld::plan(&crate::repo::index::project_files(&root)?, &visible, &hidden)?;
    let shown = opts.plan.candidates.max(opts.plan.pairs_of);
    if print && !opts.attempt.tui {
        println!("suspects:");
        print_ranking(&found.ranked, found.failing_spectra, shown);
    }
    let (mut index, report) = open(home, &root, Embed::Ready)?;
    if print && !opts.attempt.json {
        print_report(&report, &root);
    }
    let targets: Vec<String> = found.ranked.iter().take(shown).map(|c| c.target()).collect();
    prepare_targets(&mut index, &root, &targets, &opts.repo)?;
    Ok(Prepared {
        root,
        runner,
        found,
        visible,
        hidden,
        index,
    })
}

impl Prepared {
    /// The suspects, announced; then every attempt, driven by `repo::fix`.
    async fn drive(
        &self,
        home: &Home,
        from: &Configured<'_>,
        opts: &FixOptions,
        report: &Reporter<'_>,
        silent: bool,
    ) -> anyhow::Result<Ended> {
        report.send(FixEvent::Suspects {
            suspects: self
                .found
                .ranked
                .iter()
                .take(opts.plan.candidates.max(opts.plan.pairs_of))
                .map(|c| Suspect::of(c, self.found.failing_spectra))
                .collect(),
            candidates: opts.plan.candidates,
            visible: self.visible.len(),
            hidden: self.hidden.len(),
        });
        let agents = OnProject {
            home,
            from,
            opts,
            prepared: self,
            report,
            silent,
        };
        let send = |e: FixEvent| report.send(e);
        let fixer = Fixer {
            agents: &agents,
            runner: &self.runner,
            index: &self.index,
            visible: &self.visible,
            hidden: &self.hidden,
            plan: opts.plan,
            state: &home.root,
            report: &send,
        };
        fixer.drive(&self.root, &self.found).await
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
            events: reporter.into_events(),
        };
        let saved = save_record(&home.root, &record)?;
        Ok((record, saved))
    }
}

/// A fix as part of another command (`rgd bench real`): nothing printed, each event handed to
/// `events`, the project never written; the record kept in `fix/`. With `found`, the caller's
/// localisation of these failing tests in this project stands for the fix's own.
pub async fn fix_quietly(
    home: &Home,
    from: &Configured<'_>,
    opts: &FixOptions,
    found: Option<Localisation>,
    events: &(dyn Fn(&FixEvent) + Sync),
) -> anyhow::Result<FixRecord> {
    let p = prepare(home, from, opts, found, false).await?;
    let reporter = Reporter {
        out: events,
        kept: Mutex::new(Vec::new()),
    };
    let ended = p.drive(home, from, opts, &reporter, true).await?;
    Ok(p.recorded(home, ended, reporter)?.0)
}

/// `rgd fix` itself: the ranking and each attempt printed as lines, or (`attempt.tui`) shown in
/// the fix view, whose events are printed after it closes. The record and where it was kept;
/// `None` when the user closed the view before the fix ended (it stops there).
pub async fn fix_shown(home: &Home, from: &Configured<'_>, opts: &FixOptions) -> anyhow::Result<Option<(FixRecord, PathBuf)>> {
    let p = prepare(home, from, opts, None, true).await?;
    let (to_view, from_fix) = tokio::sync::mpsc::unbounded_channel::<FixEvent>();
    let send = move |e: &FixEvent| {
        let _ = to_view.send(e.clone());
    };
    let tui = opts.attempt.tui;
    let reporter = Reporter {
        out: if tui { &send } else { &print_event },
        kept: Mutex::new(Vec::new()),
    };
    let ended = if tui {
        let Some(ended) = watched(home, p.drive(home, from, opts, &reporter, true), &reporter, from_fix).await? else {
            return Ok(None);
        };
        for e in reporter.kept.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            if let FixEvent::Finished { .. } = e {
                print_event(e);
            }
        }
        ended
    } else {
        p.drive(home, from, opts, &reporter, false).await?
    };
    p.recorded(home, ended, reporter).map(Some)
}

fn print_event(e: &FixEvent) {
    if let Some(line) = e.line() {
        eprintln!("{line}");
    }
}

/// `driving` while the TUI shows its events (the view runs on a thread of its own, so a test run
/// that blocks this task never freezes it). `None` when the user closed the view first.
async fn watched(
    home: &Home,
    driving: impl std::future::Future<Output = anyhow::Result<Ended>>,
    report: &Reporter<'_>,
    events: tokio::sync::mpsc::UnboundedReceiver<FixEvent>,
) -> anyhow::Result<Option<Ended>> {
    let view = crate::tui::watch_fix(home.clone(), events);
    let mut closed = tokio::task::spawn_blocking(move || view.join());
    let view_ended = |joined: Result<std::thread::Result<anyhow::Result<()>>, tokio::task::JoinError>| match joined {
        Ok(Ok(result)) => result,
        _ => Err(anyhow::anyhow!("the fix view ended abnormally")),
    };
    tokio::select! {
        ended = driving => {
            if let Err(e) = &ended {
                report.send(FixEvent::Note { text: format!("the fix failed: {e:#}") });
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
