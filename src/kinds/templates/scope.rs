//! A project's templates of one kind as the scope their names are unique
//! in, for apply's create machinery (`crate::reconcile::apply::create`: a
//! read of the scope before each create and one after it, and the
//! first-created copy of a name kept): how the scope is read (in keeper
//! order), how a template is created in it, and how this run's own copy is
//! deleted.

use super::TemplateState;
use super::address::TemplateKind;
use super::live::keeper_order;
use super::ops::{TemplateBody, TemplateOp};
use super::read::{read_annotation_templates, read_feedback_templates};
use crate::client::{ApiError, Client};

/// A project's templates of one kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateScope {
    /// Project id.
    pub project_id: String,
    /// Annotation or feedback.
    pub kind: TemplateKind,
}

impl TemplateScope {
    /// The scope `op` creates a template in (`None`: not a create).
    pub fn of_create(op: &TemplateOp) -> Option<TemplateScope> {
        match op {
            TemplateOp::CreateTemplate { project_id, body } => Some(TemplateScope {
                project_id: project_id.clone(),
                kind: body.kind(),
            }),
            _ => None,
        }
    }

    /// The scope `op` deletes a template of, and the template's id (`None`:
    /// not a delete).
    pub fn of_delete(op: &TemplateOp) -> Option<(TemplateScope, &str)> {
        match op {
            TemplateOp::DeleteTemplate {
                project_id,
                kind,
                template_id,
            } => Some((
                TemplateScope {
                    project_id: project_id.clone(),
                    kind: *kind,
                },
                template_id,
            )),
            _ => None,
        }
    }

    /// What the scope is, for an error.
    pub fn describe(&self) -> String {
        format!(
            "the {} templates of project {}",
            self.kind.as_str(),
            self.project_id
        )
    }

    /// The templates of the scope as `(name, id)`, in keeper order.
    pub async fn members(&self, client: &Client) -> Result<Vec<(String, String)>, ApiError> {
        fn named<C>(mut list: Vec<TemplateState<C>>) -> Vec<(String, String)> {
            list.sort_by(keeper_order);
            list.into_iter().map(|t| (t.name, t.id)).collect()
        }
        Ok(match self.kind {
            TemplateKind::Annotation => {
                named(read_annotation_templates(client, &self.project_id).await?)
            }
            TemplateKind::Feedback => {
                named(read_feedback_templates(client, &self.project_id).await?)
            }
        })
    }

    /// Sends the create `op` (`None`: `op` is not a template's create); the
    /// new template's id.
    pub async fn create(
        &self,
        client: &Client,
        op: &TemplateOp,
    ) -> Option<Result<String, ApiError>> {
        let TemplateOp::CreateTemplate { project_id, body } = op else {
            return None;
        };
        Some(match body {
            TemplateBody::Annotation(b) => client
                .create_annotation_template(project_id, b)
                .await
                .map(|t| t.id),
            TemplateBody::Feedback(b) => client
                .create_feedback_template(project_id, b)
                .await
                .map(|t| t.id),
        })
    }

    /// Deletes the template `id` of the scope.
    pub async fn delete(&self, client: &Client, id: &str) -> Result<(), ApiError> {
        match self.kind {
            TemplateKind::Annotation => client
                .delete_annotation_template(&self.project_id, id)
                .await
                .map(drop),
            TemplateKind::Feedback => client
                .delete_feedback_template(&self.project_id, id)
                .await
                .map(drop),
        }
    }
}

impl TemplateOp {
    /// The name a create gives its template (`None`: not a create).
    pub fn created_name(&self) -> Option<&str> {
        match self {
            TemplateOp::CreateTemplate { body, .. } => Some(body.name()),
            _ => None,
        }
    }
}
