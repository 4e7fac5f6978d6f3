//! Trends dashboards of a log stream: list, find by name, read one (with
//! sections and widgets), update its settings, duplicate (the only way to
//! create a dashboard besides a log stream's default) and delete; create
//! (spec operation 3), update and delete sections; create, update (which
//! also moves a widget between sections) and delete widgets; favorite (spec
//! operation 10) and unfavorite.
//!
//! `dashboard_id: None` means the log stream's default dashboard (the query
//! parameter `trends_dashboard_id` is left out).

use super::super::operation::{
    CREATE_SECTION, CREATE_WIDGET, DELETE_DASHBOARD, DELETE_SECTION, DELETE_WIDGET,
    DUPLICATE_DASHBOARD, FAVORITE_DASHBOARD, GET_TRENDS, LIST_DASHBOARDS, UNFAVORITE_DASHBOARD,
    UPDATE_SECTION, UPDATE_TRENDS, UPDATE_WIDGET,
};
use super::super::transport::Call;
use super::super::{ApiError, Client, Deleted};
use crate::api::{
    Section, SectionCreateRequest, SectionUpdateRequest, TrendsDashboard,
    TrendsDashboardDuplicateRequest, TrendsDashboardSummary, TrendsDashboardUpdateRequest,
    Visibility, Widget, WidgetCreateRequest, WidgetUpdateRequest,
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

    /// The dashboards of a log stream the caller sees with exactly this name
    /// (case-sensitive), in the listing's order. The service does not make
    /// names unique, so there may be several: the caller decides what that
    /// means.
    pub async fn find_dashboards_by_name(
        &self,
        project_id: &str,
        log_stream_id: &str,
        name: &str,
    ) -> Result<Vec<TrendsDashboardSummary>, ApiError> {
        let all = self.list_dashboards(project_id, log_stream_id).await?;
        Ok(all.into_iter().filter(|d| d.name == name).collect())
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

    /// Updates a dashboard's settings (PUT `.../trends`): only the fields
    /// given change; `Some(None)` clears a nullable one. Answers the whole
    /// dashboard.
    pub async fn update_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        request: &TrendsDashboardUpdateRequest,
    ) -> Result<TrendsDashboard, ApiError> {
        self.fetch(
            Call::new(&UPDATE_TRENDS, &[project_id, log_stream_id])
                .query_opt("trends_dashboard_id", dashboard_id)
                .json(request)?,
        )
        .await
    }

    /// Creates a dashboard as a copy of `source_id` (its sections, widgets,
    /// layout and settings) with a new name and, optionally, another
    /// visibility: the reference has no other way to create one. Not retried
    /// blindly: an uncertain outcome is [`ApiError::Ambiguous`] (list the
    /// dashboards).
    pub async fn duplicate_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        source_id: &str,
        request: &TrendsDashboardDuplicateRequest,
    ) -> Result<TrendsDashboard, ApiError> {
        self.fetch(
            Call::new(
                &DUPLICATE_DASHBOARD,
                &[project_id, log_stream_id, source_id],
            )
            .json(request)?,
        )
        .await
    }

    /// Deletes a dashboard with its sections and widgets (a log stream's
    /// default dashboard cannot be deleted). A 404 is
    /// [`Deleted::AlreadyGone`].
    pub async fn delete_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: &str,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(
            &DELETE_DASHBOARD,
            &[project_id, log_stream_id, dashboard_id],
        ))
        .await
    }

    /// Creates a widget, in the section `request.section_id` or at the
    /// dashboard's top level. Not retried blindly: an uncertain outcome is
    /// [`ApiError::Ambiguous`] (re-read the dashboard).
    pub async fn create_widget(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        request: &WidgetCreateRequest,
    ) -> Result<Widget, ApiError> {
        self.fetch(
            Call::new(&CREATE_WIDGET, &[project_id, log_stream_id])
                .query_opt("trends_dashboard_id", dashboard_id)
                .json(request)?,
        )
        .await
    }

    /// Updates a widget (PUT; only the given fields change). Moving it to
    /// another section is `section_id: Some(Some(id))`, to the top level
    /// `Some(None)`: an update, so it keeps its id.
    pub async fn update_widget(
        &self,
        project_id: &str,
        log_stream_id: &str,
        widget_id: &str,
        dashboard_id: Option<&str>,
        request: &WidgetUpdateRequest,
    ) -> Result<Widget, ApiError> {
        self.fetch(
            Call::new(&UPDATE_WIDGET, &[project_id, log_stream_id, widget_id])
                .query_opt("trends_dashboard_id", dashboard_id)
                .json(request)?,
        )
        .await
    }

    /// Deletes a widget. A 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_widget(
        &self,
        project_id: &str,
        log_stream_id: &str,
        widget_id: &str,
        dashboard_id: Option<&str>,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(
            Call::new(&DELETE_WIDGET, &[project_id, log_stream_id, widget_id])
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
