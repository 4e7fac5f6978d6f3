//! The scorer catalog: scorers, their versions (generated, registered and
//! fine-tuned), and the scorer-version project listing (spec operation 6).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::common::{PageInfo, Permission};
use super::enums::{
    InputType, LunaInputType, LunaOutputType, ModelType, MultimodalCapability, OutputType,
    RollUpMethod, ScorerName, ScorerType,
};
use super::metric_settings::ScorerFilter;
use super::projects::ProjectItem;

/// A scorer version (`BaseScorerVersionDB`). Required: `id`, `version`, `scorer_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerVersion {
    /// The version's id (uuid4).
    pub id: String,
    /// The version number, counting from 1.
    pub version: i64,
    /// The scorer this is a version of.
    pub scorer_id: String,
    /// Set for LLM-generated scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_scorer: Option<GeneratedScorer>,
    /// Set for registered (code) scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered_scorer: Option<RegisteredScorer>,
    /// Set for fine-tuned scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finetuned_scorer: Option<FinetunedScorer>,
    /// Model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Node types this version can score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Chain of thought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
}

/// An LLM-generated scorer (`BaseGeneratedScorerDB`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedScorer {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// Instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The prompt template.
    pub chain_poll_template: ChainPollTemplate,
    /// User prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_prompt: Option<String>,
}

/// A chain-poll metric prompt template (`ChainPollTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainPollTemplate {
    /// System prompt for the metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_system_prompt: Option<String>,
    /// Description of the metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_description: Option<String>,
    /// Field read from the model reply as the rating (default `rating`).
    #[serde(default = "default_value_field")]
    pub value_field_name: String,
    /// Field read as the explanation (default `explanation`).
    #[serde(default = "default_explanation_field")]
    pub explanation_field_name: String,
    /// The template.
    pub template: String,
    /// Few-shot examples.
    #[serde(default)]
    pub metric_few_shot_examples: Vec<FewShotExample>,
    /// Free-form response schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<serde_json::Map<String, serde_json::Value>>,
}

fn default_value_field() -> String {
    "rating".to_owned()
}

fn default_explanation_field() -> String {
    "explanation".to_owned()
}

/// A few-shot example of a chain-poll template (`FewShotExample`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FewShotExample {
    /// The generation prompt and response.
    pub generation_prompt_and_response: String,
    /// The evaluating response.
    pub evaluating_response: String,
}

/// A registered (code) scorer (`BaseRegisteredScorerDB`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisteredScorer {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// Return type of the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_type: Option<String>,
}

/// A fine-tuned scorer (`BaseFinetunedScorerDB`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinetunedScorer {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// LoRA task id.
    pub lora_task_id: i64,
    /// LoRA weights path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lora_weights_path: Option<String>,
    /// Prompt.
    pub prompt: String,
    /// Luna input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luna_input_type: Option<LunaInputType>,
    /// Luna output type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub luna_output_type: Option<LunaOutputType>,
    /// Class name to vocabulary index(es).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_name_to_vocab_ix: Option<ClassNameToVocabIx>,
    /// Executor pipeline (defaults to the fine-tuned scorer pipeline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<ScorerName>,
}

/// `class_name_to_vocab_ix`: a map to lists of unique integers, or to integers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClassNameToVocabIx {
    /// Each class maps to several vocabulary indices.
    Many(BTreeMap<String, Vec<i64>>),
    /// Each class maps to one vocabulary index.
    One(BTreeMap<String, i64>),
}

/// Default configuration of a scorer (`ScorerDefaults`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScorerDefaults {
    /// Default model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Default number of judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Default filters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<ScorerFilter>>,
    /// Default scoreable node types.
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

/// A scorer of the catalog (`ScorerResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scorer {
    /// Id (uuid4).
    pub id: String,
    /// Name: a ScorerName preset, or a custom scorer's name.
    pub name: String,
    /// Kind.
    pub scorer_type: ScorerType,
    /// Permissions of the caller.
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// Defaults applied when a config leaves a field out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<ScorerDefaults>,
    /// The latest version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_version: Option<ScorerVersion>,
    /// Model tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_type: Option<ModelType>,
    /// Whether ground truth is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<bool>,
    /// Default version id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_version_id: Option<String>,
    /// Default version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_version: Option<ScorerVersion>,
    /// Node types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Output type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Multimodal capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multimodal_capabilities: Option<Vec<MultimodalCapability>>,
    /// Whether the scorer is deprecated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<bool>,
    /// Roll-up method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll_up_method: Option<RollUpMethod>,
    /// Display label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Included fields.
    #[serde(default)]
    pub included_fields: Vec<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Creator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Update time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Whether the scorer is global (a preset).
    #[serde(default)]
    pub is_global: bool,
}

/// Body of POST `/v2/scorers/list` (`ListScorersRequest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListScorersRequest {
    /// Filters, all of which must match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<ScorerListFilter>,
}

/// A filter of the scorer listing (the ones a reconciler needs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name")]
pub enum ScorerListFilter {
    /// By name. Operators: eq, ne, contains, one_of, not_in; case-insensitive by default.
    #[serde(rename = "name")]
    Name {
        /// Operator.
        operator: super::enums::Operator,
        /// A name or a list of names.
        value: super::metric_settings::FilterValue,
        /// Case sensitivity (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_sensitive: Option<bool>,
    },
    /// By id. Operators: eq, ne, one_of, not_in, contains.
    #[serde(rename = "id")]
    Id {
        /// Operator (default eq).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operator: Option<super::enums::Operator>,
        /// An id or a list of ids.
        value: super::metric_settings::FilterValue,
    },
    /// By scorer type. Operators: eq, ne, one_of, not_in.
    #[serde(rename = "scorer_type")]
    ScorerType {
        /// Operator.
        operator: super::enums::Operator,
        /// A type or a list of types.
        value: super::metric_settings::FilterValue,
    },
}

/// Response of POST `/v2/scorers/list` (`ListScorersResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListScorersResponse {
    /// Pagination.
    #[serde(flatten)]
    pub page: PageInfo,
    /// The scorers of this page.
    #[serde(default)]
    pub scorers: Vec<Scorer>,
}

/// A scorer version as the versions listing returns it (`BaseScorerVersionResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerVersionRecord {
    /// Id (uuid4).
    pub id: String,
    /// Version number.
    pub version: i64,
    /// The scorer.
    pub scorer_id: String,
    /// Generated scorer details (shape `GeneratedScorerResponse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_scorer: Option<serde_json::Value>,
    /// Registered scorer details (shape `CreateUpdateRegisteredScorerResponse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registered_scorer: Option<serde_json::Value>,
    /// Fine-tuned scorer details (shape `FineTunedScorerResponse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finetuned_scorer: Option<serde_json::Value>,
    /// Model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges.
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
    pub output_type: Option<OutputType>,
    /// Input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// The chain-poll template, for generated scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_poll_template: Option<ChainPollTemplate>,
    /// Whether the model is allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_model: Option<bool>,
    /// Creator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// Response of GET `/v2/scorers/{scorer_id}/versions` (`ListScorerVersionsResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListScorerVersionsResponse {
    /// Pagination.
    #[serde(flatten)]
    pub page: PageInfo,
    /// The versions of this page.
    #[serde(default)]
    pub versions: Vec<ScorerVersionRecord>,
}

/// Response of spec operation 6: projects associated with a scorer version
/// (also the shape of POST `/v2/projects/paginated`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectListing {
    /// Pagination.
    #[serde(flatten)]
    pub page: PageInfo,
    /// The projects of this page.
    #[serde(default)]
    pub projects: Vec<ProjectItem>,
    /// Total number of projects matching.
    #[serde(default)]
    pub total_count: i64,
}
