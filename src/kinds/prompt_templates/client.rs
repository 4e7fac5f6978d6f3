//! The client's calls for prompt templates, of a project
//! (`/v2/projects/{project_id}/templates…`) or global (`/v2/templates…`):
//! each call takes the scope, `Some(project_id)` or `None` (global). A
//! template's create and a version's create are not retried blindly: an
//! uncertain outcome is [`ApiError::Ambiguous`], which [`super::ops`]
//! settles by reading.

use reqwest::Method;

use super::wire::{
    GlobalTemplatePage, PromptTemplateCreate, PromptTemplateWire, PromptVersionCreate,
    PromptVersionWire,
};
use crate::client::operation::{Operation, Retry};
use crate::client::paginate;
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

/// List the global prompt templates, a page at a time.
pub static LIST_GLOBAL_PROMPT_TEMPLATES: Operation = Operation {
    name: "query_global_prompt_templates",
    method: Method::POST,
    path: "/v2/templates/query",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Create a global prompt template with its first version.
pub static CREATE_GLOBAL_PROMPT_TEMPLATE: Operation = Operation {
    name: "create_global_prompt_template",
    method: Method::POST,
    path: "/v2/templates",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Get one version of a global prompt template.
pub static GET_GLOBAL_PROMPT_VERSION: Operation = Operation {
    name: "get_global_prompt_template_version",
    method: Method::GET,
    path: "/v2/templates/{template_id}/versions/{version}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Create a new version of a global prompt template (it becomes the
/// selected one).
pub static CREATE_GLOBAL_PROMPT_VERSION: Operation = Operation {
    name: "create_global_prompt_template_version",
    method: Method::POST,
    path: "/v2/templates/{template_id}/versions",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Select a version of a global prompt template.
pub static SELECT_GLOBAL_PROMPT_VERSION: Operation = Operation {
    name: "select_global_prompt_template_version",
    method: Method::PUT,
    path: "/v2/templates/{template_id}/versions/{version}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Delete a global prompt template.
pub static DELETE_GLOBAL_PROMPT_TEMPLATE: Operation = Operation {
    name: "delete_global_prompt_template",
    method: Method::DELETE,
    path: "/v2/templates/{template_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// The operation of `project` (a project's templates) or `global`, and the
/// path's parameters: the project's id first when there is one.
fn scoped<'a>(
    scope: Option<&'a str>,
    project: &'static Operation,
    global: &'static Operation,
    rest: &[&'a str],
) -> (&'static Operation, Vec<&'a str>) {
    match scope {
        Some(project_id) => {
            let mut params = vec![project_id];
            params.extend_from_slice(rest);
            (project, params)
        }
        None => (global, rest.to_vec()),
    }
}

impl Client {
    /// The prompt templates of a project (`Some(project_id)`), or the global
    /// ones (`None`, every page).
    pub async fn list_prompt_templates(
        &self,
        scope: Option<&str>,
    ) -> Result<Vec<PromptTemplateWire>, ApiError> {
        let Some(project_id) = scope else {
            let client = self.clone();
            let pages = paginate::pages(&LIST_GLOBAL_PROMPT_TEMPLATES, 0, move |token| {
                let client = client.clone();
                async move {
                    client
                        .fetch::<GlobalTemplatePage>(
                            Call::new(&LIST_GLOBAL_PROMPT_TEMPLATES, &[])
                                .query("starting_token", token)
                                .query("limit", client.page_size())
                                .json(&serde_json::json!({}))?,
                        )
                        .await
                }
            });
            return paginate::collect(pages, |p| p.templates).await;
        };
        self.fetch(Call::new(&LIST_PROMPT_TEMPLATES, &[project_id]))
            .await
    }

    /// One version of a prompt template; `None` when there is no such version.
    pub async fn get_prompt_version(
        &self,
        scope: Option<&str>,
        template_id: &str,
        version: u32,
    ) -> Result<Option<PromptVersionWire>, ApiError> {
        let version = version.to_string();
        let (op, params) = scoped(
            scope,
            &GET_PROMPT_VERSION,
            &GET_GLOBAL_PROMPT_VERSION,
            &[template_id, &version],
        );
        self.fetch_opt(Call::new(op, &params)).await
    }

    /// Creates a prompt template with its first version.
    pub async fn create_prompt_template(
        &self,
        scope: Option<&str>,
        body: &PromptTemplateCreate,
    ) -> Result<PromptTemplateWire, ApiError> {
        let (op, params) = scoped(
            scope,
            &CREATE_PROMPT_TEMPLATE,
            &CREATE_GLOBAL_PROMPT_TEMPLATE,
            &[],
        );
        self.fetch(Call::new(op, &params).json(body)?).await
    }

    /// Appends a version to a prompt template.
    pub async fn create_prompt_version(
        &self,
        scope: Option<&str>,
        template_id: &str,
        body: &PromptVersionCreate,
    ) -> Result<PromptVersionWire, ApiError> {
        let (op, params) = scoped(
            scope,
            &CREATE_PROMPT_VERSION,
            &CREATE_GLOBAL_PROMPT_VERSION,
            &[template_id],
        );
        self.fetch(Call::new(op, &params).json(body)?).await
    }

    /// Selects version `version` of a prompt template.
    pub async fn select_prompt_version(
        &self,
        scope: Option<&str>,
        template_id: &str,
        version: u32,
    ) -> Result<PromptTemplateWire, ApiError> {
        let version = version.to_string();
        let (op, params) = scoped(
            scope,
            &SELECT_PROMPT_VERSION,
            &SELECT_GLOBAL_PROMPT_VERSION,
            &[template_id, &version],
        );
        self.fetch(Call::new(op, &params)).await
    }

    /// Deletes a prompt template; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_prompt_template(
        &self,
        scope: Option<&str>,
        template_id: &str,
    ) -> Result<Deleted, ApiError> {
        let (op, params) = scoped(
            scope,
            &DELETE_PROMPT_TEMPLATE,
            &DELETE_GLOBAL_PROMPT_TEMPLATE,
            &[template_id],
        );
        self.fetch_delete(Call::new(op, &params)).await
    }
}
