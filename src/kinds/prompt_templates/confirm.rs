//! A prompt template's change as a saved plan checks it before applying
//! (did the template move since the plan?) and confirms it after (does it
//! read back as planned?): the live template the change is about, found by
//! the id its operation names or, for a template's create, by name; its
//! fingerprint, as the planner took it; and its comparable form, in the
//! shape the change's fields point into (the whole template for a create or
//! a delete, the latest version for a version's create, the selection for
//! an update).

use crate::kinds::KindOp;
use serde_json::Value;

use super::live::PromptTemplateState;
use super::normalize::NormVersion;
use super::ops::PromptTemplateOp;
use crate::plan::fingerprint;
use crate::plan::{Address, Operation, ResourceChange};

/// What a change's template looks like now: its fingerprint and its
/// comparable form (`None`: it does not exist).
pub fn observe(change: &ResourceChange, live: &[PromptTemplateState]) -> (String, Option<Value>) {
    let Address::PromptTemplate(address) = &change.address else {
        return (fingerprint::of::<PromptTemplateState>(None), None);
    };
    let ops: Vec<&PromptTemplateOp> = change
        .operations
        .iter()
        .filter_map(|op| match op {
            Operation::Kind(KindOp::PromptTemplate(op)) => Some(op),
            _ => None,
        })
        .collect();
    let id = ops.iter().find_map(|op| op.template_id());
    let found = match id {
        Some(id) => live.iter().find(|t| t.id == id),
        None => live.iter().find(|t| t.name == address.name),
    };
    let fingerprint = fingerprint::of(found);
    let Some(t) = found else {
        return (fingerprint, None);
    };
    let json = |v: &NormVersion| serde_json::to_value(v).unwrap_or(Value::Null);
    let comparable = match ops.first() {
        Some(PromptTemplateOp::CreatePromptTemplate { body, .. }) => {
            let mut v = json(&NormVersion::live(&t.latest, &body.settings));
            if let Value::Object(map) = &mut v {
                map.insert("name".to_owned(), Value::String(t.name.clone()));
                map.insert("selected_version".to_owned(), t.selected_version.into());
            }
            v
        }
        Some(PromptTemplateOp::CreatePromptVersion { body, .. }) => {
            json(&NormVersion::live(&t.latest, &body.settings))
        }
        Some(PromptTemplateOp::SelectPromptVersion { .. }) => {
            serde_json::json!({"selected_version": t.selected_version})
        }
        Some(PromptTemplateOp::DeletePromptTemplate { .. }) | None => {
            let mut v = json(&NormVersion::live(&t.latest, &t.latest.settings));
            if let Value::Object(map) = &mut v {
                map.insert("name".to_owned(), Value::String(t.name.clone()));
                map.insert("selected_version".to_owned(), t.selected_version.into());
            }
            v
        }
    };
    (fingerprint, Some(comparable))
}

/// The project a change's operations are in, by id (`Some(None)`: global),
/// when they are prompt template operations: the read that holds its
/// template.
pub fn project_id(change: &ResourceChange) -> Option<Option<&str>> {
    change.operations.iter().find_map(|op| match op {
        Operation::Kind(KindOp::PromptTemplate(op)) => Some(op.project_id()),
        _ => None,
    })
}
