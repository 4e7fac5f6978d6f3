//! The operations on projects and log streams, as a plan holds them and as
//! apply sends them: a project's create, change (name, description, labels)
//! and delete; a log stream's create, rename and delete.
//!
//! The creates are not idempotent: a lost answer (a 5xx, a dropped
//! connection, a timeout) may hide one that landed. They are settled as
//! apply settles every create (`crate::reconcile::apply::create`), with its
//! bound and its errors: a fresh read by name just before sending (one that
//! exists is not made again); after a lost answer, a read by name: present,
//! it was made once; absent, it is sent again (at most `MAX_SENDS` in all),
//! unless the request may still be in the service (the client timed out),
//! which is reported as failed for the next apply to re-read. A create
//! refused as a duplicate (409: another apply made it since the read; the
//! service keeps names unique) is done when a read finds it. So two applies
//! at once make one project.

use serde::{Deserialize, Serialize};

use super::pending::{find_log_stream, find_project};
use super::wire::{LogStreamUpdate, ProjectCreate, ProjectUpdate};
use crate::client::Client;
use crate::reconcile::apply::OperationError;
use crate::reconcile::apply::create::settle_create;

/// One API call on a project or log stream. Ids may be pending (the object
/// is created by the same apply: `super::pending`); bodies are what is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ProjectOp {
    /// POST a project.
    CreateProject {
        /// The body.
        body: ProjectCreate,
        /// What the create cannot set (description, labels), sent once the
        /// project exists.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        then: Option<ProjectUpdate>,
    },
    /// PUT a project's name, description or labels.
    UpdateProject {
        /// Project id.
        project_id: String,
        /// The body.
        body: ProjectUpdate,
    },
    /// DELETE a project with everything in it.
    DeleteProject {
        /// Project id.
        project_id: String,
    },
    /// POST a log stream.
    CreateLogStream {
        /// Project id.
        project_id: String,
        /// Its name.
        name: String,
    },
    /// PUT a log stream's name.
    RenameLogStream {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The body.
        body: LogStreamUpdate,
    },
    /// DELETE a log stream with its traces.
    DeleteLogStream {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
    },
}

const PROJECT: &str = "project";
const LOG_STREAM: &str = "log stream";

impl ProjectOp {
    /// Sends the operation: a PUT or DELETE once (the client retries it as
    /// its policy allows), a create settled as the module says;
    /// `Ok(Some(note))` when it succeeded in a way worth saying.
    pub async fn send(&self, client: &Client) -> Result<Option<String>, OperationError> {
        match self {
            ProjectOp::CreateProject { body, then } => {
                let find = || async {
                    find_project(client, &body.name)
                        .await
                        .map(|found| found.is_some())
                };
                let note = settle_create(PROJECT, find, std::convert::identity, || async {
                    client.create_project(body).await
                })
                .await?;
                if let Some(update) = then {
                    let found = find_project(client, &body.name)
                        .await
                        .map_err(|e| OperationError::Unresolved {
                            what: e.to_string(),
                        })?
                        .ok_or_else(|| OperationError::Unresolved {
                            what: format!(
                                "project `{}`, created by this apply, was not found to set its description and labels",
                                body.name
                            ),
                        })?;
                    client.update_project(&found.id, update).await?;
                }
                Ok(note)
            }
            ProjectOp::CreateLogStream { project_id, name } => {
                let find = || async {
                    find_log_stream(client, project_id, name)
                        .await
                        .map(|found| found.is_some())
                };
                settle_create(LOG_STREAM, find, std::convert::identity, || async {
                    client.create_log_stream(project_id, name).await.map(drop)
                })
                .await
            }
            ProjectOp::UpdateProject { project_id, body } => {
                client.update_project(project_id, body).await?;
                Ok(None)
            }
            ProjectOp::RenameLogStream {
                project_id,
                log_stream_id,
                body,
            } => {
                client
                    .update_log_stream(project_id, log_stream_id, body)
                    .await?;
                Ok(None)
            }
            ProjectOp::DeleteProject { project_id } => {
                Ok(client.delete_project(project_id).await?.note())
            }
            ProjectOp::DeleteLogStream {
                project_id,
                log_stream_id,
            } => Ok(client
                .delete_log_stream(project_id, log_stream_id)
                .await?
                .note()),
        }
    }
}

impl ProjectOp {
    /// Whether the operation deletes a project or a log stream (and their
    /// traces).
    pub fn destroys(&self) -> bool {
        matches!(
            self,
            ProjectOp::DeleteProject { .. } | ProjectOp::DeleteLogStream { .. }
        )
    }
}
