//! Protect stages as the service sends and takes them
//! (`/v2/projects/{project_id}/stages…` in the reference: `StageDB`,
//! `StageWithRulesets`, `RulesetsMixin`). A ruleset travels as the
//! reference's `Ruleset` JSON, built from the manifest's
//! ([`super::spec::Ruleset::to_wire`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A stage as the service returns it (`StageDB`; it carries no rulesets).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StageWire {
    /// Id.
    pub id: String,
    /// Name, unique in the project.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// `local` or `central`.
    #[serde(default = "local", rename = "type")]
    pub stage_type: String,
    /// Whether it is paused.
    #[serde(default)]
    pub paused: bool,
    /// Its version: bumped by every replace of its rulesets.
    #[serde(default)]
    pub version: Option<i64>,
    /// The user id of its creator.
    #[serde(default)]
    pub created_by: Option<String>,
}

fn local() -> String {
    "local".to_owned()
}

/// The body of a stage's create (`StageWithRulesets`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageCreate {
    /// Name.
    pub name: String,
    /// The project (the path's).
    pub project_id: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `local` or `central`.
    #[serde(rename = "type")]
    pub stage_type: String,
    /// Whether it starts paused.
    pub paused: bool,
    /// The rulesets, in priority order.
    pub prioritized_rulesets: Vec<Value>,
}

/// The body of a replace of a stage's rulesets (`RulesetsMixin`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RulesetsBody {
    /// The rulesets, in priority order.
    pub prioritized_rulesets: Vec<Value>,
}
