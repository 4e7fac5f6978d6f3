//! Projects and log streams a plan creates have no id when the plan is made,
//! yet everything planned inside them (metric settings, templates, …) names
//! them by id. The reader gives such an object a pending id, which says it
//! is to be created and under which name ([`project_id`], [`log_stream_id`];
//! a new log stream's default dashboard, which the service makes with it,
//! [`default_dashboard_id`]: its sections, widgets, settings, favorite and
//! the dashboards copied from it name it);
//! apply resolves every pending id of an operation when the operation runs,
//! after the creates' stage, by reading back by name through the plan's own
//! readers (`reconcile::read::projects::find_projects`,
//! `reconcile::read::runs::find_runs`) ([`Pending`]). A saved plan holds
//! pending ids too, and is resolved the same way when it is applied.
//!
//! Other kinds name what a plan creates the same way and are resolved here
//! too: a custom scorer and its versions (`crate::kinds::resolve_pending`).
//!
//! A pending id cannot be a service id (those are uuids), and the service
//! is never asked about one.

use std::collections::BTreeMap;

use tokio::sync::Mutex;

use crate::client::Client;
use crate::plan::{Operation, RunKind};
use crate::reconcile::apply::OperationError;
use crate::reconcile::read::ReadError;
use crate::reconcile::read::projects::{FoundProject, find_projects};
use crate::reconcile::read::runs::find_runs;
use crate::state::ObjectKey;

const PROJECT: &str = "pending:project:";
const LOG_STREAM: &str = "pending:log_stream:";
/// The key under which ids of other kinds are resolved (not a project id).
const PENDING_OF_KIND: &str = "pending:";
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

/// Whether `id` is pending (its object is to be created).
pub fn is_pending(id: &str) -> bool {
    id.starts_with("pending:")
}

/// The name of a pending project id.
pub fn project_name(id: &str) -> Option<&str> {
    id.strip_prefix(PROJECT)
}

/// The name of a pending log stream id.
pub fn log_stream_name(id: &str) -> Option<&str> {
    id.strip_prefix(LOG_STREAM)
}

/// Resolves pending ids when operations run, each once per apply.
pub struct Pending {
    /// Whether the plan creates anything (otherwise nothing is pending).
    active: bool,
    /// Resolved ids: a project's by its name, a log stream's by its
    /// project's id and its name.
    resolved: Mutex<BTreeMap<(String, String), String>>,
}

impl Pending {
    /// A resolver for a plan that creates projects or log streams
    /// (`active`), or one that leaves every operation as it is.
    pub fn new(active: bool) -> Self {
        Pending {
            active,
            resolved: Mutex::new(BTreeMap::new()),
        }
    }

    /// `op` with its pending ids replaced by the ids of the objects created
    /// since; `None` when it holds none.
    pub async fn resolve(
        &self,
        client: &Client,
        op: &Operation,
    ) -> Result<Option<Operation>, OperationError> {
        if !self.active {
            return Ok(None);
        }
        let mut value = serde_json::to_value(op).map_err(|e| unresolved(e.to_string()))?;
        let Some(fields) = value.as_object_mut() else {
            return Ok(None);
        };
        let mut changed = false;
        // The project first: a log stream is found within it.
        let project_id = match fields.get("project_id").and_then(|v| v.as_str()) {
            Some(id) => match project_name(id) {
                Some(name) => {
                    let real = self.project(client, name).await?;
                    fields.insert("project_id".into(), real.clone().into());
                    changed = true;
                    Some(real)
                }
                None => Some(id.to_owned()),
            },
            None => None,
        };
        let mut stack: Vec<&mut serde_json::Value> = fields.values_mut().collect();
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) if is_pending(s) => {
                    if let Some(id) = self.of_kind(client, s).await? {
                        *s = id;
                        changed = true;
                        continue;
                    }
                    let id = match (
                        project_name(s),
                        log_stream_name(s),
                        default_dashboard_of(s),
                        &project_id,
                    ) {
                        (Some(name), _, _, _) => self.project(client, name).await?,
                        (None, Some(name), _, Some(project_id)) => {
                            self.log_stream(client, project_id, name).await?
                        }
                        (None, None, Some(name), Some(project_id)) => {
                            self.default_dashboard(client, project_id, name).await?
                        }
                        _ => return Err(unresolved(format!("`{s}` (no project to find it in)"))),
                    };
                    *s = id;
                    changed = true;
                }
                serde_json::Value::Array(items) => stack.extend(items.iter_mut()),
                serde_json::Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
        if !changed {
            return Ok(None);
        }
        serde_json::from_value(value)
            .map(Some)
            .map_err(|e| unresolved(e.to_string()))
    }

    /// The id a pending id of another kind stands for (a custom scorer or
    /// its version: `crate::kinds::resolve_pending`), once per apply;
    /// `None` when it is a project's or a log stream's.
    async fn of_kind(&self, client: &Client, id: &str) -> Result<Option<String>, OperationError> {
        let key = (PENDING_OF_KIND.to_owned(), id.to_owned());
        if let Some(id) = self.resolved.lock().await.get(&key) {
            return Ok(Some(id.clone()));
        }
        let found = crate::kinds::resolve_pending(client, id).await?;
        if let Some(real) = &found {
            self.resolved.lock().await.insert(key, real.clone());
        }
        Ok(found)
    }

    async fn project(&self, client: &Client, name: &str) -> Result<String, OperationError> {
        let key = (String::new(), name.to_owned());
        if let Some(id) = self.resolved.lock().await.get(&key) {
            return Ok(id.clone());
        }
        let found = find_project(client, name)
            .await
            .map_err(|e| unresolved(e.to_string()))?;
        let id = found.ok_or_else(|| {
            unresolved(format!(
                "project `{name}`, which this apply was to create, does not exist"
            ))
        })?;
        self.resolved.lock().await.insert(key, id.id.clone());
        Ok(id.id)
    }

    async fn log_stream(
        &self,
        client: &Client,
        project_id: &str,
        name: &str,
    ) -> Result<String, OperationError> {
        let key = (project_id.to_owned(), name.to_owned());
        if let Some(id) = self.resolved.lock().await.get(&key) {
            return Ok(id.clone());
        }
        let id = find_log_stream(client, project_id, name)
            .await
            .map_err(|e| unresolved(e.to_string()))?
            .ok_or_else(|| {
                unresolved(format!(
                    "log stream `{name}`, which this apply was to create, does not exist"
                ))
            })?;
        self.resolved.lock().await.insert(key, id.clone());
        Ok(id)
    }
}

impl Pending {
    /// The id of the default dashboard of the log stream `name` (created by
    /// this apply) of the project `project_id`.
    async fn default_dashboard(
        &self,
        client: &Client,
        project_id: &str,
        name: &str,
    ) -> Result<String, OperationError> {
        let key = (format!("{project_id}/{DEFAULT_DASHBOARD}"), name.to_owned());
        if let Some(id) = self.resolved.lock().await.get(&key) {
            return Ok(id.clone());
        }
        let log_stream_id = self.log_stream(client, project_id, name).await?;
        let dashboard = client
            .get_dashboard(project_id, &log_stream_id, None)
            .await
            .map_err(|e| unresolved(e.to_string()))?
            .ok_or_else(|| {
                unresolved(format!(
                    "the default dashboard of log stream `{name}`, which this apply created, does not exist"
                ))
            })?;
        self.resolved.lock().await.insert(key, dashboard.id.clone());
        Ok(dashboard.id)
    }
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

fn unresolved(what: String) -> OperationError {
    OperationError::Unresolved { what }
}

impl Pending {
    /// `change` with the pending ids of its operations resolved, or the
    /// change as it is and why one could not be.
    pub async fn resolve_change<'c>(
        &self,
        client: &Client,
        change: std::borrow::Cow<'c, crate::plan::ResourceChange>,
    ) -> (
        std::borrow::Cow<'c, crate::plan::ResourceChange>,
        Option<OperationError>,
    ) {
        let mut resolved = Vec::new();
        for (index, op) in change.operations.iter().enumerate() {
            match self.resolve(client, op).await {
                Ok(Some(op)) => resolved.push((index, op)),
                Ok(None) => {}
                Err(error) => return (change, Some(error)),
            }
        }
        if resolved.is_empty() {
            return (change, None);
        }
        let mut change = change.into_owned();
        for (index, op) in resolved {
            change.operations[index] = op;
        }
        (std::borrow::Cow::Owned(change), None)
    }
}

/// Whether an operation of `change` names a pending object by id (the
/// object does not exist before the apply; the readers by id skip it).
pub fn mentions(change: &crate::plan::ResourceChange) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(map) => map.iter().any(|(k, v)| match v {
                serde_json::Value::String(s) => (k == "id" || k.ends_with("_id")) && is_pending(s),
                other => walk(other),
            }),
            serde_json::Value::Array(items) => items.iter().any(walk),
            _ => false,
        }
    }
    change
        .operations
        .iter()
        .any(|op| serde_json::to_value(op).is_ok_and(|v| walk(&v)))
}

/// Each of `changes` with its pending ids resolved, where it has any and
/// they resolve (`None` otherwise): how a saved plan's changes are read back
/// after it was applied.
pub async fn resolve_all(
    client: &Client,
    changes: &[&crate::plan::ResourceChange],
) -> Vec<Option<crate::plan::ResourceChange>> {
    let pending = Pending::new(true);
    let mut out = Vec::with_capacity(changes.len());
    for change in changes {
        if !mentions(change) {
            out.push(None);
            continue;
        }
        out.push(
            match pending
                .resolve_change(client, std::borrow::Cow::Borrowed(*change))
                .await
            {
                (resolved, None) => Some(resolved.into_owned()),
                (_, Some(_)) => None,
            },
        );
    }
    out
}
