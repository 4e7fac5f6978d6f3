//! A Protect stage's change as a saved plan checks it before applying (did
//! the stage move since the plan?) and confirms it after (does it read back
//! as planned?): the stage, read by the name in its address (with its
//! record); its fingerprint, as the planner took it; and its comparable form,
//! in the shape the change's fields point into (the whole stage for a
//! create, the fields its operations set for an update).

use crate::kinds::KindOp;
use serde_json::Value;

use super::live::ProtectStageState;
use super::normalize::{NormStage, UNKNOWN, shown};
use super::ops::ProtectStageOp;
use crate::plan::fingerprint;
use crate::plan::{Address, Operation, ResourceChange};

/// The read that holds a change's stage, when it is a stage's change: its
/// project's id and the stage's name.
pub fn read_of(change: &ResourceChange) -> Option<(&str, &str)> {
    let Address::ProtectStage(address) = &change.address else {
        return None;
    };
    change.operations.iter().find_map(|op| match op {
        Operation::Kind(KindOp::ProtectStage(op)) => Some((op.project_id(), address.name.as_str())),
        _ => None,
    })
}

/// What a change's stage looks like now: its fingerprint and its comparable
/// form (`None`: it does not exist).
pub fn observe(
    change: &ResourceChange,
    found: Option<&ProtectStageState>,
) -> (String, Option<Value>) {
    let ops: Vec<&ProtectStageOp> = change
        .operations
        .iter()
        .filter_map(|op| match op {
            Operation::Kind(KindOp::ProtectStage(op)) => Some(op),
            _ => None,
        })
        .collect();
    // An update acts on the stage its operations name.
    let found = found.filter(|s| {
        ops.iter()
            .find_map(|op| op.stage_id())
            .is_none_or(|id| id == s.id)
    });
    let fingerprint = fingerprint::of(found);
    let Some(s) = found else {
        return (fingerprint, None);
    };
    let rulesets = || {
        Some(match &s.rulesets {
            Some(known) => shown(known),
            None => Value::String(UNKNOWN.to_owned()),
        })
    };
    let mut norm = NormStage::default();
    for op in &ops {
        match op {
            ProtectStageOp::CreateStage { .. } => {
                norm = NormStage {
                    name: Some(s.name.clone()),
                    description: s.description.clone(),
                    stage_type: Some(s.stage_type.clone()),
                    paused: Some(s.paused),
                    prioritized_rulesets: rulesets(),
                };
            }
            ProtectStageOp::ReplaceStageRulesets { .. } => norm.prioritized_rulesets = rulesets(),
            ProtectStageOp::PauseStage { .. } => norm.paused = Some(s.paused),
        }
    }
    (
        fingerprint,
        Some(serde_json::to_value(&norm).unwrap_or(Value::Null)),
    )
}
