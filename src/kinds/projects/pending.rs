//! Projects and log streams a plan creates have no id when the plan is made,
//! yet everything planned inside them (metric settings, templates, …) names
//! them by id. The reader gives such an object a pending id
//! (`crate::reconcile::pending`), which says it is to be created and under
//! which name ([`project_id`], [`log_stream_id`]; a new log stream's default
//! dashboard, which the service makes with it, [`default_dashboard_id`]: its
//! sections, widgets, settings, favorite and the dashboards copied from it
//! name it); apply resolves them when an operation runs, after the creates'
//! stages, through the registry ([`resolve`]), by reading back by name
//! through the plan's own readers (`reconcile::read::projects::find_projects`,
//! `reconcile::read::runs::find_runs`), each once per apply.

use crate::client::Client;
use crate::plan::RunKind;
use crate::reconcile::apply::OperationError;
use crate::reconcile::pending::{Pending, unresolved};
use crate::reconcile::read::ReadError;
use crate::reconcile::read::projects::{FoundProject, find_projects};
use crate::reconcile::read::runs::find_runs;
use crate::state::ObjectKey;

const PROJECT: &str = "pending:project:";
const LOG_STREAM: &str = "pending:log_stream:";
const DEFAULT_DASHBOARD: &str = "pending:default_dashboard:";

/// The pending id of the project `name` a plan creates.
pub fn project_id(name: &str) -> String {
    format!("{PROJECT}{name}")
}

/// The pending id of the log stream `name` a plan creates.
pub fn log_stream_id(name: &str) -> String {
    format!("{LOG_STREAM}{name}")
}

/// The pending id of the default dashboard of the log stream `name` a plan
/// creates (the service makes it with the log stream).
pub fn default_dashboard_id(name: &str) -> String {
    format!("{DEFAULT_DASHBOARD}{name}")
}

/// The log stream's name of a pending default dashboard id.
pub fn default_dashboard_of(id: &str) -> Option<&str> {
    id.strip_prefix(DEFAULT_DASHBOARD)
}

/// The name of a pending project id.
pub fn project_name(id: &str) -> Option<&str> {
    id.strip_prefix(PROJECT)
}

/// The name of a pending log stream id.
pub fn log_stream_name(id: &str) -> Option<&str> {
    id.strip_prefix(LOG_STREAM)
}

/// The id the pending id `id` stands for when it is a project's, a log
/// stream's (of the project `project_id`, resolved) or a new log stream's
/// default dashboard's; `None` when it is another kind's, or names an
/// object inside a project without one.
pub(crate) async fn resolve(
    pending: &Pending,
    client: &Client,
    id: &str,
    project_id: Option<&str>,
) -> Result<Option<String>, OperationError> {
    if let Some(name) = project_name(id) {
        return project(pending, client, name).await.map(Some);
    }
    Ok(
        match (log_stream_name(id), default_dashboard_of(id), project_id) {
            (Some(name), _, Some(project_id)) => {
                Some(log_stream(pending, client, project_id, name).await?)
            }
            (None, Some(name), Some(project_id)) => {
                Some(default_dashboard(pending, client, project_id, name).await?)
            }
            _ => None,
        },
    )
}

/// The id of the project `name`, created by this apply.
async fn project(pending: &Pending, client: &Client, name: &str) -> Result<String, OperationError> {
    pending
        .remember((String::new(), name.to_owned()), async {
            let found = find_project(client, name)
                .await
                .map_err(|e| unresolved(e.to_string()))?;
            let found = found.ok_or_else(|| {
                unresolved(format!(
                    "project `{name}`, which this apply was to create, does not exist"
                ))
            })?;
            Ok(found.id)
        })
        .await
}

/// The id of the log stream `name` of the project `project_id`, created by
/// this apply.
async fn log_stream(
    pending: &Pending,
    client: &Client,
    project_id: &str,
    name: &str,
) -> Result<String, OperationError> {
    pending
        .remember((project_id.to_owned(), name.to_owned()), async {
            find_log_stream(client, project_id, name)
                .await
                .map_err(|e| unresolved(e.to_string()))?
                .ok_or_else(|| {
                    unresolved(format!(
                        "log stream `{name}`, which this apply was to create, does not exist"
                    ))
                })
        })
        .await
}

/// The id of the default dashboard of the log stream `name` (created by
/// this apply) of the project `project_id`.
async fn default_dashboard(
    pending: &Pending,
    client: &Client,
    project_id: &str,
    name: &str,
) -> Result<String, OperationError> {
    let key = (format!("{project_id}/{DEFAULT_DASHBOARD}"), name.to_owned());
    pending
        .remember(key, async {
            let log_stream_id = log_stream(pending, client, project_id, name).await?;
            let dashboard = client
                .get_dashboard(project_id, &log_stream_id, None)
                .await
                .map_err(|e| unresolved(e.to_string()))?
                .ok_or_else(|| {
                    unresolved(format!(
                        "the default dashboard of log stream `{name}`, which this apply created, does not exist"
                    ))
                })?;
            Ok(dashboard.id)
        })
        .await
}

/// The project named `name`, read by name (`None`: there is none).
pub(crate) async fn find_project(
    client: &Client,
    name: &str,
) -> Result<Option<FoundProject>, ReadError> {
    let key = ObjectKey::Name(name.to_owned());
    let (mut found, _) = find_projects(client, std::slice::from_ref(&key)).await?;
    Ok(found.remove(&key))
}

/// The id of the log stream `name` of the project `project_id`, read by name.
pub(crate) async fn find_log_stream(
    client: &Client,
    project_id: &str,
    name: &str,
) -> Result<Option<String>, ReadError> {
    let key = ObjectKey::Name(name.to_owned());
    let project = FoundProject {
        id: project_id.to_owned(),
        name: project_id.to_owned(),
    };
    let (mut found, _) = find_runs(
        client,
        &project,
        RunKind::LogStream,
        std::slice::from_ref(&key),
    )
    .await?;
    Ok(found.remove(&key).map(|r| r.id))
}
