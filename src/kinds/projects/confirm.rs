//! How a saved plan's project and log stream changes are read back (before
//! it is applied, to see that nothing moved; after, to confirm): the kind
//! names the read ([`key`]), makes it ([`fetch`]) and says what it found
//! ([`observe`]), as `crate::reconcile::read::touched` asks. A create is
//! read by its name, a rename or delete by its id.

use serde::Serialize;

use super::ops::ProjectOp;
use crate::client::{ApiError, Client};
use crate::plan::{Address, Operation, ResourceChange};

/// The read that holds a change's project or log stream.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// A project, by name.
    ProjectNamed(String),
    /// A project, by id.
    Project(String),
    /// A log stream of a project (by id), by name.
    LogStreamNamed(String, String),
    /// A log stream of a project (by id), by id.
    LogStream(String, String),
}

/// The read of `change`, when it is a project's or log stream's.
pub fn key(change: &ResourceChange) -> Option<Key> {
    if !matches!(change.address, Address::Project(_) | Address::LogStream(_)) {
        return None;
    }
    Some(match change.operations.first()? {
        Operation::Project(op) => match op {
            ProjectOp::CreateProject { body } => Key::ProjectNamed(body.name.clone()),
            ProjectOp::UpdateProject { project_id, .. }
            | ProjectOp::DeleteProject { project_id } => Key::Project(project_id.clone()),
            ProjectOp::CreateLogStream { project_id, name } => {
                Key::LogStreamNamed(project_id.clone(), name.clone())
            }
            ProjectOp::RenameLogStream {
                project_id,
                log_stream_id,
                ..
            }
            | ProjectOp::DeleteLogStream {
                project_id,
                log_stream_id,
            } => Key::LogStream(project_id.clone(), log_stream_id.clone()),
        },
        _ => return None,
    })
}

/// The name of what `key` names (`None`: it does not exist).
pub async fn fetch(client: &Client, key: &Key) -> Result<Option<String>, ApiError> {
    Ok(match key {
        Key::ProjectNamed(name) => client.find_project_by_name(name).await?.map(|p| p.name),
        Key::Project(id) => client.get_project(id).await?.and_then(|p| p.name),
        Key::LogStreamNamed(project_id, name) => client
            .find_log_stream_by_name(project_id, name)
            .await?
            .map(|l| l.name),
        Key::LogStream(project_id, id) => {
            client.get_log_stream(project_id, id).await?.map(|l| l.name)
        }
    })
}

#[derive(Serialize)]
struct Named<'a> {
    name: &'a str,
}

/// Its fingerprint (as the planner made it) and comparable form.
pub fn observe(name: Option<&str>) -> (String, Option<serde_json::Value>) {
    let named = name.map(|name| Named { name });
    (
        crate::plan::fingerprint::of(named.as_ref()),
        name.map(|n| serde_json::json!({ "name": n })),
    )
}
