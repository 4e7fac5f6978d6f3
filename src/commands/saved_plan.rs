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
    let json = serde_json::to_string_pretty(saved).map_err(|e| e.to_string())?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("cannot write the plan next to {}: {e}", path.display()))?;
    use std::io::Write;
    tmp.write_all(json.as_bytes())
        .and_then(|()| tmp.write_all(b"\n"))
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| format!("cannot write {}: {}", path.display(), e.error))?;
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
