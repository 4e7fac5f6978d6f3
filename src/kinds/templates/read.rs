//! Reading a project's annotation or feedback templates, reduced as they
//! arrive (`crate::state::templates`).

use crate::client::{ApiError, Client};
use crate::kinds::templates::TemplateKind;
use crate::kinds::templates::TemplateState;
use crate::kinds::templates::{AnnotationConstraints, FeedbackConstraints};
use crate::reconcile::ReadError;
use crate::reconcile::read::error::ctx;

/// A project's annotation and feedback templates, each when read.
type Listed = (
    Option<Vec<TemplateState<AnnotationConstraints>>>,
    Option<Vec<TemplateState<FeedbackConstraints>>>,
);

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

/// Reads the annotation and feedback templates of a project that `wanted`
/// selects (`pending`: the plan creates the project, so it holds none).
pub(crate) async fn read_selected(
    client: &Client,
    wanted: &crate::reconcile::read::selection::ProjectSelection,
    project_id: &str,
    project_name: &str,
    pending: bool,
) -> Result<Listed, ReadError> {
    let annotation = async {
        if !wanted.annotation_templates {
            return Ok(None);
        }
        if pending {
            return Ok(Some(Vec::new()));
        }
        read_annotation_templates(client, project_id)
            .await
            .map(Some)
            .map_err(ctx(|| {
                format!("the annotation templates of project `{project_name}`")
            }))
    };
    let feedback = async {
        if !wanted.feedback_templates {
            return Ok(None);
        }
        if pending {
            return Ok(Some(Vec::new()));
        }
        read_feedback_templates(client, project_id)
            .await
            .map(Some)
            .map_err(ctx(|| {
                format!("the feedback templates of project `{project_name}`")
            }))
    };
    tokio::try_join!(annotation, feedback)
}

/// Reads all annotation and feedback templates of a project, for an export.
pub(crate) async fn read_all(
    client: &Client,
    project_id: &str,
    project_name: &str,
) -> Result<
    (
        Vec<TemplateState<AnnotationConstraints>>,
        Vec<TemplateState<FeedbackConstraints>>,
    ),
    ReadError,
> {
    let name = crate::scrub::escape_controls(project_name);
    tokio::try_join!(
        async {
            read_annotation_templates(client, project_id)
                .await
                .map_err(ctx(|| {
                    format!("the annotation templates of project `{name}`")
                }))
        },
        async {
            read_feedback_templates(client, project_id)
                .await
                .map_err(ctx(|| {
                    format!("the feedback templates of project `{name}`")
                }))
        },
    )
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
