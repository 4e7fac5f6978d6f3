//! Metric settings of a log stream or an experiment: which scorers run, with
//! which sampling rules (segment filters). Spec operations 1 and 5, and the
//! reference's GET on the same paths.

use serde::{Deserialize, Serialize};

use super::enums::{
    InputType, ModelType, MultimodalCapability, Operator, OutputType, RollUpMethod, ScorerType,
};
use super::scorers::ScorerVersion;

/// Body of PATCH `.../metric_settings` (`MetricSettingsRequest`).
///
/// A field left `None` keeps the stored value; a `Some` list replaces it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricSettingsRequest {
    /// The scorers to enable (replaces the stored list when set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorers: Option<Vec<ScorerConfig>>,
    /// The segment filters (replaces the stored list when set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_filters: Option<Vec<SegmentFilter>>,
}

/// The stored metric settings (`MetricSettingsResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricSettingsResponse {
    /// The enabled scorers.
    pub scorers: Vec<ScorerConfig>,
    /// The segment filters, or null when none were ever set.
    #[serde(default)]
    pub segment_filters: Option<Vec<SegmentFilter>>,
}

/// A scorer configured for a scorer job (`ScorerConfig`). Required: `id`, `scorer_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerConfig {
    /// The scorer's id (uuid4).
    pub id: String,
    /// The scorer's kind.
    pub scorer_type: ScorerType,
    /// The scorer's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Model used by a model-based scorer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges of a model-based scorer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Filters selecting what the scorer scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<ScorerFilter>>,
    /// Node types this scorer can score (default: the llm/chat node type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Chain of thought (default false for llm scorers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type for model-based scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Input type for model-based scorers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Model tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_type: Option<ModelType>,
    /// The pinned scorer version; when omitted, the latest version is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorer_version: Option<Box<ScorerVersion>>,
    /// Capabilities the scorer may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multimodal_capabilities: Option<Vec<MultimodalCapability>>,
    /// Roll-up method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll_up_method: Option<RollUpMethod>,
    /// Return type of code scorers (bool, int, float, str).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_type: Option<String>,
}

impl ScorerConfig {
    /// A config naming only the scorer: everything else is the service's default.
    pub fn new(id: impl Into<String>, scorer_type: ScorerType) -> Self {
        ScorerConfig {
            id: id.into(),
            scorer_type,
            name: None,
            model_name: None,
            num_judges: None,
            filters: None,
            scoreable_node_types: None,
            cot_enabled: None,
            output_type: None,
            input_type: None,
            model_type: None,
            scorer_version: None,
            multimodal_capabilities: None,
            roll_up_method: None,
            score_type: None,
        }
    }
}

/// A sampling rule (`SegmentFilter`). Required: `sample_rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentFilter {
    /// Which data the rule applies to; when absent, all data is sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<ScorerFilter>,
    /// Fraction of data to sample, 0 to 1 inclusive.
    pub sample_rate: f64,
    /// Sample only on llm scorers (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_scorers: Option<bool>,
    /// Sample only on multimodal scorers (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multimodal_scorers: Option<bool>,
}

/// A filter of a scorer or segment filter, discriminated by `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name")]
pub enum ScorerFilter {
    /// `name: node_name`.
    #[serde(rename = "node_name")]
    NodeName(NodeNameFilter),
    /// `name: metadata`.
    #[serde(rename = "metadata")]
    Metadata(MetadataFilter),
    /// `name: modality`.
    #[serde(rename = "modality")]
    Modality(ModalityFilter),
}

impl ScorerFilter {
    /// The discriminator value (`node_name`, `metadata`, `modality`).
    pub fn kind(&self) -> &'static str {
        match self {
            ScorerFilter::NodeName(_) => "node_name",
            ScorerFilter::Metadata(_) => "metadata",
            ScorerFilter::Modality(_) => "modality",
        }
    }
}

/// Filters by node name. Operators: eq, ne, contains, one_of, not_in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeNameFilter {
    /// Comparison operator.
    pub operator: Operator,
    /// A string, or a list for one_of / not_in.
    pub value: FilterValue,
    /// Case-sensitive comparison (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
}

/// Filters by a metadata key. Operators: one_of, not_in, eq, ne.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataFilter {
    /// Comparison operator.
    pub operator: Operator,
    /// The metadata key.
    pub key: String,
    /// A string, or a list for one_of / not_in.
    pub value: FilterValue,
}

/// Matches when at least one of the given modalities is present.
/// Operators: eq, ne, one_of, not_in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModalityFilter {
    /// Comparison operator.
    pub operator: Operator,
    /// A modality, or a list of them.
    pub value: FilterValue,
}

/// The value of a filter: one string or a list of strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FilterValue {
    /// A single value.
    One(String),
    /// A list of values (for `one_of` / `not_in`).
    Many(Vec<String>),
}

impl FilterValue {
    /// The values as a slice-like list.
    pub fn values(&self) -> Vec<&str> {
        match self {
            FilterValue::One(v) => vec![v.as_str()],
            FilterValue::Many(vs) => vs.iter().map(String::as_str).collect(),
        }
    }
}

/// The operators each filter kind accepts, as the reference lists them.
pub mod operators {
    use super::Operator;

    /// Node name filter operators.
    pub const NODE_NAME: &[Operator] = &[
        Operator::Eq,
        Operator::Ne,
        Operator::Contains,
        Operator::OneOf,
        Operator::NotIn,
    ];
    /// Metadata filter operators.
    pub const METADATA: &[Operator] =
        &[Operator::OneOf, Operator::NotIn, Operator::Eq, Operator::Ne];
    /// Modality filter operators.
    pub const MODALITY: &[Operator] =
        &[Operator::Eq, Operator::Ne, Operator::OneOf, Operator::NotIn];
}
