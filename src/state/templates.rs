//! A project's feedback or annotation templates as the planner needs them:
//! what can be declared (name, criteria, whether raters explain,
//! constraints) and what a reviewer is warned about (how many ratings use
//! one, who created it). Positions and timestamps are dropped.

use serde::Serialize;

use crate::api::Template;

/// A template, reduced; `C` is its kind's constraints type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TemplateState<C> {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Rating criteria.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// Whether raters give an explanation.
    pub include_explanation: bool,
    /// What a rating may be.
    pub constraints: C,
    /// How many ratings use it, when the service says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_count: Option<i64>,
    /// The user id of its creator, when the service says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

impl<C> From<Template<C>> for TemplateState<C> {
    fn from(t: Template<C>) -> Self {
        TemplateState {
            id: t.id,
            name: t.name,
            criteria: t.criteria,
            include_explanation: t.include_explanation,
            constraints: t.constraints,
            usage_count: t.usage_count,
            created_by: t.created_by,
        }
    }
}
