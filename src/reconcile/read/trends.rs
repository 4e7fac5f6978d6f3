//! Reading a log stream's trends dashboards, reduced as they arrive
//! (`crate::state::trends`): the default one, or the others the caller sees
//! (one listing, then one read of each). Only the parts asked for are kept;
//! the layout and the rest of each response are dropped before the next
//! read is answered.

use futures::future::try_join_all;

use crate::client::{ApiError, Client};
use crate::state::{DashboardState, TrendsParts};

/// The dashboard `dashboard_id` of a log stream (its default one when
/// `None`), keeping `parts`; `None` when there is none.
pub async fn read_dashboard(
    client: &Client,
    project_id: &str,
    log_stream_id: &str,
    dashboard_id: Option<&str>,
    parts: TrendsParts,
) -> Result<Option<DashboardState>, ApiError> {
    Ok(client
        .get_dashboard(project_id, log_stream_id, dashboard_id)
        .await?
        .as_ref()
        .map(|d| DashboardState::reduce(d, parts)))
}

/// The log stream's dashboards other than the default one that the caller
/// sees, in the listing's order, each read keeping `parts`. One that
/// disappears between the listing and its read is left out.
pub async fn read_other_dashboards(
    client: &Client,
    project_id: &str,
    log_stream_id: &str,
    parts: TrendsParts,
) -> Result<Vec<DashboardState>, ApiError> {
    let listed = client.list_dashboards(project_id, log_stream_id).await?;
    let reads = listed.iter().filter(|d| !d.is_default).map(|d| {
        read_dashboard(
            client,
            project_id,
            log_stream_id,
            Some(d.id.as_str()),
            parts,
        )
    });
    Ok(try_join_all(reads).await?.into_iter().flatten().collect())
}

/// The ids of the dashboards other than the default one named `name` that
/// the caller sees, in the listing's order (names are not unique).
pub async fn find_dashboard_ids(
    client: &Client,
    project_id: &str,
    log_stream_id: &str,
    name: &str,
) -> Result<Vec<String>, ApiError> {
    Ok(client
        .find_dashboards_by_name(project_id, log_stream_id, name)
        .await?
        .into_iter()
        .filter(|d| !d.is_default)
        .map(|d| d.id)
        .collect())
}
