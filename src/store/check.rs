//! A recorded run checked against itself (`rgd runs verify`) and rebuilt (`rgd runs repair`).
//!
//! A run has four records that must agree: the manifest and the status (each with a checksum),
//! the journal (every event, a checksum per line) and the database (every event and every
//! finished task's result). The journal is written first, so it holds all the database holds;
//! the status is written after a finished task is flushed, so the database holds at least the
//! finished tasks the status counts. The database is read from a copy: sled rewrites a damaged
//! file as it opens it, which a check must not do.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::journal::{self, read_journal};
use super::status::write_checked_json;
use super::{Home, RunStore, StoreError, seal};
use crate::record::{Envelope, Event, Manifest, RunState, RunStatus, TaskResult};

/// One run's check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checked {
    pub run_id: String,
    pub verdict: Verdict,
    /// What is worth knowing and is no damage (no journal yet, tasks a resume runs again).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Verdict {
    /// Every record agrees.
    Whole { finished: usize, tasks: usize },
    /// Its process was stopped before the end and everything it finished is whole:
    /// `--resume` continues it.
    Resumable { finished: usize, tasks: usize },
    /// A live process is running it (its records change as they are read): not checked.
    Live,
    /// What is damaged, one sentence each, naming the file.
    Damaged { damage: Vec<String> },
}

impl Checked {
    pub fn is_damaged(&self) -> bool {
        matches!(self.verdict, Verdict::Damaged { .. })
    }

    /// One line: the run, then ok / resumable / live / damaged and what.
    pub fn line(&self) -> String {
        let id = &self.run_id;
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.notes.join("; "))
        };
        match &self.verdict {
            Verdict::Whole { finished, tasks } => format!("{id}  ok: {finished}/{tasks} tasks finished{notes}"),
            Verdict::Resumable { finished, tasks } => {
                format!("{id}  resumable: {finished}/{tasks} tasks finished, `rgd sweep --resume {id}` continues it{notes}")
            }
            Verdict::Live => format!("{id}  live: a running rgd process holds it{notes}"),
            Verdict::Damaged { damage } => format!("{id}  damaged: {}{notes}", damage.join("; ")),
        }
    }
}

/// A run's manifest and status for a listing, when its records agree (its database is opened
/// and its finished tasks counted, unless a live process holds it); else what is damaged, in one
/// sentence. `rgd runs list` and the TUI's run list show the same.
pub fn listing(home: &Home, id: &str) -> Result<(Manifest, Option<RunStatus>), String> {
    let m = home.read_manifest(id).map_err(|e| e.to_string())?;
    let status = RunStatus::load(&home.run_dir(id))?;
    if !status.as_ref().is_some_and(RunStatus::is_live) {
        match RunStore::open(home, id) {
            Ok(_) | Err(StoreError::Locked(_)) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok((m, status))
}

/// What a run's database holds, read from a copy.
#[derive(Default)]
struct DbRead {
    events: BTreeMap<u64, Envelope>,
    results: BTreeMap<String, TaskResult>,
}

/// Whether a live process holds the run's database (sled locks its file while it is open).
pub(super) fn held_by_a_process(dir: &Path) -> bool {
    let Ok(file) = std::fs::File::open(dir.join("db").join("db")) else {
        return false;
    };
    matches!(file.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
}

/// The database of the run in `dir`, read from a copy; `Err` says what cannot be read.
fn read_db(dir: &Path, run_id: &str) -> Result<DbRead, String> {
    let db = dir.join("db");
    if !db.join("db").is_file() {
        return Err(format!("its database {} is missing", db.display()));
    }
    let store = RunStore::open_copy(dir.to_path_buf(), run_id).map_err(|e| e.to_string())?;
    let mut read = DbRead::default();
    for e in store.events() {
        let e = e.map_err(|e| e.to_string())?;
        read.events.insert(e.seq, e);
    }
    for r in store.results().map_err(|e| e.to_string())? {
        read.results.insert(r.task_id.clone(), r);
    }
    Ok(read)
}

/// The last finished record of every task among `events`, by task id.
fn finished_in(events: &BTreeMap<u64, Envelope>) -> BTreeMap<String, TaskResult> {
    let mut out = BTreeMap::new();
    for e in events.values() {
        if let Event::TaskFinished { result } = &e.event {
            out.insert(result.task_id.clone(), (*result).clone());
        }
    }
    out
}

fn finals(results: &BTreeMap<String, TaskResult>) -> usize {
    results.values().filter(|r| r.is_final()).count()
}

/// Checks one run; never changes a file of it.
pub fn verify_run(home: &Home, run_id: &str) -> Checked {
    let dir = home.run_dir(run_id);
    let mut damage = Vec::new();
    let mut notes = Vec::new();
    let manifest: Option<Manifest> = crate::checked::read_json(&dir.join("manifest.json"))
        .map_err(|e| damage.push(e))
        .ok();
    let status = RunStatus::load(&dir).map_err(|e| damage.push(e)).ok().flatten();
    let checked = |verdict, notes| Checked {
        run_id: run_id.to_string(),
        verdict,
        notes,
    };
    if status.as_ref().is_some_and(RunStatus::is_live) || held_by_a_process(&dir) {
        return checked(Verdict::Live, notes);
    }
    let journal = match read_journal(&dir) {
        Ok(Some(j)) => Some(j),
        Ok(None) => {
            notes.push("it keeps no journal (recorded before every run kept one): `rgd runs repair` writes one from its database".into());
            None
        }
        Err(e) => {
            damage.push(format!("{} cannot be read ({e})", journal::journal_path(&dir).display()));
            None
        }
    };
    if let Some(j) = &journal {
        let shown = journal::journal_path(&dir);
        damage.extend(j.damaged.iter().map(|d| format!("{}: {d}", shown.display())));
    }
    match seal::check(&dir) {
        Some(broken) => damage.extend(broken),
        None if status.as_ref().is_some_and(|s| s.state == RunState::Finished) => {
            notes.push("its database has no seal (recorded before seals were kept): a change sled does not read goes unseen".into());
        }
        None => {}
    }
    let db = read_db(&dir, run_id).map_err(|e| damage.push(e)).ok();
    let interrupted = status.as_ref().is_some_and(|s| s.state != RunState::Finished);
    if let Some(db) = &db {
        let held = finals(&db.results);
        if let Some(s) = &status
            && held < s.finished
        {
            damage.push(format!(
                "its database {} holds {held} of the {} finished tasks its status counts",
                dir.join("db").display(),
                s.finished
            ));
        }
        if let Some(j) = &journal {
            let in_journal = finished_in(&j.events);
            let missing = db.events.keys().filter(|k| !j.events.contains_key(k)).count();
            if missing > 0 && j.damaged.is_empty() {
                damage.push(format!(
                    "{} lacks {missing} events its database holds",
                    journal::journal_path(&dir).display()
                ));
            }
            let (held_j, held_db) = (finals(&in_journal), held);
            if held_db < held_j {
                if interrupted {
                    notes.push(format!(
                        "{} finished tasks reached the journal but not the database as the process stopped; a resume runs them again",
                        held_j - held_db
                    ));
                } else {
                    damage.push(format!(
                        "its database {} holds {held_db} of the {held_j} finished tasks its journal holds",
                        dir.join("db").display()
                    ));
                }
            } else if !interrupted && db.events.len() < j.events.len() {
                damage.push(format!(
                    "its database {} holds {} of the {} events its journal holds",
                    dir.join("db").display(),
                    db.events.len(),
                    j.events.len()
                ));
            }
        }
    }
    if let (Some(m), Some(s)) = (&manifest, &status)
        && m.dataset.selected.len() != s.tasks
    {
        damage.push(format!(
            "{} counts {} tasks, its manifest selects {}",
            dir.join("status.json").display(),
            s.tasks,
            m.dataset.selected.len()
        ));
    }
    if !damage.is_empty() {
        return checked(Verdict::Damaged { damage }, notes);
    }
    let tasks = manifest.map_or(0, |m| m.dataset.selected.len());
    let finished = db.as_ref().map_or(0, |d| finals(&d.results));
    match interrupted {
        true => checked(Verdict::Resumable { finished, tasks }, notes),
        false => checked(Verdict::Whole { finished, tasks }, notes),
    }
}

/// What `repair_run` did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Repaired {
    pub run_id: String,
    pub events: usize,
    pub finished: usize,
    pub tasks: usize,
    /// The damaged files, moved aside under these names.
    pub kept_aside: Vec<PathBuf>,
    /// Which files were written again.
    pub rebuilt: Vec<String>,
}

/// Rebuilds a damaged run from whatever of its records is whole: events from the journal's whole
/// lines and the database's readable events, a task's result only from a whole record of it, the
/// manifest from the run's first event when its file is damaged. The damaged files are kept
/// beside the new ones (`<name>.damaged-<time>`).
pub fn repair_run(home: &Home, run_id: &str) -> anyhow::Result<Repaired> {
    let dir = home.run_dir(run_id);
    let check = verify_run(home, run_id);
    if check.verdict == Verdict::Live {
        bail!("run {run_id} is live: a running rgd process holds it; stop it first");
    }
    let damage = match &check.verdict {
        Verdict::Damaged { damage } => damage.clone(),
        _ if journal::journal_path(&dir).exists() => {
            bail!("run {run_id} is not damaged: {}", check.line())
        }
        _ => Vec::new(),
    };
    let journal = read_journal(&dir).ok().flatten().unwrap_or_default();
    let db = read_db(&dir, run_id).unwrap_or_default();
    // The journal holds all the database holds; a line of it that is damaged may survive there.
    let journalled = journal.events.len();
    let mut events = db.events;
    events.extend(journal.events);
    let mut results = db.results;
    results.extend(finished_in(&events));
    let manifest = match crate::checked::read_json::<Manifest>(&dir.join("manifest.json")) {
        Ok(m) => m,
        Err(_) => events
            .values()
            .find_map(|e| match &e.event {
                Event::RunStarted { manifest } => Some((**manifest).clone()),
                _ => None,
            })
            .with_context(|| format!("run {run_id}: its manifest is damaged and no record holds the run's first event"))?,
    };
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S").to_string();
    let mut kept_aside = Vec::new();
    let mut rebuilt = Vec::new();
    let mut aside = |name: &str| -> anyhow::Result<()> {
        let moved = crate::checked::move_aside(&dir, name, &stamp).with_context(|| format!("moving {} aside", dir.join(name).display()))?;
        kept_aside.extend(moved);
        Ok(())
    };
    let named = |file: &str| damage.iter().any(|d| d.contains(&dir.join(file).display().to_string()));
    let rebuild_db = named("db") || named(seal::SEAL);
    let rebuild_journal = named(journal::JOURNAL) || !journal::journal_path(&dir).exists() || journalled < events.len();
    if rebuild_db {
        aside("db")?;
        let store = RunStore::open_dir(dir.clone(), run_id)?;
        store.restore(&events, &results)?;
        rebuilt.push("db".to_string());
    }
    if rebuild_journal {
        aside(journal::JOURNAL)?;
        write_journal(&dir, &events)?;
        rebuilt.push(journal::JOURNAL.to_string());
    }
    if named("manifest.json") {
        aside("manifest.json")?;
        write_checked_json(&dir.join("manifest.json"), &manifest)?;
        rebuilt.push("manifest.json".into());
    }
    let tasks = manifest.dataset.selected.len();
    let finished = finals(&results);
    let all_done = manifest
        .dataset
        .selected
        .iter()
        .all(|t| results.get(t).is_some_and(TaskResult::is_final));
    let status = RunStatus {
        state: if all_done { RunState::Finished } else { RunState::Interrupted },
        pid: std::process::id(),
        tasks,
        finished,
        solved: results.values().filter(|r| r.solved()).count(),
        updated_at: chrono::Utc::now(),
    };
    if named("status.json") {
        aside("status.json")?;
    }
    write_checked_json(&dir.join("status.json"), &status)?;
    rebuilt.push("status.json".into());
    Ok(Repaired {
        run_id: run_id.to_string(),
        events: events.len(),
        finished,
        tasks,
        kept_aside,
        rebuilt,
    })
}

/// Writes a whole journal of `events` in one go (through a temporary file).
fn write_journal(dir: &Path, events: &BTreeMap<u64, Envelope>) -> anyhow::Result<()> {
    let mut text = Vec::new();
    for e in events.values() {
        text.extend(journal::line(&crate::secrets::scrub_bytes(serde_json::to_vec(e)?)));
    }
    crate::checked::write_atomically(&journal::journal_path(dir), &text)?;
    Ok(())
}
