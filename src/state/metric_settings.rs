//! Metric settings of a run, normalized as they arrive: the form both sides
//! of a comparison take, so that a converged system plans empty.
//!
//! - Server defaults are filled: `case_sensitive` true,
//!   `llm_scorers`/`multimodal_scorers` false, and a scorer's `output_type`,
//!   `input_type`, `model_type` and `roll_up_method` from the catalog scorer
//!   when the config leaves them out (what the service stores).
//! - Server-owned fields are dropped (a scorer version's details but its number).
//! - `scorers` is a set keyed by the scorer's catalog name; `segment_filters`
//!   and a scorer's `filters` are ordered; `scoreable_node_types`,
//!   `multimodal_capabilities` and the values of `one_of`/`not_in` filters are
//!   sets (sorted). An empty list and an absent one are the same.
//!
//! The manifest side of the same normalization is in `crate::plan::normalize`.

use serde::Serialize;

use super::catalog::Catalog;
use crate::api::{
    self, FilterValue, InputType, ModelType, MultimodalCapability, Operator, OutputType,
    RollUpMethod, ScorerConfig, ScorerFilter, ScorerType, SegmentFilter,
};

/// A value carried along for lookups that never takes part in a comparison
/// (two values compare equal whatever they hold) nor in serialization.
#[derive(Debug, Clone, Default)]
pub struct NotCompared<T>(pub T);

impl<T> PartialEq for NotCompared<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Normalized metric settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NormMetricSettings {
    /// Scorers, keyed by scorer name (a set).
    pub scorers: ScorerSet,
    /// Segment filters, in order.
    pub segment_filters: Vec<NormSegmentFilter>,
}

/// The scorers of a run: a set keyed by the name a scorer is shown under,
/// held as a vector sorted by key (a run has a handful; a map node would
/// reserve room for eleven). Serialized as a map, like a `BTreeMap`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScorerSet(Vec<(String, NormScorer)>);

impl ScorerSet {
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The scorer shown under `key`.
    pub fn get(&self, key: &str) -> Option<&NormScorer> {
        self.position(key).ok().map(|i| &self.0[i].1)
    }

    /// Whether a scorer is shown under `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Adds a scorer under `key`, returning the one it replaces.
    pub fn insert(&mut self, key: String, scorer: NormScorer) -> Option<NormScorer> {
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, scorer)),
            Err(i) => {
                self.0.insert(i, (key, scorer));
                None
            }
        }
    }

    /// The scorers, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &NormScorer)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    /// How many scorers.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, NormScorer)> for ScorerSet {
    /// The set of `items`; of two with one key, the later wins (as in a map).
    fn from_iter<I: IntoIterator<Item = (String, NormScorer)>>(items: I) -> Self {
        let mut set = ScorerSet(Vec::new());
        for (key, scorer) in items {
            set.insert(key, scorer);
        }
        set.0.shrink_to_fit();
        set
    }
}

impl Serialize for ScorerSet {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
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
    /// The pinned version's id (for blast-radius listings; the number is what is compared).
    #[serde(skip)]
    pub scorer_version_id: NotCompared<Option<String>>,
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
    /// A set of values: sorted, duplicates dropped.
    pub fn many(mut values: Vec<String>) -> Self {
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

// ---------------------------------------------------------------- from the wire

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

/// Normalizes a live scorer config. Defaults the service fills are filled
/// from the catalog here too, so a config read from a service that did not
/// fill them compares equal.
pub fn scorer_from_wire(catalog: &Catalog, c: &ScorerConfig) -> NormScorer {
    let entry = catalog.by_id(&c.id);
    NormScorer {
        id: c.id.clone(),
        scorer_type: c.scorer_type.clone(),
        scorer_version: c.scorer_version.as_ref().map(|v| v.version),
        scorer_version_id: NotCompared(c.scorer_version.as_ref().map(|v| v.id.clone())),
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

/// Normalizes metric settings as the service returned them.
pub fn metric_settings_from_wire(
    catalog: &Catalog,
    settings: &api::MetricSettingsResponse,
) -> NormMetricSettings {
    NormMetricSettings {
        scorers: settings
            .scorers
            .iter()
            .map(|c| {
                (
                    catalog.scorer_key(&c.id, c.name.as_deref()),
                    scorer_from_wire(catalog, c),
                )
            })
            .collect(),
        segment_filters: segment_filters_from_wire(settings.segment_filters.as_ref()),
    }
}
