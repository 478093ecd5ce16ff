//! The default executor: CPython compiled to WebAssembly, run by wasmtime. Every interpreter is a
//! fresh instance from a pre-linked `InstancePre` (memory is copy-on-write from the precompiled
//! image), with no preopened directory (the candidate may get the job's data directory,
//! read-only), an empty environment, sockets denied, a memory limit enforced by the store, and
//! deadlines enforced by epoch interruption. Two instances judge each run (see `judge.rs`).

mod component;
mod pipe;

pub use component::{cache_dir, ensure_component, installed_component, lock_cache, sources_hash};

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use tokio::sync::Semaphore;
use tokio_util::task::AbortOnDropHandle;
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline,
};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use pipe::Pipe;

use super::judge::{CheckerPool, Clock, ClockSlot, Interpreters, Role, TICK, World, judge};
use super::verdict::Ended;
use super::{Executor, Job, Limits, RunReport, SandboxError};

/// Where the job's data directory appears inside the guest (its working directory).
pub(crate) const GUEST_DATA_DIR: &str = "/data";
/// Bytes a guest may write to its stdout in one run (the relay also caps the candidate's lines).
const STDOUT_CAP: usize = 64 << 20;
/// Bytes the host may queue on a guest's stdin (requests and answers; bounded by the relay's caps).
const STDIN_CAP: usize = 1 << 30;

struct Guest {
    ctx: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
    clock: Arc<ClockSlot>,
}

impl WasiView for Guest {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.ctx,
            table: &mut self.table,
        }
    }
}

/// Cheap to clone: the engine, the pre-linked component and the slots are shared.
#[derive(Clone)]
pub struct WasmExecutor {
    inner: Arc<Inner>,
    slots: Arc<Semaphore>,
}

struct Inner {
    /// Checkers between runs (a run then starts only its candidate).
    checkers: CheckerPool,
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
        // Each instance's memory is copied from the image into its pooled slot, not mapped
        // copy-on-write: a CoW fault replaces a live mapping, which on this 2-core machine costs
        // an inter-processor TLB shootdown per page while both cores run rgd's threads. Measured on
        // `rgd eval --hidden-only` of HumanEval's 164 canonical completions (5 interleaved runs):
        // 0.86-0.94 s with CoW, 0.77-0.85 s without, system time 0.36 s -> 0.16 s, same peak RSS.
        config.memory_init_cow(false);
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
                checkers: CheckerPool::default(),
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

#[async_trait::async_trait]
impl Interpreters for Inner {
    fn name(&self) -> &'static str {
        "wasm"
    }

    fn guest_data_dir(&self) -> Option<&'static str> {
        Some(GUEST_DATA_DIR)
    }

    fn checker_pool(&self) -> Option<&CheckerPool> {
        Some(&self.checkers)
    }

    async fn start(&self, role: Role, limits: &Limits, clock: Arc<Clock>) -> Result<World, SandboxError> {
        let clock = Arc::new(ClockSlot::new(clock));
        let stdin = Pipe::new(STDIN_CAP);
        let stdout = Pipe::new(STDOUT_CAP);
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdin(stdin.clone())
            .stdout(stdout.clone())
            .stderr(MemoryOutputPipe::new(64 * 1024))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .args(&["runner"]);
        if let (Role::Candidate, Some(dir)) = (role, limits.data_dir.as_deref()) {
            // The only host path a guest ever sees, and read-only.
            builder
                .preopened_dir(dir, GUEST_DATA_DIR, FsPerms::ReadOnly)
                .map_err(|e| SandboxError::Wasm(format!("data directory {}: {e:#}", dir.display())))?;
        }
        let ctx = builder.build();
        let store_limits = StoreLimitsBuilder::new().memory_size((limits.memory_mb as usize) << 20).build();
        let mut store = Store::new(
            &self.engine,
            Guest {
                ctx,
                table: ResourceTable::new(),
                limits: store_limits,
                clock: clock.clone(),
            },
        );
        store.limiter(|g| &mut g.limits);
        store.set_epoch_deadline(1);
        // Compute loops: interrupted at the first tick after a deadline; otherwise yield, so the
        // relay and the other instance get to run (and a dropped instance is cancelled).
        store.epoch_deadline_callback(|cx| {
            Ok(if cx.data().clock.overrun().is_none() {
                UpdateDeadline::Yield(1)
            } else {
                UpdateDeadline::Interrupt
            })
        });
        let (slot, stdin_pipe, stdout_pipe) = (clock, stdin.clone(), stdout.clone());
        let pre = self.pre.clone();
        let guest_out = stdout.clone();
        // The guest computes inside `poll`: on a task of its own it gets a core of its own,
        // whoever awaits the run. Aborted when the world is dropped.
        let task = AbortOnDropHandle::new(tokio::spawn(async move {
            let outcome = async {
                let command = pre.instantiate_async(&mut store).await?;
                command.wasi_cli_run().call_run(&mut store).await
            }
            .await;
            // The relay reads to the end of what the guest wrote, then learns how it ended.
            guest_out.close();
            match outcome {
                Ok(Ok(())) => None,
                Ok(Err(())) => Some(Ended::Exit(1)),
                Err(err) => {
                    if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
                        (exit.0 != 0).then_some(Ended::Exit(exit.0))
                    } else if store.data().clock.overrun().is_some() {
                        Some(Ended::Deadline)
                    } else {
                        tracing::debug!("sandbox trap: {err:?}");
                        Some(Ended::Trapped)
                    }
                }
            }
        }));
        let ended = async move { task.await.unwrap_or(Some(Ended::Trapped)) }.boxed();
        Ok(World {
            stdin: Box::new(stdin),
            stdout: Box::new(stdout),
            ended,
            // Only a checker serves another run; a program's interpreter is never reused.
            rearm: (role == Role::Checker).then(|| -> Box<dyn Fn(Arc<Clock>) + Send + Sync> {
                Box::new(move |fresh: Arc<Clock>| {
                    slot.set(fresh);
                    stdin_pipe.reset_written();
                    stdout_pipe.reset_written();
                })
            }),
        })
    }
}

#[async_trait::async_trait]
impl Executor for WasmExecutor {
    fn name(&self) -> &'static str {
        "wasm"
    }

    async fn run(&self, job: Job<'_>) -> Result<RunReport, SandboxError> {
        // One run per core: its two guests mostly take turns, and more only slows each of them.
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| SandboxError::Wasm("the sandbox is shutting down".into()))?;
        judge(&*self.inner, &job).await
    }

    async fn trace(&self, job: super::TraceJob<'_>) -> Result<super::Trace, SandboxError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| SandboxError::Wasm("the sandbox is shutting down".into()))?;
        super::trace::trace_with(&*self.inner, &job).await
    }
}

/// Instances come from a pool of pre-mapped slots. Measured on HumanEval's 164 hidden test runs,
/// two at a time: fresh mappings per instance cost ~240k page faults and as much kernel time as the
/// guests' own work, serialised on the process's memory-map lock (2.9 s, no faster than one at a
/// time); reused slots that keep their first 16 MiB resident: 9k faults, 1.04 s.
fn pool_config() -> PoolingAllocationConfig {
    // Room for both instances of every slot's run plus ones still being torn down after a cancelled run.
    let live = super::cores() as u32 * 8 + 16;
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
