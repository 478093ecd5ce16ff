//! Recorded runs: `$RGD_HOME/runs/<run id>/` holds `manifest.json`, `status.json` and a sled
//! database of every event and every finished task's result.
//!
//! One database per run keeps runs independent: a live sweep holds only its own lock, so other
//! commands can list runs (from the JSON files) while it works.

mod experiments;
mod export;
mod journal;
pub mod recall;
mod search;
mod status;

pub use experiments::{ABLATIONS, Cell, ExperimentRecord, ExperimentSpec};
pub use export::export_run;
pub use journal::{JOURNAL, journal_path, spawn_journal};
pub use search::{RunHit, RunIndex};
pub use status::write_json_atomically;

use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    #[error("run store: corrupt record: {0}")]
    Corrupt(String),
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

    /// A run is recorded once its manifest is written (a directory alone may be one being made).
    pub fn has_run(&self, run_id: &str) -> bool {
        self.run_dir(run_id).join("manifest.json").is_file()
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
        let path = self.run_dir(run_id).join("manifest.json");
        let text =
            std::fs::read_to_string(&path).map_err(|_| StoreError::NoSuchRun(run_id.into(), self.runs_dir().display().to_string()))?;
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))
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

pub struct RunStore {
    pub dir: PathBuf,
    pub run_id: String,
    db: sled::Db,
    events: sled::Tree,
    results: sled::Tree,
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
        status::write_json_atomically(&dir.join("manifest.json"), manifest)?;
        Self::open_dir(dir, &manifest.run_id)
    }

    pub fn open(home: &Home, run_id: &str) -> Result<RunStore, StoreError> {
        let dir = home.run_dir(run_id);
        if !dir.join("manifest.json").is_file() {
            return Err(StoreError::NoSuchRun(run_id.into(), home.runs_dir().display().to_string()));
        }
        Self::open_dir(dir, run_id)
    }

    fn open_dir(dir: PathBuf, run_id: &str) -> Result<RunStore, StoreError> {
        // A bounded page cache: a run's events are written once and read back only by replays.
        let db = crate::sled_open::open(sled::Config::new().cache_capacity(16 << 20), &dir.join("db")).map_err(|e| {
            if crate::sled_open::is_lock_error(&e) {
                StoreError::Locked(run_id.into())
            } else {
                StoreError::Sled(e)
            }
        })?;
        let events = db.open_tree("events")?;
        let results = db.open_tree("results")?;
        Ok(RunStore {
            dir,
            run_id: run_id.into(),
            db,
            events,
            results,
        })
    }

    pub fn manifest(&self) -> Result<Manifest, StoreError> {
        let path = self.dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt(format!("{}: {e}", path.display())))
    }

    /// The sequence number the next event gets.
    pub fn next_seq(&self) -> Result<u64, StoreError> {
        Ok(match self.events.last()? {
            Some((key, _)) => u64::from_be_bytes(key.as_ref().try_into().map_err(|_| StoreError::Corrupt("event key".into()))?) + 1,
            None => 0,
        })
    }

    /// Every recorded event in order.
    pub fn events(&self) -> impl Iterator<Item = Result<Envelope, StoreError>> + '_ {
        self.events.iter().map(|item| {
            let (_, value) = item?;
            serde_json::from_slice(&value).map_err(|e| StoreError::Corrupt(format!("event: {e}")))
        })
    }

    /// Finished tasks' results, keyed by task id order.
    pub fn results(&self) -> Result<Vec<TaskResult>, StoreError> {
        self.results
            .iter()
            .map(|item| {
                let (_, value) = item?;
                serde_json::from_slice(&value).map_err(|e| StoreError::Corrupt(format!("result: {e}")))
            })
            .collect()
    }

    pub fn write_status(&self, status: &RunStatus) -> Result<(), StoreError> {
        status::write_json_atomically(&self.dir.join("status.json"), status)
    }

    pub fn flush(&self) -> Result<(), StoreError> {
        self.db.flush()?;
        Ok(())
    }
}

impl Recorder for RunStore {
    fn record(&self, batch: &[Arc<Envelope>]) -> Result<(), String> {
        // Plain events go in as one sled batch; a finished task lands together with its result
        // in one transaction and is flushed before this returns, so a kill -9 right after cannot
        // make a resume run it again.
        let mut plain = sled::Batch::default();
        let mut flush = false;
        for envelope in batch {
            let key = envelope.seq.to_be_bytes();
            let value = crate::secrets::scrub_bytes(serde_json::to_vec(&**envelope).map_err(|e| e.to_string())?);
            if let Event::TaskFinished { result } = &envelope.event {
                self.events.apply_batch(std::mem::take(&mut plain)).map_err(|e| e.to_string())?;
                let result_value = crate::secrets::scrub_bytes(serde_json::to_vec(&result).map_err(|e| e.to_string())?);
                use sled::Transactional;
                (&self.events, &self.results)
                    .transaction(|(events, results)| {
                        events.insert(&key, value.as_slice())?;
                        results.insert(result.task_id.as_bytes(), result_value.as_slice())?;
                        Ok::<_, sled::transaction::ConflictableTransactionError<()>>(())
                    })
                    .map_err(|e| format!("{e:?}"))?;
                flush = true;
            } else {
                plain.insert(&key, value);
            }
        }
        self.events.apply_batch(plain).map_err(|e| e.to_string())?;
        if flush {
            self.db.flush().map_err(|e| e.to_string())?;
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
