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

/// Writes a saved plan atomically (temp file, fsync, rename).
pub fn save(path: &Path, saved: &SavedPlan) -> Result<(), String> {
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
    let version = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            v.pointer("/plan/format_version")
                .and_then(serde_json::Value::as_u64)
        });
    if version != Some(u64::from(PLAN_FORMAT_VERSION)) {
        return Err(format!(
            "{} is not a saved plan of format {PLAN_FORMAT_VERSION} (write it with this version's `evalctl plan --out`)",
            path.display()
        ));
    }
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a valid saved plan: {e}", path.display()))
}
