//! Annotation templates (spec operation 8 and list/create/patch/delete) and
//! feedback templates (spec operation 7, deprecated, and the rest). Creates are
//! not retried blindly: an uncertain outcome is [`ApiError::Ambiguous`].

use crate::client::operation::{
    CREATE_ANNOTATION_TEMPLATE, CREATE_FEEDBACK_TEMPLATE, DELETE_ANNOTATION_TEMPLATE,
    DELETE_FEEDBACK_TEMPLATE, GET_ANNOTATION_TEMPLATE, GET_FEEDBACK_TEMPLATE,
    LIST_ANNOTATION_TEMPLATES, LIST_FEEDBACK_TEMPLATES, PATCH_ANNOTATION_TEMPLATE,
    PATCH_FEEDBACK_TEMPLATE,
};
use crate::client::transport::Call;
use crate::client::{ApiError, Client, Deleted};
use crate::kinds::templates::{
    AnnotationConstraints, AnnotationTemplate, FeedbackConstraints, FeedbackTemplate,
    TemplateCreate, TemplateUpdate,
};

impl Client {
    /// The annotation templates of a project.
    pub async fn list_annotation_templates(
        &self,
        project_id: &str,
    ) -> Result<Vec<AnnotationTemplate>, ApiError> {
        self.fetch(Call::new(&LIST_ANNOTATION_TEMPLATES, &[project_id]))
            .await
    }

    /// Creates an annotation template.
    pub async fn create_annotation_template(
        &self,
        project_id: &str,
        request: &TemplateCreate<AnnotationConstraints>,
    ) -> Result<AnnotationTemplate, ApiError> {
        self.fetch(Call::new(&CREATE_ANNOTATION_TEMPLATE, &[project_id]).json(request)?)
            .await
    }

    /// Spec operation 8: GET an annotation template; `None` when it does not exist.
    pub async fn get_annotation_template(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<Option<AnnotationTemplate>, ApiError> {
        self.fetch_opt(Call::new(
            &GET_ANNOTATION_TEMPLATE,
            &[project_id, template_id],
        ))
        .await
    }

    /// Updates an annotation template's name and criteria.
    pub async fn update_annotation_template(
        &self,
        project_id: &str,
        template_id: &str,
        request: &TemplateUpdate,
    ) -> Result<AnnotationTemplate, ApiError> {
        self.fetch(Call::new(&PATCH_ANNOTATION_TEMPLATE, &[project_id, template_id]).json(request)?)
            .await
    }

    /// Deletes an annotation template; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_annotation_template(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(
            &DELETE_ANNOTATION_TEMPLATE,
            &[project_id, template_id],
        ))
        .await
    }

    /// Spec operation 7 (deprecated): the feedback templates of a project.
    pub async fn list_feedback_templates(
        &self,
        project_id: &str,
    ) -> Result<Vec<FeedbackTemplate>, ApiError> {
        self.fetch(Call::new(&LIST_FEEDBACK_TEMPLATES, &[project_id]))
            .await
    }

    /// Creates a feedback template.
    pub async fn create_feedback_template(
        &self,
        project_id: &str,
        request: &TemplateCreate<FeedbackConstraints>,
    ) -> Result<FeedbackTemplate, ApiError> {
        self.fetch(Call::new(&CREATE_FEEDBACK_TEMPLATE, &[project_id]).json(request)?)
            .await
    }

    /// GET a feedback template; `None` when it does not exist.
    pub async fn get_feedback_template(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<Option<FeedbackTemplate>, ApiError> {
        self.fetch_opt(Call::new(
            &GET_FEEDBACK_TEMPLATE,
            &[project_id, template_id],
        ))
        .await
    }

    /// Updates a feedback template's name and criteria.
    pub async fn update_feedback_template(
        &self,
        project_id: &str,
        template_id: &str,
        request: &TemplateUpdate,
    ) -> Result<FeedbackTemplate, ApiError> {
        self.fetch(Call::new(&PATCH_FEEDBACK_TEMPLATE, &[project_id, template_id]).json(request)?)
            .await
    }

    /// Deletes a feedback template; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_feedback_template(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(
            &DELETE_FEEDBACK_TEMPLATE,
            &[project_id, template_id],
        ))
        .await
    }
}
