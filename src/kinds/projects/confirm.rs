//! How a saved plan's project and log stream changes are read back (before
//! it is applied, to see that nothing moved; after, to confirm): the kind
//! names the read ([`key`]), makes it ([`fetch`]) and says what it found
//! ([`observe`]), as `crate::reconcile::read::touched` asks. A create is
//! read by its name, a rename or delete by its id.

use super::ops::ProjectOp;
use super::plan::ProjectView;
use super::read::ProjectMeta;
use crate::client::{ApiError, Client};
use crate::kinds::KindOp;
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
        Operation::Kind(KindOp::Project(op)) => match op {
            ProjectOp::CreateProject { body, .. } => Key::ProjectNamed(body.name.clone()),
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

/// A project or log stream as read back: its name, and a project's
/// description and labels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Name.
    pub name: String,
    /// A project's description and labels.
    pub meta: ProjectMeta,
}

/// What `key` names (`None`: it does not exist).
pub async fn fetch(client: &Client, key: &Key) -> Result<Option<Seen>, ApiError> {
    Ok(match key {
        Key::ProjectNamed(name) => client.find_project_by_name(name).await?.map(|p| Seen {
            meta: ProjectMeta::of_item(&p),
            name: p.name,
        }),
        Key::Project(id) => client.get_project(id).await?.map(|p| Seen {
            name: p.name.unwrap_or_default(),
            meta: ProjectMeta {
                description: p.description,
                labels: p.labels,
            },
        }),
        Key::LogStreamNamed(project_id, name) => client
            .find_log_stream_by_name(project_id, name)
            .await?
            .map(|l| Seen {
                name: l.name,
                meta: ProjectMeta::default(),
            }),
        Key::LogStream(project_id, id) => {
            client.get_log_stream(project_id, id).await?.map(|l| Seen {
                name: l.name,
                meta: ProjectMeta::default(),
            })
        }
    })
}

/// The top-level fields `change` shows (a create's or delete's whole
/// object, an update's paths).
fn shown(change: &ResourceChange) -> Vec<String> {
    let mut out = Vec::new();
    for field in &change.fields {
        let top = field.path.to_string();
        let top = top.trim_start_matches('/');
        if top.is_empty() {
            for value in [field.before_value(), field.after_value()]
                .into_iter()
                .flatten()
            {
                if let serde_json::Value::Object(map) = value {
                    out.extend(map.keys().cloned());
                }
            }
        } else {
            out.push(top.split(['/', '.', '[']).next().unwrap_or(top).to_owned());
        }
    }
    out
}

/// Its fingerprint (as the planner made it: the name, with the
/// description and labels where `change` shows them) and comparable form.
pub fn observe(
    change: &ResourceChange,
    seen: Option<&Seen>,
) -> (String, Option<serde_json::Value>) {
    let Some(seen) = seen else {
        return (crate::plan::fingerprint::of::<ProjectView<'_>>(None), None);
    };
    let shown = shown(change);
    let has = |field: &str| shown.iter().any(|s| s == field);
    let mut labels: Vec<&str> = seen.meta.labels.iter().map(String::as_str).collect();
    labels.sort_unstable();
    labels.dedup();
    let view = ProjectView {
        name: &seen.name,
        description: has("description")
            .then(|| seen.meta.description.as_deref().unwrap_or_default()),
        labels: has("labels").then_some(labels),
    };
    (
        crate::plan::fingerprint::of(Some(&view)),
        serde_json::to_value(&view).ok(),
    )
}
