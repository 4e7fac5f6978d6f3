//! A template's operations, as a plan holds them and as apply sends them:
//! a create (through apply's create machinery, which settles a lost answer
//! by reading), a PATCH of its name and criteria, a DELETE.

use serde::{Deserialize, Serialize};

use super::address::TemplateKind;
use super::{AnnotationConstraints, FeedbackConstraints, TemplateCreate, TemplateUpdate};
use crate::client::{ApiError, Client};

/// The body of a template create, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TemplateBody {
    /// Annotation template.
    Annotation(TemplateCreate<AnnotationConstraints>),
    /// Feedback template.
    Feedback(TemplateCreate<FeedbackConstraints>),
}

impl TemplateBody {
    /// Annotation or feedback.
    pub fn kind(&self) -> TemplateKind {
        match self {
            TemplateBody::Annotation(_) => TemplateKind::Annotation,
            TemplateBody::Feedback(_) => TemplateKind::Feedback,
        }
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        match self {
            TemplateBody::Annotation(t) => &t.name,
            TemplateBody::Feedback(t) => &t.name,
        }
    }
}

/// One API call on a template. Ids are resolved; bodies are what is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum TemplateOp {
    /// POST a template.
    CreateTemplate {
        /// Project id.
        project_id: String,
        /// The body (its kind says which endpoint).
        body: TemplateBody,
    },
    /// PATCH a template's name and criteria.
    PatchTemplate {
        /// Project id.
        project_id: String,
        /// Annotation or feedback.
        kind: TemplateKind,
        /// Template id.
        template_id: String,
        /// The body.
        body: TemplateUpdate,
    },
    /// DELETE a template.
    DeleteTemplate {
        /// Project id.
        project_id: String,
        /// Annotation or feedback.
        kind: TemplateKind,
        /// Template id.
        template_id: String,
    },
}

impl TemplateOp {
    /// The id of the live template it acts on (`None` for a create).
    pub fn template_id(&self) -> Option<&str> {
        match self {
            TemplateOp::PatchTemplate { template_id, .. }
            | TemplateOp::DeleteTemplate { template_id, .. } => Some(template_id),
            TemplateOp::CreateTemplate { .. } => None,
        }
    }

    /// The project it is in, by id.
    pub fn project_id(&self) -> &str {
        match self {
            TemplateOp::CreateTemplate { project_id, .. }
            | TemplateOp::PatchTemplate { project_id, .. }
            | TemplateOp::DeleteTemplate { project_id, .. } => project_id,
        }
    }

    /// Sends a PATCH or a DELETE once (the client retries it as its policy
    /// allows); `Ok(Some(note))` when it succeeded in a way worth saying. A
    /// create is not sent here (`None`): apply's create machinery sends it.
    pub async fn send_idempotent(&self, client: &Client) -> Result<Option<String>, ApiError> {
        Ok(match self {
            TemplateOp::PatchTemplate {
                project_id,
                kind,
                template_id,
                body,
            } => {
                match kind {
                    TemplateKind::Annotation => client
                        .update_annotation_template(project_id, template_id, body)
                        .await
                        .map(drop)?,
                    TemplateKind::Feedback => client
                        .update_feedback_template(project_id, template_id, body)
                        .await
                        .map(drop)?,
                };
                None
            }
            TemplateOp::DeleteTemplate {
                project_id,
                kind,
                template_id,
            } => {
                let deleted = match kind {
                    TemplateKind::Annotation => {
                        client
                            .delete_annotation_template(project_id, template_id)
                            .await?
                    }
                    TemplateKind::Feedback => {
                        client
                            .delete_feedback_template(project_id, template_id)
                            .await?
                    }
                };
                deleted.note()
            }
            TemplateOp::CreateTemplate { .. } => None,
        })
    }
}
