//! The client's calls for a project's Protect stages. A stage's create and a
//! replace of its rulesets are not retried blindly (a create may make a
//! second stage; a replace bumps the version again): an uncertain outcome is
//! [`ApiError::Ambiguous`], which [`super::ops`] settles by reading.

use reqwest::Method;

use super::wire::{RulesetsBody, StageCreate, StageWire};
use crate::client::operation::{Operation, Retry};
use crate::client::transport::Call;
use crate::client::{ApiError, Client};

/// Create a stage.
pub static CREATE_STAGE: Operation = Operation {
    name: "create_stage",
    method: Method::POST,
    path: "/v2/projects/{project_id}/stages",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Get a stage by name or id.
pub static GET_STAGE: Operation = Operation {
    name: "get_stage",
    method: Method::GET,
    path: "/v2/projects/{project_id}/stages",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Replace a stage's rulesets (bumps its version).
pub static REPLACE_RULESETS: Operation = Operation {
    name: "update_stage",
    method: Method::POST,
    path: "/v2/projects/{project_id}/stages/{stage_id}",
    basic_ok: true,
    retry: Retry::Create,
    log_body: true,
};

/// Pause or resume a stage.
pub static PAUSE_STAGE: Operation = Operation {
    name: "pause_stage",
    method: Method::PUT,
    path: "/v2/projects/{project_id}/stages/{stage_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// How a stage is looked up.
#[derive(Debug, Clone, Copy)]
pub enum StageBy<'a> {
    /// By name.
    Name(&'a str),
    /// By id.
    Id(&'a str),
}

impl Client {
    /// A stage of a project; `None` when there is none by that name or id.
    pub async fn get_stage(
        &self,
        project_id: &str,
        by: StageBy<'_>,
    ) -> Result<Option<StageWire>, ApiError> {
        let params = [project_id];
        let call = Call::new(&GET_STAGE, &params);
        let call = match by {
            StageBy::Name(name) => call.query("stage_name", name),
            StageBy::Id(id) => call.query("stage_id", id),
        };
        self.fetch_opt(call).await
    }

    /// Creates a stage with its rulesets.
    pub async fn create_stage(
        &self,
        project_id: &str,
        body: &StageCreate,
    ) -> Result<StageWire, ApiError> {
        self.fetch(Call::new(&CREATE_STAGE, &[project_id]).json(body)?)
            .await
    }

    /// Replaces a stage's rulesets.
    pub async fn replace_stage_rulesets(
        &self,
        project_id: &str,
        stage_id: &str,
        body: &RulesetsBody,
    ) -> Result<StageWire, ApiError> {
        self.fetch(Call::new(&REPLACE_RULESETS, &[project_id, stage_id]).json(body)?)
            .await
    }

    /// Pauses (`true`) or resumes (`false`) a stage.
    pub async fn pause_stage(
        &self,
        project_id: &str,
        stage_id: &str,
        pause: bool,
    ) -> Result<StageWire, ApiError> {
        self.fetch(Call::new(&PAUSE_STAGE, &[project_id, stage_id]).query("pause", pause))
            .await
    }
}
