//! Resolving manifest references against the live catalog: scorers by name or
//! id, pinned versions by number. Every failure names the nearest existing
//! names, so a typo is a one-line fix.

use crate::api::ScorerConfig;
use crate::manifest::types::ScorerSpec;
use crate::state::metric_settings::{NormScorer, NotCompared};
use crate::state::{Catalog, CatalogScorer, VersionRef};
use crate::suggest::{did_you_mean, nearest};

use super::normalize::{filter_from_spec, filter_to_wire};

/// A scorer spec resolved against the catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedScorer {
    /// The key it is shown under (the catalog name).
    pub key: String,
    /// The normalized config the service will hold.
    pub norm: NormScorer,
    /// The exact config to send.
    pub config: ScorerConfig,
}

/// A scorer reference the catalog cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No scorer has this id.
    #[error("no scorer with id `{id}` in the catalog")]
    UnknownId {
        /// The id referred to.
        id: String,
    },
    /// No scorer has this name.
    #[error("no scorer named `{name}` in the catalog{}", did_you_mean(.suggestions))]
    UnknownName {
        /// The name referred to.
        name: String,
        /// The nearest names in the catalog.
        suggestions: Vec<String>,
    },
    /// Several scorers have this name.
    #[error("{} scorers are named `{name}` (ids {}); refer to one by `id`", .ids.len(), .ids.join(", "))]
    AmbiguousName {
        /// The name referred to.
        name: String,
        /// The ids of the scorers with that name.
        ids: Vec<String>,
    },
    /// The scorer has no such version.
    #[error("scorer `{scorer}` has no version {number} ({})", known_versions(.known))]
    UnknownVersion {
        /// The scorer's name.
        scorer: String,
        /// The version asked for.
        number: i64,
        /// The versions it has, ascending.
        known: Vec<i64>,
    },
}

impl ResolveError {
    /// The field of a scorer spec the error is about: `id`, `name` or
    /// `scorer_version`.
    #[must_use]
    pub fn field(&self) -> &'static str {
        match self {
            ResolveError::UnknownId { .. } => "id",
            ResolveError::UnknownName { .. } | ResolveError::AmbiguousName { .. } => "name",
            ResolveError::UnknownVersion { .. } => "scorer_version",
        }
    }
}

fn known_versions(known: &[i64]) -> String {
    if known.is_empty() {
        "none were found".to_owned()
    } else {
        let list: Vec<String> = known.iter().map(i64::to_string).collect();
        format!("it has {}", list.join(", "))
    }
}

fn find_scorer<'c>(
    catalog: &'c Catalog,
    spec: &ScorerSpec,
) -> Result<&'c CatalogScorer, ResolveError> {
    if let Some(id) = &spec.id {
        return catalog
            .by_id(id)
            .ok_or_else(|| ResolveError::UnknownId { id: id.clone() });
    }
    let name = spec.name.as_deref().unwrap_or_default();
    let matches: Vec<&CatalogScorer> = catalog.scorers.iter().filter(|s| s.name == name).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(ResolveError::UnknownName {
            name: name.to_owned(),
            suggestions: nearest(name, catalog.scorers.iter().map(|s| s.name.as_str())),
        }),
        several => Err(ResolveError::AmbiguousName {
            name: name.to_owned(),
            ids: several.iter().map(|s| s.id.clone()).collect(),
        }),
    }
}

fn find_version(
    catalog: &Catalog,
    scorer: &CatalogScorer,
    number: i64,
) -> Result<VersionRef, ResolveError> {
    let versions = catalog
        .versions
        .get(&scorer.id)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if let Some(v) = versions.iter().find(|v| v.version == number) {
        return Ok(v.clone());
    }
    if let Some(latest) = scorer
        .latest_version
        .as_ref()
        .filter(|v| v.version == number)
    {
        return Ok(latest.clone());
    }
    let mut known: Vec<i64> = versions.iter().map(|v| v.version).collect();
    known.sort_unstable();
    Err(ResolveError::UnknownVersion {
        scorer: scorer.name.clone(),
        number,
        known,
    })
}

/// Resolves one scorer spec: finds the scorer, pins the version, fills the
/// catalog defaults the service fills, and builds the exact config to send.
pub fn resolve_scorer(
    catalog: &Catalog,
    spec: &ScorerSpec,
) -> Result<ResolvedScorer, ResolveError> {
    let scorer = find_scorer(catalog, spec)?;
    let version = spec
        .scorer_version
        .map(|n| find_version(catalog, scorer, n))
        .transpose()?;
    let mut node_types = spec.scoreable_node_types.clone().unwrap_or_default();
    node_types.sort();
    node_types.dedup();
    let mut capabilities = spec.multimodal_capabilities.clone().unwrap_or_default();
    capabilities.sort();
    capabilities.dedup();
    let norm = NormScorer {
        id: scorer.id.clone(),
        scorer_type: scorer.scorer_type.clone(),
        scorer_version: version.as_ref().map(|v| v.version),
        scorer_version_id: NotCompared(version.as_ref().map(|v| v.id.clone())),
        model_name: spec.model_name.clone(),
        num_judges: spec.num_judges,
        filters: spec
            .filters
            .iter()
            .flatten()
            .map(filter_from_spec)
            .collect(),
        scoreable_node_types: node_types,
        cot_enabled: spec.cot_enabled,
        output_type: spec
            .output_type
            .clone()
            .or_else(|| scorer.output_type.clone()),
        input_type: spec
            .input_type
            .clone()
            .or_else(|| scorer.input_type.clone()),
        model_type: spec
            .model_type
            .clone()
            .or_else(|| scorer.model_type.clone()),
        multimodal_capabilities: capabilities,
        roll_up_method: spec
            .roll_up_method
            .clone()
            .or_else(|| scorer.roll_up_method.clone()),
        score_type: spec.score_type.clone(),
    };
    let non_empty = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
    let config = ScorerConfig {
        id: norm.id.clone(),
        scorer_type: norm.scorer_type.clone(),
        name: Some(scorer.name.clone()),
        model_name: norm.model_name.clone(),
        num_judges: norm.num_judges,
        filters: (!norm.filters.is_empty())
            .then(|| norm.filters.iter().map(filter_to_wire).collect()),
        scoreable_node_types: non_empty(&norm.scoreable_node_types),
        cot_enabled: norm.cot_enabled,
        output_type: norm.output_type.clone(),
        input_type: norm.input_type.clone(),
        model_type: norm.model_type.clone(),
        scorer_version: version.as_ref().map(|v| Box::new(v.to_wire())),
        multimodal_capabilities: (!norm.multimodal_capabilities.is_empty())
            .then(|| norm.multimodal_capabilities.clone()),
        roll_up_method: norm.roll_up_method.clone(),
        score_type: norm.score_type.clone(),
    };
    Ok(ResolvedScorer {
        key: scorer.name.clone(),
        norm,
        config,
    })
}
