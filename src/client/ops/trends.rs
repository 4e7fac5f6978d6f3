//! Trends dashboards of a log stream: list, read one (with sections and
//! widgets), create (spec operation 3), update and delete sections, favorite
//! (spec operation 10) and unfavorite.
//!
//! `dashboard_id: None` means the log stream's default dashboard (the query
//! parameter `trends_dashboard_id` is left out).

use super::super::operation::{
    CREATE_SECTION, DELETE_SECTION, FAVORITE_DASHBOARD, GET_TRENDS, LIST_DASHBOARDS,
    UNFAVORITE_DASHBOARD, UPDATE_SECTION,
};
use super::super::transport::Call;
use super::super::{ApiError, Client, Deleted};
use crate::api::{
    Section, SectionCreateRequest, SectionUpdateRequest, TrendsDashboard, TrendsDashboardSummary,
    Visibility,
};

impl Client {
    /// The dashboards of a log stream.
    pub async fn list_dashboards(
        &self,
        project_id: &str,
        log_stream_id: &str,
    ) -> Result<Vec<TrendsDashboardSummary>, ApiError> {
        self.fetch(Call::new(&LIST_DASHBOARDS, &[project_id, log_stream_id]))
            .await
    }

    /// A dashboard with its sections and widgets (the default one when
    /// `dashboard_id` is `None`); `None` when it does not exist.
    pub async fn get_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
    ) -> Result<Option<TrendsDashboard>, ApiError> {
        self.fetch_opt(
            Call::new(&GET_TRENDS, &[project_id, log_stream_id])
                .query_opt("trends_dashboard_id", dashboard_id),
        )
        .await
    }

    /// Spec operation 3: creates a section. Not retried blindly: an uncertain
    /// outcome is [`ApiError::Ambiguous`] (re-read the dashboard).
    pub async fn create_section(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        request: &SectionCreateRequest,
    ) -> Result<Section, ApiError> {
        self.fetch(
            Call::new(&CREATE_SECTION, &[project_id, log_stream_id])
                .query_opt("trends_dashboard_id", dashboard_id)
                .json(request)?,
        )
        .await
    }

    /// Updates a section (PUT; only the given fields change).
    pub async fn update_section(
        &self,
        project_id: &str,
        log_stream_id: &str,
        section_id: &str,
        dashboard_id: Option<&str>,
        request: &SectionUpdateRequest,
    ) -> Result<Section, ApiError> {
        self.fetch(
            Call::new(&UPDATE_SECTION, &[project_id, log_stream_id, section_id])
                .query_opt("trends_dashboard_id", dashboard_id)
                .json(request)?,
        )
        .await
    }

    /// Deletes a section. With `ungroup`, its widgets move to the dashboard's
    /// top level; without, they are deleted with it. A 404 is
    /// [`Deleted::AlreadyGone`].
    pub async fn delete_section(
        &self,
        project_id: &str,
        log_stream_id: &str,
        section_id: &str,
        dashboard_id: Option<&str>,
        ungroup: bool,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(
            Call::new(&DELETE_SECTION, &[project_id, log_stream_id, section_id])
                .query_opt("trends_dashboard_id", dashboard_id)
                .query("ungroup", ungroup),
        )
        .await
    }

    /// Spec operation 10: favorites a dashboard for the caller (`user`) or the
    /// whole project (`project`). Idempotent, so retried like a PUT.
    pub async fn favorite_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: &str,
        visibility: &Visibility,
    ) -> Result<(), ApiError> {
        self.fetch_empty(
            Call::new(
                &FAVORITE_DASHBOARD,
                &[project_id, log_stream_id, dashboard_id],
            )
            .query("visibility", visibility.as_str()),
        )
        .await
    }

    /// Clears the caller's (`user`) or the project's favorite dashboard of a
    /// log stream. A 404 is [`Deleted::AlreadyGone`].
    pub async fn unfavorite_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        visibility: &Visibility,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(
            Call::new(&UNFAVORITE_DASHBOARD, &[project_id, log_stream_id])
                .query("visibility", visibility.as_str()),
        )
        .await
    }
}
