//! Reading the custom scorers: one listing of the catalog (the latest
//! version's LLM definition comes with it), and for each scorer the
//! projects it is shared with (a scoped one) and its latest version's file
//! (a code scorer).

use futures::{StreamExt, TryStreamExt};

use super::live::{CustomScorerState, custom_type};
use super::spec::CustomScorerType;
use crate::client::{ApiError, Client};

/// Scorers read at once.
const AT_ONCE: usize = 8;

/// Every custom scorer.
pub async fn read_custom_scorers(client: &Client) -> Result<Vec<CustomScorerState>, ApiError> {
    let listed = client.list_custom_scorers().await?;
    let mut scorers: Vec<CustomScorerState> =
        futures::stream::iter(listed.into_iter().filter_map(|s| {
            let kind = custom_type(&s)?;
            Some(async move {
                let projects = if s.is_global {
                    Vec::new()
                } else {
                    client
                        .custom_scorer_projects(&s.id)
                        .await?
                        .into_iter()
                        .map(|p| p.name)
                        .collect()
                };
                let code = match (&kind, &s.latest_version) {
                    (CustomScorerType::Code, Some(v)) => {
                        let n = u32::try_from(v.version).unwrap_or(0);
                        client.scorer_version_code(&s.id, n).await?
                    }
                    _ => None,
                };
                Ok::<_, ApiError>(CustomScorerState::from_wire(s, kind, projects, code))
            })
        }))
        .buffered(AT_ONCE)
        .try_collect()
        .await?;
    scorers.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    Ok(scorers)
}

/// Every custom scorer when `selected` (`None` otherwise), as the plan and
/// export read them.
pub async fn read_if(
    client: &Client,
    selected: bool,
) -> Result<Option<Vec<CustomScorerState>>, crate::reconcile::ReadError> {
    if !selected {
        return Ok(None);
    }
    read_custom_scorers(client)
        .await
        .map(Some)
        .map_err(|e| crate::reconcile::ReadError::new("the custom scorers", e))
}

/// Whether the custom scorers are read: `options` reach one that `declared`
/// names (reached, not only selected: a target that is one of a scorer's
/// versions needs the scorer read too, as metric settings may pin it).
pub(crate) fn select(
    declared: &[crate::manifest::set::Located<super::CustomScorerSpec>],
    options: &crate::plan::PlanOptions,
) -> bool {
    declared.iter().any(|s| {
        options.reaches(&crate::plan::Target::of(
            &crate::kinds::Address::CustomScorer(super::CustomScorerAddress::scorer(&s.spec.name)),
        ))
    })
}
