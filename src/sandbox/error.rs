//! Errors of starting, running and stopping a sandbox (not the HTTP error
//! answers it gives, which are `reply::ApiError`).

use std::path::PathBuf;

use super::persist::{Damage, DbError, PersistError};
use super::reply::ApiError;

/// Why a sandbox could not start, run or save its state.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// Binding the listen address failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The listen address is not an address.
    #[error("invalid listen address {addr:?}: expected HOST:PORT, e.g. 127.0.0.1:8080")]
    BadAddress {
        /// The address as given.
        addr: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A fixture or state file is not a valid fixture.
    #[error("invalid fixture{}: {reason}", path.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default())]
    Fixture {
        /// The file, when read from one.
        path: Option<PathBuf>,
        /// What is wrong.
        reason: String,
    },
    /// The server's runtime or thread could not be started.
    #[error("cannot start the sandbox runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The handler of Ctrl-C or SIGTERM could not be installed.
    #[error("cannot handle Ctrl-C and SIGTERM: {0}")]
    Signal(#[source] std::io::Error),
    /// The server stopped with an error.
    #[error("the sandbox server failed: {0}")]
    Serve(#[source] std::io::Error),
    /// Another sandbox uses the state file.
    #[error("{} is in use by another sandbox (one sandbox per state file)", path.display())]
    StateInUse {
        /// The state file.
        path: PathBuf,
    },
    /// A state file of an earlier version (a journal), being migrated, is
    /// damaged before its last line (not a write cut short by a crash,
    /// which is dropped).
    #[error("{} is damaged at line {line}: {reason}", path.display())]
    StateDamaged {
        /// The state file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What is wrong.
        #[source]
        reason: Damage,
    },
    /// The state database cannot be opened, read or made.
    #[error("the state file {} cannot be used: {source}", path.display())]
    StateDb {
        /// The state file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: DbError,
    },
    /// The state file could not be written.
    #[error("the state could not be saved: {}: {source}", path.display())]
    StateFileNotSaved {
        /// The state file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: PersistError,
    },
    /// The state file holds sealed integration settings that its key file
    /// (`FILE.key`) cannot open: missing, or another state file's.
    #[error("{} holds integration settings sealed with the key in {}, which {reason}; put that file back, or start from a new state file", path.display(), key.display())]
    StateKey {
        /// The state file.
        path: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The state could not be saved after an out-of-band change.
    #[error("the state could not be saved: {0}")]
    StateNotSaved(#[source] ApiError),
    /// An option (a fault rate, the key header name) is out of range.
    #[error("invalid option {option}: {reason}")]
    BadOption {
        /// The option.
        option: &'static str,
        /// What is wrong.
        reason: String,
    },
}
