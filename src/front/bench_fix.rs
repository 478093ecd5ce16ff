//! `rgd fix` as `rgd bench real --fix` runs it, on each located instance: the oracle (an
//! endpoint on loopback that answers the released fix) or the configured model, with rgd fix's
//! defaults, no memory pool, and in-process verdicts counted apart rather than lost.

use std::path::Path;

use crate::config::LlmArgs;
use crate::front::fix::{FixOptions, fix_quietly};
use crate::repo::bench::real::Instance;
use crate::repo::bench::real::run::Repairer;
use crate::repo::fix::event::FixEvent;

/// `rgd fix` as `--fix` runs it: on the oracle (started here, on loopback) or the configured
/// model, without the memory pool (no instance learns from another), every run recorded.
pub struct BenchFixer<'a> {
    home: &'a crate::store::Home,
    config: Option<&'a Path>,
    llm: LlmArgs,
    oracle: Option<crate::repo::bench::real::oracle::Oracle>,
    model: String,
    iterations: Option<u32>,
    candidates: Option<usize>,
}

impl<'a> BenchFixer<'a> {
    /// On the oracle (`oracle`), else on the model `llm` and `config` give; `iterations` and
    /// `candidates` are rgd fix's `--max-iters` and `--candidates` when given.
    pub async fn start(
        home: &'a crate::store::Home,
        config: Option<&'a Path>,
        llm: &LlmArgs,
        oracle: bool,
        iterations: Option<u32>,
        candidates: Option<usize>,
    ) -> anyhow::Result<BenchFixer<'a>> {
        let mut llm = llm.clone();
        let (oracle, model) = match oracle {
            true => {
                let oracle = crate::repo::bench::real::oracle::Oracle::start().await?;
                llm = LlmArgs {
                    base_url: Some(oracle.base_url().to_string()),
                    api_key: Some("oracle".into()),
                    model: Some(crate::repo::bench::real::oracle::MODEL.into()),
                    no_stream: true,
                    ..LlmArgs::default()
                };
                (Some(oracle), crate::repo::bench::real::oracle::MODEL.to_string())
            }
            false => {
                let from = crate::config::Configured::load(config, &home.root, &llm)?;
                let settings = from.settings(None, None);
                let model = settings.agents.values().next().map(|p| p.model.clone()).unwrap_or_default();
                (None, model)
            }
        };
        Ok(BenchFixer {
            home,
            config,
            llm,
            oracle,
            model,
            iterations,
            candidates,
        })
    }
}

impl Repairer for BenchFixer<'_> {
    fn model(&self) -> &str {
        &self.model
    }

    /// `rgd fix --repo COPY --failing <the red tests>` on the faulty copy, from the localisation
    /// just measured, which is what `rgd fix` would compute (the same failing tests, selection
    /// and per-test time).
    async fn repair(
        &self,
        copy: &Path,
        i: &Instance,
        released: &str,
        python: &Path,
        found: crate::repo::locate::localise::Localisation,
    ) -> anyhow::Result<crate::repo::fix::record::FixRecord> {
        if let Some(oracle) = &self.oracle {
            oracle.knows(&i.function, released);
        }
        // A verdict the isolation cannot reach is taken in the tests' process and counted apart
        // (`Fixing::in_process`), not lost: what it cannot guarantee is said with the number.
        let mut opts = FixOptions::new(copy.to_path_buf(), i.red_tests.clone(), Some(python.to_path_buf()));
        opts.attempt.plan.memory = false;
        opts.quiet = true;
        opts.plan.allow_in_process = true;
        // The oracle answers at once or never: more iterations only repeat its silence.
        opts.attempt.max_iters = self.iterations.or(self.oracle.as_ref().map(|_| 2));
        if let Some(n) = self.candidates {
            opts.plan.candidates = n;
        }
        let from = crate::config::Configured::load(self.config, &self.home.root, &self.llm)?;
        fix_quietly(self.home, &from, &opts, Some(found), &|_: &FixEvent| {}).await
    }
}
