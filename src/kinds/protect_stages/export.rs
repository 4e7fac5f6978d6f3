//! Live Protect stages written as manifest specs (export): sorted by name,
//! with their description, type (left out when `local`, the default) and
//! pause (left out when not paused), and their rulesets when they are known
//! (what evalctl last sent, at the stage's current version). Unknown ones
//! are left out, so they are not managed, with a warning: the service does
//! not return them. Planned against the same live state, the export is an
//! empty plan.

use super::live::ProtectStageState;
use super::spec::{ProtectStageSpec, StageRuleset, StageType};
use crate::manifest::types::ProjectSpec;
use crate::state::ProjectState;

/// A project's Protect stages as specs.
pub fn protect_stages(
    project: &str,
    live: &[ProtectStageState],
    warnings: &mut Vec<String>,
) -> Vec<ProtectStageSpec> {
    let mut live: Vec<&ProtectStageState> = live.iter().collect();
    live.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    live.into_iter()
        .map(|s| {
            let what = format!("Protect stage `{}` of project `{project}`", s.name);
            let rulesets = s.rulesets.as_ref().and_then(|all| {
                let specs: Option<Vec<StageRuleset>> =
                    all.iter().map(StageRuleset::from_wire).collect();
                if specs.is_none() {
                    warnings.push(format!(
                        "{what}: its recorded rulesets cannot be written in a manifest and were left out"
                    ));
                }
                specs
            });
            if s.rulesets.is_none() {
                warnings.push(format!(
                    "{what}: its rulesets were left out (the service does not return them, and evalctl has no record of sending them at its current version)"
                ));
            }
            let stage_type = StageType::parse(&s.stage_type);
            if stage_type.is_none() {
                warnings.push(format!(
                    "{what}: its type `{}` cannot be written in a manifest and was left out",
                    s.stage_type
                ));
            }
            ProtectStageSpec {
                name: s.name.clone(),
                description: s.description.clone(),
                stage_type: stage_type.filter(|t| *t != StageType::Local),
                paused: s.paused.then_some(true),
                prioritized_rulesets: rulesets,
            }
        })
        .collect()
}

/// Fills in the Protect stages of a project's exported `spec` from `live`,
/// when they were read (none when the project has none).
pub fn export_project(live: &ProjectState, spec: &mut ProjectSpec, warnings: &mut Vec<String>) {
    spec.protect_stages = live
        .parts
        .protect_stages
        .as_ref()
        .map(|ss| protect_stages(&live.name, ss, warnings))
        .filter(|ss| !ss.is_empty());
}
