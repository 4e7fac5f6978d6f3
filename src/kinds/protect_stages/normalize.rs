//! The comparable form of a Protect stage: rulesets compare as the service
//! takes them (numbers by value), and show in plans as a manifest writes
//! them. Rulesets the service did not return and evalctl has no record of
//! at the stage's version show as unknown.

use serde::Serialize;
use serde_json::Value;

use super::spec::StageRuleset;

/// A stage as a plan shows it (fields left out are not shown).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NormStage {
    /// Name (a create's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description (a create's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Type (a create's).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub stage_type: Option<String>,
    /// Paused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// The rulesets, as a manifest writes them, or why they are unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prioritized_rulesets: Option<Value>,
}

/// What a plan shows for rulesets it cannot know.
pub const UNKNOWN: &str = "(unknown: the service does not return a stage's rulesets, and evalctl has no record of sending them at its current version)";

/// Rulesets as a manifest writes them (one evalctl cannot read as a
/// manifest's is shown as sent).
pub fn shown(rulesets: &[Value]) -> Value {
    Value::Array(
        rulesets
            .iter()
            .map(|w| {
                StageRuleset::from_wire(w)
                    .and_then(|r| serde_json::to_value(r).ok())
                    .unwrap_or_else(|| w.clone())
            })
            .collect(),
    )
}

/// Whether the rulesets known live are the declared ones (`None` live:
/// unknown, which is not the same), `declared` in the compared form
/// ([`super::webhooks::compared`]).
pub fn same_rulesets(live: Option<&[Value]>, declared: &[Value]) -> bool {
    live.is_some_and(|live| {
        let live = super::webhooks::aligned(live, declared);
        live.len() == declared.len() && live.iter().zip(declared).all(|(a, b)| same_value(a, b))
    })
}

pub use crate::kinds::json::same_value;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rulesets_compare_in_order_with_numbers_by_value_and_unknown_is_never_the_same() {
        let a = json!({"rules": [{"metric": "toxicity", "operator": "gt", "target_value": 1}], "action": {"type": "PASSTHROUGH"}});
        let b = json!({"rules": [{"metric": "toxicity", "operator": "gt", "target_value": 1.0}], "action": {"type": "PASSTHROUGH"}});
        let c = json!({"rules": [{"metric": "pii", "operator": "any", "target_value": ["ssn"]}], "action": {"type": "PASSTHROUGH"}});
        assert!(same_rulesets(
            Some(&[a.clone(), c.clone()]),
            &[b.clone(), c.clone()]
        ));
        assert!(!same_rulesets(
            Some(&[c.clone(), a.clone()]),
            &[b.clone(), c.clone()]
        ));
        assert!(!same_rulesets(None, &[]));
        assert!(same_rulesets(Some(&[]), &[]));
        assert_eq!(shown(&[a])[0]["action"]["type"], "passthrough");
    }
}
