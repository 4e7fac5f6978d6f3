//! The client's calls that write projects and log streams. A create is not
//! retried blindly: an uncertain outcome is [`ApiError::Ambiguous`], which
//! [`super::ops`] settles by reading back by name. Reads (the project
//! listing, the log stream search, creating a log stream) were there before
//! (`crate::client::ops`).

use reqwest::Method;
use serde::de::IgnoredAny;

use super::wire::{LogStreamUpdate, ProjectCreate, ProjectUpdate};
use crate::client::operation::{Operation, Retry};
use crate::client::transport::Call;
use crate::client::{ApiError, Client, Deleted};

/// Create a project.
pub static CREATE_PROJECT: Operation = Operation {
    name: "create_project",
    method: Method::POST,
    path: "/v2/projects",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Change a project's name, labels or description.
pub static UPDATE_PROJECT: Operation = Operation {
    name: "update_project",
    method: Method::PUT,
    path: "/v2/projects/{project_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Delete a project with everything in it.
pub static DELETE_PROJECT: Operation = Operation {
    name: "delete_project",
    method: Method::DELETE,
    path: "/v2/projects/{project_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Rename a log stream.
pub static UPDATE_LOG_STREAM: Operation = Operation {
    name: "update_log_stream",
    method: Method::PUT,
    path: "/v2/projects/{project_id}/log_streams/{log_stream_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Delete a log stream with its traces.
pub static DELETE_LOG_STREAM: Operation = Operation {
    name: "delete_log_stream",
    method: Method::DELETE,
    path: "/v2/projects/{project_id}/log_streams/{log_stream_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

impl Client {
    /// Creates a project.
    pub async fn create_project(&self, body: &ProjectCreate) -> Result<(), ApiError> {
        self.fetch::<IgnoredAny>(Call::new(&CREATE_PROJECT, &[]).json(body)?)
            .await
            .map(drop)
    }

    /// Changes a project.
    pub async fn update_project(
        &self,
        project_id: &str,
        body: &ProjectUpdate,
    ) -> Result<(), ApiError> {
        self.fetch::<IgnoredAny>(Call::new(&UPDATE_PROJECT, &[project_id]).json(body)?)
            .await
            .map(drop)
    }

    /// Deletes a project; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_project(&self, project_id: &str) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(&DELETE_PROJECT, &[project_id]))
            .await
    }

    /// Renames a log stream.
    pub async fn update_log_stream(
        &self,
        project_id: &str,
        log_stream_id: &str,
        body: &LogStreamUpdate,
    ) -> Result<(), ApiError> {
        self.fetch::<IgnoredAny>(
            Call::new(&UPDATE_LOG_STREAM, &[project_id, log_stream_id]).json(body)?,
        )
        .await
        .map(drop)
    }

    /// Deletes a log stream; a 404 is [`Deleted::AlreadyGone`].
    pub async fn delete_log_stream(
        &self,
        project_id: &str,
        log_stream_id: &str,
    ) -> Result<Deleted, ApiError> {
        self.fetch_delete(Call::new(&DELETE_LOG_STREAM, &[project_id, log_stream_id]))
            .await
    }
}
