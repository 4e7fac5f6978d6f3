//! The `--state FILE`: a snapshot of the state followed by a journal of the
//! writes since (format in `journal`), so a write costs what it changed,
//! not the size of the state.
//!
//! - **A write** (see `App::write_blocking`): the store's collections
//!   ([`Records`]) note what the write changed; the changes are appended to
//!   the file as one line while the state's lock is held (so the file's
//!   order is the order of the writes), then the lock is released and the
//!   line is flushed to disk (`fsync`) before the answer is sent. Reads do
//!   not wait for the `fsync`; concurrent writes share one (group commit).
//!   A failed write (the store refused it, or the file could not be
//!   written) is undone in memory; a failed `fsync` stops all later writes
//!   (500), since what reached the disk is then unknown.
//! - **Compaction**: once the journal is larger than the snapshot (and 1
//!   MiB; `compact_after` sets another size, for tests), a background thread writes a new snapshot of a copy of the state
//!   to `FILE.compacting`, appends the writes made meanwhile, flushes it,
//!   renames it over FILE and flushes the directory. A crash at any moment
//!   leaves FILE whole (old or new), and the next start removes a leftover
//!   `FILE.compacting`.
//! - **Start**: an empty or missing FILE is created from the fixture (by
//!   the same rename); a state file of the previous format (one JSON
//!   document) is read and rewritten in this one; a last line cut short
//!   (a write never acknowledged) is dropped. The file is locked (`flock`)
//!   while a sandbox uses it: a second sandbox on the same file refuses to
//!   start instead of interleaving its writes.
//!
//! The file holds no credential (they are fingerprints) and no integration secret
//! field (token, API key, headers, service account credentials: a salted
//! fingerprint only). The other fields of an integration, which the service
//! returns (default headers, custom header mappings, init kwargs), are kept
//! sealed under a key in `FILE.key` (see `seal`): the file shows none of their
//! values, and a file of an earlier version that holds them in the clear is
//! rewritten sealed when opened. The file and its key are readable by their
//! owner only (mode 0600; a state file found readable by others is tightened).

mod journal;
mod records;
pub(crate) mod seal;
mod tracked;

pub use records::{ChangeError, Records};

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;

use super::error::SandboxError;
use super::fixture::Fixture;
use super::store::State;
use journal::{NotJournal, Op};
use seal::Sealer;
pub use tracked::Recording;

/// The journal may grow to this size before it is compacted, however small
/// the snapshot.
const MIN_COMPACT_BYTES: u64 = 1024 * 1024;

/// Why a write could not be made durable.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The write's changes could not be serialized.
    #[error("the change could not be serialized: {0}")]
    Serialize(#[source] serde_json::Error),
    /// Writing or flushing the state file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The state file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The key sealing integration settings could not be made.
    #[error("{0}")]
    Key(#[source] seal::KeyError),
    /// An earlier failure left the file in an unknown state: no more
    /// writes are accepted.
    #[error("the state file {} failed earlier ({reason}); restart the sandbox", path.display())]
    Broken {
        /// The state file.
        path: PathBuf,
        /// The first failure.
        reason: String,
    },
}

/// What is wrong with a line of a state file after its snapshot (see
/// [`SandboxError::StateDamaged`]).
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    /// The line is not a write (JSON of the journal's format).
    #[error("{0}")]
    NotAnEntry(#[source] serde_json::Error),
    /// The line is a write, but not the next one.
    #[error("write {found} where {expected} was expected")]
    OutOfOrder {
        /// Its number.
        found: u64,
        /// The number of the next write.
        expected: u64,
    },
    /// The line has no end (before the last line: not a write cut short).
    #[error("incomplete line")]
    Incomplete,
    /// The write changes a part of the state that does not exist.
    #[error("no part of the state is called {name:?}")]
    UnknownPart {
        /// The part's name in the file.
        name: String,
    },
    /// The new value of a single field (`salt`, `organization`) is not of
    /// its type.
    #[error("{part}: {source}")]
    Field {
        /// The field.
        part: &'static str,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A change of a collection cannot be replayed.
    #[error("{part}: {source}")]
    Collection {
        /// The collection.
        part: &'static str,
        /// The cause.
        #[source]
        source: ChangeError,
    },
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A state file in use (see the module docs).
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    compact_path: PathBuf,
    /// `FILE.key`, the key of sealed integration settings.
    key_path: PathBuf,
    /// That key, once read or made (made the first time an integration is
    /// written).
    sealer: Mutex<Option<Arc<Sealer>>>,
    inner: Mutex<Inner>,
    /// The last write known to be on disk; held while flushing.
    synced: Mutex<u64>,
    /// Compact when the journal passes this many bytes (default: the
    /// snapshot's size, at least [`MIN_COMPACT_BYTES`]).
    compact_after: Option<u64>,
}

#[derive(Debug)]
struct Inner {
    /// The file, opened to append, locked.
    file: Arc<File>,
    /// Its length.
    len: u64,
    /// The length of its snapshot line.
    snapshot_len: u64,
    /// The number of the last write appended.
    seq: u64,
    /// A compaction was asked for and has not finished.
    compacting: bool,
    /// Set by a failure after which nothing more is written.
    broken: Option<String>,
}

/// Where a compaction's copy of the state stands in the file.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    seq: u64,
    len: u64,
}

impl StateFile {
    /// Opens (locks, creates, migrates, replays) the state file at `path`;
    /// returns it with the state it holds. `fixture` is the state of a new
    /// (missing or empty) file; `compact_after` the journal size that
    /// triggers a compaction (default: the snapshot's size, at least 1 MiB).
    pub fn open(
        path: &Path,
        fixture: Fixture,
        compact_after: Option<u64>,
    ) -> Result<(StateFile, State), SandboxError> {
        let io = |source| SandboxError::Io {
            path: path.to_owned(),
            source,
        };
        let name = path
            .file_name()
            .ok_or_else(|| SandboxError::BadOption {
                option: "state",
                reason: format!("{} is not a file name", path.display()),
            })?
            .to_string_lossy()
            .into_owned();
        let compact_path = path.with_file_name(format!("{name}.compacting"));
        let file = open_locked(path)?;
        owner_only(&file, path).map_err(io)?;
        let key_path = seal::key_path(path);
        let key_error = |reason: String| SandboxError::StateKey {
            path: path.to_owned(),
            key: key_path.clone(),
            reason,
        };
        let sealer = Sealer::load(&key_path)
            .map_err(|e| key_error(format!("cannot be used: {e}")))?
            .map(Arc::new);
        // A key being written when a crash came, never used: nothing was
        // sealed with it before its rename.
        let _ = std::fs::remove_file(seal::new_key_path(&key_path));
        // Left by a compaction that a crash interrupted (nobody else can be
        // compacting: we hold the lock).
        match std::fs::remove_file(&compact_path) {
            Ok(()) => tracing::info!(
                target: "evalctl::sandbox",
                "removed {} left by an interrupted compaction",
                compact_path.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes).map_err(io)?;
        let sf = StateFile {
            path: path.to_owned(),
            compact_path,
            key_path: key_path.clone(),
            sealer: Mutex::new(sealer.clone()),
            inner: Mutex::new(Inner {
                file: Arc::new(file),
                len: 0,
                snapshot_len: 0,
                seq: 0,
                compacting: false,
                broken: None,
            }),
            synced: Mutex::new(0),
            compact_after,
        };
        if bytes.is_empty() {
            let state = fixture.into_state();
            sf.rewrite(&state, None)
                .map_err(|e| persist_to_sandbox(e, path))?;
            return Ok((sf, state));
        }
        let (parsed, mut opened) = seal::scope(sealer.clone(), || journal::parse(&bytes));
        let unopened = |opened: seal::Opened| {
            key_error(if sealer.is_some() {
                format!("does not open {} of them", opened.unopened)
            } else {
                "is missing".to_owned()
            })
        };
        if opened.unopened > 0 {
            return Err(unopened(opened));
        }
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(NotJournal::NoSnapshot) => {
                // The previous format: the state as one JSON document.
                let text = String::from_utf8_lossy(&bytes);
                let state = Fixture::parse(&text, Some(path))?.into_state();
                sf.rewrite(&state, None)
                    .map_err(|e| persist_to_sandbox(e, path))?;
                tracing::info!(
                    target: "evalctl::sandbox",
                    "{} rewritten in the journal format",
                    path.display()
                );
                return Ok((sf, state));
            }
            Err(NotJournal::Damaged { line, reason }) => {
                return Err(SandboxError::StateDamaged {
                    path: path.to_owned(),
                    line,
                    reason,
                });
            }
        };
        let mut state = parsed.state;
        let last = parsed.snapshot_seq + parsed.entries.len() as u64;
        for (k, entry) in parsed.entries.into_iter().enumerate() {
            for mut op in entry.ops {
                seal::open_op(sealer.as_deref(), &mut op, &mut opened);
                if opened.unopened > 0 {
                    return Err(unopened(opened));
                }
                tracked::apply(&mut state, op).map_err(|reason| SandboxError::StateDamaged {
                    path: path.to_owned(),
                    line: k + 2,
                    reason,
                })?;
            }
        }
        state.seal();
        {
            let mut inner = lock(&sf.inner);
            if parsed.complete_len < bytes.len() {
                // A write cut short by a crash: never acknowledged.
                inner.file.set_len(parsed.complete_len as u64).map_err(io)?;
                inner.file.sync_all().map_err(io)?;
            }
            inner.len = parsed.complete_len as u64;
            inner.snapshot_len = parsed.snapshot_len as u64;
            inner.seq = last;
        }
        *lock(&sf.synced) = last;
        if opened.clear > 0 {
            tracing::info!(
                target: "evalctl::sandbox",
                "{} held the settings of {} integration records in the clear: rewritten sealed",
                path.display(),
                opened.clear
            );
        }
        if opened.clear > 0 || sf.wants_compaction() {
            sf.rewrite(&state, None)
                .map_err(|e| persist_to_sandbox(e, path))?;
        }
        Ok((sf, state))
    }

    /// The state file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: std::io::Error) -> PersistError {
        PersistError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn broken(&self, reason: &str) -> PersistError {
        PersistError::Broken {
            path: self.path.clone(),
            reason: reason.to_owned(),
        }
    }

    /// The key sealing integration settings, made (and written to
    /// `FILE.key`) when there is none yet.
    fn sealer(&self) -> Result<Arc<Sealer>, PersistError> {
        let mut sealer = lock(&self.sealer);
        if let Some(s) = &*sealer {
            return Ok(Arc::clone(s));
        }
        let made = Arc::new(Sealer::create(&self.key_path).map_err(PersistError::Key)?);
        *sealer = Some(Arc::clone(&made));
        Ok(made)
    }

    /// Appends one write's ops (call with the state's lock held, so the
    /// file's order is the writes' order); returns its number for
    /// [`StateFile::sync`]. On failure nothing of it stays in the file.
    /// Integration records are written sealed.
    pub fn append(&self, ops: &[Op]) -> Result<u64, PersistError> {
        let sealed;
        let ops = if seal::writes_integrations(ops) {
            let sealer = self.sealer()?;
            let mut copy = ops.to_vec();
            for op in &mut copy {
                seal::seal_op(&sealer, op)
                    .map_err(|e| PersistError::Serialize(serde::ser::Error::custom(e)))?;
            }
            sealed = copy;
            &sealed[..]
        } else {
            ops
        };
        let mut inner = lock(&self.inner);
        if let Some(reason) = &inner.broken {
            return Err(self.broken(reason));
        }
        let seq = inner.seq + 1;
        let line = journal::entry_line(seq, ops).map_err(PersistError::Serialize)?;
        if let Err(e) = (&*inner.file).write_all(&line) {
            // Take back a partly written line; if that fails too, the file
            // can no longer be trusted.
            if let Err(e2) = inner.file.set_len(inner.len) {
                inner.broken = Some(format!("{e}; then {e2}"));
            }
            return Err(self.io(e));
        }
        inner.len += line.len() as u64;
        inner.seq = seq;
        Ok(seq)
    }

    /// Waits until write `seq` is on disk (one `fsync` covers every write
    /// appended before it).
    pub fn sync(&self, seq: u64) -> Result<(), PersistError> {
        let mut synced = lock(&self.synced);
        if *synced >= seq {
            return Ok(());
        }
        let (file, upto) = {
            let inner = lock(&self.inner);
            if let Some(reason) = &inner.broken {
                return Err(self.broken(reason));
            }
            (Arc::clone(&inner.file), inner.seq)
        };
        if let Err(e) = file.sync_data() {
            lock(&self.inner).broken = Some(format!("fsync failed: {e}"));
            return Err(self.io(e));
        }
        *synced = upto.max(*synced);
        Ok(())
    }

    /// Whether the journal has outgrown its snapshot.
    fn wants_compaction(&self) -> bool {
        let inner = lock(&self.inner);
        let journal = inner.len.saturating_sub(inner.snapshot_len);
        let threshold = self
            .compact_after
            .unwrap_or_else(|| inner.snapshot_len.max(MIN_COMPACT_BYTES));
        !inner.compacting && journal > threshold
    }

    /// Claims the next compaction (false when one is under way or not due).
    fn claim_compaction(&self) -> bool {
        let due = self.wants_compaction();
        if due {
            lock(&self.inner).compacting = true;
        }
        due
    }

    /// Where the file stands: take it with the state's lock held, with the
    /// copy of the state to compact.
    pub fn mark(&self) -> Mark {
        let inner = lock(&self.inner);
        Mark {
            seq: inner.seq,
            len: inner.len,
        }
    }

    /// Replaces the file by a snapshot of `state` followed by the writes
    /// appended after `mark` (none when `None`: at start, nothing else is
    /// writing): written to `FILE.compacting`, flushed, locked, renamed
    /// over FILE, directory flushed.
    fn rewrite(&self, state: &State, mark: Option<Mark>) -> Result<(), PersistError> {
        let seq = mark.map_or_else(|| lock(&self.inner).seq, |m| m.seq);
        let sealer = if state.integrations.is_empty() {
            lock(&self.sealer).clone()
        } else {
            Some(self.sealer()?)
        };
        let (snapshot, _) = seal::scope(sealer, || journal::snapshot_line(state, seq));
        let snapshot = snapshot.map_err(PersistError::Serialize)?;
        let result = self.rewrite_with(&snapshot, mark);
        if result.is_err() {
            let _ = std::fs::remove_file(&self.compact_path);
        }
        lock(&self.inner).compacting = false;
        result
    }

    fn rewrite_with(&self, snapshot: &[u8], mark: Option<Mark>) -> Result<(), PersistError> {
        let io = |e| self.io(e);
        let mut new = owner_only_options()
            .read(true)
            .append(true)
            .create(true)
            .truncate(false)
            .open(&self.compact_path)
            .map_err(io)?;
        owner_only(&new, &self.compact_path).map_err(io)?;
        new.set_len(0).map_err(io)?;
        new.write_all(snapshot).map_err(io)?;
        new.sync_data().map_err(io)?;
        let mut inner = lock(&self.inner);
        if let Some(reason) = &inner.broken {
            return Err(self.broken(reason));
        }
        // The writes appended since the copy was taken.
        let from = mark.map_or(inner.len, |m| m.len);
        let mut tail = vec![0u8; usize::try_from(inner.len - from).unwrap_or(0)];
        if !tail.is_empty() {
            let mut old = &*inner.file;
            old.seek(SeekFrom::Start(from)).map_err(io)?;
            old.read_exact(&mut tail).map_err(io)?;
            new.write_all(&tail).map_err(io)?;
        }
        new.sync_data().map_err(io)?;
        lock_file(&new).map_err(io)?;
        std::fs::rename(&self.compact_path, &self.path).map_err(io)?;
        sync_dir(&self.path).map_err(io)?;
        let len = (snapshot.len() + tail.len()) as u64;
        inner.file = Arc::new(new);
        inner.len = len;
        inner.snapshot_len = snapshot.len() as u64;
        Ok(())
    }
}

fn persist_to_sandbox(e: PersistError, path: &Path) -> SandboxError {
    match e {
        PersistError::Io { path, source } => SandboxError::Io { path, source },
        source => SandboxError::StateFileNotSaved {
            path: path.to_owned(),
            source,
        },
    }
}

/// How long a start waits for another sandbox to release the state file
/// (one stopping in the same process may still be finishing a write).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Opens `path` (created when missing) and locks it; retries when the path
/// was replaced between the open and the lock (a compaction's rename), and
/// for [`LOCK_WAIT`] while another sandbox holds it.
fn open_locked(path: &Path) -> Result<File, SandboxError> {
    let io = |source| SandboxError::Io {
        path: path.to_owned(),
        source,
    };
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        let file = owner_only_options()
            .read(true)
            .append(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match lock_file(&file) {
            Ok(()) if same_file(&file, path) => return Ok(file),
            // Replaced by a rename meanwhile: open the new file.
            Ok(()) if std::time::Instant::now() < deadline => {}
            Ok(()) => {
                return Err(SandboxError::StateInUse {
                    path: path.to_owned(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if std::time::Instant::now() >= deadline {
                    return Err(SandboxError::StateInUse {
                        path: path.to_owned(),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(io(e)),
        }
    }
}

/// Options that create a file readable and writable by its owner only (mode
/// 0600, as exports are written).
fn owner_only_options() -> OpenOptions {
    #[allow(unused_mut)] // Only Unix sets a mode.
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Takes away every permission of others and the group on `file` (at
/// `path`, for the log): a state file or key from an earlier version, or
/// made by hand, may be readable by all.
#[cfg(unix)]
fn owner_only(file: &File, path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))?;
        tracing::info!(
            target: "evalctl::sandbox",
            "{} was readable by others (mode {:o}): now by its owner only",
            path.display(),
            mode & 0o777
        );
    }
    Ok(())
}

#[cfg(not(unix))]
fn owner_only(_file: &File, _path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn lock_file(file: &File) -> std::io::Result<()> {
    rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive)
        .map_err(std::io::Error::from)
}

#[cfg(not(unix))]
fn lock_file(_file: &File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(unix)]
fn sync_dir(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// A state file with its compaction thread. Dropping it stops the thread
/// (after a compaction under way) and releases the file.
#[derive(Debug)]
pub struct Persistence {
    file: Arc<StateFile>,
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Persistence {
    /// Starts the compaction thread of `file`, which copies `state` (under
    /// its read lock) when the journal has outgrown the snapshot.
    pub fn start(file: StateFile, state: &Arc<RwLock<State>>) -> Result<Self, SandboxError> {
        let file = Arc::new(file);
        let (wake, rx) = std::sync::mpsc::sync_channel::<()>(1);
        let thread = {
            let file = Arc::clone(&file);
            let state = Arc::downgrade(state);
            std::thread::Builder::new()
                .name("evalctl-sandbox-compact".into())
                .spawn(move || compactor(&file, &state, &rx))
                .map_err(SandboxError::Runtime)?
        };
        Ok(Persistence {
            file,
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    /// The state file.
    pub fn file(&self) -> &StateFile {
        &self.file
    }

    /// Asks for a compaction when the journal has outgrown the snapshot.
    pub fn maybe_compact(&self) {
        if self.file.claim_compaction()
            && let Some(wake) = &self.wake
            && let Err(TrySendError::Disconnected(())) = wake.try_send(())
        {
            lock(&self.file.inner).compacting = false;
        }
    }
}

fn compactor(file: &StateFile, state: &std::sync::Weak<RwLock<State>>, rx: &Receiver<()>) {
    while rx.recv().is_ok() {
        let Some(state) = state.upgrade() else {
            return;
        };
        let (copy, mark) = {
            let s = state
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (s.clone(), file.mark())
        };
        drop(state);
        let started = std::time::Instant::now();
        match file.rewrite(&copy, Some(mark)) {
            Ok(()) => tracing::info!(
                target: "evalctl::sandbox",
                "{} compacted after write {} in {:?}",
                file.path.display(),
                mark.seq,
                started.elapsed()
            ),
            Err(e) => tracing::warn!(
                target: "evalctl::sandbox",
                "compacting the state file failed (the journal stays as it is): {e}"
            ),
        }
    }
}

impl Drop for Persistence {
    fn drop(&mut self) {
        self.wake = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Recording a write (see `tracked`): re-exported for the app.
pub mod write {
    pub use super::journal::Op;
    pub use super::tracked::{begin, collect, finish, rollback, whole};
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn write(file: &StateFile, state: &mut State, f: impl FnOnce(&mut State)) {
        let rec = tracked::begin(state);
        f(state);
        let ops = tracked::collect(state, &rec).unwrap();
        tracked::finish(state);
        let seq = file.append(&ops).unwrap();
        file.sync(seq).unwrap();
    }

    #[test]
    fn writes_survive_a_reopen_and_compaction_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let (file, mut state) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        write(&file, &mut state, |s| s.projects[0].name = "renamed".into());
        let mark = file.mark();
        let copy = state.clone();
        write(&file, &mut state, |s| s.favorites.clear());
        // A compaction of the copy taken before the second write keeps it.
        file.rewrite(&copy, Some(mark)).unwrap();
        write(&file, &mut state, |s| s.projects[1].name = "third".into());
        drop(file);
        let (_file, back) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&state).unwrap()
        );
        assert_eq!(files(dir.path()), vec!["state.json"]);
    }

    #[test]
    fn a_second_user_of_the_file_is_refused_and_leftovers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let (file, _) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert!(matches!(
            StateFile::open(&path, Fixture::demo(), None),
            Err(SandboxError::StateInUse { .. })
        ));
        drop(file);
        std::fs::write(dir.path().join("s.json.compacting"), b"half a snapshot").unwrap();
        let (_file, _) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(files(dir.path()), vec!["s.json"]);
    }

    /// An integration whose settings hold `canary` (as an Authorization header).
    fn integration(canary: &str) -> crate::sandbox::store::IntegrationRecord {
        serde_json::from_value(serde_json::json!({
            "id": "00000000-0000-4000-8000-00000000000a",
            "user_id": "u",
            "provider": "azure",
            "name": "azure",
            "created_at": "t",
            "updated_at": "t",
            "fields": {"endpoint": "https://a.example.com", "default_headers": {"Authorization": format!("Bearer {canary}")}},
            "secret_fingerprint": "f",
            "secret_updated_at": "t",
        }))
        .unwrap()
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn integration_settings_are_sealed_in_the_file_and_read_back_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let (file, mut state) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(
            files(dir.path()),
            vec!["state.json"],
            "no key before it is needed"
        );
        write(&file, &mut state, |s| {
            s.integrations.push(integration("CANARY-journal"))
        });
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("sealed:v1:") && !text.contains("CANARY"),
            "{text}"
        );
        #[cfg(unix)]
        {
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(&dir.path().join("state.json.key")), 0o600);
        }
        // Compacted: the snapshot holds it sealed too.
        let copy = state.clone();
        file.rewrite(&copy, None).unwrap();
        write(&file, &mut state, |s| {
            s.integrations.push(integration("CANARY-second"))
        });
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("CANARY"), "{text}");
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
        drop(file);
        let (file, back) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&state).unwrap()
        );
        assert!(
            serde_json::to_string(&back)
                .unwrap()
                .contains("Bearer CANARY-second")
        );
        assert_eq!(files(dir.path()), vec!["state.json", "state.json.key"]);
        drop(file);
        // Without its key the file is refused, and says why.
        std::fs::remove_file(dir.path().join("state.json.key")).unwrap();
        let err = StateFile::open(&path, Fixture::demo(), None).unwrap_err();
        assert!(matches!(err, SandboxError::StateKey { .. }), "{err}");
        assert!(
            err.to_string().contains("state.json.key, which is missing"),
            "{err}"
        );
    }

    #[test]
    fn a_state_file_with_clear_settings_readable_by_all_is_sealed_and_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.json");
        // As an earlier version wrote it: settings in the clear, in the snapshot and in
        // a journal line, mode 0644.
        let mut state = Fixture::demo().into_state();
        state.integrations.push(integration("CANARY-snapshot"));
        let mut bytes = journal::snapshot_line(&state, 0).unwrap();
        let record = serde_json::to_value(integration("CANARY-line")).unwrap();
        bytes.extend(
            journal::entry_line(
                1,
                &[Op {
                    c: "integrations".into(),
                    change: journal::Change::Push { v: record },
                }],
            )
            .unwrap(),
        );
        std::fs::write(&path, &bytes).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let (file, state) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("CANARY"), "{text}");
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
        let served = serde_json::to_string(&state).unwrap();
        assert!(served.contains("Bearer CANARY-snapshot") && served.contains("Bearer CANARY-line"));
        drop(file);
        let (_file, again) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&state).unwrap()
        );
    }

    #[test]
    fn a_state_file_of_the_previous_format_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.json");
        let mut old = Fixture::demo().into_state();
        old.projects[0].name = "from the old file".into();
        std::fs::write(&path, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
        let (file, state) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(state.projects[0].name, "from the old file");
        drop(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"evalctl_sandbox_state\":1,\"seq\":0,"));
        let (_file, again) = StateFile::open(&path, Fixture::demo(), None).unwrap();
        assert_eq!(again.projects[0].name, "from the old file");
    }
}
