//! Custom scorers' request bodies as the service takes them
//! (`CreateScorerRequest`, `UpdateScorerRequest`,
//! `CreateLLMScorerVersionRequest`, `UpdateScorerScopeRequest` in the
//! reference). Responses are the catalog's own types (`crate::api::Scorer`,
//! `crate::api::ScorerVersion`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::spec::ScorerDefaultsSpec;

/// The body of POST `/v2/scorers`: the scorer, with no version yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateScorerBody {
    /// Name.
    pub name: String,
    /// `llm` or `code`.
    pub scorer_type: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<ScorerDefaultsSpec>,
}

/// The body of PATCH `/v2/scorers/{id}`: the fields present change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateScorerBody {
    /// A new name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<ScorerDefaultsSpec>,
}

impl UpdateScorerBody {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == UpdateScorerBody::default()
    }
}

/// The body of PUT `/v2/scorers/{id}/scope`, with projects by name (their
/// ids are looked up when it is sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeBody {
    /// Every project sees it.
    pub is_global: bool,
    /// Exactly these projects (by name) see it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projects: Vec<String>,
}

/// A chain-poll template as sent (the reference's `ChainPollTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainPollBody {
    /// The template.
    pub template: String,
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_system_prompt: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_description: Option<String>,
    /// Rating field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_field_name: Option<String>,
    /// Explanation field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation_field_name: Option<String>,
    /// Few-shot examples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_few_shot_examples: Option<Vec<Value>>,
    /// Response schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Map<String, Value>>,
}

/// The body of POST `/v2/scorers/{id}/version/llm`: a field left out is
/// the latest version's (or the scorer's default).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LlmVersionBody {
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Node types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Chain of thought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<String>,
    /// Input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// Instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_poll_template: Option<ChainPollBody>,
    /// User prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_prompt: Option<String>,
}

/// A version's body: an LLM judge's fields, or a code scorer's file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scorer_type", rename_all = "snake_case")]
pub enum VersionBody {
    /// `…/version/llm`.
    Llm(Box<LlmVersionBody>),
    /// `…/version/code` after a validation.
    Code {
        /// The Python file.
        code: String,
    },
}
