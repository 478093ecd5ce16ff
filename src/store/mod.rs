//! Recorded runs: `$RGD_HOME/runs/<run id>/` holds `manifest.json` and `status.json` (each with a
//! checksum), a sled database of every event and every finished task's result, and the journal
//! `events.jsonl`, a second record of the same events that the database is rebuilt from when it
//! is damaged (`check.rs`).
//!
//! One database per run keeps runs independent: a live sweep holds only its own lock, so other
//! commands can list runs (from the JSON files) while it works.

mod check;
mod experiments;
mod export;
mod journal;
pub mod recall;
mod seal;
mod search;
mod status;

pub use check::{Checked, Repaired, Verdict, listing, repair_run, verify_run};
pub use experiments::{ABLATIONS, Cell, ExperimentRecord, ExperimentSpec};
pub use export::export_run;
pub use journal::{JOURNAL, journal_path, parse_line};
pub use search::{RunHit, RunIndex};
pub use status::{write_checked_json, write_json_atomically};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::record::{Envelope, Event, Manifest, RecordError, Recorder, RunRecord, RunStatus, TaskResult};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no run {0} in {1}")]
    NoSuchRun(String, String),
    #[error("{0} is the start of {1} run ids ({2}); give more of the one you mean")]
    AmbiguousRun(String, usize, String),
    #[error("no experiment {0} in {1} (one id, or a unique prefix)")]
    NoSuchExperiment(String, String),
    #[error("run {0} is open in another rgd process (sled lock held); wait for it to finish or stop it first")]
    Locked(String),
    #[error("run store: {0}")]
    Sled(#[from] sled::Error),
    #[error("run store I/O at {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("run store: corrupt record: {0}{REPAIR_HINT}")]
    Corrupt(String),
    #[error("run {run} is damaged: {what}{REPAIR_HINT}")]
    Damaged { run: String, what: String },
}

/// What every message about a damaged run ends with.
const REPAIR_HINT: &str = " (`rgd runs verify` names the damage; `rgd runs repair RUN` rebuilds the run from its journal)";

impl StoreError {
    /// Sled's own words for a damaged database ("Read corrupted data at file offset None
    /// backtrace ()") said as what they mean, naming the run.
    fn from_sled(run: &str, dir: &Path, e: sled::Error) -> StoreError {
        match e {
            sled::Error::Corruption { .. } => StoreError::Damaged {
                run: run.into(),
                what: format!("its database {} holds corrupted data", dir.join("db").display()),
            },
            sled::Error::Io(source) => StoreError::Io {
                path: dir.join("db").display().to_string(),
                source,
            },
            e if crate::sled_open::is_lock_error(&e) => StoreError::Locked(run.into()),
            e => StoreError::Damaged {
                run: run.into(),
                what: format!("its database {} cannot be read ({e})", dir.join("db").display()),
            },
        }
    }
}

/// Where rgd keeps its state.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    /// `--home`, else `$RGD_HOME`, else the platform data dir (`~/.local/share/rgd` on Linux).
    pub fn resolve(explicit: Option<&Path>) -> Home {
        let root = explicit
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("RGD_HOME").map(PathBuf::from))
            .or_else(|| directories::ProjectDirs::from("", "", "rgd").map(|d| d.data_dir().to_path_buf()))
            .unwrap_or_else(|| PathBuf::from(".rgd"));
        Home { root }
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.runs_dir().join(run_id)
    }

    /// A run is recorded once its manifest is written (a directory alone may be one being made);
    /// a run whose manifest went while its database stayed is still one, a damaged one.
    pub fn has_run(&self, run_id: &str) -> bool {
        let dir = self.run_dir(run_id);
        dir.join("manifest.json").is_file() || dir.join("db").is_dir()
    }

    /// Run ids, newest first (ULIDs sort by creation time).
    pub fn run_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.runs_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| self.has_run(&e.file_name().to_string_lossy()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids
    }

    pub fn read_manifest(&self, run_id: &str) -> Result<Manifest, StoreError> {
        if !self.has_run(run_id) {
            return Err(StoreError::NoSuchRun(run_id.into(), self.runs_dir().display().to_string()));
        }
        read_manifest_at(run_id, &self.run_dir(run_id).join("manifest.json"))
    }

    /// Resolves a run id, or a unique prefix of one ("01J9" is enough when only one run starts
    /// so). A whole id wins over the longer ids it starts (`sweep` and its shards `sweep-s0`...).
    pub fn find_run(&self, prefix: &str) -> Result<String, StoreError> {
        let matches: Vec<String> = self.run_ids().into_iter().filter(|id| id.starts_with(prefix)).collect();
        match matches.as_slice() {
            [one] => Ok(one.clone()),
            many if many.iter().any(|id| id == prefix) => Ok(prefix.to_string()),
            [] => Err(StoreError::NoSuchRun(prefix.into(), self.runs_dir().display().to_string())),
            many => {
                let shown: Vec<&str> = many.iter().take(5).map(String::as_str).collect();
                let more = if many.len() > 5 { ", ..." } else { "" };
                Err(StoreError::AmbiguousRun(
                    prefix.into(),
                    many.len(),
                    format!("{}{more}", shown.join(", ")),
                ))
            }
        }
    }
}

fn read_manifest_at(run_id: &str, path: &Path) -> Result<Manifest, StoreError> {
    crate::checked::read_json(path).map_err(|what| StoreError::Damaged { run: run_id.into(), what })
}

pub struct RunStore {
    pub dir: PathBuf,
    pub run_id: String,
    /// Open until the store is dropped, when it is closed and, if this store wrote to it, sealed.
    sled: Option<Sled>,
    /// Opened at the first event recorded (a store opened to read never writes it).
    journal: Mutex<Option<journal::Journal>>,
    /// Whether this store wrote the database: its files are sealed when it lets go of them.
    wrote: std::sync::atomic::AtomicBool,
    /// The folder of the copy a reader opened (removed after the database closes).
    copy: Option<tempfile::TempDir>,
}

struct Sled {
    db: sled::Db,
    events: sled::Tree,
    results: sled::Tree,
}

impl Drop for RunStore {
    fn drop(&mut self) {
        let Some(sled) = self.sled.take() else { return };
        let flushed = sled.db.flush();
        drop(sled);
        if !*self.wrote.get_mut() || flushed.is_err() {
            return;
        }
        // sled writes its snapshot the first time a closed database is opened again, and leaves
        // the files as they are on every open after: opened and closed once here, the files the
        // seal takes are those every later read leaves alone.
        let settled = crate::sled_open::open(sled::Config::new().cache_capacity(1 << 20), &self.dir.join("db")).map(drop);
        if let Err(e) = settled
            .map_err(|e| StoreError::from_sled(&self.run_id, &self.dir, e))
            .and_then(|()| seal::write(&self.dir))
        {
            tracing::warn!("run {}: its database was not sealed: {e}", self.run_id);
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

impl RunStore {
    /// Creates a new run directory with its manifest.
    pub fn create(home: &Home, manifest: &Manifest) -> Result<RunStore, StoreError> {
        let dir = home.run_dir(&manifest.run_id);
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        status::write_checked_json(&dir.join("manifest.json"), manifest)?;
        Self::open_dir(dir, &manifest.run_id)
    }

    /// Opens a recorded run to read it, whose files agree: one whose database holds fewer finished
    /// tasks than its status counts (sled rewrote a damaged file as an empty one), or whose seal
    /// no longer matches, is `Damaged`, never read as a run with less in it. It reads a private
    /// copy of the database: sled writes to the files it opens (its snapshot, its recovery),
    /// and a run's files stay as they were sealed.
    pub fn open(home: &Home, run_id: &str) -> Result<RunStore, StoreError> {
        Self::open_checked(home, run_id, false)
    }

    /// Opens a recorded run to write to it (`--resume`), in place, with the same checks.
    pub fn open_to_resume(home: &Home, run_id: &str) -> Result<RunStore, StoreError> {
        Self::open_checked(home, run_id, true)
    }

    fn open_checked(home: &Home, run_id: &str, in_place: bool) -> Result<RunStore, StoreError> {
        let dir = home.run_dir(run_id);
        if !home.has_run(run_id) {
            return Err(StoreError::NoSuchRun(run_id.into(), home.runs_dir().display().to_string()));
        }
        if !dir.join("manifest.json").is_file() {
            return Err(StoreError::Damaged {
                run: run_id.into(),
                what: format!("{} is missing", dir.join("manifest.json").display()),
            });
        }
        let status = RunStatus::load(&dir).map_err(|what| StoreError::Damaged { run: run_id.into(), what })?;
        // Before sled opens the files: it rewrites a damaged one as it opens it.
        if let Some(broken) = seal::check(&dir)
            && !broken.is_empty()
        {
            return Err(StoreError::Damaged {
                run: run_id.into(),
                what: broken.join("; "),
            });
        }
        let store = match in_place {
            true => Self::open_dir(dir, run_id)?,
            false => Self::open_copy(dir, run_id)?,
        };
        if let Some(status) = status {
            let held = store.final_results()?;
            if held < status.finished {
                return Err(StoreError::Damaged {
                    run: run_id.into(),
                    what: format!(
                        "its database {} holds {held} of the {} finished tasks its status counts",
                        store.dir.join("db").display(),
                        status.finished
                    ),
                });
            }
        }
        Ok(store)
    }

    /// Opens a copy of the database of the run in `dir`, made now (a live process holds the
    /// database: `Locked`).
    pub(super) fn open_copy(dir: PathBuf, run_id: &str) -> Result<RunStore, StoreError> {
        if check::held_by_a_process(&dir) {
            return Err(StoreError::Locked(run_id.into()));
        }
        let copy = tempfile::tempdir().map_err(io_err(&dir))?;
        let db = copy.path().join("db");
        crate::checked::copy_tree(&dir.join("db"), &db).map_err(io_err(&dir.join("db")))?;
        let mut store = Self::open_dir_at(&db, &dir, run_id)?;
        store.copy = Some(copy);
        Ok(store)
    }

    /// Opens the database of the run in `dir` as it is, without comparing it with anything.
    fn open_dir(dir: PathBuf, run_id: &str) -> Result<RunStore, StoreError> {
        Self::open_dir_at(&dir.join("db"), &dir, run_id)
    }

    /// Opens the database at `db` as that of the run in `dir` (a copy of it, to check it).
    fn open_dir_at(db: &Path, dir: &Path, run_id: &str) -> Result<RunStore, StoreError> {
        let dir = dir.to_path_buf();
        // A bounded page cache: a run's events are written once and read back only by replays.
        let db =
            crate::sled_open::open(sled::Config::new().cache_capacity(16 << 20), db).map_err(|e| StoreError::from_sled(run_id, &dir, e))?;
        let events = db.open_tree("events").map_err(|e| StoreError::from_sled(run_id, &dir, e))?;
        let results = db.open_tree("results").map_err(|e| StoreError::from_sled(run_id, &dir, e))?;
        Ok(RunStore {
            dir,
            run_id: run_id.into(),
            sled: Some(Sled { db, events, results }),
            journal: Mutex::new(None),
            wrote: std::sync::atomic::AtomicBool::new(false),
            copy: None,
        })
    }

    #[allow(clippy::expect_used, reason = "`sled` is taken only by `drop`, after which nothing can call this")]
    fn sled(&self) -> &Sled {
        self.sled.as_ref().expect("a store's database is open until it is dropped")
    }

    /// How many tasks the database holds a final result of (the count `status.json` keeps).
    fn final_results(&self) -> Result<usize, StoreError> {
        Ok(self.results()?.iter().filter(|r| r.is_final()).count())
    }

    pub fn manifest(&self) -> Result<Manifest, StoreError> {
        read_manifest_at(&self.run_id, &self.dir.join("manifest.json"))
    }

    /// The sequence number the next event gets.
    pub fn next_seq(&self) -> Result<u64, StoreError> {
        Ok(match self.sled().events.last()? {
            Some((key, _)) => u64::from_be_bytes(key.as_ref().try_into().map_err(|_| StoreError::Corrupt("event key".into()))?) + 1,
            None => 0,
        })
    }

    /// Every recorded event in order.
    pub fn events(&self) -> impl Iterator<Item = Result<Envelope, StoreError>> + '_ {
        self.sled().events.iter().map(|item| {
            let (_, value) = item.map_err(|e| StoreError::from_sled(&self.run_id, &self.dir, e))?;
            serde_json::from_slice(&value).map_err(|e| StoreError::Corrupt(format!("an event in {}: {e}", self.dir.join("db").display())))
        })
    }

    /// Finished tasks' results, keyed by task id order.
    pub fn results(&self) -> Result<Vec<TaskResult>, StoreError> {
        self.sled()
            .results
            .iter()
            .map(|item| {
                let (_, value) = item.map_err(|e| StoreError::from_sled(&self.run_id, &self.dir, e))?;
                serde_json::from_slice(&value)
                    .map_err(|e| StoreError::Corrupt(format!("a result in {}: {e}", self.dir.join("db").display())))
            })
            .collect()
    }

    /// Appends `lines` to the journal, opening it first if need be. A run recorded before every
    /// run kept a journal gets one written from its database first, so that it is whole.
    fn journal_append(&self, lines: &[u8], durable: bool) -> Result<(), String> {
        let mut slot = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let journal = match slot.take() {
            Some(j) => j,
            None => {
                // Written again: the files change from here, and are sealed anew when it ends.
                self.wrote.store(true, std::sync::atomic::Ordering::SeqCst);
                seal::remove(&self.dir).map_err(|e| format!("removing the run's seal: {e}"))?;
                let fresh = !journal_path(&self.dir).exists();
                let mut journal = journal::Journal::open(&self.dir).map_err(|e| format!("opening the journal: {e}"))?;
                if fresh {
                    let mut old = Vec::new();
                    for e in self.events() {
                        old.extend(journal::line(
                            &serde_json::to_vec(&e.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?,
                        ));
                    }
                    journal.append(&old, true).map_err(|e| format!("writing the journal: {e}"))?;
                }
                journal
            }
        };
        let journal = slot.insert(journal);
        journal.append(lines, durable).map_err(|e| format!("writing the journal: {e}"))
    }

    /// Puts back `events` and `results` into a new database (`rgd runs repair`), flushed.
    fn restore(
        &self,
        events: &std::collections::BTreeMap<u64, Envelope>,
        results: &std::collections::BTreeMap<String, TaskResult>,
    ) -> Result<(), StoreError> {
        let sled_err = |e| StoreError::from_sled(&self.run_id, &self.dir, e);
        let mut batch = sled::Batch::default();
        for (seq, e) in events {
            batch.insert(
                &seq.to_be_bytes(),
                crate::secrets::scrub_bytes(serde_json::to_vec(e).map_err(|e| StoreError::Corrupt(e.to_string()))?),
            );
        }
        self.sled().events.apply_batch(batch).map_err(sled_err)?;
        let mut batch = sled::Batch::default();
        for (task, r) in results {
            batch.insert(
                task.as_bytes(),
                crate::secrets::scrub_bytes(serde_json::to_vec(r).map_err(|e| StoreError::Corrupt(e.to_string()))?),
            );
        }
        self.wrote.store(true, std::sync::atomic::Ordering::SeqCst);
        self.sled().results.apply_batch(batch).map_err(sled_err)?;
        self.sled().db.flush().map_err(sled_err)?;
        Ok(())
    }

    pub fn write_status(&self, status: &RunStatus) -> Result<(), StoreError> {
        status::write_checked_json(&self.dir.join("status.json"), status)
    }

    pub fn flush(&self) -> Result<(), StoreError> {
        self.sled().db.flush()?;
        Ok(())
    }
}

impl Recorder for RunStore {
    fn record(&self, batch: &[Arc<Envelope>]) -> Result<(), String> {
        if self.copy.is_some() {
            return Err(format!(
                "run {} was opened to read it; `RunStore::open_to_resume` writes to it",
                self.run_id
            ));
        }
        // The journal takes the batch first, then the database: the journal holds every event the
        // database holds. Plain events go in as one sled batch; a finished task lands together
        // with its result in one transaction, and both records are flushed before this returns,
        // so a kill -9 right after cannot make a resume run it again.
        let mut values = Vec::with_capacity(batch.len());
        let mut lines = Vec::new();
        for envelope in batch {
            let value = crate::secrets::scrub_bytes(serde_json::to_vec(&**envelope).map_err(|e| e.to_string())?);
            lines.extend(journal::line(&value));
            values.push(value);
        }
        let flush = batch.iter().any(|e| matches!(e.event, Event::TaskFinished { .. }));
        self.journal_append(&lines, flush)?;
        let mut plain = sled::Batch::default();
        for (envelope, value) in batch.iter().zip(values) {
            let key = envelope.seq.to_be_bytes();
            if let Event::TaskFinished { result } = &envelope.event {
                self.sled()
                    .events
                    .apply_batch(std::mem::take(&mut plain))
                    .map_err(|e| e.to_string())?;
                let result_value = crate::secrets::scrub_bytes(serde_json::to_vec(&result).map_err(|e| e.to_string())?);
                use sled::Transactional;
                (&self.sled().events, &self.sled().results)
                    .transaction(|(events, results)| {
                        events.insert(&key, value.as_slice())?;
                        results.insert(result.task_id.as_bytes(), result_value.as_slice())?;
                        Ok::<_, sled::transaction::ConflictableTransactionError<()>>(())
                    })
                    .map_err(|e| format!("{e:?}"))?;
            } else {
                plain.insert(&key, value);
            }
        }
        self.sled().events.apply_batch(plain).map_err(|e| e.to_string())?;
        if flush {
            self.sled().db.flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// The sweep's view of a run: the same reads and writes, errors as text.
impl RunRecord for RunStore {
    fn manifest(&self) -> Result<Manifest, RecordError> {
        RunStore::manifest(self).map_err(record_error)
    }

    fn results(&self) -> Result<Vec<TaskResult>, RecordError> {
        RunStore::results(self).map_err(record_error)
    }

    fn events(&self) -> Result<Vec<Envelope>, RecordError> {
        RunStore::events(self).collect::<Result<_, _>>().map_err(record_error)
    }

    fn write_status(&self, status: &RunStatus) -> Result<(), RecordError> {
        RunStore::write_status(self, status).map_err(record_error)
    }

    fn flush(&self) -> Result<(), RecordError> {
        RunStore::flush(self).map_err(record_error)
    }
}

fn record_error(e: StoreError) -> RecordError {
    RecordError(e.to_string())
}
