//! Opening a sled database that this process may have just closed.
//!
//! Dropping a `sled::Db` does not release its file lock at once: sled's flusher thread holds the
//! lock until its next tick (spacejam/sled#1289), longer on a loaded machine. A process that
//! closes a database and opens it again (a merge, then its export; an index build, then its
//! descriptions) would then find its own lock. So a path this process opened before is waited
//! for, briefly; a database another process holds is reported at once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

/// The databases this process has opened, by canonical path.
static OPENED_HERE: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Mutex::default);

/// How long a lock this process released may take to go.
const OWN_LOCK_GRACE: Duration = Duration::from_secs(3);

fn opened_here() -> std::sync::MutexGuard<'static, HashSet<PathBuf>> {
    OPENED_HERE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens the database at `path` with `config` (whose path is set here).
pub fn open(config: sled::Config, path: &Path) -> sled::Result<sled::Db> {
    let config = config.path(path);
    // A database that does not exist yet has no canonical path, and was not opened before.
    let opened_before = path.canonicalize().is_ok_and(|key| opened_here().contains(&key));
    let deadline = Instant::now() + OWN_LOCK_GRACE;
    loop {
        match config.open() {
            Err(e) if opened_before && is_lock_error(&e) && Instant::now() < deadline => std::thread::sleep(Duration::from_millis(25)),
            Ok(db) => {
                opened_here().insert(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()));
                return Ok(db);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether opening failed because another handle holds the database's file lock.
pub fn is_lock_error(e: &sled::Error) -> bool {
    matches!(e, sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock || io.to_string().contains("lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_this_process_just_closed_opens_again_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        for i in 0..50u32 {
            let db = open(sled::Config::new(), &path).unwrap();
            db.insert(b"k", &i.to_be_bytes()).unwrap();
            db.flush().unwrap();
        }
        let db = open(sled::Config::new(), &path).unwrap();
        assert_eq!(db.get(b"k").unwrap().unwrap().as_ref(), &49u32.to_be_bytes());
    }

    #[test]
    fn a_database_held_open_is_reported_locked_after_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let _held = open(sled::Config::new(), &path).unwrap();
        let err = open(sled::Config::new(), &path).unwrap_err();
        assert!(is_lock_error(&err), "{err}");
    }
}
