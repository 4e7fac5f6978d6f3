//! A custom scorer's change as a saved plan checks it before applying (did
//! the scorer move since the plan?) and confirms it after (does it read
//! back as planned?): the live scorer the change is about, found by the id
//! its operations name or, for a create, by name; its fingerprint, as the
//! planner took it; and its comparable form, every field the change's
//! fields may point into (metadata and the latest version's definition;
//! for a create, only the fields it planned).

use crate::kinds::KindOp;
use serde_json::{Map, Value};

use super::live::CustomScorerState;
use super::ops::CustomScorerOp;
use crate::plan::fingerprint;
use crate::plan::{Address, Operation, ResourceChange};

/// Whether the change is a custom scorer's.
pub fn is_custom_scorer(change: &ResourceChange) -> bool {
    matches!(change.address, Address::CustomScorer(_))
}

/// The comparable form of a live scorer: its metadata as plans show it and
/// its latest version's definition.
fn comparable(s: &CustomScorerState) -> Value {
    let mut map = Map::new();
    map.insert("scorer_type".into(), s.scorer_type.as_str().into());
    map.insert("name".into(), s.name.clone().into());
    map.insert("description".into(), s.description.clone().into());
    map.insert("tags".into(), s.tags.clone().into());
    map.insert(
        "defaults".into(),
        serde_json::to_value(&s.defaults).unwrap_or(Value::Null),
    );
    map.insert(
        "scope".into(),
        if s.is_global {
            Value::from("global")
        } else {
            Value::from(s.projects.clone())
        },
    );
    if let Some(v) = s.default_version {
        map.insert("default_version".into(), v.into());
    }
    if let Some(latest) = &s.latest
        && let Ok(Value::Object(definition)) = serde_json::to_value(&latest.definition)
    {
        map.extend(definition);
    }
    Value::Object(map)
}

/// What a change's scorer looks like now: its fingerprint and its
/// comparable form (`None`: it does not exist).
pub fn observe(change: &ResourceChange, live: &[CustomScorerState]) -> (String, Option<Value>) {
    let Address::CustomScorer(address) = &change.address else {
        return (fingerprint::of::<CustomScorerState>(None), None);
    };
    let id = change.operations.iter().find_map(|op| match op {
        Operation::Kind(KindOp::CustomScorer(op)) => op.scorer_id(),
        _ => None,
    });
    let creates = change.operations.iter().any(|op| {
        matches!(
            op,
            Operation::Kind(KindOp::CustomScorer(
                CustomScorerOp::CreateCustomScorer { .. }
            ))
        )
    });
    let found = match id {
        Some(id) => live.iter().find(|s| s.id == id),
        None if creates => live.iter().find(|s| s.name == address.name),
        None => None,
    };
    let mut now = found.map(comparable);
    // A create is planned whole: the fields the manifest leaves out (the
    // service's defaults) are not what it planned, so they are not compared.
    if creates
        && let Some(Value::Object(now)) = &mut now
        && let Some(Value::Object(planned)) = change
            .fields
            .iter()
            .find(|f| f.path.is_empty())
            .and_then(|f| f.after_value())
    {
        now.retain(|k, _| planned.contains_key(k));
    }
    (fingerprint::of(found), now)
}
