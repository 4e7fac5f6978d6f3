//! The `--state FILE`: a SQLite database (WAL mode) holding the sandbox's
//! state, one table per collection (see `tables`), which a user can open
//! with `sqlite3` while the sandbox runs.
//!
//! - **Memory and disk.** The sandbox serves from its [`State`] in memory
//!   (read under a read lock, as without a state file); the database is the
//!   record of every acknowledged write. A write (`App::write_blocking`)
//!   runs under the state's write lock; the collections ([`Records`]) note
//!   the rows it touched, and [`StateDb::stage`] turns those rows, and only
//!   those, into row writes (`RowWrite`) queued in the order of the lock,
//!   so a write costs what it changed, not the size of the state. A write
//!   that fails in the store has the rows it touched read back from the
//!   database ([`StateDb::restore`], after committing the writes queued
//!   before it): memory and disk agree again without an undo log.
//! - **Group commit.** After the state's lock is released,
//!   [`StateDb::persist`] commits the queue in one transaction (every write
//!   queued meanwhile shares it; a writer whose write another's transaction
//!   committed only waits for it) and flushes it. Reads and the next writes
//!   go on meanwhile, so a read may show a write whose answer is not sent
//!   yet, as a reply can be lost after any write; a write is acknowledged
//!   only once it is committed and flushed. A transaction that fails breaks
//!   the file (no more writes: 500) and [`StateDb::recover`] reads the rows
//!   of the writes it lost back into memory.
//! - **Durability.** The database is in WAL mode with `synchronous=NORMAL`:
//!   a commit appends to `FILE-wal` without waiting for the disk, so a
//!   committed write survives the process being killed (`kill -9`) at any
//!   moment. Before the answer is sent, [`StateDb::sync`] flushes `FILE-wal`
//!   to the disk (`fsync`), so the write also survives a power loss; writes
//!   committed meanwhile share the flush. SQLite flushes the WAL itself
//!   before it checkpoints it into FILE, and truncates it to `WAL_LIMIT`
//!   after (`journal_size_limit`). (`synchronous=FULL` would flush inside
//!   each commit.) A failed flush stops all later writes (500), since what
//!   reached the disk is then unknown.
//! - **Readers.** WAL mode lets `sqlite3` read the file while the sandbox
//!   writes, neither waiting for the other.
//! - **Start.** A missing or empty FILE is made from the fixture. A state
//!   file of an earlier version (the journal, or one JSON document before
//!   it; see `legacy`) is migrated: written to `FILE.migrating`, the old
//!   file kept as `FILE.pre-sqlite`, the new one renamed over FILE, and a
//!   notice printed on stderr. One sandbox at a time uses a state file (it
//!   is locked: `flock`); `sqlite3` is not kept out.
//!
//! Secrets at rest: the database holds no secret value (credentials and
//! integration secrets are salted fingerprints), and the fingerprints, with
//! an integration's settings (which reads return: default headers, header
//! mappings, init kwargs), are sealed under a key in `FILE.key` (see
//! `seal`): each table lists its sealed fields, kept in its `sealed` column;
//! everything else is in the clear, for queries. The file and its key are
//! readable by their owner only (mode 0600; a state file found readable by
//! others is tightened).

mod file;
mod legacy;
mod records;
pub(crate) mod seal;
pub(crate) mod tables;

pub use records::Records;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::{Connection, TransactionBehavior};

use super::error::SandboxError;
use super::fixture::Fixture;
use super::store::{Organization, State};
use file::{FileLock, keep_beside, owner_only, sync_dir};
use seal::{KeyError, SealError, Sealer};
use tables::{Keys, RowWrite, tables};

/// The schema's version (`PRAGMA user_version`).
const FORMAT: i64 = 1;

/// The size in bytes `FILE-wal` is truncated to after a checkpoint.
const WAL_LIMIT: u64 = 4 << 20;

/// What a SQLite database file starts with.
const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// Why the state database could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite failed.
    #[error("{0}")]
    Sql(#[source] rusqlite::Error),
    /// A record could not be written or read as its type.
    #[error("{0}")]
    Record(#[source] serde_json::Error),
    /// A row of a table is damaged.
    #[error("table {table}, row {row}: {reason}")]
    Row {
        /// The table.
        table: &'static str,
        /// The row id.
        row: i64,
        /// What is wrong.
        #[source]
        reason: Box<DbError>,
    },
    /// A row holds sealed fields and there is no key file.
    #[error("sealed fields and no key to open them")]
    NoKey,
    /// A row holds sealed fields that the key does not open.
    #[error("sealed fields that the key does not open")]
    OtherKey,
    /// The key could not be made.
    #[error("{0}")]
    Key(#[source] KeyError),
    /// Sealing failed.
    #[error("{0}")]
    Seal(#[from] SealError),
    /// The database was written by a later version of evalctl.
    #[error("its format is version {0}, newer than this evalctl's ({FORMAT}): use a newer evalctl")]
    Newer(i64),
}

/// What is wrong with a line of a state file of an earlier version (see
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
    /// The write names a position the collection does not have.
    #[error("{part}: position {index} of a collection of {len}")]
    OutOfRange {
        /// The collection.
        part: String,
        /// The position.
        index: usize,
        /// The collection's length then.
        len: usize,
    },
    /// The write is not of the journal's shape.
    #[error("{0}")]
    Malformed(String),
}

/// Why a write could not be made durable.
#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    /// The transaction failed (nothing of the write was kept).
    #[error("{}: {source}", path.display())]
    Db {
        /// The state file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: DbError,
    },
    /// Flushing the state file to disk failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
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

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The state database in use (see the module docs).
#[derive(Debug)]
pub struct StateDb {
    /// The connection (dropped before `_lock`, which must outlive it).
    conn: Mutex<Connection>,
    path: PathBuf,
    /// The key of sealed fields.
    keys: KeyStore,
    /// `FILE-wal`, opened to be flushed (`None` until the first flush; never
    /// when SQLite could not use WAL mode and flushes each commit itself).
    wal: Mutex<Option<File>>,
    /// Whether [`StateDb::sync`] flushes the WAL (WAL mode) or has nothing
    /// to do (each commit flushed).
    flush_wal: bool,
    /// The writes made in memory and not yet committed, in the order of
    /// the state's lock (see [`StateDb::stage`]).
    queue: Mutex<Queue>,
    /// The writes of a transaction that failed, until
    /// [`StateDb::recover`] reads their rows back into memory.
    lost: Mutex<Vec<Staged>>,
    /// The number of the last committed write.
    committed: AtomicU64,
    /// The last write known to be on disk; held while flushing.
    synced: Mutex<u64>,
    /// Set by a failure after which nothing more is written.
    broken: Mutex<Option<String>>,
    _lock: FileLock,
}

/// The writes waiting to be committed.
#[derive(Debug, Default)]
struct Queue {
    /// The number of the last write staged.
    last: u64,
    /// The writes, oldest first.
    staged: Vec<Staged>,
}

/// A write made in memory, as the row writes that save it.
#[derive(Debug)]
struct Staged {
    seq: u64,
    rows: Vec<RowWrite>,
}

/// A write under way: the fields that are not collections as they were.
#[derive(Debug)]
pub struct Recording {
    salt: String,
    organization: Organization,
}

/// Starts noting what a write changes in `state`.
pub fn begin(state: &mut State) -> Recording {
    let t = tables(state);
    for (_, c) in t.collections {
        c.begin();
    }
    Recording {
        salt: t.salt.clone(),
        organization: t.organization.clone(),
    }
}

/// Ends a write (saved or restored).
pub fn finish(state: &mut State) {
    for (_, c) in tables(state).collections {
        c.finish();
    }
}

/// `FILE.key`: the key of sealed fields, read at start or made (and
/// written) the first time a field is sealed.
#[derive(Debug)]
struct KeyStore {
    path: PathBuf,
    sealer: Mutex<Option<Arc<Sealer>>>,
}

impl Keys for KeyStore {
    fn to_seal(&self) -> Result<Arc<Sealer>, DbError> {
        let mut sealer = lock(&self.sealer);
        if let Some(s) = &*sealer {
            return Ok(Arc::clone(s));
        }
        let made = Arc::new(Sealer::create(&self.path).map_err(DbError::Key)?);
        *sealer = Some(Arc::clone(&made));
        Ok(made)
    }

    fn to_open(&self) -> Option<Arc<Sealer>> {
        lock(&self.sealer).clone()
    }
}

impl StateDb {
    /// Opens (locks, creates or migrates, reads) the state database at
    /// `path`; returns it with the state it holds. `fixture` is the state of
    /// a new (missing or empty) file; `checkpoint_after` the WAL size in
    /// bytes after which SQLite checkpoints it into FILE (default: SQLite's,
    /// 1,000 pages).
    pub fn open(
        path: &Path,
        fixture: Fixture,
        checkpoint_after: Option<u64>,
    ) -> Result<(StateDb, State), SandboxError> {
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
        let mut file_lock = FileLock::acquire(path)?;
        owner_only(&file_lock.file, path).map_err(io)?;
        let key_path = seal::key_path(path);
        let key_error = |reason: String| SandboxError::StateKey {
            path: path.to_owned(),
            key: key_path.clone(),
            reason,
        };
        let sealer = Sealer::load(&key_path)
            .map_err(|e| key_error(format!("cannot be used: {e}")))?
            .map(Arc::new);
        // A key being written when a crash came, never used.
        let _ = std::fs::remove_file(seal::new_key_path(&key_path));
        let keys = KeyStore {
            path: key_path.clone(),
            sealer: Mutex::new(sealer.clone()),
        };
        let migrating = path.with_file_name(format!("{name}.migrating"));
        // Left by a migration that a crash interrupted (nobody else can be
        // migrating: we hold the lock).
        let _ = std::fs::remove_file(&migrating);
        let _ = std::fs::remove_file(path.with_file_name(format!("{name}.migrating-journal")));
        let mut head = Vec::with_capacity(SQLITE_HEADER.len());
        (&file_lock.file)
            .take(SQLITE_HEADER.len() as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        if !head.is_empty() && head != SQLITE_HEADER {
            let mut bytes = head;
            (&file_lock.file).read_to_end(&mut bytes).map_err(io)?;
            file_lock = migrate(path, &name, bytes, file_lock, &keys)?;
        }
        let conn = Connection::open(path).map_err(|e| db_error(path, e))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| db_error(path, e))?;
        let flush_wal = mode.eq_ignore_ascii_case("wal");
        // Without WAL (a file system without shared memory), each commit
        // is flushed by SQLite.
        let synchronous = if flush_wal { "NORMAL" } else { "FULL" };
        // `journal_size_limit`: a checkpoint truncates FILE-wal back to
        // WAL_LIMIT when a run of writes (the first start of a large
        // state writes every row) made it larger.
        conn.execute_batch(&format!(
            "PRAGMA synchronous = {synchronous}; PRAGMA busy_timeout = 5000; \
             PRAGMA journal_size_limit = {WAL_LIMIT};"
        ))
        .map_err(|e| db_error(path, e))?;
        // Three statements a table (save, delete, read back) stay prepared.
        conn.set_prepared_statement_cache_capacity(64);
        if let Some(bytes) = checkpoint_after {
            let pages = i64::try_from(bytes / 4096).unwrap_or(i64::MAX).max(1);
            conn.pragma_update(None, "wal_autocheckpoint", pages)
                .map_err(|e| db_error(path, e))?;
        }
        let state =
            read_or_create(&conn, fixture, &keys).map_err(|source| db_failed(path, source))?;
        if flush_wal {
            presize_wal(&wal_path(path)).map_err(|source| SandboxError::Io {
                path: wal_path(path),
                source,
            })?;
        }
        let db = StateDb {
            conn: Mutex::new(conn),
            path: path.to_owned(),
            keys,
            wal: Mutex::new(None),
            flush_wal,
            queue: Mutex::new(Queue::default()),
            lost: Mutex::new(Vec::new()),
            committed: AtomicU64::new(0),
            synced: Mutex::new(0),
            broken: Mutex::new(None),
            _lock: file_lock,
        };
        Ok((db, state))
    }

    /// The state file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failed(&self, source: DbError) -> PersistError {
        PersistError::Db {
            path: self.path.clone(),
            source,
        }
    }

    fn check_broken(&self) -> Result<(), PersistError> {
        match &*lock(&self.broken) {
            Some(reason) => Err(PersistError::Broken {
                path: self.path.clone(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Queues what the write under way changed in `state` (since
    /// `before`) to be committed by [`StateDb::persist`]; returns its
    /// number, `None` when it changed nothing. Called under the state's
    /// write lock, so the queue is in the order the writes were made. On
    /// failure nothing of it is queued: [`StateDb::restore`] `state`.
    pub fn stage(
        &self,
        state: &mut State,
        before: &Recording,
    ) -> Result<Option<u64>, PersistError> {
        self.check_broken()?;
        let t = tables(state);
        let mut rows = Vec::new();
        let staged = (|| {
            if *t.salt != before.salt {
                rows.push(RowWrite::meta("salt", &*t.salt)?);
            }
            if *t.organization != before.organization {
                rows.push(RowWrite::meta("organization", &*t.organization)?);
            }
            for (def, c) in &t.collections {
                c.changes(def, &self.keys, &mut rows)?;
            }
            Ok(())
        })();
        staged.map_err(|e| self.failed(e))?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut queue = lock(&self.queue);
        queue.last += 1;
        let seq = queue.last;
        queue.staged.push(Staged { seq, rows });
        Ok(Some(seq))
    }

    /// Commits write `seq` (and every write queued with it, in one
    /// transaction: group commit) and waits until it is on disk. Called
    /// without the state's lock, so reads and the next writes go on
    /// meanwhile. On failure the file is broken (no more writes) and
    /// memory holds writes that are not in it: [`StateDb::recover`].
    pub fn persist(&self, seq: u64) -> Result<(), PersistError> {
        self.commit_queued(seq)?;
        self.sync(seq)
    }

    /// Commits the queued writes unless write `seq` is committed already
    /// (by another writer's transaction).
    fn commit_queued(&self, seq: u64) -> Result<(), PersistError> {
        let mut conn = lock(&self.conn);
        if self.committed.load(Ordering::SeqCst) >= seq {
            return Ok(());
        }
        self.check_broken()?;
        let staged = std::mem::take(&mut lock(&self.queue).staged);
        let Some(last) = staged.last().map(|w| w.seq) else {
            return Ok(());
        };
        let committed = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(DbError::Sql)
            .and_then(|tx| {
                for row in staged.iter().flat_map(|w| &w.rows) {
                    row.write(&tx)?;
                }
                tx.commit().map_err(DbError::Sql)
            });
        match committed {
            Ok(()) => {
                self.committed.store(last, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => {
                // On failure the transaction was rolled back as it was
                // dropped: none of these writes is in the file.
                lock(&self.broken).get_or_insert_with(|| format!("committing: {e}"));
                lock(&self.lost).extend(staged);
                Err(self.failed(e))
            }
        }
    }

    /// Puts back in `state` what the write under way changed, as the
    /// database holds it (with the writes queued before it committed
    /// first, so that they are not undone). A failure here leaves memory
    /// unknown: later writes are refused.
    pub fn restore(&self, state: &mut State, before: Recording) -> Result<(), PersistError> {
        let t = tables(state);
        *t.salt = before.salt;
        *t.organization = before.organization;
        if !t.collections.iter().any(|(_, c)| c.changed()) {
            return Ok(());
        }
        let queued = lock(&self.queue).last;
        // A failure is the file's: `recover` reads back what it lost.
        let _ = self.commit_queued(queued);
        let conn = lock(&self.conn);
        for (def, c) in t.collections {
            if let Err(e) = c.restore(def, &conn, &self.keys) {
                lock(&self.broken)
                    .get_or_insert_with(|| format!("restoring after a failed write: {e}"));
                return Err(self.failed(e));
            }
        }
        Ok(())
    }

    /// After [`StateDb::persist`] failed: reads back into `state` (under
    /// the state's write lock) every row of the writes that did not reach
    /// the file, so that memory holds what the file holds and reads show
    /// no write that was not kept.
    pub fn recover(&self, state: &mut State) {
        let mut lost = std::mem::take(&mut *lock(&self.lost));
        lost.append(&mut lock(&self.queue).staged);
        if lost.is_empty() {
            return;
        }
        let conn = lock(&self.conn);
        let recovered = (|| {
            let t = tables(state);
            if let Some(salt) = tables::meta(&conn, "salt")? {
                *t.salt = salt;
            }
            if let Some(org) = tables::meta(&conn, "organization")? {
                *t.organization = org;
            }
            // Per table, the rows to read back (`None`: the whole table).
            let mut touched: BTreeMap<&str, Option<BTreeSet<i64>>> = BTreeMap::new();
            for row in lost.iter().flat_map(|w| &w.rows) {
                let (table, row) = match row {
                    RowWrite::Upsert { table, row, .. } | RowWrite::Delete { table, row } => {
                        (table.name, Some(*row))
                    }
                    RowWrite::Clear { table } => (table.name, None),
                    RowWrite::Meta { .. } => continue,
                };
                let rows = touched
                    .entry(table)
                    .or_insert_with(|| Some(BTreeSet::new()));
                match (rows.as_mut(), row) {
                    (Some(rows), Some(row)) => {
                        rows.insert(row);
                    }
                    _ => *rows = None,
                }
            }
            for (def, c) in t.collections {
                if let Some(rows) = touched.get(def.name) {
                    c.reload(def, &conn, &self.keys, rows.as_ref())?;
                }
            }
            Ok::<_, DbError>(())
        })();
        if let Err(e) = recovered {
            tracing::error!(
                target: "evalctl::sandbox",
                "{}: reading back the writes that were not kept failed ({e}); restart the sandbox",
                self.path.display()
            );
        }
    }

    /// Waits until write `seq` is on disk (one flush covers every write
    /// committed before it).
    fn sync(&self, seq: u64) -> Result<(), PersistError> {
        if !self.flush_wal {
            return Ok(());
        }
        let mut synced = lock(&self.synced);
        if *synced >= seq {
            return Ok(());
        }
        self.check_broken()?;
        let upto = self.committed.load(Ordering::SeqCst);
        let wal_path = wal_path(&self.path);
        let mut wal = lock(&self.wal);
        let flushed = match &*wal {
            Some(file) => file.sync_data(),
            None => File::open(&wal_path).and_then(|file| {
                file.sync_data()?;
                *wal = Some(file);
                Ok(())
            }),
        };
        match flushed {
            Ok(()) => {
                *synced = upto;
                Ok(())
            }
            Err(source) => {
                lock(&self.broken).get_or_insert_with(|| format!("flushing: {source}"));
                Err(PersistError::Io {
                    path: wal_path,
                    source,
                })
            }
        }
    }
}

/// Migrates the state file of an earlier version at `path` (locked by
/// `file_lock`, holding `bytes`): writes its state to `FILE.migrating`,
/// keeps the old file as `FILE.pre-sqlite`, renames the new one over FILE
/// and locks it.
fn migrate(
    path: &Path,
    name: &str,
    bytes: Vec<u8>,
    file_lock: FileLock,
    keys: &KeyStore,
) -> Result<FileLock, SandboxError> {
    let io = |source| SandboxError::Io {
        path: path.to_owned(),
        source,
    };
    let sealer = keys.to_open();
    let key_error = |reason: String| SandboxError::StateKey {
        path: path.to_owned(),
        key: keys.path.clone(),
        reason,
    };
    let state = legacy::read(&bytes, sealer.as_deref()).map_err(|e| match e {
        legacy::NotRead::Damaged { line, reason } => SandboxError::StateDamaged {
            path: path.to_owned(),
            line,
            reason,
        },
        legacy::NotRead::NotState(e) => SandboxError::Fixture {
            path: Some(path.to_owned()),
            reason: e.to_string(),
        },
        legacy::NotRead::Unopened(n) => key_error(if sealer.is_some() {
            format!("does not open {n} of them")
        } else {
            "is missing".to_owned()
        }),
    })?;
    drop(bytes);
    let mut state = Fixture::from_state(state).into_state();
    let migrating = path.with_file_name(format!("{name}.migrating"));
    // Made first, so that SQLite opens it with the owner's mode only.
    file::owner_only_options()
        .write(true)
        .create_new(true)
        .open(&migrating)
        .map_err(|source| SandboxError::Io {
            path: migrating.clone(),
            source,
        })?;
    let conn = Connection::open(&migrating).map_err(|e| db_error(&migrating, e))?;
    create(&conn, &mut state, keys).map_err(|source| db_failed(&migrating, source))?;
    drop(conn);
    let kept = path.with_file_name(format!("{name}.pre-sqlite"));
    keep_beside(path, &kept).map_err(|source| SandboxError::Io {
        path: kept.clone(),
        source,
    })?;
    std::fs::rename(&migrating, path).map_err(io)?;
    sync_dir(path).map_err(io)?;
    // The new file is another file: lock it in place of the old one.
    let file_lock = file_lock.relock(path)?;
    tracing::warn!(
        target: "evalctl::sandbox",
        "{} was a state file of an earlier version: migrated to a SQLite database, the old file kept as {}",
        path.display(),
        kept.display()
    );
    Ok(file_lock)
}

/// Reads the state of `conn`'s database, or writes `fixture`'s in it when
/// it is new.
fn read_or_create(conn: &Connection, fixture: Fixture, keys: &KeyStore) -> Result<State, DbError> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(DbError::Sql)?;
    if version > FORMAT {
        return Err(DbError::Newer(version));
    }
    let mut state = fixture.into_state();
    if version == 0 {
        create(conn, &mut state, keys)?;
        return Ok(state);
    }
    // Every part of the fixture's state is replaced by the file's.
    let t = tables(&mut state);
    let defs: Vec<_> = t.collections.iter().map(|(d, _)| *d).collect();
    // Tables added since the file was made start empty.
    conn.execute_batch(&tables::schema(&defs))
        .map_err(DbError::Sql)?;
    *t.salt = tables::meta(conn, "salt")?.unwrap_or_default();
    if let Some(org) = tables::meta(conn, "organization")? {
        *t.organization = org;
    }
    for (def, c) in t.collections {
        c.load(def, conn, keys)?;
    }
    Ok(state)
}

/// Writes `state` in the empty database of `conn`, in one transaction.
fn create(conn: &Connection, state: &mut State, keys: &KeyStore) -> Result<(), DbError> {
    let t = tables(state);
    let defs: Vec<_> = t.collections.iter().map(|(d, _)| *d).collect();
    let tx = conn.unchecked_transaction().map_err(DbError::Sql)?;
    tx.execute_batch(&tables::schema(&defs))
        .map_err(DbError::Sql)?;
    tables::set_meta(&tx, "salt", &*t.salt)?;
    tables::set_meta(&tx, "organization", &*t.organization)?;
    for (def, c) in t.collections {
        c.save_all(def, &tx, keys)?;
    }
    tx.pragma_update(None, "user_version", FORMAT)
        .map_err(DbError::Sql)?;
    tx.commit().map_err(DbError::Sql)
}

fn db_error(path: &Path, e: rusqlite::Error) -> SandboxError {
    db_failed(path, DbError::Sql(e))
}

fn db_failed(path: &Path, source: DbError) -> SandboxError {
    match source {
        DbError::NoKey => SandboxError::StateKey {
            path: path.to_owned(),
            key: seal::key_path(path),
            reason: "is missing".to_owned(),
        },
        DbError::OtherKey => SandboxError::StateKey {
            path: path.to_owned(),
            key: seal::key_path(path),
            reason: "does not open them".to_owned(),
        },
        DbError::Row { reason, .. } if matches!(*reason, DbError::NoKey | DbError::OtherKey) => {
            db_failed(path, *reason)
        }
        source => SandboxError::StateDb {
            path: path.to_owned(),
            source,
        },
    }
}

/// Extends `FILE-wal` with zeros to `WAL_LIMIT` bytes, once at start.
/// SQLite writes the log from its beginning again after each checkpoint
/// and never shrinks it below `journal_size_limit`, so the writes of the
/// sandbox overwrite bytes the file already has, and each flush of a
/// write (`fdatasync`) has no file size to record: on ext4 that is a
/// flush of the data alone, not a commit of the file system's journal
/// too (measured: docs/performance.md). SQLite reads a log up to its
/// first frame whose checksum fails, which zeros always are.
fn presize_wal(wal: &Path) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = file::owner_only_options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(wal)?;
    let len = file.metadata()?.len();
    if len >= WAL_LIMIT {
        return Ok(());
    }
    file.seek(SeekFrom::Start(len))?;
    let zeros = vec![0u8; 64 << 10];
    let mut left = WAL_LIMIT - len;
    while left > 0 {
        let n = usize::try_from(left.min(zeros.len() as u64)).unwrap_or(zeros.len());
        file.write_all(&zeros[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

/// `FILE-wal`, SQLite's write-ahead log of FILE.
fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests;
