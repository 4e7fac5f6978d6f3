//! The bodies evalctl sends to create, change and delete projects and log
//! streams (the reference's `ProjectCreate`, `ProjectUpdate`,
//! `LogStreamUpdateRequest`); answers are not read (what was made is read
//! back by name).

use serde::{Deserialize, Serialize};

/// POST `/v2/projects` (`ProjectCreate`): only the name; the service's
/// defaults for the rest (`gen_ai`, the caller as creator).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectCreate {
    /// Name.
    pub name: String,
}

/// PUT `/v2/projects/{project_id}` (`ProjectUpdate`): what is absent is
/// left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectUpdate {
    /// New name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    /// New description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl ProjectUpdate {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self == &ProjectUpdate::default()
    }
}

/// A project's label (the reference's `ProjectLabels`: the service knows
/// one, `sample`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ProjectLabel {
    /// The service's sample projects.
    Sample,
}

impl ProjectLabel {
    /// As the service writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectLabel::Sample => "sample",
        }
    }
}

/// PUT `…/log_streams/{log_stream_id}` (`LogStreamUpdateRequest`): a rename.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogStreamUpdate {
    /// New name.
    pub name: String,
}
