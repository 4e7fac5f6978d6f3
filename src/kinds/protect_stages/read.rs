//! Reading a project's Protect stages. The service cannot list them, so the
//! stages read are the ones the manifests name (by name) and the ones the
//! local record names (by id: the stages evalctl made or sent rulesets to,
//! which is how one removed from the manifests is found); each is joined
//! with its record.

use futures::{StreamExt, TryStreamExt};

use super::client::StageBy;
use super::live::ProtectStageState;
use super::record::{self, StageRecord};
use crate::client::{ApiError, Client};

/// Stages read at once.
const AT_ONCE: usize = 8;

/// The stages of a project named `names` or recorded, by name then id.
pub async fn read_stages(
    client: &Client,
    project_id: &str,
    names: &[String],
) -> Result<Vec<ProtectStageState>, ApiError> {
    read_with(client, project_id, names, &record::load(project_id)).await
}

/// Like [`read_stages`], with the project's records given.
pub async fn read_with(
    client: &Client,
    project_id: &str,
    names: &[String],
    records: &[StageRecord],
) -> Result<Vec<ProtectStageState>, ApiError> {
    let mut names: Vec<&String> = names.iter().collect();
    names.sort();
    names.dedup();
    let by_name = futures::stream::iter(
        names
            .into_iter()
            .map(|name| client.get_stage(project_id, StageBy::Name(name))),
    )
    .buffered(AT_ONCE)
    .try_collect::<Vec<_>>()
    .await?;
    let mut found: Vec<_> = by_name.into_iter().flatten().collect();
    let unread: Vec<&StageRecord> = records
        .iter()
        .filter(|r| !found.iter().any(|s| s.id == r.id))
        .collect();
    let by_id = futures::stream::iter(
        unread
            .into_iter()
            .map(|r| client.get_stage(project_id, StageBy::Id(&r.id))),
    )
    .buffered(AT_ONCE)
    .try_collect::<Vec<_>>()
    .await?;
    for stage in by_id.into_iter().flatten() {
        if !found.iter().any(|s| s.id == stage.id) {
            found.push(stage);
        }
    }
    let mut out: Vec<ProtectStageState> = found
        .into_iter()
        .map(|s| {
            let record = records.iter().find(|r| r.id == s.id);
            ProtectStageState::new(s, record)
        })
        .collect();
    out.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    Ok(out)
}

/// One stage of a project, by name, joined with its record (`None`: there
/// is none): how a create is settled and confirmed.
pub async fn read_stage(
    client: &Client,
    project_id: &str,
    name: &str,
) -> Result<Option<ProtectStageState>, ApiError> {
    let found = client.get_stage(project_id, StageBy::Name(name)).await?;
    Ok(found.map(|s| {
        let records = record::load(project_id);
        let record = records.iter().find(|r| r.id == s.id);
        ProtectStageState::new(s, record)
    }))
}

/// Selects the Protect stages a project's `spec` declares, when `options`
/// reach them: their names (the stages evalctl's record names are read too).
pub(crate) fn select(
    project: &str,
    spec: &crate::manifest::types::ProjectSpec,
    options: &crate::plan::PlanOptions,
    wanted: &mut crate::reconcile::read::selection::ProjectSelection,
) {
    wanted.protect_stages = spec
        .protect_stages
        .as_ref()
        .filter(|_| options.reaches(&super::plan::scope(project)))
        .map(|all| all.iter().map(|s| s.name.clone()).collect());
}

/// Reads the stages `wanted` selects of a project (`None`: none selected; an
/// empty list for a project the plan creates).
pub(crate) async fn read_selected(
    client: &Client,
    wanted: &crate::reconcile::read::selection::ProjectSelection,
    project_id: &str,
    project_name: &str,
    pending: bool,
) -> Result<Option<Vec<ProtectStageState>>, crate::reconcile::ReadError> {
    let Some(names) = &wanted.protect_stages else {
        return Ok(None);
    };
    if pending {
        return Ok(Some(Vec::new()));
    }
    read_stages(client, project_id, names)
        .await
        .map(Some)
        .map_err(crate::reconcile::read::error::ctx(|| {
            format!("the Protect stages of project `{project_name}`")
        }))
}

/// Reads the stages of a project evalctl's record names, for an export.
pub(crate) async fn read_all(
    client: &Client,
    project_id: &str,
    project_name: &str,
) -> Result<Vec<ProtectStageState>, crate::reconcile::ReadError> {
    read_stages(client, project_id, &[])
        .await
        .map_err(crate::reconcile::read::error::ctx(|| {
            format!(
                "the Protect stages of project `{}`",
                crate::scrub::escape_controls(project_name)
            )
        }))
}
