//! Normalization, the manifest side: desired specs become the comparable
//! shape live state takes as it is read (`crate::state`), so that a
//! converged system plans empty; and the comparable forms of sections and
//! templates, built from either side.
//!
//! The rules, each declared once:
//! - Server defaults are filled on both sides (see
//!   `crate::state::metric_settings` for the live side).
//! - Lists: `scorers` is a set keyed by scorer (shown by name);
//!   `segment_filters` and a scorer's `filters` are ordered;
//!   `scoreable_node_types`, `multimodal_capabilities` and the values of
//!   `one_of`/`not_in` filters are sets (sorted); sections and templates are
//!   sets keyed by name. An empty list and an absent one are the same.
//! - Section `description` "" and absent are the same; colours compare
//!   case-insensitively; a tree-choice template is compared in the form it is
//!   declared in (tree or YAML), the other being derived.

use serde::Serialize;

use crate::api::{self, ScorerFilter, SegmentFilter};
use crate::manifest::types::{FilterSpec, FilterValueSpec, ModalityValueSpec, SegmentFilterSpec};
use crate::state::SectionState;
use crate::state::metric_settings::{NormFilter, NormSegmentFilter, NormValue};

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
    /// The comparable form of a live section.
    pub fn from_state(s: &SectionState) -> Self {
        NormSection::new(&s.name, s.description.as_deref(), s.color.as_deref())
    }

    /// Normalizes name, description and colour.
    pub fn new(name: &str, description: Option<&str>, color: Option<&str>) -> Self {
        NormSection {
            name: name.to_owned(),
            description: description.filter(|d| !d.is_empty()).map(str::to_owned),
            color: color.filter(|c| !c.is_empty()).map(str::to_ascii_lowercase),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{FilterValue, Operator};
    use crate::state::metric_settings::{filter_from_wire, segment_filters_from_wire};

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
            segment_filters_from_spec(&[]),
            segment_filters_from_wire(None)
        );
        assert_eq!(
            NormSection::new("A", Some(""), Some("#ABCDEF")),
            NormSection::new("A", None, Some("#abcdef"))
        );
    }
}
