//! Resolving, when an operation runs, the objects a plan could only name:
//! a dashboard the same apply created (by its name: the first listed of it,
//! the one a plan pairs and the one kept when two runs copied it at once,
//! see `super::duplicate_settled`), a section it created
//! or a section of such a dashboard (the first of its name, the one a plan
//! pairs), a widget of such a dashboard (by name within its section). Each
//! lookup reads through the plan's own readers.

use super::OperationError;
use crate::api::TrendsDashboard;
use crate::client::Client;
use crate::plan::{DashboardRef, Placement, SectionRef, WidgetRef};
use crate::reconcile::read::trends::find_dashboard_ids;

/// Where the objects are: a project's log stream.
pub(super) struct LogStream<'a> {
    pub(super) project_id: &'a str,
    pub(super) log_stream_id: &'a str,
}

impl LogStream<'_> {
    /// The id of a dashboard.
    pub(super) async fn dashboard(
        &self,
        client: &Client,
        dashboard: &DashboardRef,
    ) -> Result<String, OperationError> {
        match dashboard {
            DashboardRef::Id(id) => Ok(id.clone()),
            DashboardRef::Named { named } => {
                let ids =
                    find_dashboard_ids(client, self.project_id, self.log_stream_id, named).await?;
                // Several: two applies copied it at once; the first listed
                // is the one kept (the other run deletes its copy).
                ids.into_iter()
                    .next()
                    .ok_or_else(|| unresolved(format!("no dashboard is named `{named}`")))
            }
        }
    }

    async fn read(
        &self,
        client: &Client,
        dashboard_id: &str,
    ) -> Result<TrendsDashboard, OperationError> {
        client
            .get_dashboard(self.project_id, self.log_stream_id, Some(dashboard_id))
            .await?
            .ok_or_else(|| unresolved(format!("dashboard {dashboard_id} does not exist")))
    }

    /// The id of a section of the dashboard `dashboard_id`.
    pub(super) async fn section(
        &self,
        client: &Client,
        dashboard_id: &str,
        section: &SectionRef,
    ) -> Result<String, OperationError> {
        match section {
            SectionRef::Id(id) => Ok(id.clone()),
            SectionRef::Named { named } => {
                section_named(&self.read(client, dashboard_id).await?, named)
            }
        }
    }

    /// The `section_id` of a placement (`None`: the top level).
    pub(super) async fn placement(
        &self,
        client: &Client,
        dashboard_id: &str,
        placement: &Placement,
    ) -> Result<Option<String>, OperationError> {
        match placement {
            Placement::Top => Ok(None),
            Placement::Section(section) => {
                self.section(client, dashboard_id, section).await.map(Some)
            }
        }
    }

    /// The id of a widget of the dashboard `dashboard_id`.
    pub(super) async fn widget(
        &self,
        client: &Client,
        dashboard_id: &str,
        widget: &WidgetRef,
    ) -> Result<String, OperationError> {
        match widget {
            WidgetRef::Id(id) => Ok(id.clone()),
            WidgetRef::Named { named, section } => {
                let dashboard = self.read(client, dashboard_id).await?;
                let widgets = match section {
                    None => &dashboard.widgets,
                    Some(name) => {
                        let id = section_named(&dashboard, name)?;
                        dashboard
                            .sections
                            .iter()
                            .find(|s| s.id == id)
                            .map(|s| &s.widgets)
                            .ok_or_else(|| unresolved(format!("no section is named `{name}`")))?
                    }
                };
                widgets
                    .iter()
                    .find(|w| &w.name == named)
                    .map(|w| w.id.clone())
                    .ok_or_else(|| unresolved(format!("no widget is named `{named}` there")))
            }
        }
    }
}

fn section_named(dashboard: &TrendsDashboard, name: &str) -> Result<String, OperationError> {
    dashboard
        .sections
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.id.clone())
        .ok_or_else(|| unresolved(format!("no section is named `{name}`")))
}

fn unresolved(what: String) -> OperationError {
    OperationError::Unresolved { what }
}
