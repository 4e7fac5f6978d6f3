//! Saved plans (`plan --out FILE`, `apply --plan FILE`): the plan as JSON,
//! with the service it was computed against. No secrets: integration
//! secrets are `${ENV}` references, read at apply time.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::{PLAN_FORMAT_VERSION, Plan};
use crate::scrub::MaskingWriter;

/// The file format of a saved plan.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    /// The service the plan was computed against (its base URL, or `sandbox`).
    pub service: String,
    /// Whether it was made with `--allow-destroy` (only then may it delete
    /// projects and log streams).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_destroy: bool,
    /// The plan.
    pub plan: Plan,
}

/// A saved plan to write, borrowing the plan: serialized like [`SavedPlan`].
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SavedPlanRef<'a> {
    /// The service the plan was computed against (its base URL, or `sandbox`).
    pub service: &'a str,
    /// See [`SavedPlan::allow_destroy`].
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allow_destroy: bool,
    /// The plan.
    pub plan: &'a Plan,
}

/// A saved plan could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SavedPlanError {
    /// Writing it failed.
    #[error("cannot write the plan to {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Reading it failed.
    #[error("cannot read the saved plan {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is not a saved plan of this version's format.
    #[error(
        "{} is not a saved plan of format {PLAN_FORMAT_VERSION} (write it with this version's `evalctl plan --out`)",
        .path.display()
    )]
    Format {
        /// The file.
        path: PathBuf,
    },
    /// It has the format's version but does not parse.
    #[error("{} is not a valid saved plan: {source}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// Writes a saved plan atomically (temp file, fsync, rename).
pub fn save(path: &Path, saved: &SavedPlanRef<'_>) -> Result<(), SavedPlanError> {
    use std::io::Write;
    let cannot = |source: std::io::Error| SavedPlanError::Write {
        path: path.to_owned(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(cannot)?;
    // Streamed through a buffer: a large plan is never held twice in memory.
    // Masked as every output is (a plan holds `${ENV}` references, never a
    // secret's value; should one get in all the same, it is not written).
    let mut out = MaskingWriter::new(std::io::BufWriter::new(tmp));
    serde_json::to_writer_pretty(&mut out, saved).map_err(|e| cannot(e.into()))?;
    out.write_all(b"\n").map_err(cannot)?;
    let out = out.finish().map_err(cannot)?;
    let tmp = out.into_inner().map_err(|e| cannot(e.into_error()))?;
    tmp.as_file().sync_all().map_err(cannot)?;
    tmp.persist(path).map_err(|e| cannot(e.error))?;
    Ok(())
}

/// Reads a saved plan, refusing other format versions.
pub fn load(path: &Path) -> Result<SavedPlan, SavedPlanError> {
    let text = std::fs::read_to_string(path).map_err(|source| SavedPlanError::Read {
        path: path.to_owned(),
        source,
    })?;
    // The version first, so another format is named as such rather than
    // reported as a parse error; the probe skips the rest without keeping it.
    let version = serde_json::from_str::<VersionProbe>(&text)
        .ok()
        .map(|probe| probe.plan.format_version);
    if version != Some(u64::from(PLAN_FORMAT_VERSION)) {
        return Err(SavedPlanError::Format {
            path: path.to_owned(),
        });
    }
    serde_json::from_str(&text).map_err(|source| SavedPlanError::Invalid {
        path: path.to_owned(),
        source,
    })
}

/// Just the format version of a saved plan.
#[derive(Deserialize)]
struct VersionProbe {
    plan: PlanVersion,
}

#[derive(Deserialize)]
struct PlanVersion {
    format_version: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_plan_reads_back_and_other_formats_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        let plan = Plan::empty();
        save(
            &path,
            &SavedPlanRef {
                service: "sandbox",
                allow_destroy: false,
                plan: &plan,
            },
        )
        .unwrap();
        let saved = load(&path).unwrap();
        assert_eq!(
            saved,
            SavedPlan {
                service: "sandbox".into(),
                allow_destroy: false,
                plan,
            }
        );

        std::fs::write(&path, r#"{"service": "s", "plan": {"format_version": 99}}"#).unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("is not a saved plan of format 2"), "{e}");
        std::fs::write(&path, "not json").unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("is not a saved plan of format 2"), "{e}");

        std::fs::write(
            &path,
            "{\"service\": \"s\",\n \"plan\": {\"format_version\": 2, \"changes\": 3}}",
        )
        .unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(
            e.contains("is not a valid saved plan") && e.contains("line 2"),
            "{e}"
        );
    }
}
