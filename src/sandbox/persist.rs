//! The `--state FILE`: loading it at start (or creating it from the
//! fixture), and writing it atomically after every accepted change, before
//! the response is sent, so a restart loses nothing acknowledged.
//!
//! A write goes to a temporary file in the same directory, is flushed to
//! disk (`fsync`), renamed over the state file, and the directory is synced
//! so the rename itself is durable. A reader (or a crash) sees the old file
//! or the new one, never a mix. The file holds no secret value (credentials
//! are fingerprints; integration secrets are not kept at all).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::SandboxError;
use super::fixture::Fixture;
use super::store::State;

/// A state file.
#[derive(Debug, Clone)]
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    /// The state file at `path` (nothing is read or written yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        StateFile { path: path.into() }
    }

    /// The stored state when the file exists; otherwise `fixture`'s state,
    /// written to the file at once.
    pub fn load_or_init(&self, fixture: Fixture) -> Result<State, SandboxError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(Fixture::parse(&text, Some(&self.path))?.into_state()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let state = fixture.into_state();
                self.save(&state)?;
                Ok(state)
            }
            Err(e) => Err(SandboxError::Io {
                path: self.path.clone(),
                source: e,
            }),
        }
    }

    /// Writes `state` atomically and durably (see the module docs).
    pub fn save(&self, state: &State) -> Result<(), SandboxError> {
        let bytes = serde_json::to_vec(state).map_err(|e| SandboxError::Fixture {
            path: Some(self.path.clone()),
            reason: e.to_string(),
        })?;
        write_atomic(&self.path, &bytes).map_err(|e| SandboxError::Io {
            path: self.path.clone(),
            source: e,
        })
    }
}

/// Replaces `path` with `bytes`: temp file in the same directory, fsync,
/// rename, fsync of the directory.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_dir(&dir)
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_then_reload_gives_the_same_state() {
        let dir = tempfile::tempdir().unwrap();
        let file = StateFile::new(dir.path().join("state.json"));
        let mut state = file.load_or_init(Fixture::demo()).unwrap();
        state.projects[0].name = "renamed".into();
        file.save(&state).unwrap();
        let back = file.load_or_init(Fixture::demo()).unwrap();
        assert_eq!(back.projects[0].name, "renamed");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp files left behind");
    }
}
