//! Reading prompt templates, a project's (`Some(project_id)`) or the global
//! ones (`None`): one listing, and for a template
//! whose listing holds neither its latest version (selected) nor every
//! version, a read of its latest version.

use futures::{StreamExt, TryStreamExt};

use super::live::PromptTemplateState;
use crate::client::{ApiError, Client};

/// Latest versions read at once.
const AT_ONCE: usize = 8;

/// The prompt templates of a project (`Some(project_id)`) or the global
/// ones (`None`).
pub async fn read_prompt_templates(
    client: &Client,
    scope: Option<&str>,
) -> Result<Vec<PromptTemplateState>, ApiError> {
    let listed = client.list_prompt_templates(scope).await?;
    futures::stream::iter(listed.into_iter().map(|t| async move {
        match PromptTemplateState::from_wire(t) {
            Ok(state) => Ok(state),
            Err(t) => {
                let latest = client
                    .get_prompt_version(scope, &t.id, t.max_version)
                    .await?;
                // A latest version the listing names but the service cannot
                // find: the selected one stands in (the next read corrects it).
                let latest = latest.unwrap_or_else(|| t.selected_version.clone());
                Ok(PromptTemplateState::with_latest(*t, latest))
            }
        }
    }))
    .buffered(AT_ONCE)
    .try_collect()
    .await
}

/// The global prompt templates when `selected` (`None` otherwise), as the
/// plan and export read them.
pub async fn read_global_if(
    client: &Client,
    selected: bool,
) -> Result<Option<Vec<PromptTemplateState>>, crate::reconcile::ReadError> {
    if !selected {
        return Ok(None);
    }
    read_prompt_templates(client, None)
        .await
        .map(Some)
        .map_err(|e| crate::reconcile::ReadError::new("the global prompt templates", e))
}

/// Selects the prompt templates of a project whose `spec` declares some,
/// when `options` reach them.
pub(crate) fn select(
    project: &str,
    spec: &crate::manifest::types::ProjectSpec,
    options: &crate::plan::PlanOptions,
    wanted: &mut crate::reconcile::read::selection::ProjectSelection,
) {
    wanted.prompt_templates =
        spec.prompt_templates.is_some() && options.reaches(&super::plan::scope(project));
}
