//! The client's calls for a project's prompt templates. A template's create
//! and a version's create are not retried blindly: an uncertain outcome is
//! [`ApiError::Ambiguous`], which [`super::ops`] settles by reading.

use reqwest::Method;

use super::wire::{
    PromptTemplateCreate, PromptTemplateWire, PromptVersionCreate, PromptVersionWire,
};
use crate::client::operation::{Operation, Retry};
use crate::client::transport::Call;
use crate::client::{ApiError, Client, Deleted};

/// List a project's prompt templates.
pub static LIST_PROMPT_TEMPLATES: Operation = Operation {
    name: "list_project_prompt_templates",
    method: Method::GET,
    path: "/v2/projects/{project_id}/templates",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Create a project's prompt template with its first version.
pub static CREATE_PROMPT_TEMPLATE: Operation = Operation {
    name: "create_project_prompt_template",
    method: Method::POST,
    path: "/v2/projects/{project_id}/templates",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Get one version of a project's prompt template.
pub static GET_PROMPT_VERSION: Operation = Operation {
    name: "get_project_prompt_template_version",
    method: Method::GET,
    path: "/v2/projects/{project_id}/templates/{template_id}/versions/{version}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Create a new version of a project's prompt template (it becomes the
/// selected one).
pub static CREATE_PROMPT_VERSION: Operation = Operation {
    name: "create_project_prompt_template_version",
    method: Method::POST,
    path: "/v2/projects/{project_id}/templates/{template_id}/versions",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Select a version of a project's prompt template.
pub static SELECT_PROMPT_VERSION: Operation = Operation {
    name: "select_project_prompt_template_version",
    method: Method::PUT,
    path: "/v2/projects/{project_id}/templates/{template_id}/versions/{version}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Delete a project's prompt template.
pub static DELETE_PROMPT_TEMPLATE: Operation = Operation {
    name: "delete_project_prompt_template",
    method: Method::DELETE,
    path: "/v2/projects/{project_id}/templates/{template_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

impl Client {
    /// The prompt templates of a project.
    pub async fn list_prompt_templates(
        &self,
        project_id: &str,
    ) -> Result<Vec<PromptTemplateWire>, ApiError> {
        self.fetch(Call::new(&LIST_PROMPT_TEMPLATES, &[project_id]))
            .await
    }

    /// One version of a prompt template; `None` when there is no such version.
    pub async fn get_prompt_version(
        &self,
        project_id: &str,
        template_id: &str,
        version: u32,
    ) -> Result<Option<PromptVersionWire>, ApiError> {
        let version = version.to_string();
        self.fetch_opt(Call::new(
            &GET_PROMPT_VERSION,
            &[project_id, template_id, &version],
        ))
        .await
    }

    /// Creates a prompt template with its first version.
    pub async fn create_prompt_template(
        &self,
        project_id: &str,
        body: &PromptTemplateCreate,
    ) -> Result<PromptTemplateWire, ApiError> {
        self.fetch(Call::new(&CREATE_PROMPT_TEMPLATE, &[project_id]).json(body)?)
            .await
    }

    /// Appends a version to a prompt template.
    pub async fn create_prompt_version(
        &self,
        project_id: &str,
        template_id: &str,
        body: &PromptVersionCreate,
    ) -> Result<PromptVersionWire, ApiError> {
        self.fetch(Call::new(&CREATE_PROMPT_VERSION, &[project_id, template_id]).json(body)?)
            .await
    }

    /// Selects version `version` of a prompt template.
    pub async fn select_prompt_version(
        &self,
        project_id: &str,
        template_id: &str,
        version: u32,
    ) -> Result<PromptTemplateWire, ApiError> {
        let version = version.to_string();
        self.fetch(Call::new(
            &SELECT_PROMPT_VERSION,
            &[project_id, template_id, &version],
        ))
        .await
    }

    /// Deletes a prompt template; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_prompt_template(
        &self,
        project_id: &str,
        template_id: &str,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(
            &DELETE_PROMPT_TEMPLATE,
            &[project_id, template_id],
        ))
        .await
    }
}
