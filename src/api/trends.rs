//! Trends dashboards of a log stream, their sections and widgets, and
//! favoriting (spec operations 3 and 10, and the reference's reads and writes).

use serde::{Deserialize, Serialize};

use super::enums::{MetricAggregation, WidgetType};

/// Body of POST `.../trends/sections` (`SectionCreateRequest`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionCreateRequest {
    /// Name, 1 to 100 characters.
    pub name: String,
    /// Description, at most 500 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Colour, `#RRGGBB`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// Body of PUT `.../trends/sections/{section_id}` (`SectionUpdateRequest`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionUpdateRequest {
    /// New name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// New colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

/// A section of a dashboard (`SectionResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Colour.
    #[serde(default)]
    pub color: Option<String>,
    /// Widgets of the section.
    #[serde(default)]
    pub widgets: Vec<Widget>,
}

/// A chart of a dashboard (`WidgetResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Widget {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Chart type.
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    /// Data set definitions.
    #[serde(default)]
    pub dataset: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
    /// The metric charted.
    pub metric: String,
    /// Aggregation.
    pub aggregation: MetricAggregation,
    /// The section holding the widget, if any.
    #[serde(default)]
    pub section_id: Option<String>,
}

/// A dashboard with its sections and widgets (`TrendsDashboardResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrendsDashboard {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether this is the log stream's default dashboard.
    pub is_default: bool,
    /// Who can see it (`user` or `project`).
    pub visibility: String,
    /// Creator.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Whether the caller has it favorited.
    #[serde(default)]
    pub is_favorited: bool,
    /// Log stream.
    pub log_stream_id: String,
    /// Project.
    pub project_id: String,
    /// Top-level widgets.
    #[serde(default)]
    pub widgets: Vec<Widget>,
    /// Sections.
    #[serde(default)]
    pub sections: Vec<Section>,
    /// Layout of widgets.
    #[serde(default)]
    pub layout_map: serde_json::Map<String, serde_json::Value>,
    /// Bucket width in minutes.
    pub interval_mins: i64,
    /// Group-by column.
    #[serde(default)]
    pub group_by: Option<String>,
    /// Filter expression.
    #[serde(default)]
    pub filter_tree: Option<serde_json::Value>,
    /// Start of the time range (epoch seconds).
    pub start_time: i64,
    /// End of the time range (epoch seconds).
    pub end_time: i64,
    /// Relative time range, e.g. `last_7_days`.
    #[serde(default)]
    pub relative_time: Option<String>,
}

/// A dashboard as the listing returns it (`TrendsDashboardSummary`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrendsDashboardSummary {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether this is the default dashboard.
    pub is_default: bool,
    /// Who can see it.
    pub visibility: String,
    /// Creator.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Whether the caller has it favorited.
    #[serde(default)]
    pub is_favorited: bool,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
}
