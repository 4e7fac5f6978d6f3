//! Projects: the listing item (spec operation 6 and POST `/v2/projects/paginated`),
//! the project record, and the listing request used to find a project by name.

use serde::{Deserialize, Serialize};

use super::common::{Permission, UserInfo};
use super::enums::{Operator, ProjectType};
use super::log_streams::RunSort;
use super::metric_settings::FilterValue;

/// A project as listings return it (`ProjectItem`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectItem {
    /// Id (uuid4).
    pub id: String,
    /// Permissions of the caller.
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// Name.
    pub name: String,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Whether the caller bookmarked it.
    #[serde(default)]
    pub bookmark: bool,
    /// Number of log streams.
    #[serde(default)]
    pub num_logstreams: Option<i64>,
    /// Number of experiments.
    #[serde(default)]
    pub num_experiments: Option<i64>,
    /// Creator.
    #[serde(default)]
    pub created_by_user: Option<UserInfo>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Labels (the reference lists `sample`).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Log streams (id and name), when asked for.
    #[serde(default)]
    pub log_streams: Option<Vec<LogStreamInfo>>,
}

/// A log stream's id and name, as embedded in a project listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogStreamInfo {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
}

/// The project record of GET `/v2/projects/{project_id}` (`ProjectDB`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Project {
    /// Id (uuid4).
    pub id: String,
    /// Permissions of the caller.
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Creator's id.
    pub created_by: String,
    /// Project type.
    #[serde(default, rename = "type")]
    pub project_type: Option<ProjectType>,
    /// Creator.
    pub created_by_user: UserInfo,
    /// Runs (log streams and experiments) of the project.
    #[serde(default)]
    pub runs: Vec<serde_json::Value>,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Bookmarked.
    #[serde(default)]
    pub bookmark: bool,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Labels.
    #[serde(default)]
    pub labels: Vec<String>,
}

/// Body of POST `/v2/projects/paginated` (`ProjectCollectionParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectCollectionParams {
    /// Filters, all of which must match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<ProjectFilter>,
    /// Sort order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<RunSort>,
}

/// A filter of the project listing (the ones a reconciler needs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name")]
pub enum ProjectFilter {
    /// By name. Operators: eq, ne, contains, one_of, not_in.
    #[serde(rename = "name")]
    Name {
        /// Operator.
        operator: Operator,
        /// A name or a list of names.
        value: FilterValue,
        /// Case sensitivity (default true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_sensitive: Option<bool>,
    },
    /// By creator id. Operators: eq, ne, one_of, not_in, contains.
    #[serde(rename = "creator")]
    Creator {
        /// Operator (default eq).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operator: Option<Operator>,
        /// A user id or a list of ids.
        value: FilterValue,
    },
    /// By bookmark.
    #[serde(rename = "bookmark")]
    Bookmark {
        /// Bookmarked or not.
        value: bool,
    },
}
