//! Saved plans (`plan --out FILE`, `apply --plan FILE`): the plan as JSON,
//! with the service it was computed against. No secrets: integration
//! secrets are `${ENV}` references, read at apply time.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::plan::{PLAN_FORMAT_VERSION, Plan};

/// The file format of a saved plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    /// The service the plan was computed against (its base URL, or `sandbox`).
    pub service: String,
    /// The plan.
    pub plan: Plan,
}

/// A saved plan to write, borrowing the plan: serialized like [`SavedPlan`].
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SavedPlanRef<'a> {
    /// The service the plan was computed against (its base URL, or `sandbox`).
    pub service: &'a str,
    /// The plan.
    pub plan: &'a Plan,
}

/// Writes a saved plan atomically (temp file, fsync, rename).
pub fn save(path: &Path, saved: &SavedPlanRef<'_>) -> Result<(), String> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write the plan next to {}: {e}", path.display()))?;
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    // Streamed through a buffer: a large plan is never held twice in memory.
    let mut out = std::io::BufWriter::new(tmp);
    serde_json::to_writer_pretty(&mut out, saved).map_err(|e| cannot(e.into()))?;
    out.write_all(b"\n").map_err(cannot)?;
    let tmp = out.into_inner().map_err(|e| cannot(e.into_error()))?;
    tmp.as_file().sync_all().map_err(cannot)?;
    tmp.persist(path).map_err(|e| cannot(e.error))?;
    Ok(())
}

/// Reads a saved plan, refusing other format versions.
pub fn load(path: &Path) -> Result<SavedPlan, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the saved plan {}: {e}", path.display()))?;
    // The version first, so another format is named as such rather than
    // reported as a parse error; the probe skips the rest without keeping it.
    let version = serde_json::from_str::<VersionProbe>(&text)
        .ok()
        .map(|probe| probe.plan.format_version);
    if version != Some(u64::from(PLAN_FORMAT_VERSION)) {
        return Err(format!(
            "{} is not a saved plan of format {PLAN_FORMAT_VERSION} (write it with this version's `evalctl plan --out`)",
            path.display()
        ));
    }
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a valid saved plan: {e}", path.display()))
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
                plan: &plan,
            },
        )
        .unwrap();
        let saved = load(&path).unwrap();
        assert_eq!(
            saved,
            SavedPlan {
                service: "sandbox".into(),
                plan,
            }
        );

        std::fs::write(&path, r#"{"service": "s", "plan": {"format_version": 99}}"#).unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("is not a saved plan of format 1"), "{e}");
        std::fs::write(&path, "not json").unwrap();
        let e = load(&path).unwrap_err();
        assert!(e.contains("is not a saved plan of format 1"), "{e}");

        std::fs::write(
            &path,
            "{\"service\": \"s\",\n \"plan\": {\"format_version\": 1, \"changes\": 3}}",
        )
        .unwrap();
        let e = load(&path).unwrap_err();
        assert!(
            e.contains("is not a valid saved plan") && e.contains("line 2"),
            "{e}"
        );
    }
}
