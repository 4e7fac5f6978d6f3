//! Log streams and experiments ("runs") and their search (spec operation 2 and
//! the reference's experiment search): five filter kinds, three sort kinds.

use serde::{Deserialize, Serialize};

use super::common::{PageInfo, UserInfo};
use super::enums::Operator;
use super::metric_settings::FilterValue;

/// A log stream (`LogStreamResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogStream {
    /// Id (uuid4).
    pub id: String,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Name.
    pub name: String,
    /// Project id.
    pub project_id: String,
    /// Creator's id.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Creator.
    #[serde(default)]
    pub created_by_user: Option<UserInfo>,
    /// Number of spans (with `include_counts`).
    #[serde(default)]
    pub num_spans: Option<i64>,
    /// Number of traces (with `include_counts`).
    #[serde(default)]
    pub num_traces: Option<i64>,
    /// Whether the user created sessions.
    #[serde(default)]
    pub has_user_created_sessions: bool,
}

/// An experiment (`ExperimentResponse`, the fields a reconciler reads).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// Id (uuid4).
    pub id: String,
    /// Creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Update time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Project id.
    pub project_id: String,
    /// Creator's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Creator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_user: Option<UserInfo>,
    /// Number of spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_spans: Option<i64>,
    /// Number of traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_traces: Option<i64>,
    /// Task type (an integer enumeration).
    pub task_type: i64,
    /// Experiment group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment_group_id: Option<String>,
    /// Experiment group name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment_group_name: Option<String>,
}

/// Body of a log stream search (spec operation 2) or experiment search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSearchRequest {
    /// Pagination cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_token: Option<i64>,
    /// Page size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Filters, all of which must match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<RunFilter>,
    /// Sort order (default: created_at descending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<RunSort>,
    /// Include span and trace counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_counts: Option<bool>,
}

/// A search filter, discriminated by `name`.
///
/// Log stream search accepts the first five (RunIDFilter, RunNameFilter,
/// RunCreatedByFilter, RunCreatedAtFilter, RunUpdatedAtFilter); experiment
/// search accepts those and the two experiment-group filters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name")]
pub enum RunFilter {
    /// `id`: operators eq (default), ne, one_of, not_in, contains.
    #[serde(rename = "id")]
    Id {
        /// Operator (default eq).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operator: Option<Operator>,
        /// An id or a list of ids.
        value: FilterValue,
    },
    /// `name`: operators eq, ne, contains, one_of, not_in.
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
    /// `created_by`: operators eq (default), ne, one_of, not_in, contains.
    #[serde(rename = "created_by")]
    CreatedBy {
        /// Operator (default eq).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        operator: Option<Operator>,
        /// A user id or a list of ids.
        value: FilterValue,
    },
    /// `created_at`: operators eq, ne, gt, gte, lt, lte.
    #[serde(rename = "created_at")]
    CreatedAt {
        /// Operator.
        operator: Operator,
        /// An RFC 3339 date-time.
        value: String,
    },
    /// `updated_at`: operators eq, ne, gt, gte, lt, lte.
    #[serde(rename = "updated_at")]
    UpdatedAt {
        /// Operator.
        operator: Operator,
        /// An RFC 3339 date-time.
        value: String,
    },
    /// `experiment_group_id` (experiments only).
    #[serde(rename = "experiment_group_id")]
    ExperimentGroupId {
        /// The group id.
        value: String,
    },
    /// `experiment_group_name` (experiments only).
    #[serde(rename = "experiment_group_name")]
    ExperimentGroupName {
        /// Operator.
        operator: Operator,
        /// A name or a list of names.
        value: FilterValue,
        /// Case sensitivity (default true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_sensitive: Option<bool>,
    },
}

impl RunFilter {
    /// A case-sensitive `name eq` filter: how a reconciler finds a run by name.
    pub fn name_eq(name: &str) -> Self {
        RunFilter::Name {
            operator: Operator::Eq,
            value: FilterValue::One(name.to_owned()),
            case_sensitive: Some(true),
        }
    }

    /// An `id one_of` filter.
    pub fn id_one_of(ids: Vec<String>) -> Self {
        RunFilter::Id {
            operator: Some(Operator::OneOf),
            value: FilterValue::Many(ids),
        }
    }
}

/// A sort order: `name`, `created_at` or `updated_at`, ascending or not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSort {
    /// The sort column: `name`, `created_at` or `updated_at`.
    pub name: String,
    /// Ascending (default true).
    #[serde(default = "yes")]
    pub ascending: bool,
    /// Always `column`.
    #[serde(default = "column")]
    pub sort_type: String,
}

fn yes() -> bool {
    true
}

fn column() -> String {
    "column".to_owned()
}

impl RunSort {
    /// Sort by `column` in the given direction.
    pub fn by(column_name: &str, ascending: bool) -> Self {
        RunSort {
            name: column_name.to_owned(),
            ascending,
            sort_type: column(),
        }
    }
}

/// Response of a log stream search (`ListLogStreamResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogStreamPage {
    /// Pagination.
    #[serde(flatten)]
    pub page: PageInfo,
    /// The log streams of this page.
    pub log_streams: Vec<LogStream>,
}

/// Response of an experiment search (`ListExperimentResponse`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExperimentPage {
    /// Pagination.
    #[serde(flatten)]
    pub page: PageInfo,
    /// The experiments of this page.
    #[serde(default)]
    pub experiments: Vec<Experiment>,
}
