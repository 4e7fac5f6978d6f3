//! Resolving manifest references against the live catalog: scorers by name or
//! id, pinned versions by number. Every failure names the nearest existing
//! names, so a typo is a one-line fix.

use crate::api::{Scorer, ScorerConfig, ScorerVersion};
use crate::live::Catalog;
use crate::manifest::types::ScorerSpec;

use super::normalize::{NormScorer, filter_from_spec, filter_to_wire};

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

/// Up to three names from `candidates` closest to `wanted`, best first.
pub fn nearest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| {
            let c_lower = c.to_lowercase();
            let mut score = strsim::jaro_winkler(&wanted_lower, &c_lower);
            if c_lower.contains(&wanted_lower) || wanted_lower.contains(&c_lower) {
                score = score.max(0.85);
            }
            (score, c)
        })
        .filter(|(score, _)| *score >= 0.7)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

/// "did you mean `a`, `b`?" or an empty string.
pub fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        format!("; did you mean {}?", list.join(", "))
    }
}

fn find_scorer<'c>(catalog: &'c Catalog, spec: &ScorerSpec) -> Result<&'c Scorer, String> {
    if let Some(id) = &spec.id {
        return catalog
            .by_id(id)
            .ok_or_else(|| format!("no scorer with id `{id}` in the catalog"));
    }
    let name = spec.name.as_deref().unwrap_or_default();
    let matches: Vec<&Scorer> = catalog.scorers.iter().filter(|s| s.name == name).collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => {
            let suggestions = nearest(name, catalog.scorers.iter().map(|s| s.name.as_str()));
            Err(format!(
                "no scorer named `{name}` in the catalog{}",
                did_you_mean(&suggestions)
            ))
        }
        several => {
            let ids: Vec<&str> = several.iter().map(|s| s.id.as_str()).collect();
            Err(format!(
                "{} scorers are named `{name}` (ids {}); refer to one by `id`",
                several.len(),
                ids.join(", ")
            ))
        }
    }
}

fn find_version(catalog: &Catalog, scorer: &Scorer, number: i64) -> Result<ScorerVersion, String> {
    let versions = catalog
        .versions
        .get(&scorer.id)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if let Some(v) = versions.iter().find(|v| v.version == number) {
        return Ok(ScorerVersion {
            id: v.id.clone(),
            version: v.version,
            scorer_id: v.scorer_id.clone(),
            generated_scorer: None,
            registered_scorer: None,
            finetuned_scorer: None,
            model_name: None,
            num_judges: None,
            scoreable_node_types: None,
            cot_enabled: None,
            output_type: None,
            input_type: None,
        });
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
    let known = if known.is_empty() {
        "none were found".to_owned()
    } else {
        format!(
            "it has {}",
            known
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Err(format!(
        "scorer `{}` has no version {number} ({known})",
        scorer.name
    ))
}

/// Resolves one scorer spec: finds the scorer, pins the version, fills the
/// catalog defaults the service fills, and builds the exact config to send.
pub fn resolve_scorer(catalog: &Catalog, spec: &ScorerSpec) -> Result<ResolvedScorer, String> {
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
        scorer_version: version,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_rank_typos_first() {
        let names = ["correctness", "completeness", "context_adherence", "bleu"];
        assert_eq!(nearest("corectness", names)[0], "correctness");
        assert!(nearest("zzzzzz", names).is_empty());
        assert_eq!(did_you_mean(&["a".into()]), "; did you mean `a`?");
    }
}
