//! A template as plans compare it: its name, criteria, whether raters
//! explain, and its constraints as JSON with the fields the service derives
//! aligned to what the manifest declares.

use serde::Serialize;

use super::TemplateState;

/// A normalized template (either kind).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormTemplate {
    /// Name.
    pub name: String,
    /// Criteria.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// Whether raters explain.
    pub include_explanation: bool,
    /// Constraints, as JSON, with derived fields dropped.
    pub constraints: serde_json::Value,
}

/// Constraints as JSON, for comparison.
fn constraints_json<C: Serialize>(c: &C) -> serde_json::Value {
    serde_json::to_value(c).unwrap_or(serde_json::Value::Null)
}

/// Compares an annotation tree choice the way it was declared: declared as a
/// tree, the live YAML (which the service derives) is left out; declared as
/// YAML only, the live tree is left out.
pub fn align_constraints(live: &mut serde_json::Value, declared: &serde_json::Value) {
    let present = |key: &str| declared.get(key).is_some_and(|v| !v.is_null());
    let Some(obj) = live.as_object_mut() else {
        return;
    };
    if present("choices_tree") && !present("choices_tree_yaml") {
        obj.remove("choices_tree_yaml");
    } else if present("choices_tree_yaml") && !present("choices_tree") {
        obj.remove("choices_tree");
    }
}

impl NormTemplate {
    /// The comparable form of a live template.
    pub fn from_state<C: Serialize>(t: &TemplateState<C>) -> Self {
        NormTemplate::new(
            &t.name,
            t.criteria.as_deref(),
            t.include_explanation,
            &t.constraints,
        )
    }

    /// Normalizes a template's comparable fields.
    pub fn new<C: Serialize>(
        name: &str,
        criteria: Option<&str>,
        include_explanation: bool,
        constraints: &C,
    ) -> Self {
        NormTemplate {
            name: name.to_owned(),
            criteria: criteria.map(str::to_owned),
            include_explanation,
            constraints: constraints_json(constraints),
        }
    }
}
