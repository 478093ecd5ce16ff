//! One memory pool for every rgd process on a machine. sled and tantivy each allow one process per
//! directory, so one process at a time **owns** `$RGD_HOME/memory`: it holds `owner.lock` (which
//! names its pid), has the database and index open, and serves every other rgd process over a
//! Unix socket beside the pool. A **guest** sends the same requests the owner applies to its own
//! pool (`Request::apply` is the one code path for both), so a run in any process sees every
//! solution stored so far by any process: RGD's semantics (later tasks see earlier solutions)
//! hold across concurrent sweeps, and nothing is staged or merged later.
//!
//! When the owner exits, the next guest to call finds the socket dead, takes the lock and opens
//! the pool itself. Every request is idempotent (inserts carry their ids), so one interrupted by
//! the owner's exit is simply sent again. Within a process every open of the same pool shares one
//! handle (the TUI's browser and the run it launched, for example).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::assets::EmbeddingAssets;
use super::{Embedder, Entry, Hit, MemoryError, MemoryPool, PoolState, SearchOptions};

/// How long a process waits for a pool whose lock is held but whose owner does not answer (the
/// owner may be loading the embedding model, or exiting) before it gives up and names the owner.
const OWNER_WAIT: Duration = Duration::from_secs(15);
/// How long a guest waits for an answer: a search behind a large import can take a while.
const ANSWER_WAIT: Duration = Duration::from_secs(300);

/// What any process may ask of the pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Request {
    Entries,
    Find(String),
    Search { text: String, options: SearchOptions },
    Insert(Vec<Entry>),
    Remove(String),
    State,
    UsesOf(String),
    RecordUse { entry: String, run: String, task: String },
}

#[derive(Debug, Serialize, Deserialize)]
enum Reply {
    Entries(Vec<Entry>),
    Entry(Entry),
    Hits(Vec<Hit>),
    State(PoolState),
    Uses(Vec<(String, String)>),
    Done,
}

impl Request {
    /// The owner's side of every request, local or from a guest.
    fn apply(self, pool: &mut MemoryPool) -> Result<Reply, MemoryError> {
        Ok(match self {
            Request::Entries => Reply::Entries(pool.entries().to_vec()),
            Request::Find(prefix) => Reply::Entry(pool.find(&prefix)?.clone()),
            Request::Search { text, options } => Reply::Hits(pool.search(&text, &options)?),
            Request::Insert(entries) => {
                pool.insert(entries)?;
                Reply::Done
            }
            Request::Remove(id) => {
                pool.remove(&id)?;
                Reply::Done
            }
            Request::State => Reply::State(pool.state()),
            Request::UsesOf(id) => Reply::Uses(pool.uses_of(&id)),
            Request::RecordUse { entry, run, task } => {
                pool.record_use(&entry, &run, &task)?;
                Reply::Done
            }
        })
    }
}

/// A handle on the machine's pool; cheap to clone; every call blocks (use a blocking task).
#[derive(Clone)]
pub struct SharedPool {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    socket: PathBuf,
    /// To load the embedding model if this process becomes the owner.
    assets: EmbeddingAssets,
    mode: Mutex<Mode>,
}

enum Mode {
    Owner(Owner),
    Guest,
}

/// Fields drop in this order: the server stops (and waits for requests in flight), the pool
/// closes (committing its index), and only then is the lock released for the next owner.
struct Owner {
    _server: Server,
    pool: Arc<Mutex<MemoryPool>>,
    _lock: OwnerLock,
}

/// Pools opened in this process, by directory.
static OPEN: LazyLock<Mutex<HashMap<PathBuf, Weak<Shared>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SharedPool {
    /// The pool in `$RGD_HOME/memory`: owned by this process if no other rgd process has it.
    pub fn open_in_home(home_root: &Path, assets: &EmbeddingAssets) -> Result<SharedPool, MemoryError> {
        SharedPool::open(&MemoryPool::dir_in(home_root), assets)
    }

    /// As `open_in_home`, fetching the embedding model first if this machine has none yet.
    pub fn open_fetching(home_root: &Path, report: &dyn Fn(&str)) -> Result<SharedPool, MemoryError> {
        let assets = super::assets::ensure(report)?;
        SharedPool::open_in_home(home_root, &assets)
    }

    pub fn open(dir: &Path, assets: &EmbeddingAssets) -> Result<SharedPool, MemoryError> {
        std::fs::create_dir_all(dir).map_err(|e| MemoryError::Input(format!("{}: {e}", dir.display())))?;
        let dir = dir
            .canonicalize()
            .map_err(|e| MemoryError::Input(format!("{}: {e}", dir.display())))?;
        let mut open = guard(&OPEN);
        if let Some(shared) = open.get(&dir).and_then(Weak::upgrade) {
            return Ok(SharedPool { shared });
        }
        let shared = Arc::new(Shared {
            socket: socket_path(&dir),
            dir: dir.clone(),
            assets: assets.clone(),
            mode: Mutex::new(Mode::Guest),
        });
        settle(&shared, &mut guard(&shared.mode))?;
        open.retain(|_, w| w.strong_count() > 0);
        open.insert(dir, Arc::downgrade(&shared));
        Ok(SharedPool { shared })
    }

    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Whether this process owns the pool (for messages; either way every call works).
    pub fn is_owner(&self) -> bool {
        matches!(*guard(&self.shared.mode), Mode::Owner(_))
    }

    pub fn entries(&self) -> Result<Vec<Entry>, MemoryError> {
        match self.call(Request::Entries)? {
            Reply::Entries(e) => Ok(e),
            other => Err(unexpected(other)),
        }
    }

    /// The entry whose id starts with `prefix` (ids are ULIDs; a unique prefix is enough).
    pub fn find(&self, prefix: &str) -> Result<Entry, MemoryError> {
        match self.call(Request::Find(prefix.to_string()))? {
            Reply::Entry(e) => Ok(e),
            other => Err(unexpected(other)),
        }
    }

    /// Embeds the query (in the owner), then searches.
    pub fn search(&self, text: &str, options: &SearchOptions) -> Result<Vec<Hit>, MemoryError> {
        let request = Request::Search {
            text: text.to_string(),
            options: *options,
        };
        match self.call(request)? {
            Reply::Hits(h) => Ok(h),
            other => Err(unexpected(other)),
        }
    }

    /// Stores entries durably (replacing any with the same id).
    pub fn insert(&self, entries: Vec<Entry>) -> Result<(), MemoryError> {
        self.call(Request::Insert(entries)).map(drop)
    }

    pub fn remove(&self, id: &str) -> Result<(), MemoryError> {
        self.call(Request::Remove(id.to_string())).map(drop)
    }

    pub fn state(&self) -> Result<PoolState, MemoryError> {
        match self.call(Request::State)? {
            Reply::State(s) => Ok(s),
            other => Err(unexpected(other)),
        }
    }

    /// (run id, task id) pairs an entry was offered to.
    pub fn uses_of(&self, entry_id: &str) -> Result<Vec<(String, String)>, MemoryError> {
        match self.call(Request::UsesOf(entry_id.to_string()))? {
            Reply::Uses(u) => Ok(u),
            other => Err(unexpected(other)),
        }
    }

    pub fn record_use(&self, entry_id: &str, run_id: &str, task_id: &str) -> Result<(), MemoryError> {
        let request = Request::RecordUse {
            entry: entry_id.to_string(),
            run: run_id.to_string(),
            task: task_id.to_string(),
        };
        self.call(request).map(drop)
    }

    fn call(&self, request: Request) -> Result<Reply, MemoryError> {
        loop {
            let mut mode = guard(&self.shared.mode);
            if let Mode::Owner(owner) = &*mode {
                let pool = owner.pool.clone();
                drop(mode);
                return request.apply(&mut guard(&pool));
            }
            drop(mode);
            match send(&self.shared.socket, &request) {
                Some(answer) => return answer,
                // The owner exited (or is exiting): take over, or find the process that did.
                None => {
                    mode = guard(&self.shared.mode);
                    if matches!(*mode, Mode::Guest) {
                        settle(&self.shared, &mut mode)?;
                    }
                }
            }
        }
    }
}

fn unexpected(reply: Reply) -> MemoryError {
    MemoryError::Corrupt(format!("the pool's owner answered out of turn: {reply:?}"))
}

/// Makes this process the owner if the lock is free, or a guest of an owner that answers; waits
/// for an owner that is starting or exiting; names the owner's pid when it never answers.
fn settle(shared: &Shared, mode: &mut Mode) -> Result<(), MemoryError> {
    let lock_path = shared.dir.join("owner.lock");
    let deadline = Instant::now() + OWNER_WAIT;
    loop {
        if let Some(lock) = OwnerLock::acquire(&lock_path)? {
            let pool = open_pool_waiting(shared, deadline)?;
            let pool = Arc::new(Mutex::new(pool));
            let server = Server::start(&shared.socket, pool.clone())?;
            *mode = Mode::Owner(Owner {
                _server: server,
                pool,
                _lock: lock,
            });
            return Ok(());
        }
        if send(&shared.socket, &Request::State).is_some() {
            *mode = Mode::Guest;
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(MemoryError::Unreachable {
                dir: shared.dir.display().to_string(),
                pid: OwnerLock::holder(&lock_path),
                socket: shared.socket.display().to_string(),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Opens the database; a previous owner that released the lock may still be closing it.
fn open_pool_waiting(shared: &Shared, deadline: Instant) -> Result<MemoryPool, MemoryError> {
    let embedder = Arc::new(Embedder::load(&shared.assets)?);
    loop {
        match MemoryPool::open(&shared.dir, embedder.clone()) {
            Err(MemoryError::Locked(_)) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            other => return other,
        }
    }
}

/// The socket beside the pool, or in the temporary directory when that path is too long for a
/// Unix socket address (108 bytes on Linux).
fn socket_path(dir: &Path) -> PathBuf {
    let beside = dir.join("pool.sock");
    if beside.as_os_str().len() < 100 {
        return beside;
    }
    let digest = hex::encode(Sha256::digest(dir.as_os_str().as_encoded_bytes()));
    std::env::temp_dir().join(format!("rgd-pool-{}.sock", &digest[..16]))
}

/// One request, one answer, one connection. `None`: the pool could not be reached (no owner
/// listening, or a connection closed before the answer: the owner is gone or going).
fn send(socket: &Path, request: &Request) -> Option<Result<Reply, MemoryError>> {
    let stream = UnixStream::connect(socket).ok()?;
    let line = match serde_json::to_string(request) {
        Ok(l) => l,
        Err(e) => return Some(Err(MemoryError::Input(e.to_string()))),
    };
    let mut writer = &stream;
    writeln!(writer, "{line}").and_then(|()| writer.flush()).ok()?;
    stream.set_read_timeout(Some(ANSWER_WAIT)).ok()?;
    let mut answer = String::new();
    match BufReader::new(&stream).read_line(&mut answer) {
        Ok(0) | Err(_) if answer.is_empty() => None,
        _ => Some(match serde_json::from_str::<Result<Reply, String>>(&answer) {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(message)) => Err(MemoryError::Input(message)),
            Err(e) => Err(MemoryError::Corrupt(format!("the pool's owner answered {answer:.80}: {e}"))),
        }),
    }
}

/// `owner.lock`: an advisory lock the OS releases when the owner exits however it exits; it
/// holds the owner's pid so that a process that cannot reach the owner can say which it is.
pub(super) struct OwnerLock {
    _file: File,
}

impl OwnerLock {
    pub(super) fn acquire(path: &Path) -> Result<Option<OwnerLock>, MemoryError> {
        let io = |e: std::io::Error| MemoryError::Input(format!("{}: {e}", path.display()));
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(Some(OwnerLock { _file: file }))
    }

    pub(super) fn holder(path: &Path) -> Option<u32> {
        let mut text = String::new();
        File::open(path).ok()?.read_to_string(&mut text).ok()?;
        text.trim().parse().ok()
    }
}

/// The owner's listener: one thread accepting, one short-lived thread per connection.
struct Server {
    socket: PathBuf,
    stop: Arc<AtomicBool>,
    in_flight: Arc<AtomicUsize>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(socket: &Path, pool: Arc<Mutex<MemoryPool>>) -> Result<Server, MemoryError> {
        // We hold the lock, so a socket file left here is a dead owner's.
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket).map_err(|e| MemoryError::Input(format!("{}: {e}", socket.display())))?;
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let (stop2, in_flight2) = (stop.clone(), in_flight.clone());
        let accept = std::thread::Builder::new()
            .name("memory-pool-server".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if stop2.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (pool, in_flight) = (pool.clone(), in_flight2.clone());
                    in_flight.fetch_add(1, Ordering::SeqCst);
                    let spawned = std::thread::Builder::new().name("memory-pool-guest".into()).spawn(move || {
                        serve(&stream, &pool);
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                    if spawned.is_err() {
                        in_flight2.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })
            .map_err(|e| MemoryError::Input(format!("memory pool server: {e}")))?;
        Ok(Server {
            socket: socket.to_path_buf(),
            stop,
            in_flight,
            accept: Some(accept),
        })
    }
}

/// Answers a guest's requests, one JSON line each, until it hangs up.
fn serve(stream: &UnixStream, pool: &Mutex<MemoryPool>) {
    let mut writer = stream;
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        let answer: Result<Reply, String> = serde_json::from_str::<Request>(&line)
            .map_err(|e| format!("a request the pool does not understand: {e}"))
            .and_then(|request| request.apply(&mut guard(pool)).map_err(|e| e.to_string()));
        let Ok(text) = serde_json::to_string(&answer) else { return };
        if writeln!(writer, "{text}").and_then(|()| writer.flush()).is_err() {
            return;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = UnixStream::connect(&self.socket);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        let _ = std::fs::remove_file(&self.socket);
        // Requests already being answered finish before the pool closes (bounded: a stuck one
        // must not hold this process's exit).
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
