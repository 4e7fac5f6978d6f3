//! Planning a project's Protect stages: a set keyed by name.
//!
//! - A declared stage that does not exist is created with its description,
//!   type, pause and rulesets (`+ project[P].protect_stage[N]`).
//! - An existing one is updated (`~`): a changed `paused` is a pause or a
//!   resume; declared rulesets that differ from the ones known live (what
//!   evalctl last sent, while the stage's version is the one the service gave
//!   it then) are one replace of them all. Rulesets unknown live (someone
//!   replaced them since, or this machine has no record) are replaced once,
//!   and known from then on. The version the service bumps is never a
//!   difference.
//! - A declared description or type that differs from the stage's is a
//!   note: the service sets them when it creates a stage and cannot change
//!   them.
//! - The service has no delete: a stage removed from the manifests (found
//!   through the record) is left as it is, the plan saying so, and `--prune`
//!   pauses it.

use crate::kinds::KindOp;
use serde_json::Value;

use super::address::ProtectStageAddress;
use super::live::ProtectStageState;
use super::normalize::{NormStage, UNKNOWN, same_rulesets, shown};
use super::ops::ProtectStageOp;
use super::spec::{ProtectStageSpec, StageType};
use super::wire::{RulesetsBody, StageCreate};
use crate::manifest::types::ProjectSpec;
use crate::plan::address::Address;
use crate::plan::target::{Kind, Segment, Target};
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, Planner, fingerprint};
use crate::state::ProjectState;

/// The scope of a project's Protect stages, for `--target`.
pub fn scope(project: &str) -> Target {
    Target::scope(vec![
        Segment::named(Kind::Project, project),
        Segment::kind(Kind::ProtectStage),
    ])
}

fn address(project: &str, name: &str) -> Address {
    Address::ProtectStage(ProtectStageAddress::new(project, name))
}

/// Plans the Protect stages `spec` declares, when the plan reaches them.
pub(crate) fn plan_project(
    planner: &mut Planner<'_>,
    project: &str,
    spec: &ProjectSpec,
    live: &ProjectState,
) {
    if let Some(wanted) = &spec.protect_stages
        && planner.options.reaches(&scope(project))
    {
        plan_protect_stages(planner, project, live, wanted);
    }
}

/// Plans the Protect stages of one project.
pub(crate) fn plan_protect_stages(
    planner: &mut Planner<'_>,
    project: &str,
    live_project: &ProjectState,
    wanted: &[ProtectStageSpec],
) {
    let live: &[ProtectStageState] = live_project
        .parts
        .protect_stages
        .as_deref()
        .unwrap_or_default();
    let mut used = vec![false; live.len()];
    for spec in wanted {
        let here = address(project, &spec.name);
        if !planner.options.selects(&here) {
            if let Some(j) = live.iter().position(|s| s.name == spec.name) {
                used[j] = true;
            }
            continue;
        }
        // Sent as written (a URL from the environment is expanded by apply);
        // compared with the fingerprints of such URLs' values beside them.
        let declared = spec.wire_rulesets();
        let compared = super::webhooks::compared(spec).unwrap_or_default();
        let found = live
            .iter()
            .enumerate()
            .find(|(j, s)| !used[*j] && s.name == spec.name)
            .map(|(j, _)| j);
        let Some(index) = found else {
            let stage_type = spec.stage_type.unwrap_or(StageType::Local);
            let paused = spec.paused.unwrap_or(false);
            let rulesets = declared.unwrap_or_default();
            let after = NormStage {
                name: Some(spec.name.clone()),
                description: spec.description.clone(),
                stage_type: Some(stage_type.as_str().to_owned()),
                paused: Some(paused),
                prioritized_rulesets: Some(shown(&rulesets)),
            };
            let draft = Draft {
                address: here,
                action: Action::Create,
                reason: "declared, does not exist".to_owned(),
                live_fingerprint: fingerprint::of::<ProtectStageState>(None),
                operations: vec![Operation::Kind(KindOp::ProtectStage(
                    ProtectStageOp::CreateStage {
                        project_id: live_project.id.clone(),
                        body: StageCreate {
                            name: spec.name.clone(),
                            project_id: live_project.id.clone(),
                            description: spec.description.clone(),
                            stage_type: stage_type.as_str().to_owned(),
                            paused,
                            prioritized_rulesets: rulesets,
                        },
                    },
                ))],
            };
            planner
                .changes
                .push(draft.change::<NormStage, _>(None, Some(&after)));
            continue;
        };
        used[index] = true;
        let current = &live[index];
        fixed_at_create(planner, &here, spec, current);
        let mut before = NormStage::default();
        let mut after = NormStage::default();
        let mut operations = Vec::new();
        let mut reasons = Vec::new();
        if let Some(declared) = declared
            && !same_rulesets(current.rulesets.as_deref(), &compared)
        {
            before.prioritized_rulesets = Some(match &current.rulesets {
                Some(known) => shown(known),
                None => Value::String(UNKNOWN.to_owned()),
            });
            after.prioritized_rulesets = Some(shown(&declared));
            reasons.push(match (&current.rulesets, current.recorded_version) {
                (Some(_), _) => "the rulesets differ from the ones last sent; all are replaced at once".to_owned(),
                (None, Some(v)) => format!(
                    "the stage's version is {}, not {v} as when evalctl last sent its rulesets: someone replaced them since, so they are replaced once",
                    current.version.map_or_else(|| "unknown".to_owned(), |v| v.to_string())
                ),
                (None, None) => "the service does not return a stage's rulesets and this machine has no record of sending them, so they are replaced once".to_owned(),
            });
            operations.push(Operation::Kind(KindOp::ProtectStage(
                ProtectStageOp::ReplaceStageRulesets {
                    project_id: live_project.id.clone(),
                    stage_id: current.id.clone(),
                    name: current.name.clone(),
                    base_version: current.version,
                    body: RulesetsBody {
                        prioritized_rulesets: declared,
                    },
                },
            )));
        }
        if let Some(paused) = spec.paused
            && paused != current.paused
        {
            before.paused = Some(current.paused);
            after.paused = Some(paused);
            reasons.push(if paused { "paused" } else { "resumed" }.to_owned());
            operations.push(Operation::Kind(KindOp::ProtectStage(
                ProtectStageOp::PauseStage {
                    project_id: live_project.id.clone(),
                    stage_id: current.id.clone(),
                    pause: paused,
                },
            )));
        }
        if operations.is_empty() {
            continue;
        }
        let draft = Draft {
            address: here,
            action: Action::Update,
            reason: reasons.join("; "),
            live_fingerprint: fingerprint::of(Some(current)),
            operations,
        };
        let mut c = draft.change(Some(&before), Some(&after));
        c.created_by = current.created_by.clone();
        planner.changes.push(c);
    }
    for (index, stage) in live.iter().enumerate() {
        let here = address(project, &stage.name);
        if used[index] || !planner.options.selects(&here) {
            continue;
        }
        if stage.paused {
            planner.note_by(
                stage.created_by.clone(),
                Some(here),
                NoteKind::Detail,
                format!(
                    "Protect stage `{}` is not declared and is paused (the service cannot delete a stage)",
                    stage.name
                ),
            );
        } else if planner.options.prune {
            let draft = Draft {
                address: here,
                action: Action::Update,
                reason:
                    "not declared (--prune): the service cannot delete a stage, so it is paused"
                        .to_owned(),
                live_fingerprint: fingerprint::of(Some(stage)),
                operations: vec![Operation::Kind(KindOp::ProtectStage(
                    ProtectStageOp::PauseStage {
                        project_id: live_project.id.clone(),
                        stage_id: stage.id.clone(),
                        pause: true,
                    },
                ))],
            };
            let before = NormStage {
                paused: Some(false),
                ..NormStage::default()
            };
            let after = NormStage {
                paused: Some(true),
                ..NormStage::default()
            };
            let mut c = draft.change(Some(&before), Some(&after));
            c.created_by = stage.created_by.clone();
            planner.changes.push(c);
        } else {
            planner.note_by(
                stage.created_by.clone(),
                Some(here),
                // Not `Unmanaged`: its heading says "deleted only with
                // --prune", and a stage is never deleted.
                NoteKind::Info,
                format!(
                    "Protect stage `{}` exists but is not declared; the service cannot delete a stage, so --prune pauses it",
                    stage.name
                ),
            );
        }
    }
}

/// Notes for what the manifest declares differently that only a create sets.
fn fixed_at_create(
    planner: &mut Planner<'_>,
    here: &Address,
    spec: &ProtectStageSpec,
    live: &ProtectStageState,
) {
    let mut differ = Vec::new();
    if let Some(d) = &spec.description
        && live.description.as_deref() != Some(d.as_str())
    {
        differ.push("description");
    }
    if let Some(t) = spec.stage_type
        && t.as_str() != live.stage_type
    {
        differ.push("type");
    }
    if !differ.is_empty() {
        planner.note(
            Some(here.clone()),
            NoteKind::Info,
            format!(
                "Protect stage `{}`: its {} differ(s) from the manifest's, but the service sets them only when it creates a stage and cannot change them (left as they are)",
                live.name,
                differ.join(" and ")
            ),
        );
    }
}

/// The targets of the Protect stages a project's `spec` declares (what
/// `--target` may name that the manifests declare).
pub(crate) fn declared(project: &str, spec: &ProjectSpec, out: &mut Vec<Target>) {
    for s in spec.protect_stages.iter().flatten() {
        out.push(Target::of(&address(project, &s.name)));
    }
}
