//! Custom scorers a plan creates, as metric settings name them. A manifest
//! may declare a `kind: Scorer` and use it in `metric_settings.scorers` in
//! the same apply; the plan cannot know the scorer's id (nor its version's)
//! yet, so the catalog it resolves scorer references against holds a
//! pending entry for each declared scorer it does not list
//! ([`planned_catalog`]): the id `pending:scorer:NAME`, and its first
//! version `pending:scorer_version:NAME:1`. A version the plan adds to an
//! existing scorer (its declared definition differs from the latest) is
//! pending too (`pending:scorer_version:NAME:N`), so metric settings may pin
//! it in the same apply.
//!
//! Apply resolves these ids when the metric settings' operation runs, after
//! the scorers' stage, by reading the scorer back by name and its versions
//! by number ([`resolve`]); it is the core's pending mechanism
//! (`crate::reconcile::pending`), which calls [`resolve`] through the
//! registry (`crate::kinds::resolve_pending`). A saved plan holds the
//! pending ids and is resolved the same way when it is applied.

use std::borrow::Cow;

use super::live::{CustomScorerState, DEFAULT_JUDGES};
use super::normalize::NormDefinition;
use super::spec::{CustomScorerSpec, CustomScorerType};
use crate::api::ScorerType;
use crate::client::Client;
use crate::manifest::set::Located;
use crate::reconcile::apply::OperationError;
use crate::state::{Catalog, CatalogScorer, VersionRef};

const SCORER: &str = "pending:scorer:";
const VERSION: &str = "pending:scorer_version:";

/// The pending id of the custom scorer `name` a plan creates.
pub fn scorer_id(name: &str) -> String {
    format!("{SCORER}{name}")
}

/// The pending id of version `number` of the custom scorer `name`, which a
/// plan creates.
pub fn version_id(name: &str, number: u32) -> String {
    format!("{VERSION}{name}:{number}")
}

/// The scorer's name and the version's number of a pending version id.
fn version_of(id: &str) -> Option<(&str, i64)> {
    let rest = id.strip_prefix(VERSION)?;
    let (name, number) = rest.rsplit_once(':')?;
    Some((name, number.parse().ok()?))
}

/// `catalog` with an entry for each declared scorer it does not list (one
/// the plan creates, with its version 1), and the version the plan adds to
/// each declared scorer whose definition differs from its latest
/// (`live`: the custom scorers as read, when they were). Borrowed as it is
/// when there is nothing to add.
pub fn planned_catalog<'c>(
    catalog: &'c Catalog,
    declared: &[Located<CustomScorerSpec>],
    live: Option<&[CustomScorerState]>,
) -> Cow<'c, Catalog> {
    let mut out = Cow::Borrowed(catalog);
    for doc in declared {
        let spec = &doc.spec;
        match catalog.by_name(&spec.name) {
            None => {
                let id = scorer_id(&spec.name);
                let first = VersionRef {
                    id: version_id(&spec.name, 1),
                    version: 1,
                    scorer_id: id.clone(),
                };
                let out = out.to_mut();
                out.versions.insert(id.clone(), vec![first.clone()]);
                out.scorers.push(CatalogScorer {
                    id,
                    name: spec.name.clone(),
                    scorer_type: match spec.scorer_type {
                        CustomScorerType::Llm => ScorerType::Llm,
                        CustomScorerType::Code => ScorerType::Code,
                    },
                    latest_version: Some(first),
                    model_type: None,
                    output_type: None,
                    input_type: None,
                    roll_up_method: None,
                    // What the forecast counts: the declared ones, else
                    // the service's.
                    num_judges: Some(
                        spec.defaults
                            .as_ref()
                            .and_then(|d| d.num_judges)
                            .or(spec.num_judges)
                            .unwrap_or(DEFAULT_JUDGES),
                    )
                    .filter(|_| spec.scorer_type == CustomScorerType::Llm),
                    model_name: spec
                        .defaults
                        .as_ref()
                        .and_then(|d| d.model_name.clone())
                        .or_else(|| spec.model_name.clone()),
                    scoreable_node_types: Vec::new(),
                    multimodal: false,
                });
            }
            Some(listed) => {
                let Some(state) = live.and_then(|l| l.iter().find(|s| s.id == listed.id)) else {
                    continue;
                };
                let Some(latest) = &state.latest else {
                    continue;
                };
                if latest.definition.holds(&NormDefinition::declared(spec)) {
                    continue;
                }
                let number = latest.version + 1;
                let id = listed.id.clone();
                out.to_mut()
                    .versions
                    .entry(id.clone())
                    .or_default()
                    .push(VersionRef {
                        id: version_id(&spec.name, number),
                        version: i64::from(number),
                        scorer_id: id,
                    });
            }
        }
    }
    out
}

/// The id a pending scorer or version id stands for, read back now that
/// the scorers' stage ran; `Ok(None)` when `id` is not a scorer's pending id.
pub async fn resolve(client: &Client, id: &str) -> Result<Option<String>, OperationError> {
    let (name, number) = match (id.strip_prefix(SCORER), version_of(id)) {
        (Some(name), _) => (name, None),
        (None, Some((name, number))) => (name, Some(number)),
        (None, None) => return Ok(None),
    };
    let all = client.list_custom_scorers().await?;
    let found: Vec<_> = all.iter().filter(|s| s.name == name).collect();
    let scorer = match found.as_slice() {
        [one] => *one,
        other => {
            return Err(OperationError::Unresolved {
                what: format!(
                    "custom scorer `{name}`, which this apply was to create ({} found of that name)",
                    other.len()
                ),
            });
        }
    };
    let Some(number) = number else {
        return Ok(Some(scorer.id.clone()));
    };
    let versions = client.list_scorer_versions(&scorer.id).await?;
    match versions.iter().find(|v| v.version == number) {
        Some(v) => Ok(Some(v.id.clone())),
        None => Err(OperationError::Unresolved {
            what: format!(
                "version {number} of custom scorer `{name}`, which this apply was to create, does not exist"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_id_names_its_scorer_and_number_even_with_colons_in_the_name() {
        let id = version_id("team:judge", 3);
        assert_eq!(id, "pending:scorer_version:team:judge:3");
        assert_eq!(version_of(&id), Some(("team:judge", 3)));
        assert_eq!(version_of(&scorer_id("judge")), None);
        // The prefix every pending id has (how the resolver finds them).
        assert!(id.starts_with("pending:") && scorer_id("j").starts_with("pending:"));
    }
}
