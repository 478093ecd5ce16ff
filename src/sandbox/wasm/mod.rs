//! The default executor: CPython compiled to WebAssembly, run by wasmtime. A fresh instance per
//! program from a pre-linked `InstancePre` (memory is copy-on-write from the precompiled image), no
//! preopened directory, an empty environment, sockets denied, a memory limit enforced by the store,
//! and deadlines enforced by epoch interruption.
//!
//! Per-test deadlines inside one instance: an epoch callback watches the verdict stream; each new
//! verdict line restarts the current test's clock. A test that overruns traps the instance, and the
//! remaining tests continue in a new instance, so one looping test does not cost the others.

mod component;
mod pipe;

pub use component::{cache_dir, ensure_component, installed_component, lock_cache, sources_hash};

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio_util::task::AbortOnDropHandle;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline,
};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};

use pipe::CountedPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::verdict::Ended;
use super::{Executor, Job, RunReport, SandboxError, TestOutcome, TestStatus, runner_job};

/// How often the epoch advances: the granularity of every deadline.
const TICK: Duration = Duration::from_millis(5);
/// Where the job's data directory appears inside the guest (its working directory).
const GUEST_DATA_DIR: &str = "/data";
/// Bytes of verdict output accepted; a program writing past this to fd 1 is an output flood.
const STDOUT_CAP: usize = 8 << 20;

struct Guest {
    ctx: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    watch: Arc<Mutex<Watch>>,
}

impl WasiView for Guest {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// Deadline bookkeeping read by the epoch callback.
struct Watch {
    out: CountedPipe,
    seen_bytes: usize,
    test_started: Instant,
    run_started: Instant,
    per_test: Duration,
    total: Duration,
    overran: Option<Overrun>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overrun {
    Test,
    Run,
}

impl Watch {
    /// Records an overrun, if any; `true` while the run may go on.
    fn check(&mut self) -> bool {
        let now = Instant::now();
        let len = self.out.len();
        if len != self.seen_bytes {
            // A verdict line arrived: the next test's clock starts now.
            self.seen_bytes = len;
            self.test_started = now;
        }
        if now.duration_since(self.run_started) > self.total {
            self.overran = Some(Overrun::Run);
        } else if now.duration_since(self.test_started) > self.per_test {
            self.overran = Some(Overrun::Test);
        }
        self.overran.is_none()
    }
}

fn lock(watch: &Mutex<Watch>) -> std::sync::MutexGuard<'_, Watch> {
    watch.lock().unwrap_or_else(|p| p.into_inner())
}

/// Cheap to clone: the engine, the pre-linked component and the slots are shared.
#[derive(Clone)]
pub struct WasmExecutor {
    inner: Arc<Inner>,
    slots: Arc<Semaphore>,
}

struct Inner {
    engine: Engine,
    pre: CommandPre<Guest>,
    component: PathBuf,
}

impl WasmExecutor {
    /// Builds (once) and loads the sandbox. `report` hears progress while anything is built.
    pub fn new(report: &dyn Fn(&str)) -> Result<WasmExecutor, SandboxError> {
        let component_path = ensure_component(report)?;
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.wasm_component_model(true);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config()));
        let engine = Engine::new(&config).map_err(wasm_error)?;

        // A precompiled artifact only loads into an engine with identical settings: key it by
        // the engine's compatibility hash and the component's sources.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let compiled = cache_dir().join(format!("guest-{}-{:016x}.cwasm", &sources_hash()[..16], hasher.finish()));
        if !compiled.is_file() {
            // Same pattern as the component build: check, lock, check again, so every later start
            // only looks at the file.
            let _lock = component::lock_cache(&cache_dir())?;
            if !compiled.is_file() {
                report("compiling the sandbox component for this machine (once)");
                let bytes = std::fs::read(&component_path)?;
                let artifact = engine.precompile_component(&bytes).map_err(wasm_error)?;
                let tmp = tempfile::NamedTempFile::new_in(cache_dir())?;
                std::fs::write(tmp.path(), artifact)?;
                tmp.persist(&compiled).map_err(|e| SandboxError::Io(e.error))?;
            }
        }
        // SAFETY: the file was produced by `precompile_component` of an engine with this exact
        // configuration (the name carries its compatibility hash) and lives in rgd's own cache.
        let component = unsafe { Component::deserialize_file(&engine, &compiled) }.map_err(wasm_error)?;
        let mut linker: Linker<Guest> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(wasm_error)?;
        let pre = CommandPre::new(linker.instantiate_pre(&component).map_err(wasm_error)?).map_err(wasm_error)?;

        let weak = engine.weak();
        std::thread::Builder::new()
            .name("rgd-epoch".into())
            .spawn(move || {
                // Ends with the engine.
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(TICK);
                }
            })
            .map_err(SandboxError::Io)?;
        let parallel = super::cores();
        Ok(WasmExecutor {
            inner: Arc::new(Inner {
                engine,
                pre,
                component: component_path,
            }),
            slots: Arc::new(Semaphore::new(parallel)),
        })
    }

    /// The component file in use (for `rgd doctor` and manifests).
    pub fn component_path(&self) -> &std::path::Path {
        &self.inner.component
    }
}

impl Inner {
    /// One instance, one job. Returns the verdict stream and why the run ended early, if it did.
    async fn run_instance(
        &self,
        input: Vec<u8>,
        per_test: Duration,
        total: Duration,
        memory_mb: u64,
        data_dir: Option<&std::path::Path>,
    ) -> Result<(String, Option<(Ended, Option<Overrun>)>), SandboxError> {
        let stdout = CountedPipe::new(STDOUT_CAP);
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdin(MemoryInputPipe::new(input))
            .stdout(stdout.clone())
            .stderr(MemoryOutputPipe::new(64 * 1024))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .args(&["runner"]);
        if let Some(dir) = data_dir {
            // The only host path a guest ever sees, and read-only.
            builder
                .preopened_dir(dir, GUEST_DATA_DIR, FsPerms::ReadOnly)
                .map_err(|e| SandboxError::Wasm(format!("data directory {}: {e:#}", dir.display())))?;
        }
        let ctx = builder.build();
        let started = Instant::now();
        let limits = StoreLimitsBuilder::new().memory_size((memory_mb as usize) << 20).build();
        let watch = Arc::new(Mutex::new(Watch {
            out: stdout.clone(),
            seen_bytes: 0,
            test_started: started,
            run_started: started,
            per_test,
            total,
            overran: None,
        }));
        let mut store = Store::new(
            &self.engine,
            Guest {
                ctx,
                table: ResourceTable::new(),
                limits,
                watch: watch.clone(),
            },
        );
        store.limiter(|g| &mut g.limits);
        store.set_epoch_deadline(1);
        // Compute loops: interrupted at the first tick after an overrun; otherwise yield, so the
        // watchdog below gets to run.
        store.epoch_deadline_callback(|cx| {
            Ok(if lock(&cx.data().watch).check() {
                UpdateDeadline::Yield(1)
            } else {
                UpdateDeadline::Interrupt
            })
        });

        let run = async {
            let command = self.pre.instantiate_async(&mut store).await?;
            command.wasi_cli_run().call_run(&mut store).await
        };
        // Calls blocked in the host (sleep, poll): cancelled by dropping the call.
        let watchdog = async {
            loop {
                tokio::time::sleep(TICK).await;
                if !lock(&watch).check() {
                    return;
                }
            }
        };
        let outcome = tokio::select! {
            outcome = run => Some(outcome),
            () = watchdog => None,
        };
        let text = String::from_utf8_lossy(&stdout.contents()).into_owned();
        let overran = lock(&watch).overran;
        let ended = match outcome {
            None => Some((Ended::Deadline, overran)),
            Some(Ok(Ok(()))) => None,
            Some(Ok(Err(()))) => Some((Ended::Exit(1), None)),
            Some(Err(err)) => {
                if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
                    (exit.0 != 0).then_some((Ended::Exit(exit.0), None))
                } else if overran.is_some() {
                    Some((Ended::Deadline, overran))
                } else if stdout.len() >= STDOUT_CAP {
                    Some((Ended::OutputFlood, None))
                } else {
                    tracing::debug!("sandbox trap: {err:?}");
                    Some((Ended::Trapped, None))
                }
            }
        };
        Ok((text, ended))
    }

    /// Runs all tests, continuing in a new instance after a test that overran its deadline.
    async fn run_all(self: &Arc<Self>, job: &Job<'_>) -> Result<RunReport, SandboxError> {
        job.limits.checked_data_dir()?;
        let started = Instant::now();
        let n = job.tests.len();
        let total = job.limits.total_for(n);
        let mut outcomes: Vec<TestOutcome> = Vec::with_capacity(n);
        let mut offset = 0;
        loop {
            let nonce = ulid::Ulid::generate().to_string();
            let rest = &job.tests[offset..];
            let view = Job {
                tests: rest,
                ..job.clone()
            };
            let mut input = runner_job(&view, &nonce);
            if job.limits.data_dir.is_some() {
                input["chdir"] = GUEST_DATA_DIR.into();
            }
            let input = serde_json::to_vec(&input).expect("job is plain JSON");
            let remaining = total.saturating_sub(started.elapsed());
            // The guest computes inside `poll`: on a task of its own it gets a core of its own,
            // whoever awaits this (a sweep polls all its tasks from one task). Aborted if the
            // caller gives up.
            let inner = self.clone();
            let (per_test, memory_mb, data_dir) = (job.limits.per_test, job.limits.memory_mb, job.limits.data_dir.clone());
            let instance = AbortOnDropHandle::new(tokio::spawn(async move {
                inner.run_instance(input, per_test, remaining, memory_mb, data_dir.as_deref()).await
            }));
            let (text, ended) = instance
                .await
                .map_err(|e| SandboxError::Wasm(format!("sandbox task failed: {e}")))??;
            let wall_ms = started.elapsed().as_millis() as u64;
            let mut report = RunReport::from_runner_output("wasm", &text, &nonce, rest.len(), ended.map(|e| e.0), wall_ms);
            for t in &mut report.tests {
                t.index += offset;
            }
            // The runner reports the test in progress at a deadline as the first Timeout.
            let overrun_at = report.tests.iter().position(|t| t.status == TestStatus::Timeout);
            let one_test_overran = matches!(ended, Some((Ended::Deadline, Some(Overrun::Test)))) && report.setup == super::SetupStatus::Ok;
            let Some(k) = overrun_at.filter(|_| one_test_overran) else {
                outcomes.extend(report.tests);
                return Ok(RunReport { tests: outcomes, ..report });
            };
            // Test `offset + k` overran its own deadline: keep it and those before it, go on after it.
            report.tests[k].exc_msg = Some(format!("the test ran longer than {:.1}s", job.limits.per_test.as_secs_f64()));
            outcomes.extend(report.tests.drain(..=k));
            offset += k + 1;
            if offset >= n {
                return Ok(RunReport {
                    tests: outcomes,
                    abnormal_end: None,
                    ..report
                });
            }
            if started.elapsed() >= total {
                outcomes.extend((offset..n).map(|i| TestOutcome::new(i, TestStatus::NotRun)));
                return Ok(RunReport {
                    tests: outcomes,
                    abnormal_end: Some("the run exceeded its time limit".into()),
                    ..report
                });
            }
        }
    }
}

#[async_trait::async_trait]
impl Executor for WasmExecutor {
    fn name(&self) -> &'static str {
        "wasm"
    }

    async fn run(&self, job: Job<'_>) -> Result<RunReport, SandboxError> {
        // One guest per core: guests yield at every tick, but more only slows each of them.
        let _slot = self.slots.acquire().await.expect("semaphore is never closed");
        self.inner.run_all(&job).await
    }
}

/// Instances come from a pool of pre-mapped slots. Measured on HumanEval's 164 hidden test runs,
/// two at a time: fresh mappings per instance cost ~240k page faults and as much kernel time as the
/// guests' own work, serialised on the process's memory-map lock (2.9 s, no faster than one at a
/// time); reused slots that keep their first 16 MiB resident: 9k faults, 1.04 s.
fn pool_config() -> PoolingAllocationConfig {
    // Room for every slot's instance plus ones still being torn down after a cancelled run.
    let live = super::cores() as u32 * 4 + 8;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(live)
        // componentize-py components hold a handful of core instances, memories and tables each.
        .total_core_instances(live * 16)
        .total_memories(live * 4)
        .total_tables(live * 16)
        .total_stacks(live)
        // Address space only: the store's limiter enforces the job's memory limit.
        .max_memory_size(4 << 30)
        .linear_memory_keep_resident(16 << 20)
        .table_keep_resident(1 << 20)
        .async_stack_keep_resident(1 << 20);
    pool
}

fn wasm_error(err: wasmtime::Error) -> SandboxError {
    SandboxError::Wasm(format!("{err:#}"))
}
