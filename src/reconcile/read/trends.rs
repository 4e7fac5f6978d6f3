//! Reading a log stream's trends dashboard, reduced as it arrives
//! (`crate::state::trends`): the widgets, layout and settings of the
//! response are dropped before the next read is answered.

use crate::client::{ApiError, Client};
use crate::state::DashboardState;

/// The dashboard `dashboard_id` of a log stream (its default one when
/// `None`); `None` when there is none.
pub async fn read_dashboard(
    client: &Client,
    project_id: &str,
    log_stream_id: &str,
    dashboard_id: Option<&str>,
) -> Result<Option<DashboardState>, ApiError> {
    Ok(client
        .get_dashboard(project_id, log_stream_id, dashboard_id)
        .await?
        .as_ref()
        .map(DashboardState::from))
}
