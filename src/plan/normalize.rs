//! Normalization: desired specs and live records become the same comparable
//! shape, so that a converged system plans empty.
//!
//! The rules, each declared once here:
//! - Server defaults are filled on both sides: `case_sensitive` true,
//!   `llm_scorers`/`multimodal_scorers` false, and a scorer's `name`,
//!   `output_type`, `input_type`, `model_type` and `roll_up_method` from the
//!   catalog scorer when the config leaves them out (what the service stores).
//! - Server-owned fields are dropped: ids, timestamps, `created_by`, widgets,
//!   `usage_count`, `position`; a tree-choice template is compared in the
//!   form it is declared in (tree or YAML), the other being derived.
//! - Lists: `scorers` is a set keyed by scorer (shown by name);
//!   `segment_filters` and a scorer's `filters` are ordered;
//!   `scoreable_node_types`, `multimodal_capabilities` and the values of
//!   `one_of`/`not_in` filters are sets (sorted); sections and templates are
//!   sets keyed by name. An empty list and an absent one are the same.
//! - Section `description` "" and absent are the same; colours compare
//!   case-insensitively.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::api::{
    self, FilterValue, InputType, ModelType, MultimodalCapability, Operator, OutputType,
    RollUpMethod, ScorerConfig, ScorerFilter, ScorerType, SegmentFilter,
};
use crate::live::Catalog;
use crate::manifest::types::{FilterSpec, FilterValueSpec, ModalityValueSpec, SegmentFilterSpec};

/// Normalized metric settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NormMetricSettings {
    /// Scorers, keyed by scorer name (a set).
    pub scorers: BTreeMap<String, NormScorer>,
    /// Segment filters, in order.
    pub segment_filters: Vec<NormSegmentFilter>,
}

/// A normalized scorer config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormScorer {
    /// Scorer id (compared, not shown: scorers are shown by name).
    #[serde(skip)]
    pub id: String,
    /// Scorer kind.
    pub scorer_type: ScorerType,
    /// Pinned version number (absent: latest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scorer_version: Option<i64>,
    /// Model name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Filters, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<NormFilter>,
    /// Node types (sorted set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scoreable_node_types: Vec<String>,
    /// Chain of thought.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Input type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Model tier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_type: Option<ModelType>,
    /// Capabilities (sorted set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub multimodal_capabilities: Vec<MultimodalCapability>,
    /// Roll-up method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roll_up_method: Option<RollUpMethod>,
    /// Return type of a code scorer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_type: Option<String>,
}

/// A normalized segment filter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormSegmentFilter {
    /// Sample rate.
    pub sample_rate: f64,
    /// The filter; absent: all data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<NormFilter>,
    /// Only llm scorers.
    pub llm_scorers: bool,
    /// Only multimodal scorers.
    pub multimodal_scorers: bool,
}

/// A normalized filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum NormFilter {
    /// Node name.
    NodeName {
        /// Operator.
        operator: Operator,
        /// Value.
        value: NormValue,
        /// Case sensitivity (default true).
        case_sensitive: bool,
    },
    /// Metadata.
    Metadata {
        /// Operator.
        operator: Operator,
        /// Key.
        key: String,
        /// Value.
        value: NormValue,
    },
    /// Modality.
    Modality {
        /// Operator.
        operator: Operator,
        /// Value.
        value: NormValue,
    },
}

/// A filter value: one, or a sorted set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum NormValue {
    /// One value.
    One(String),
    /// A set of values, sorted and deduplicated.
    Many(Vec<String>),
}

impl NormValue {
    fn many(mut values: Vec<String>) -> Self {
        values.sort();
        values.dedup();
        NormValue::Many(values)
    }

    fn from_wire(v: &FilterValue) -> Self {
        match v {
            FilterValue::One(s) => NormValue::One(s.clone()),
            FilterValue::Many(vs) => NormValue::many(vs.clone()),
        }
    }

    /// The value as the wire wants it.
    pub fn to_wire(&self) -> FilterValue {
        match self {
            NormValue::One(s) => FilterValue::One(s.clone()),
            NormValue::Many(vs) => FilterValue::Many(vs.clone()),
        }
    }
}

fn sorted_set<T: Ord + Clone>(items: Option<&Vec<T>>) -> Vec<T> {
    let mut v: Vec<T> = items.cloned().unwrap_or_default();
    v.sort();
    v.dedup();
    v
}

// ---------------------------------------------------------------- filters

/// Normalizes a filter read from the service.
pub fn filter_from_wire(f: &ScorerFilter) -> NormFilter {
    match f {
        ScorerFilter::NodeName(n) => NormFilter::NodeName {
            operator: n.operator.clone(),
            value: NormValue::from_wire(&n.value),
            case_sensitive: n.case_sensitive.unwrap_or(true),
        },
        ScorerFilter::Metadata(m) => NormFilter::Metadata {
            operator: m.operator.clone(),
            key: m.key.clone(),
            value: NormValue::from_wire(&m.value),
        },
        ScorerFilter::Modality(m) => NormFilter::Modality {
            operator: m.operator.clone(),
            value: NormValue::from_wire(&m.value),
        },
    }
}

/// Normalizes a filter of a manifest.
pub fn filter_from_spec(f: &FilterSpec) -> NormFilter {
    let value = |v: &FilterValueSpec| match v {
        FilterValueSpec::One(s) => NormValue::One(s.clone()),
        FilterValueSpec::Many(vs) => NormValue::many(vs.clone()),
    };
    match f {
        FilterSpec::NodeName {
            operator,
            value: v,
            case_sensitive,
        } => NormFilter::NodeName {
            operator: operator.clone(),
            value: value(v),
            case_sensitive: case_sensitive.unwrap_or(true),
        },
        FilterSpec::Metadata {
            operator,
            key,
            value: v,
        } => NormFilter::Metadata {
            operator: operator.clone(),
            key: key.clone(),
            value: value(v),
        },
        FilterSpec::Modality { operator, value: v } => NormFilter::Modality {
            operator: operator.clone(),
            value: match v {
                ModalityValueSpec::One(m) => NormValue::One(m.as_str().to_owned()),
                ModalityValueSpec::Many(ms) => {
                    NormValue::many(ms.iter().map(|m| m.as_str().to_owned()).collect())
                }
            },
        },
    }
}

/// The wire form of a normalized filter (every default spelled out).
pub fn filter_to_wire(f: &NormFilter) -> ScorerFilter {
    match f {
        NormFilter::NodeName {
            operator,
            value,
            case_sensitive,
        } => ScorerFilter::NodeName(api::NodeNameFilter {
            operator: operator.clone(),
            value: value.to_wire(),
            case_sensitive: Some(*case_sensitive),
        }),
        NormFilter::Metadata {
            operator,
            key,
            value,
        } => ScorerFilter::Metadata(api::MetadataFilter {
            operator: operator.clone(),
            key: key.clone(),
            value: value.to_wire(),
        }),
        NormFilter::Modality { operator, value } => ScorerFilter::Modality(api::ModalityFilter {
            operator: operator.clone(),
            value: value.to_wire(),
        }),
    }
}

// -------------------------------------------------------- segment filters

/// Normalizes live segment filters (null and empty are the same).
pub fn segment_filters_from_wire(filters: Option<&Vec<SegmentFilter>>) -> Vec<NormSegmentFilter> {
    filters
        .map(|fs| {
            fs.iter()
                .map(|f| NormSegmentFilter {
                    sample_rate: f.sample_rate,
                    filter: f.filter.as_ref().map(filter_from_wire),
                    llm_scorers: f.llm_scorers.unwrap_or(false),
                    multimodal_scorers: f.multimodal_scorers.unwrap_or(false),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Normalizes manifest segment filters.
pub fn segment_filters_from_spec(filters: &[SegmentFilterSpec]) -> Vec<NormSegmentFilter> {
    filters
        .iter()
        .map(|f| NormSegmentFilter {
            sample_rate: f.sample_rate,
            filter: f.filter.as_ref().map(filter_from_spec),
            llm_scorers: f.llm_scorers.unwrap_or(false),
            multimodal_scorers: f.multimodal_scorers.unwrap_or(false),
        })
        .collect()
}

/// The wire form of normalized segment filters.
pub fn segment_filters_to_wire(filters: &[NormSegmentFilter]) -> Vec<SegmentFilter> {
    filters
        .iter()
        .map(|f| SegmentFilter {
            filter: f.filter.as_ref().map(filter_to_wire),
            sample_rate: f.sample_rate,
            llm_scorers: Some(f.llm_scorers),
            multimodal_scorers: Some(f.multimodal_scorers),
        })
        .collect()
}

// ---------------------------------------------------------------- scorers

/// The key a scorer is shown under: its catalog name, else its config name,
/// else its id.
pub fn scorer_key(catalog: &Catalog, id: &str, config_name: Option<&str>) -> String {
    catalog
        .by_id(id)
        .map(|s| s.name.clone())
        .or_else(|| config_name.map(str::to_owned))
        .unwrap_or_else(|| id.to_owned())
}

/// Normalizes a live scorer config. Defaults the service fills are filled
/// from the catalog here too, so a config read from a service that did not
/// fill them compares equal.
fn scorer_from_wire(catalog: &Catalog, c: &ScorerConfig) -> NormScorer {
    let entry = catalog.by_id(&c.id);
    NormScorer {
        id: c.id.clone(),
        scorer_type: c.scorer_type.clone(),
        scorer_version: c.scorer_version.as_ref().map(|v| v.version),
        model_name: c.model_name.clone(),
        num_judges: c.num_judges,
        filters: c.filters.iter().flatten().map(filter_from_wire).collect(),
        scoreable_node_types: sorted_set(c.scoreable_node_types.as_ref()),
        cot_enabled: c.cot_enabled,
        output_type: c
            .output_type
            .clone()
            .or_else(|| entry.and_then(|s| s.output_type.clone())),
        input_type: c
            .input_type
            .clone()
            .or_else(|| entry.and_then(|s| s.input_type.clone())),
        model_type: c
            .model_type
            .clone()
            .or_else(|| entry.and_then(|s| s.model_type.clone())),
        multimodal_capabilities: sorted_set(c.multimodal_capabilities.as_ref()),
        roll_up_method: c
            .roll_up_method
            .clone()
            .or_else(|| entry.and_then(|s| s.roll_up_method.clone())),
        score_type: c.score_type.clone(),
    }
}

/// Normalizes live metric settings. A run the service returned no settings
/// for reads as the defaults, for planning and for re-reads alike (so a plan
/// made then does not look moved, nor an apply unconverged).
pub fn metric_settings_from_wire(
    catalog: &Catalog,
    settings: Option<&api::MetricSettingsResponse>,
) -> NormMetricSettings {
    let Some(settings) = settings else {
        return NormMetricSettings::default();
    };
    NormMetricSettings {
        scorers: settings
            .scorers
            .iter()
            .map(|c| {
                (
                    scorer_key(catalog, &c.id, c.name.as_deref()),
                    scorer_from_wire(catalog, c),
                )
            })
            .collect(),
        segment_filters: segment_filters_from_wire(settings.segment_filters.as_ref()),
    }
}

// --------------------------------------------------------------- sections

/// A normalized dashboard section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NormSection {
    /// Name.
    pub name: String,
    /// Description ("" is absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Colour, lower-case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

impl NormSection {
    /// Normalizes name, description and colour.
    pub fn new(name: &str, description: Option<&str>, color: Option<&str>) -> Self {
        NormSection {
            name: name.to_owned(),
            description: description.filter(|d| !d.is_empty()).map(str::to_owned),
            color: color.filter(|c| !c.is_empty()).map(str::to_ascii_lowercase),
        }
    }
}

// -------------------------------------------------------------- templates

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
    /// Normalizes a template read from the service.
    pub fn from_live<C: Serialize>(t: &api::Template<C>) -> Self {
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

// ----------------------------------------------------------- integrations

/// The comparable, non-secret fields of a live integration, restricted to the
/// keys the manifest declares. Fields the service returns under another name
/// (`base_url` for the custom provider's `endpoint`) or inside `extra` are
/// found there. Keys the service does not return are absent.
pub fn integration_live_fields(
    live: &api::IntegrationConfig,
    declared: &serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    for key in declared.keys() {
        let found = live
            .fields
            .get(key)
            .or_else(|| live.extra.as_ref().and_then(|e| e.get(key)))
            .or_else(|| {
                (key == "endpoint" && live.provider == api::IntegrationProvider::Custom)
                    .then(|| live.fields.get("base_url"))
                    .flatten()
            });
        if let Some(v) = found.filter(|v| !v.is_null()) {
            out.insert(key.clone(), v.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_sets_normalize_equal() {
        let spec = FilterSpec::NodeName {
            operator: Operator::OneOf,
            value: FilterValueSpec::Many(vec!["b".into(), "a".into()]),
            case_sensitive: None,
        };
        let wire = ScorerFilter::NodeName(api::NodeNameFilter {
            operator: Operator::OneOf,
            value: FilterValue::Many(vec!["a".into(), "b".into()]),
            case_sensitive: Some(true),
        });
        assert_eq!(filter_from_spec(&spec), filter_from_wire(&wire));
        assert_eq!(
            segment_filters_from_wire(None),
            segment_filters_from_wire(Some(&vec![]))
        );
        assert_eq!(
            NormSection::new("A", Some(""), Some("#ABCDEF")),
            NormSection::new("A", None, Some("#abcdef"))
        );
    }
}
