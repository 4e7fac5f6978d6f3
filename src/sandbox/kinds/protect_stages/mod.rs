//! Protect stages of a project: POST `…/stages` creates one (version 1),
//! GET `…/stages?stage_id=|stage_name=` reads one, POST `…/stages/{id}`
//! replaces its prioritized rulesets and bumps its `version`, PUT
//! `…/stages/{id}?pause=` pauses (`true`) or resumes (`false`, the
//! default) it. The service has no delete: a stage lives as long as its
//! project.
//!
//! Names are unique in a project (409). The body's `project_id` must be
//! the path's (422). The response is the reference's `StageDB`, which does
//! not carry the rulesets: the sandbox keeps them (a replace with the same
//! rulesets still bumps the version, as the service's does) but, like the
//! service, never returns them.

pub mod routes;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::sandbox::fingerprint::new_id;
use crate::sandbox::persist::tables::TableDef;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::{State, UserRecord, now};

use super::refuse;

/// A Protect stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageRecord {
    /// Id (uuid4).
    pub id: String,
    /// Project.
    pub project_id: String,
    /// Name (unique in the project).
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// `local` or `central`.
    #[serde(default = "local", rename = "type")]
    pub stage_type: String,
    /// Paused.
    #[serde(default)]
    pub paused: bool,
    /// Creator.
    pub created_by: String,
    /// Creation time.
    pub created_at: String,
    /// Version: 1 at creation, plus one per replace of the rulesets.
    pub version: i64,
    /// The prioritized rulesets as last sent (validated `Ruleset`s).
    #[serde(default)]
    pub prioritized_rulesets: Vec<Value>,
}

fn local() -> String {
    "local".to_owned()
}

/// The body of a create (`StageWithRulesets`).
#[derive(Debug, Clone, Deserialize)]
pub struct StageCreate {
    /// Name.
    pub name: String,
    /// Project (must be the path's).
    pub project_id: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Type (default `local`).
    #[serde(default = "local", rename = "type")]
    pub stage_type: String,
    /// Paused (default false).
    #[serde(default)]
    pub paused: bool,
    /// Rulesets.
    #[serde(default)]
    pub prioritized_rulesets: Vec<Value>,
}

/// How a GET names its stage.
#[derive(Debug, Clone)]
pub enum StageKey {
    /// By id.
    Id(String),
    /// By name.
    Name(String),
}

fn shape(s: &StageRecord) -> Value {
    json!({
        "name": s.name,
        "project_id": s.project_id,
        "description": s.description,
        "type": s.stage_type,
        "paused": s.paused,
        "created_by": s.created_by,
        "id": s.id,
        "version": s.version,
    })
}

/// The state database's table of stages
/// ([`crate::sandbox::kinds::KindRecords::stages`]). A stage's rulesets are
/// sealed: their actions' subscriptions hold webhook URLs, which may carry a
/// secret.
pub const TABLE: TableDef = TableDef {
    name: "stages",
    columns: &[
        ("id", "$.id"),
        ("project_id", "$.project_id"),
        ("name", "$.name"),
    ],
    sealed: &["prioritized_rulesets"],
};

impl State {
    fn stage_index(&self, project_id: &str, key: &StageKey) -> Result<usize, ApiError> {
        self.require_project(project_id)?;
        self.kinds
            .stages
            .iter()
            .position(|s| {
                s.project_id == project_id
                    && match key {
                        StageKey::Id(id) => &s.id == id,
                        StageKey::Name(name) => &s.name == name,
                    }
            })
            .ok_or_else(|| ApiError::not_found("Stage"))
    }

    /// POST `/v2/projects/{project_id}/stages` (`StageDB`).
    pub fn create_stage(
        &mut self,
        project_id: &str,
        request: StageCreate,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        if request.project_id.to_ascii_lowercase() != project_id {
            return Err(refuse(
                &["body", "project_id"],
                Some(json!(request.project_id)),
                "project_id must be the project of the path",
            ));
        }
        if self
            .kinds
            .stages
            .iter()
            .any(|s| s.project_id == project_id && s.name == request.name)
        {
            return Err(ApiError::Conflict(format!(
                "A stage named {} already exists in this project",
                request.name
            )));
        }
        let record = StageRecord {
            id: new_id(),
            project_id: project_id.to_owned(),
            name: request.name,
            description: request.description,
            stage_type: request.stage_type,
            paused: request.paused,
            created_by: caller.id.clone(),
            created_at: now(),
            version: 1,
            prioritized_rulesets: request.prioritized_rulesets,
        };
        let out = shape(&record);
        self.kinds.stages.push(record);
        Ok(out)
    }

    /// GET `/v2/projects/{project_id}/stages?stage_id=|stage_name=`.
    pub fn get_stage(&self, project_id: &str, key: &StageKey) -> Result<Value, ApiError> {
        let i = self.stage_index(project_id, key)?;
        Ok(shape(&self.kinds.stages[i]))
    }

    /// The stored rulesets of a stage (for tests and `with_state` readers).
    pub fn stage_rulesets(&self, project_id: &str, key: &StageKey) -> Option<&[Value]> {
        let i = self.stage_index(project_id, key).ok()?;
        Some(&self.kinds.stages[i].prioritized_rulesets)
    }

    /// POST `…/stages/{stage_id}`: replaces the rulesets, bumps the version.
    pub fn replace_stage_rulesets(
        &mut self,
        project_id: &str,
        stage_id: &str,
        rulesets: Vec<Value>,
    ) -> Result<Value, ApiError> {
        let i = self.stage_index(project_id, &StageKey::Id(stage_id.to_owned()))?;
        let s = &mut self.kinds.stages[i];
        s.prioritized_rulesets = rulesets;
        s.version = s.version.saturating_add(1);
        Ok(shape(&self.kinds.stages[i]))
    }

    /// PUT `…/stages/{stage_id}?pause=`.
    pub fn pause_stage(
        &mut self,
        project_id: &str,
        stage_id: &str,
        pause: bool,
    ) -> Result<Value, ApiError> {
        let i = self.stage_index(project_id, &StageKey::Id(stage_id.to_owned()))?;
        self.kinds.stages[i].paused = pause;
        Ok(shape(&self.kinds.stages[i]))
    }
}
