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

/// Whether the global prompt templates are read: `declared` names some
/// and `options` reach them.
pub(crate) fn select_global(
    declared: &[crate::manifest::set::Located<super::PromptTemplateSpec>],
    options: &crate::plan::PlanOptions,
) -> bool {
    !declared.is_empty() && options.reaches(&super::plan::global_scope())
}

/// Reads the prompt templates of a project when `wanted` selects them
/// (`None` otherwise; an empty list for a project the plan creates).
pub(crate) async fn read_selected(
    client: &Client,
    wanted: &crate::reconcile::read::selection::ProjectSelection,
    project_id: &str,
    project_name: &str,
    pending: bool,
) -> Result<Option<Vec<PromptTemplateState>>, crate::reconcile::ReadError> {
    if !wanted.prompt_templates {
        return Ok(None);
    }
    if pending {
        return Ok(Some(Vec::new()));
    }
    read_prompt_templates(client, Some(project_id))
        .await
        .map(Some)
        .map_err(crate::reconcile::read::error::ctx(|| {
            format!("the prompt templates of project `{project_name}`")
        }))
}

/// Reads every prompt template of a project, for an export.
pub(crate) async fn read_all(
    client: &Client,
    project_id: &str,
    project_name: &str,
) -> Result<Vec<PromptTemplateState>, crate::reconcile::ReadError> {
    read_prompt_templates(client, Some(project_id))
        .await
        .map_err(crate::reconcile::read::error::ctx(|| {
            format!(
                "the prompt templates of project `{}`",
                crate::scrub::escape_controls(project_name)
            )
        }))
}
