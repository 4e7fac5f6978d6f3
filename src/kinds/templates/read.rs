//! Reading a project's annotation or feedback templates, reduced as they
//! arrive (`crate::state::templates`).

use crate::client::{ApiError, Client};
use crate::kinds::templates::TemplateKind;
use crate::kinds::templates::TemplateState;
use crate::kinds::templates::{AnnotationConstraints, FeedbackConstraints};

/// The annotation templates of a project.
pub async fn read_annotation_templates(
    client: &Client,
    project_id: &str,
) -> Result<Vec<TemplateState<AnnotationConstraints>>, ApiError> {
    Ok(client
        .list_annotation_templates(project_id)
        .await?
        .into_iter()
        .map(TemplateState::from)
        .collect())
}

/// The feedback templates of a project (the service's only listing of them
/// is deprecated, spec operation 7).
pub async fn read_feedback_templates(
    client: &Client,
    project_id: &str,
) -> Result<Vec<TemplateState<FeedbackConstraints>>, ApiError> {
    Ok(client
        .list_feedback_templates(project_id)
        .await?
        .into_iter()
        .map(TemplateState::from)
        .collect())
}

/// Selects the annotation and feedback templates of a project whose `spec`
/// declares some, each when `options` reach them.
pub(crate) fn select(
    project: &str,
    spec: &crate::manifest::types::ProjectSpec,
    options: &crate::plan::PlanOptions,
    wanted: &mut crate::reconcile::read::selection::ProjectSelection,
) {
    wanted.annotation_templates = spec.annotation_templates.is_some()
        && options.reaches(&TemplateKind::Annotation.scope(project));
    wanted.feedback_templates = spec.feedback_templates.is_some()
        && options.reaches(&TemplateKind::Feedback.scope(project));
}
