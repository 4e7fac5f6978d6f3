//! The comparable form of a custom scorer's version definition: the
//! judge's prompt texts, its settings and a code scorer's file, as plans
//! compare and show them (prompt and code as text, so a plan shows a unified
//! diff). Only the fields a manifest writes are compared: a field left out
//! keeps the latest version's value, and the service's defaults (model
//! `gpt-4.1-mini`, 3 judges, `boolean`, no chain of thought, `llm` nodes,
//! `rating`/`explanation`) stand in for a value the service leaves empty.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::spec::{CustomScorerSpec, FewShotSpec};

/// A version's definition; `None`: not written (declared) or not compared
/// (live).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NormDefinition {
    /// The judge's prompt template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// The metric's system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_system_prompt: Option<String>,
    /// The metric's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_description: Option<String>,
    /// The rating's field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_field_name: Option<String>,
    /// The explanation's field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation_field_name: Option<String>,
    /// Few-shot examples, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_few_shot_examples: Option<Vec<FewShotSpec>>,
    /// The reply's schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Map<String, Value>>,
    /// Instructions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// User prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_prompt: Option<String>,
    /// Model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Chain of thought.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_type: Option<String>,
    /// Input type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// Node types, sorted, each once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// A code scorer's file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// Node types as a set: sorted, each once.
pub fn node_set(types: &[String]) -> Vec<String> {
    let mut types = types.to_vec();
    types.sort();
    types.dedup();
    types
}

impl NormDefinition {
    /// What a manifest declares.
    pub fn declared(spec: &CustomScorerSpec) -> Self {
        let chain = spec.chain_poll_template.as_ref();
        NormDefinition {
            template: chain.and_then(|c| c.template.clone()),
            metric_system_prompt: chain.and_then(|c| c.metric_system_prompt.clone()),
            metric_description: chain.and_then(|c| c.metric_description.clone()),
            value_field_name: chain.and_then(|c| c.value_field_name.clone()),
            explanation_field_name: chain.and_then(|c| c.explanation_field_name.clone()),
            metric_few_shot_examples: chain.and_then(|c| c.metric_few_shot_examples.clone()),
            response_schema: chain.and_then(|c| c.response_schema.clone()),
            instructions: spec.instructions.clone(),
            user_prompt: spec.user_prompt.clone(),
            model_name: spec.model_name.clone(),
            num_judges: spec.num_judges,
            cot_enabled: spec.cot_enabled,
            output_type: spec.output_type.as_ref().map(|o| o.as_str().to_owned()),
            input_type: spec.input_type.as_ref().map(|o| o.as_str().to_owned()),
            scoreable_node_types: spec.scoreable_node_types.as_deref().map(node_set),
            code: spec.code.clone(),
        }
    }

    /// `self` (a live version, every field read) reduced to the fields
    /// `declared` writes.
    pub fn only(&self, declared: &NormDefinition) -> Self {
        fn keep<T: Clone>(live: &Option<T>, declared: &Option<T>) -> Option<T> {
            declared.as_ref().and(live.clone())
        }
        NormDefinition {
            template: keep(&self.template, &declared.template),
            metric_system_prompt: keep(&self.metric_system_prompt, &declared.metric_system_prompt),
            metric_description: keep(&self.metric_description, &declared.metric_description),
            value_field_name: keep(&self.value_field_name, &declared.value_field_name),
            explanation_field_name: keep(
                &self.explanation_field_name,
                &declared.explanation_field_name,
            ),
            metric_few_shot_examples: keep(
                &self.metric_few_shot_examples,
                &declared.metric_few_shot_examples,
            ),
            response_schema: keep(&self.response_schema, &declared.response_schema),
            instructions: keep(&self.instructions, &declared.instructions),
            user_prompt: keep(&self.user_prompt, &declared.user_prompt),
            model_name: keep(&self.model_name, &declared.model_name),
            num_judges: keep(&self.num_judges, &declared.num_judges),
            cot_enabled: keep(&self.cot_enabled, &declared.cot_enabled),
            output_type: keep(&self.output_type, &declared.output_type),
            input_type: keep(&self.input_type, &declared.input_type),
            scoreable_node_types: keep(&self.scoreable_node_types, &declared.scoreable_node_types),
            code: keep(&self.code, &declared.code),
        }
    }

    /// Whether the live version `self` holds everything `declared` writes
    /// (a field the service left empty is the same as one the manifest
    /// leaves out).
    pub fn holds(&self, declared: &NormDefinition) -> bool {
        self.only(declared) == *declared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::scorers::spec::CustomScorerType;

    fn spec(yaml: serde_json::Value) -> CustomScorerSpec {
        serde_json::from_value(yaml).expect("a spec")
    }

    #[test]
    fn omitted_fields_are_not_compared_and_node_types_are_a_set() {
        let live = NormDefinition {
            template: Some("Is {{ output }} helpful?".into()),
            model_name: Some("gpt-4.1-mini".into()),
            num_judges: Some(3),
            scoreable_node_types: Some(vec!["llm".into(), "tool".into()]),
            ..NormDefinition::default()
        };
        let same = NormDefinition::declared(&spec(serde_json::json!({
            "name": "j", "scorer_type": "llm",
            "chain_poll_template": {"template": "Is {{ output }} helpful?"},
            "scoreable_node_types": ["tool", "llm", "tool"],
        })));
        assert!(live.holds(&same));
        let changed = NormDefinition::declared(&spec(serde_json::json!({
            "name": "j", "scorer_type": "llm",
            "chain_poll_template": {"template": "Is {{ output }} useful?"},
        })));
        assert!(!live.holds(&changed));
        assert_eq!(
            live.only(&changed).template.as_deref(),
            Some("Is {{ output }} helpful?")
        );
        assert_eq!(live.only(&changed).model_name, None);
        let judges = NormDefinition::declared(&spec(serde_json::json!({
            "name": "j", "scorer_type": "llm", "num_judges": 5,
        })));
        assert!(!live.holds(&judges));
        assert_eq!(CustomScorerType::Llm.as_str(), "llm");
    }
}
