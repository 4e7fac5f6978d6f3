//! A project's description and labels as an export writes them: what the
//! service holds, left out when empty (an export of a project without them
//! does not manage them). Labels are written only when evalctl knows every
//! one (otherwise the export would plan to remove the others).

use super::wire::ProjectLabel;
use crate::manifest::types::ProjectSpec;
use crate::state::ProjectState;

/// Fills in the `description` and `labels` of the exported `spec` of
/// `project` ([`meta`]).
pub fn export_project(project: &ProjectState, spec: &mut ProjectSpec, warnings: &mut Vec<String>) {
    (spec.description, spec.labels) = meta(project, warnings);
}

/// The `description` and `labels` to write for `project`; labels of which
/// this build does not know one are left out, with a warning.
fn meta(
    project: &ProjectState,
    warnings: &mut Vec<String>,
) -> (Option<String>, Option<Vec<ProjectLabel>>) {
    let Some(meta) = &project.parts.project.meta else {
        return (None, None);
    };
    let description = meta.description.clone().filter(|d| !d.is_empty());
    let mut labels = Vec::new();
    for label in &meta.labels {
        match serde_json::from_value::<ProjectLabel>(serde_json::Value::String(label.clone())) {
            Ok(known) => labels.push(known),
            Err(_) => {
                warnings.push(format!(
                    "project `{}` has the label `{}`, which evalctl does not know; its labels were not exported",
                    crate::scrub::escape_controls(&project.name),
                    crate::scrub::escape_controls(label)
                ));
                return (description, None);
            }
        }
    }
    labels.sort();
    labels.dedup();
    (description, (!labels.is_empty()).then_some(labels))
}
