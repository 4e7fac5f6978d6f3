//! The local record of what evalctl sent to Protect stages: the service
//! neither returns a stage's rulesets nor lists a project's stages, so what
//! evalctl last sent is kept here, one file per stage
//! (`<dir>/protect_stages/<project_id>/<stage_id>.json`: its name, the
//! version the service gave it with those rulesets, and the rulesets).
//!
//! The directory is `EVALCTL_RECORD_DIR`, else `$XDG_STATE_HOME/evalctl`,
//! else `$HOME/.local/state/evalctl`; with none of them there is no record
//! (rulesets are unknown, and a plan replaces them once). A file is written
//! whole to a temporary name and renamed, so a reader sees the old record or
//! the new one, never half of one. The files may hold webhook URLs: they are
//! written readable by their owner only.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The variable naming the record's directory.
pub const ENV_RECORD_DIR: &str = "EVALCTL_RECORD_DIR";

/// What evalctl last sent to one stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The version the service answered with after the rulesets were sent.
    pub version: i64,
    /// The rulesets sent (the reference's `Ruleset` JSON), in order.
    pub prioritized_rulesets: Vec<Value>,
}

/// The record's directory, from the environment.
pub fn dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(d) = var(ENV_RECORD_DIR) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_STATE_HOME") {
        return Some(PathBuf::from(d).join("evalctl"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".local/state/evalctl"))
}

/// Whether `id` is safe as a file name (the service's ids are uuids).
fn plain(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn project_dir(root: &Path, project_id: &str) -> Option<PathBuf> {
    plain(project_id).then(|| root.join("protect_stages").join(project_id))
}

/// The records of a project's stages, in the directory `root`. A file that
/// cannot be read or parsed is skipped (its stage is then unknown, which a
/// plan answers with one replace).
pub fn load_in(root: &Path, project_id: &str) -> Vec<StageRecord> {
    let Some(dir) = project_dir(root, project_id) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<StageRecord> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|bytes| serde_json::from_slice::<StageRecord>(&bytes).ok())
        .filter(|r| plain(&r.id))
        .collect();
    out.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    out
}

/// The records of a project's stages ([`load_in`] the directory of [`dir`]).
pub fn load(project_id: &str) -> Vec<StageRecord> {
    dir().map_or_else(Vec::new, |root| load_in(&root, project_id))
}

/// Why a record could not be written.
#[derive(Debug, thiserror::Error)]
#[error("the record of what was sent to stage `{stage}` could not be written to {path}: {source}")]
pub struct RecordError {
    /// The stage's name.
    pub stage: String,
    /// The file.
    pub path: String,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

/// Writes a stage's record in the directory `root`.
pub fn save_in(root: &Path, project_id: &str, record: &StageRecord) -> Result<(), RecordError> {
    let fail = |path: &Path, source: std::io::Error| RecordError {
        stage: record.name.clone(),
        path: path.display().to_string(),
        source,
    };
    let invalid = || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a plain id");
    let dir = project_dir(root, project_id).ok_or_else(|| fail(root, invalid()))?;
    if !plain(&record.id) {
        return Err(fail(&dir, invalid()));
    }
    std::fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
    let path = dir.join(format!("{}.json", record.id));
    let temp = dir.join(format!(".{}.{}.tmp", record.id, std::process::id()));
    let bytes = serde_json::to_vec_pretty(record)
        .map_err(|e| fail(&path, std::io::Error::other(e.to_string())))?;
    write_private(&temp, &bytes).map_err(|e| fail(&temp, e))?;
    std::fs::rename(&temp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        fail(&path, e)
    })
}

/// Writes a stage's record in the directory of [`dir`] (none: nothing is
/// written, and the next plan finds the rulesets unknown).
pub fn save(project_id: &str, record: &StageRecord) -> Result<(), RecordError> {
    match dir() {
        Some(root) => save_in(&root, project_id, record),
        None => Ok(()),
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_record_is_written_and_read_back_per_project() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let record = StageRecord {
            id: "0b7d7d53-0000-4000-8000-000000000001".to_owned(),
            name: "toxicity-guard".to_owned(),
            version: 2,
            prioritized_rulesets: vec![json!({"rules": []})],
        };
        save_in(root.path(), "p1", &record).expect("written");
        assert_eq!(load_in(root.path(), "p1"), vec![record.clone()]);
        assert!(load_in(root.path(), "p2").is_empty());
        // Rewritten whole: the new version replaces the old.
        let newer = StageRecord {
            version: 3,
            ..record
        };
        save_in(root.path(), "p1", &newer).expect("written");
        assert_eq!(load_in(root.path(), "p1"), vec![newer]);
        // A hostile id never names a path.
        let hostile = StageRecord {
            id: "../../etc".to_owned(),
            name: "x".to_owned(),
            version: 1,
            prioritized_rulesets: Vec::new(),
        };
        assert!(save_in(root.path(), "p1", &hostile).is_err());
        assert!(load_in(root.path(), "../p1").is_empty());
    }
}
