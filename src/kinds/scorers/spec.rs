//! A custom scorer as a manifest declares it (`kind: Scorer`, one document
//! per scorer): its metadata (description, tags, defaults, scope), the
//! version it pins, and the definition of its versions (an LLM judge's
//! prompt and settings, or a code scorer's file).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::api::{InputType, OutputType};
use crate::manifest::limits::{Binding, Service};

/// A `kind: Scorer` document: one custom scorer. Its versions are
/// append-only and immutable: a definition that differs from the latest
/// version's creates one new version; an identical one creates nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomScorerSpec {
    /// Name, unique in the organization.
    pub name: String,
    /// Earlier names of this scorer: a rename keeps its id and versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
    /// `llm` (an LLM judge) or `code` (a Python `scorer_fn`). Presets stay
    /// read-only.
    pub scorer_type: CustomScorerType,
    /// Description (managed when written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tags, a set (managed when written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// What a metric setting that uses the scorer gets when it leaves a field
    /// out (managed when written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<ScorerDefaultsSpec>,
    /// Who sees it: `global` (every project), or a list of project names.
    /// Managed when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeSpec>,
    /// A version number to pin as the scorer's default version; left out,
    /// the pin is not managed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub default_version: Option<u32>,
    /// The judge's prompt (`llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_poll_template: Option<ChainPollSpec>,
    /// Instructions (`llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// A file holding the instructions, relative to the manifest's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub instructions_file: Option<String>,
    /// The user prompt (`llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_prompt: Option<String>,
    /// A file holding the user prompt, relative to the manifest's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub user_prompt_file: Option<String>,
    /// The judge's model (`llm`; the service's default: `gpt-4.1-mini`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges, 1 to 10 (`llm`; default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10))]
    pub num_judges: Option<i64>,
    /// Chain of thought (`llm`; default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type (`llm`; default `boolean`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Input type (`llm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Node types it scores (a set; default `[llm]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// The Python file of a `code` scorer, relative to the manifest's
    /// directory (it must define `scorer_fn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub code_file: Option<String>,
    /// The code itself (the loader reads `code_file` into it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// `llm` or `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CustomScorerType {
    /// An LLM judge.
    Llm,
    /// A Python `scorer_fn`.
    Code,
}

impl CustomScorerType {
    /// As written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            CustomScorerType::Llm => "llm",
            CustomScorerType::Code => "code",
        }
    }
}

/// `global`, or the projects (by name) that see the scorer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ScopeSpec {
    /// Every project.
    Global(GlobalWord),
    /// Exactly these projects, by name (a set).
    Projects(Vec<String>),
}

/// The word `global`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GlobalWord {
    /// `global`.
    Global,
}

/// A scorer's defaults (the reference's `ScorerDefaults`, but filters).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScorerDefaultsSpec {
    /// Default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Default number of judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Default node types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Default chain of thought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Default output type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Default input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
}

/// An LLM judge's prompt (the reference's `ChainPollTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChainPollSpec {
    /// The prompt template. Give this or `template_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// A file holding the template, relative to the manifest's directory,
    /// read as written (not interpolated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub template_file: Option<String>,
    /// The metric's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_system_prompt: Option<String>,
    /// A file holding the system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub metric_system_prompt_file: Option<String>,
    /// What the metric measures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_description: Option<String>,
    /// The reply's field holding the rating (default `rating`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_field_name: Option<String>,
    /// The reply's field holding the explanation (default `explanation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation_field_name: Option<String>,
    /// Few-shot examples, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_few_shot_examples: Option<Vec<FewShotSpec>>,
    /// The reply's JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Map<String, Value>>,
}

/// A few-shot example.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FewShotSpec {
    /// The generation's prompt and response.
    pub generation_prompt_and_response: String,
    /// What the judge answers.
    pub evaluating_response: String,
}

/// Which service schemas the manifest's custom scorer fields take their limits
/// from (`crate::manifest::limits`).
pub const LIMITS: &[Binding] = &[
    Binding {
        manifest: "/$defs/ScorerDocument",
        service: &[
            Service::Schema("CreateScorerRequest"),
            Service::Schema("CreateLLMScorerVersionRequest"),
        ],
    },
    Binding {
        manifest: "/$defs/ChainPollSpec",
        service: &[Service::Schema("ChainPollTemplate")],
    },
    Binding {
        manifest: "/$defs/FewShotSpec",
        service: &[Service::Schema("FewShotExample")],
    },
    Binding {
        manifest: "/$defs/ScorerDefaultsSpec",
        service: &[Service::Schema("ScorerDefaults")],
    },
];

#[cfg(test)]
mod limit_tests {
    use super::LIMITS;
    use crate::manifest::limits::{apply_with, service_reference};
    use crate::manifest::schema::generate_types;

    #[test]
    fn the_limits_of_the_reference_on_its_fields() {
        let mut schema = generate_types();
        let applied = apply_with(&mut schema, &service_reference(), LIMITS, false);
        insta::assert_snapshot!(applied.listing(), @"");
        for binding in LIMITS {
            let def = binding.manifest.trim_start_matches("/$defs/");
            let name = def.split('/').next().unwrap_or(def);
            assert!(applied.reached.contains(name), "{name} was not reached");
        }
    }
}
