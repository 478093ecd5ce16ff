//! `rgd solve --repo DIR --target path/to/mod.py::name [--tests SEL] [--hidden SEL] [--write]`: the
//! agents work on one function of a Python project. The project is indexed (incrementally), the
//! context for the function retrieved (leaving out every test file: hidden tests must never reach a
//! prompt) and put in the question; the visible and hidden tests are the project's own, selected
//! by pytest; they run in a throw-away copy (`repo/run/testrun.rs`), never in the project.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::solve::SolveArgs;
use crate::config::LlmArgs;
use crate::front::attempt::{How, solve_task};
use crate::launch::project::{check_target, open, prepare_targets, print_report, project_root, target_task, verifier};
use crate::repo::index::Embed;
use crate::repo::index::chunks::is_test_file;
use crate::repo::run::confine::Confinement;
use crate::repo::run::testrun::{ProjectTests, selection};
use crate::repo::task::RepoTaskSpec;
use crate::store::Home;

pub async fn execute(home: &Home, config: Option<&Path>, llm: &LlmArgs, args: SolveArgs) -> anyhow::Result<ExitCode> {
    let (Some(repo), Some(target)) = (args.repo.clone(), args.target.clone()) else {
        bail!("--repo DIR needs --target path/to/mod.py::name");
    };
    let root = project_root(&repo)?;
    // Everything that can be refused without the index is, before it: a cold index takes a while.
    check_target(&root, &target, true)?;
    let from = crate::config::Configured::load(config, &home.root, llm)?;
    let (file, name) = target.split_once("::").context("--target: no ::")?;
    if is_test_file(file) {
        bail!("{target}: a test file's function is not a target (its tests are what judge the target)");
    }
    let runner = ProjectTests::with(args.repo_args.python.as_deref())?;
    let python = runner.python().to_path_buf();
    let function = name.rsplit('.').next().unwrap_or(name);
    let visible_sel = match &args.tests {
        Some(text) => selection("--tests", text, &root)?,
        None => vec!["-k".to_string(), function.to_string()],
    };
    let mut visible = runner.collect(&root, &visible_sel).with_context(|| {
        format!(
            "visible tests ({})",
            if args.tests.is_some() {
                "--tests"
            } else {
                "the default: -k NAME; give --tests"
            }
        )
    })?;
    let hidden = match &args.hidden {
        Some(text) => runner
            .collect(&root, &selection("--hidden", text, &root)?)
            .context("hidden tests (--hidden)")?,
        None => Vec::new(),
    };
    let both: Vec<&String> = hidden.iter().filter(|h| visible.contains(h)).collect();
    if !both.is_empty() && args.tests.is_some() {
        bail!(
            "{} test(s) are both visible and hidden (e.g. {}): a hidden test must not be shown to the agents",
            both.len(),
            both[0]
        );
    }
    if !both.is_empty() {
        // The default selection (-k NAME) also caught hidden tests: they stay hidden.
        visible.retain(|v| !hidden.contains(v));
        if visible.is_empty() {
            bail!("every test -k {function} selects is hidden: give --tests");
        }
    }
    // Refused here, before any agent runs: a hidden test that is one function with a visible one.
    crate::repo::run::withhold::Withheld::plan(&crate::repo::index::project_files(&root)?, &visible, &hidden)?;
    let (mut index, report) = open(home, &root, Embed::Ready)?;
    if !args.common.json {
        print_report(&report, &root);
    }
    index.target(&target)?;
    prepare_targets(&mut index, &root, std::slice::from_ref(&target), &args.repo_args)?;
    eprintln!(
        "tests: {} visible, {} hidden (pytest with {}, in a throw-away copy of {}); confinement: {}; {}",
        visible.len(),
        hidden.len(),
        python.display(),
        root.display(),
        runner.confinement().describe(),
        runner.confinement().program_reads()
    );
    if !hidden.is_empty() && matches!(runner.confinement(), Confinement::Unshare | Confinement::None) {
        eprintln!(
            "warning: at this level the program under test can read every file you can, the hidden tests in your project included (install bubblewrap, or use a kernel with Landlock)"
        );
    }

    let spec = RepoTaskSpec {
        root: &root,
        python: &python,
        target: &target,
        visible: &visible,
        hidden: &hidden,
        context: None,
    };
    let task = target_task(&from, &index, &args.repo_args, &spec, &super::stderr_line).await?;
    let path = root.join(file);
    let all: Vec<String> = visible.iter().chain(&hidden).cloned().collect();
    let verify = verifier(&runner, &root, file, name, &all, args.repo_args.allow_in_process);
    let mut common = args.common;
    common.allow_in_process = args.repo_args.allow_in_process;
    let how = How {
        common: common.attempt(),
        quiet: args.quiet,
        write: args.write,
    };
    solve_task(home, &from, how, task, &path, Some(&verify)).await
}
