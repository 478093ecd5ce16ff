//! Settings from `rgd.toml`, environment and flags (flags win, then environment, then the file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::agents::Agent;
use crate::llm::local::LocalSettings;
use crate::llm::{CallParams, OpenAiSettings};
use crate::sandbox::Limits;

pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// `rgd.toml`. Every field is optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileConfig {
    pub llm: Option<LlmSection>,
    /// The embedded model, used when no endpoint is configured.
    pub local: LocalSection,
    pub agents: BTreeMap<Agent, AgentSection>,
    pub sandbox: SandboxSection,
    pub run: RunSection,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSection {
    pub base_url: Option<String>,
    /// Name of the environment variable holding the key (keys do not belong in files).
    pub api_key_env: Option<String>,
    pub model: Option<String>,
    pub stream: Option<bool>,
    pub timeout_secs: Option<f64>,
    /// Longest silence between two streamed tokens.
    pub idle_timeout_secs: Option<f64>,
    /// The endpoint's context in tokens, when it does not say itself (llama-server does).
    pub context_size: Option<u32>,
    pub retries: Option<usize>,
    /// First and largest pause between retries (exponential with jitter in between).
    pub backoff_min_ms: Option<u64>,
    pub backoff_max_ms: Option<u64>,
    pub max_in_flight: Option<usize>,
    /// Cost estimate in the TUI: price per million input / output tokens.
    pub price_input_per_mtok: Option<f64>,
    pub price_output_per_mtok: Option<f64>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalSection {
    /// A built-in model (smollm2-135m, gemma3-270m), a .gguf path, or a Hugging Face repo id.
    pub model: Option<String>,
    pub threads: Option<i32>,
    pub contexts: Option<usize>,
    pub context: Option<u32>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSection {
    pub model: Option<String>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSection {
    pub per_test_timeout_secs: Option<f64>,
    pub max_total_secs: Option<f64>,
    pub memory_mb: Option<u64>,
    pub output_cap: Option<usize>,
    /// Data files programs may read (read-only in the wasm sandbox).
    pub data_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSection {
    pub max_iters: Option<u32>,
    pub concurrency: Option<usize>,
    pub seed: Option<i64>,
    /// A sweep stops after this many tasks in a row ended by the endpoint failing (0: never).
    pub halt_after_endpoint_failures: Option<usize>,
}

impl FileConfig {
    /// Every number and name checked, the error naming the key (`[llm] timeout_secs: ...`).
    pub fn validate(&self) -> Result<(), String> {
        use crate::validate::{MAX_COUNT, MAX_ITERS, count, name, seconds};
        let secs = |key: &str, v: Option<f64>| v.map_or(Ok(()), |v| seconds(v).map(drop).map_err(|e| format!("{key}: {e}")));
        let num = |key: &str, v: Option<usize>, min: usize, max: usize| {
            v.map_or(Ok(()), |v| count(v, min, max).map(drop).map_err(|e| format!("{key}: {e}")))
        };
        let text = |key: &str, v: &Option<String>| {
            v.as_deref()
                .map_or(Ok(()), |v| name(v).map(drop).map_err(|e| format!("{key}: {e}")))
        };
        if let Some(llm) = &self.llm {
            secs("[llm] timeout_secs", llm.timeout_secs)?;
            secs("[llm] idle_timeout_secs", llm.idle_timeout_secs)?;
            num(
                "[llm] context_size",
                llm.context_size.map(|c| c as usize),
                64,
                crate::validate::MAX_CONTEXT,
            )?;
            num("[llm] retries", llm.retries, 0, MAX_COUNT)?;
            num("[llm] max_in_flight", llm.max_in_flight, 1, MAX_COUNT)?;
            text("[llm] model", &llm.model)?;
            for (key, ms) in [
                ("[llm] backoff_min_ms", llm.backoff_min_ms),
                ("[llm] backoff_max_ms", llm.backoff_max_ms),
            ] {
                secs(key, ms.map(|ms| ms as f64 / 1000.0))?;
            }
            for (key, price) in [
                ("[llm] price_input_per_mtok", llm.price_input_per_mtok),
                ("[llm] price_output_per_mtok", llm.price_output_per_mtok),
            ] {
                if price.is_some_and(|p| !p.is_finite() || p < 0.0) {
                    return Err(format!("{key}: must be a price of zero or more"));
                }
            }
        }
        num("[local] contexts", self.local.contexts, 1, MAX_COUNT)?;
        text("[local] model", &self.local.model)?;
        for (agent, section) in &self.agents {
            text(&format!("[agents.{}] model", agent.name()), &section.model)?;
            if section.temperature.is_some_and(|t| !t.is_finite() || !(0.0..=2.0).contains(&t)) {
                return Err(format!("[agents.{}] temperature: must be between 0 and 2", agent.name()));
            }
            if section.max_tokens == Some(0) {
                return Err(format!("[agents.{}] max_tokens: must be above zero", agent.name()));
            }
        }
        secs("[sandbox] per_test_timeout_secs", self.sandbox.per_test_timeout_secs)?;
        secs("[sandbox] max_total_secs", self.sandbox.max_total_secs)?;
        num("[sandbox] memory_mb", self.sandbox.memory_mb.map(|m| m as usize), 16, 1 << 20)?;
        num("[sandbox] output_cap", self.sandbox.output_cap, 1, 1 << 30)?;
        num("[run] max_iters", self.run.max_iters.map(|m| m as usize), 1, MAX_ITERS as usize)?;
        num("[run] concurrency", self.run.concurrency, 1, MAX_COUNT)?;
        Ok(())
    }

    /// `--config FILE`, else `./rgd.toml`, else `$RGD_HOME/rgd.toml`; none is fine.
    pub fn load(explicit: Option<&Path>, home: &Path) -> anyhow::Result<(FileConfig, Option<PathBuf>)> {
        let candidates: Vec<PathBuf> = match explicit {
            Some(p) => vec![p.to_path_buf()],
            None => vec![PathBuf::from("rgd.toml"), home.join("rgd.toml")],
        };
        for path in candidates {
            if path.is_file() {
                let text = std::fs::read_to_string(&path)?;
                let cfg: FileConfig = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                cfg.validate().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                return Ok((cfg, Some(path)));
            } else if explicit.is_some() {
                anyhow::bail!("config file {} not found", path.display());
            }
        }
        Ok((FileConfig::default(), None))
    }
}

/// The configuration a command found (`FileConfig::load`) with its LLM flags, read once: every
/// setting the command resolves, for a run or for the Guide's model, comes from this one reading.
#[derive(Debug, Clone)]
pub struct Configured<'a> {
    pub file: FileConfig,
    pub path: Option<PathBuf>,
    pub llm: &'a LlmArgs,
}

impl<'a> Configured<'a> {
    /// `--config FILE`, else `./rgd.toml`, else `HOME/rgd.toml` (`FileConfig::load`).
    pub fn load(explicit: Option<&Path>, home: &Path, llm: &'a LlmArgs) -> anyhow::Result<Self> {
        let (file, path) = FileConfig::load(explicit, home)?;
        Ok(Configured { file, path, llm })
    }

    /// The settings with these overrides (`Settings::resolve`).
    pub fn settings(&self, concurrency: Option<usize>, max_iters: Option<u32>) -> Settings {
        Settings::resolve(self.file.clone(), self.path.clone(), self.llm, concurrency, max_iters)
    }
}

/// Command-line overrides for the LLM side. Only the commands that call a model take them (`run`,
/// `sweep`, `fork`, `solve`, `fix`, `experiment run/resume`, `index`, `context`, `locate`, `bench
/// repo`, `demo`, `doctor`, `tui`, `replay`), after the command name, so other commands' help stays
/// short.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct LlmArgs {
    /// OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1
    #[arg(long, env = "OPENAI_BASE_URL")]
    pub base_url: Option<String>,
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Model for all agents (per-agent flags override)
    #[arg(long, env = "RGD_MODEL", value_parser = crate::validate::parse_name)]
    pub model: Option<String>,
    #[arg(long, value_parser = crate::validate::parse_name)]
    pub guide_model: Option<String>,
    #[arg(long, value_parser = crate::validate::parse_name)]
    pub debug_model: Option<String>,
    #[arg(long, value_parser = crate::validate::parse_name)]
    pub feedback_model: Option<String>,
    /// Ask for whole answers instead of token streams
    #[arg(long)]
    pub no_stream: bool,
    /// Seconds one LLM attempt may take
    #[arg(long, value_parser = crate::validate::parse_seconds)]
    pub llm_timeout: Option<f64>,
    /// Seconds a streamed answer may fall silent between two tokens
    #[arg(long, value_parser = crate::validate::parse_seconds)]
    pub llm_idle_timeout: Option<f64>,
    /// The endpoint's context in tokens (prompt + answer), when the server does not report it
    #[arg(long, value_parser = crate::validate::parse_context)]
    pub context_size: Option<u32>,
    /// Retries after a failed LLM attempt (429, 5xx, timeout, garbage)
    #[arg(long, value_parser = crate::validate::parse_count0)]
    pub llm_retries: Option<usize>,
    /// LLM requests in flight at once (default: the sweep's concurrency)
    #[arg(long, value_parser = crate::validate::parse_count)]
    pub llm_concurrency: Option<usize>,
    /// CPU threads of the embedded model, per context (default: the cores shared among contexts)
    #[arg(long, env = "RGD_THREADS")]
    pub threads: Option<i32>,
    /// Contexts of the embedded model, each serving one request at a time (default: from concurrency)
    #[arg(long, env = "RGD_CONTEXTS", value_parser = crate::validate::parse_count)]
    pub contexts: Option<usize>,
}

/// Everything resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The endpoint, when one is configured; otherwise `local` is set.
    pub openai: Option<OpenAiSettings>,
    pub local: Option<LocalSettings>,
    pub agents: BTreeMap<Agent, CallParams>,
    pub limits: Limits,
    pub max_iters: u32,
    pub concurrency: usize,
    /// A sweep stops after this many tasks in a row ended by the endpoint failing (0: never).
    pub halt_after_endpoint_failures: usize,
    pub config_file: Option<PathBuf>,
    pub pricing: Option<crate::engine::Pricing>,
}

impl Settings {
    pub fn resolve(
        file: FileConfig,
        config_file: Option<PathBuf>,
        llm: &LlmArgs,
        concurrency: Option<usize>,
        max_iters: Option<u32>,
    ) -> Settings {
        let section = file.llm.clone().unwrap_or_default();
        let pricing = match (section.price_input_per_mtok, section.price_output_per_mtok) {
            (None, None) => None,
            (i, o) => Some(crate::engine::Pricing {
                input_per_mtok: i.unwrap_or(0.0),
                output_per_mtok: o.unwrap_or(0.0),
            }),
        };
        let api_key = llm
            .api_key
            .clone()
            .or_else(|| section.api_key_env.as_ref().and_then(|name| std::env::var(name).ok()))
            .filter(|k| !k.is_empty());
        let base_url = llm.base_url.clone().or(section.base_url.clone()).filter(|u| !u.is_empty());
        // From here on nothing rgd writes may contain them.
        if let Some(key) = &api_key {
            crate::secrets::register(key);
        }
        if let Some(url) = &base_url {
            crate::secrets::register_url(url);
        }
        let concurrency = concurrency.or(file.run.concurrency).unwrap_or(1).max(1);
        let halt_after_endpoint_failures = file.run.halt_after_endpoint_failures.unwrap_or(5);
        let openai = (base_url.is_some() || api_key.is_some()).then(|| {
            let defaults = OpenAiSettings::default();
            OpenAiSettings {
                base_url: base_url.unwrap_or(defaults.base_url),
                api_key: api_key.unwrap_or_default(),
                stream: !llm.no_stream && section.stream.unwrap_or(true),
                timeout_secs: llm.llm_timeout.or(section.timeout_secs).unwrap_or(defaults.timeout_secs),
                idle_timeout_secs: llm
                    .llm_idle_timeout
                    .or(section.idle_timeout_secs)
                    .unwrap_or(defaults.idle_timeout_secs),
                context_size: llm.context_size.or(section.context_size),
                retries: llm.llm_retries.or(section.retries).unwrap_or(defaults.retries),
                max_in_flight: llm.llm_concurrency.or(section.max_in_flight).unwrap_or(concurrency.max(1)),
                backoff_min_ms: section.backoff_min_ms.unwrap_or(defaults.backoff_min_ms),
                backoff_max_ms: section.backoff_max_ms.unwrap_or(defaults.backoff_max_ms),
            }
        });
        // No endpoint: the embedded model serves every agent.
        // Zero or negative counts mean one, here where every user of the settings (the model,
        // the manifest, the printed summary) reads them.
        let local = openai.is_none().then(|| {
            let contexts = llm
                .contexts
                .or(file.local.contexts)
                .unwrap_or_else(|| LocalSettings::default_contexts(concurrency))
                .max(1);
            LocalSettings {
                model: llm
                    .model
                    .clone()
                    .or(file.local.model.clone())
                    .unwrap_or_else(|| crate::llm::local::DEFAULT_MODEL.into()),
                threads: llm
                    .threads
                    .or(file.local.threads)
                    .unwrap_or_else(|| LocalSettings::default_threads(contexts))
                    .max(1),
                contexts,
                context: file.local.context.unwrap_or(4096),
            }
        });
        let model = match &local {
            Some(l) => l.model.clone(),
            None => llm.model.clone().or(section.model.clone()).unwrap_or_else(|| DEFAULT_MODEL.into()),
        };
        let agents = agent_params(&file, llm, &model, local.is_some());
        let limits = sandbox_limits(&file);
        Settings {
            openai,
            local,
            agents,
            limits,
            max_iters: max_iters.or(file.run.max_iters).unwrap_or(10).max(1),
            concurrency,
            halt_after_endpoint_failures,
            config_file,
            pricing,
        }
    }
}

/// Each agent's model and sampling: the flags, else the file, else the RGD reference's (guidance
/// and analysis at 0.7, code greedy), answers kept short on the embedded model.
fn agent_params(file: &FileConfig, llm: &LlmArgs, model: &str, local: bool) -> BTreeMap<Agent, CallParams> {
    let seed = file.run.seed;
    let mut agents = BTreeMap::new();
    for agent in Agent::ALL {
        // The RGD reference: guidance and analysis sample at 0.7, code is greedy.
        let (temperature, max_tokens) = match agent {
            Agent::Guide => (0.7, 1024),
            Agent::Debug => (0.0, 2048),
            Agent::Feedback => (0.7, 1024),
        };
        // A small CPU model rambles rather than improves with room; shorter answers keep a
        // demo task within a minute or two.
        let max_tokens = if local { max_tokens.min(512) } else { max_tokens };
        let from_file = file.agents.get(&agent).cloned().unwrap_or_default();
        let flag = match agent {
            Agent::Guide => &llm.guide_model,
            Agent::Debug => &llm.debug_model,
            Agent::Feedback => &llm.feedback_model,
        };
        agents.insert(
            agent,
            CallParams {
                model: flag.clone().or(from_file.model).unwrap_or_else(|| model.to_string()),
                temperature: from_file.temperature.unwrap_or(temperature),
                max_tokens: from_file.max_tokens.unwrap_or(max_tokens),
                seed,
                stop: Vec::new(),
            },
        );
    }
    agents
}

/// The sandbox's limits: the file's, else the defaults.
fn sandbox_limits(file: &FileConfig) -> Limits {
    let d = Limits::default();
    Limits {
        per_test: file
            .sandbox
            .per_test_timeout_secs
            .map(Duration::from_secs_f64)
            .unwrap_or(d.per_test),
        max_total: file.sandbox.max_total_secs.map(Duration::from_secs_f64).unwrap_or(d.max_total),
        memory_mb: file.sandbox.memory_mb.unwrap_or(d.memory_mb),
        output_cap: file.sandbox.output_cap.unwrap_or(d.output_cap),
        data_dir: file.sandbox.data_dir.clone(),
        ..Limits::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(file: &str, llm: &LlmArgs, concurrency: usize) -> LocalSettings {
        let file: FileConfig = toml::from_str(file).unwrap();
        Settings::resolve(file, None, llm, Some(concurrency), None)
            .local
            .expect("no endpoint: the embedded model")
    }

    #[test]
    fn embedded_model_contexts_and_threads_flag_then_file_then_default() {
        let cores = LocalSettings::cores();
        let none = LlmArgs::default();
        // Defaults: one context per concurrent task (at most the cores), the cores shared out.
        let d = local("", &none, 1);
        assert_eq!((d.contexts, d.threads), (1, cores as i32));
        let d = local("", &none, 64);
        assert_eq!((d.contexts, d.threads), (cores, 1));
        // The file beats the default, and threads follow the contexts it sets.
        let f = local("[local]\ncontexts = 3\n", &none, 1);
        assert_eq!((f.contexts, f.threads), (3, (cores / 3).max(1) as i32));
        // Flags beat the file; zero contexts means one.
        let flags = LlmArgs {
            threads: Some(5),
            contexts: Some(0),
            ..LlmArgs::default()
        };
        let f = local("[local]\ncontexts = 3\nthreads = 2\n", &flags, 1);
        assert_eq!((f.contexts, f.threads), (1, 5));
        // Zero threads means one as well.
        let f = local("[local]\nthreads = 0\n", &none, 1);
        assert_eq!(f.threads, 1);
    }
}
