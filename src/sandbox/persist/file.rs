//! The state file as a file: its exclusive use by one sandbox ([`FileLock`]:
//! in this process, and against others with `flock`), its mode (readable by
//! its owner only), keeping the file of an earlier version beside it, and
//! flushing the directory after a rename.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::lock;
use crate::sandbox::error::SandboxError;

/// Keeps the file at `path` as `kept` too (a hard link, or a copy where
/// links are not possible). A `kept` left by a migration that a crash
/// interrupted is the same file; another one is refused.
pub(super) fn keep_beside(path: &Path, kept: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(kept).is_ok() {
        if same_file(path, kept) {
            return Ok(());
        }
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "a file of that name is in the way of keeping the state file of the earlier version: move it away",
        ));
    }
    if std::fs::hard_link(path, kept).is_err() {
        std::fs::copy(path, kept)?;
        File::open(kept)?.sync_all()?;
    }
    sync_dir(kept)
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_a: &Path, _b: &Path) -> bool {
    false
}

/// How long a start waits for another sandbox to release the state file
/// (one stopping in the same process may still be finishing a write).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The state files this process has open (by canonical path): a second
/// sandbox of the same process is refused without opening the file, since
/// closing a descriptor of it would drop the SQLite locks of the first.
static OPEN: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// The exclusive use of a state file: in this process ([`OPEN`]) and
/// against other processes (`flock` on a descriptor kept open).
#[derive(Debug)]
pub(super) struct FileLock {
    /// The file, locked.
    pub(super) file: File,
    _entry: OpenEntry,
}

/// A path in [`OPEN`], removed when dropped.
#[derive(Debug)]
struct OpenEntry(PathBuf);

impl Drop for OpenEntry {
    fn drop(&mut self) {
        lock(&OPEN).remove(&self.0);
    }
}

impl FileLock {
    /// Locks `path` (created empty, mode 0600, when missing), waiting up to
    /// [`LOCK_WAIT`] for another user to release it.
    pub(super) fn acquire(path: &Path) -> Result<FileLock, SandboxError> {
        let io = |source| SandboxError::Io {
            path: path.to_owned(),
            source,
        };
        let key = match std::fs::canonicalize(path) {
            Ok(key) => key,
            Err(_) => {
                let dir = match path.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d,
                    _ => Path::new("."),
                };
                std::fs::canonicalize(dir)
                    .map_err(io)?
                    .join(path.file_name().unwrap_or_default())
            }
        };
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        let in_use = || SandboxError::StateInUse {
            path: path.to_owned(),
        };
        while !lock(&OPEN).insert(key.clone()) {
            if std::time::Instant::now() >= deadline {
                return Err(in_use());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let entry = OpenEntry(key);
        let file = owner_only_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        loop {
            match lock_file(&file) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if std::time::Instant::now() >= deadline {
                        return Err(in_use());
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(io(e)),
            }
        }
        Ok(FileLock {
            file,
            _entry: entry,
        })
    }

    /// Locks the file now at `path` (renamed over the one locked), then
    /// releases the old one.
    pub(super) fn relock(mut self, path: &Path) -> Result<FileLock, SandboxError> {
        let io = |source| SandboxError::Io {
            path: path.to_owned(),
            source,
        };
        let file = owner_only_options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        match lock_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(SandboxError::StateInUse {
                    path: path.to_owned(),
                });
            }
            Err(e) => return Err(io(e)),
        }
        self.file = file;
        Ok(self)
    }
}

/// Options that create a file readable and writable by its owner only (mode
/// 0600, as exports are written).
pub(super) fn owner_only_options() -> OpenOptions {
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
pub(super) fn owner_only(file: &File, path: &Path) -> std::io::Result<()> {
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
pub(super) fn owner_only(_file: &File, _path: &Path) -> std::io::Result<()> {
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
pub(super) fn sync_dir(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
pub(super) fn sync_dir(_path: &Path) -> std::io::Result<()> {
    Ok(())
}
