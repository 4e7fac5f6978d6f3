//! The client's calls for custom scorers. A scorer's create and a
//! version's create are not retried blindly: an uncertain outcome is
//! [`ApiError::Ambiguous`], which [`super::ops`] settles by reading.

use reqwest::Method;

use super::wire::{CreateScorerBody, LlmVersionBody};
use crate::api::{ListScorersRequest, ProjectItem, ProjectListing, Scorer, ScorerVersion};
use crate::client::operation::{Operation, Retry};
use crate::client::transport::Call;
use crate::client::{ApiError, Client, Deleted};

/// Create a custom scorer (no version yet).
pub static CREATE_SCORER: Operation = Operation {
    name: "create_scorer",
    method: Method::POST,
    path: "/v2/scorers",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Change a scorer's metadata or pinned version.
pub static UPDATE_SCORER: Operation = Operation {
    name: "update_scorer",
    method: Method::PATCH,
    path: "/v2/scorers/{scorer_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Delete a scorer.
pub static DELETE_SCORER: Operation = Operation {
    name: "delete_scorer",
    method: Method::DELETE,
    path: "/v2/scorers/{scorer_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Append an LLM scorer's version.
pub static CREATE_LLM_VERSION: Operation = Operation {
    name: "create_llm_scorer_version",
    method: Method::POST,
    path: "/v2/scorers/{scorer_id}/version/llm",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// A code version's file.
pub static GET_VERSION_CODE: Operation = Operation {
    name: "get_scorer_version_code",
    method: Method::GET,
    path: "/v2/scorers/{scorer_id}/version/code",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: false,
};

/// Replace a scorer's scope.
pub static SET_SCORER_SCOPE: Operation = Operation {
    name: "set_scorer_scope",
    method: Method::PUT,
    path: "/v2/scorers/{scorer_id}/scope",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// The projects a scoped scorer is shared with.
pub static SCORER_PROJECTS: Operation = Operation {
    name: "list_scorer_projects",
    method: Method::GET,
    path: "/v2/scorers/{scorer_id}/projects",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

impl Client {
    /// Every custom scorer (`llm` and `code`) of the catalog.
    pub async fn list_custom_scorers(&self) -> Result<Vec<Scorer>, ApiError> {
        self.list_scorers(ListScorersRequest::default())
            .await
            .map(|all| {
                all.into_iter()
                    .filter(|s| super::live::custom_type(s).is_some())
                    .collect()
            })
    }

    /// Creates a scorer.
    pub async fn create_custom_scorer(&self, body: &CreateScorerBody) -> Result<Scorer, ApiError> {
        self.fetch(Call::new(&CREATE_SCORER, &[]).json(body)?).await
    }

    /// Changes a scorer's metadata (`body`'s fields present).
    pub async fn update_custom_scorer(
        &self,
        scorer_id: &str,
        body: &serde_json::Value,
    ) -> Result<Scorer, ApiError> {
        self.fetch(Call::new(&UPDATE_SCORER, &[scorer_id]).json(body)?)
            .await
    }

    /// Deletes a scorer; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_custom_scorer(&self, scorer_id: &str) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(&DELETE_SCORER, &[scorer_id]))
            .await
    }

    /// Appends an LLM version.
    pub async fn create_llm_scorer_version(
        &self,
        scorer_id: &str,
        body: &LlmVersionBody,
    ) -> Result<ScorerVersion, ApiError> {
        self.fetch(Call::new(&CREATE_LLM_VERSION, &[scorer_id]).json(body)?)
            .await
    }

    /// The file of version `version` of a code scorer.
    pub async fn scorer_version_code(
        &self,
        scorer_id: &str,
        version: u32,
    ) -> Result<Option<String>, ApiError> {
        self.fetch_opt(Call::new(&GET_VERSION_CODE, &[scorer_id]).query("version", version))
            .await
    }

    /// Replaces a scorer's scope.
    pub async fn set_scorer_scope(
        &self,
        scorer_id: &str,
        is_global: bool,
        project_ids: &[String],
    ) -> Result<Scorer, ApiError> {
        let body = serde_json::json!({"is_global": is_global, "project_ids": project_ids});
        self.fetch(Call::new(&SET_SCORER_SCOPE, &[scorer_id]).json(&body)?)
            .await
    }

    /// The projects a scoped scorer is shared with (all pages).
    pub async fn custom_scorer_projects(
        &self,
        scorer_id: &str,
    ) -> Result<Vec<ProjectItem>, ApiError> {
        let mut out = Vec::new();
        let mut token = 0i64;
        loop {
            let page: ProjectListing = self
                .fetch(
                    Call::new(&SCORER_PROJECTS, &[scorer_id])
                        .query("starting_token", token)
                        .query("limit", self.page_size()),
                )
                .await?;
            let count = page.projects.len();
            out.extend(page.projects);
            match page.page.next_starting_token {
                Some(next) if count > 0 && next > token => token = next,
                _ => return Ok(out),
            }
        }
    }
}
