//! A prompt template's operations, as a plan holds them and as apply sends
//! them: a template's create (with its first version), a version's create,
//! the selection of a version, a delete.
//!
//! The two creates are not idempotent: a lost answer (a 5xx, a dropped
//! connection, a timeout) may hide one that landed. They are settled the
//! way apply settles every create (`crate::reconcile::apply::create`), with
//! its bound and its errors: a fresh read just before sending (a template
//! of that name, or a latest version already holding this content, is not
//! made again); after a lost answer, a read: present, it was made once;
//! absent, it is sent again (at most `MAX_SENDS` in all), unless the
//! request may still be in the service (the client timed out), which is
//! reported as failed for the next apply to re-read. A template's create
//! refused as a duplicate (409: another run made it since the read) is done
//! when a read finds it. So one change never makes two versions in one
//! apply. Two applies racing on one change can still each add a version:
//! the service has no way to make a version's create conditional, and
//! versions cannot be deleted.

use serde::{Deserialize, Serialize};

use super::live::PromptTemplateState;
use super::normalize::holds;
use super::read::read_prompt_templates;
use super::wire::{PromptTemplateCreate, PromptVersionCreate};
use crate::client::Client;
use crate::reconcile::apply::OperationError;
use crate::reconcile::apply::create::settle_described as settled;

/// One API call on a prompt template. Ids are resolved; bodies are what is
/// sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PromptTemplateOp {
    /// POST a template with its first version.
    CreatePromptTemplate {
        /// Project id (absent: a global template).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project_id: Option<String>,
        /// The body.
        body: PromptTemplateCreate,
    },
    /// POST a new version (the service selects it).
    CreatePromptVersion {
        /// Project id (absent: a global template).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project_id: Option<String>,
        /// Template id.
        template_id: String,
        /// The latest version when the plan was made.
        base_version: u32,
        /// The body.
        body: PromptVersionCreate,
    },
    /// PUT the selected version.
    SelectPromptVersion {
        /// Project id (absent: a global template).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project_id: Option<String>,
        /// Template id.
        template_id: String,
        /// The version to select.
        version: u32,
    },
    /// DELETE a template and its versions.
    DeletePromptTemplate {
        /// Project id (absent: a global template).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        project_id: Option<String>,
        /// Template id.
        template_id: String,
    },
}

const TEMPLATE: &str = "prompt template";
const VERSION: &str = "prompt template version";

impl PromptTemplateOp {
    /// The id of the live template it acts on (`None` for a template's create).
    pub fn template_id(&self) -> Option<&str> {
        match self {
            PromptTemplateOp::CreatePromptVersion { template_id, .. }
            | PromptTemplateOp::SelectPromptVersion { template_id, .. }
            | PromptTemplateOp::DeletePromptTemplate { template_id, .. } => Some(template_id),
            PromptTemplateOp::CreatePromptTemplate { .. } => None,
        }
    }

    /// The project it is in, by id (`None`: a global template).
    pub fn project_id(&self) -> Option<&str> {
        match self {
            PromptTemplateOp::CreatePromptTemplate { project_id, .. }
            | PromptTemplateOp::CreatePromptVersion { project_id, .. }
            | PromptTemplateOp::SelectPromptVersion { project_id, .. }
            | PromptTemplateOp::DeletePromptTemplate { project_id, .. } => project_id.as_deref(),
        }
    }

    /// Sends the operation: a PUT or DELETE once (the client retries it as
    /// its policy allows), a create settled as the module says;
    /// `Ok(Some(note))` when it succeeded in a way worth saying.
    pub async fn send(&self, client: &Client) -> Result<Option<String>, OperationError> {
        match self {
            PromptTemplateOp::CreatePromptTemplate { project_id, body } => {
                let find = || async {
                    read_prompt_templates(client, project_id.as_deref())
                        .await
                        .map(|all| all.into_iter().any(|t| t.name == body.name))
                };
                let describe = || format!("the prompt templates named `{}`", body.name);
                settled(TEMPLATE, find, describe, || async {
                    client
                        .create_prompt_template(project_id.as_deref(), body)
                        .await
                        .map(drop)
                })
                .await
            }
            PromptTemplateOp::CreatePromptVersion {
                project_id,
                template_id,
                base_version,
                body,
            } => {
                // Landed: the template's latest version is newer than the
                // plan's and holds this content.
                let find = || async {
                    read_prompt_templates(client, project_id.as_deref())
                        .await
                        .map(|all| {
                            all.iter().any(|t: &PromptTemplateState| {
                                &t.id == template_id
                                    && t.latest.version > *base_version
                                    && holds(&t.latest, &body.template, &body.settings)
                            })
                        })
                };
                let describe = || "the prompt template's latest version".to_owned();
                settled(VERSION, find, describe, || async {
                    client
                        .create_prompt_version(project_id.as_deref(), template_id, body)
                        .await
                        .map(drop)
                })
                .await
            }
            PromptTemplateOp::SelectPromptVersion {
                project_id,
                template_id,
                version,
            } => {
                client
                    .select_prompt_version(project_id.as_deref(), template_id, *version)
                    .await?;
                Ok(None)
            }
            PromptTemplateOp::DeletePromptTemplate {
                project_id,
                template_id,
            } => {
                let deleted = client
                    .delete_prompt_template(project_id.as_deref(), template_id)
                    .await?;
                Ok(deleted.note())
            }
        }
    }
}
