//! Trends dashboards of a log stream, their sections and widgets, and
//! favoriting (spec operations 3 and 10, and the reference's reads and writes:
//! dashboard settings, user dashboards by duplication, widgets).
//!
//! Update requests of widgets and dashboards tell three things apart for a
//! nullable field: left out (kept), `null` (cleared) and a value (set). Such
//! fields are `Option<Option<T>>`: `None` is left out, `Some(None)` is sent as
//! `null`. A field the service never holds as null (a name, a type) is a
//! plain `Option`: left out or `null`, it is kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::enums::{
    LogRecordsFilterType, LogRecordsOperator, MetricAggregation, Visibility, WidgetType,
};

/// The most widgets a dashboard holds at its top level, and the most a
/// section holds (the reference's `maxItems` of `widgets`).
pub const MAX_WIDGETS: usize = 50;

/// The most sections a dashboard holds (the reference's `maxItems`).
pub const MAX_SECTIONS: usize = 50;

/// The data sets of a widget: at most 50 objects, each mapping a name to a
/// list of strings (the reference's `dataset`).
pub type Dataset = Vec<BTreeMap<String, Vec<String>>>;

/// Reads a field that may be left out (`None`, with `#[serde(default)]`),
/// `null` (`Some(None)`) or a value (`Some(Some(v))`).
fn nullable<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

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
    pub dataset: Option<Dataset>,
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
    pub filter_tree: Option<FilterExpression>,
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

/// Body of POST `.../trends/widgets` (`WidgetCreateRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WidgetCreateRequest {
    /// Name, 1 to 100 characters.
    pub name: String,
    /// Description, at most 500 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Chart type.
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    /// Data sets, at most 50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Dataset>,
    /// The metric charted (at least one character).
    pub metric: String,
    /// Aggregation.
    pub aggregation: MetricAggregation,
    /// The section to put the widget in; the dashboard's top level when
    /// left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_id: Option<String>,
}

/// Body of PUT `.../trends/widgets/{widget_id}` (`WidgetUpdateRequest`).
/// Moving a widget to another section is an update of `section_id`;
/// `section_id: Some(None)` (sent as `null`) moves it to the top level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WidgetUpdateRequest {
    /// New name, 1 to 100 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New description (at most 500 characters), or `Some(None)` to clear it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// New chart type.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub widget_type: Option<WidgetType>,
    /// New data sets, or `Some(None)` to clear them.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub dataset: Option<Option<Dataset>>,
    /// New metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// New aggregation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<MetricAggregation>,
    /// The section to move the widget to, or `Some(None)` for the top level.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub section_id: Option<Option<String>>,
}

/// Body of PUT `.../trends` (`TrendsDashboardUpdateRequest`): the settings of
/// a dashboard. The time range is either absolute (`start_time`,
/// `end_time`, epoch seconds) or relative (`relative_time`, a rolling window
/// such as `last_7_days`), not both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrendsDashboardUpdateRequest {
    /// New name, 1 to 255 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New description (at most 1,000 characters), or `Some(None)` to clear it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// Bucket width in minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_mins: Option<i64>,
    /// Layout of the widgets: widget id to a list of integers (position
    /// and size). Replaces the whole layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_map: Option<BTreeMap<String, Vec<i64>>>,
    /// Start of an absolute time range (epoch seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<i64>,
    /// End of an absolute time range (epoch seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<i64>,
    /// A rolling window from now, `last_<n>_<unit>` (seconds to months, at
    /// most five years), or `Some(None)` to clear it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub relative_time: Option<Option<String>>,
    /// The filter tree, or `Some(None)` to clear it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub filter_tree: Option<Option<FilterExpression>>,
    /// The column to group by, or `Some(None)` to clear it.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub group_by: Option<Option<String>>,
}

/// Body of POST `.../trends/dashboards/{id}/duplicate`
/// (`TrendsDashboardDuplicateRequest`): the only way the reference offers to
/// create a dashboard besides a log stream's default one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrendsDashboardDuplicateRequest {
    /// Name of the copy, 1 to 255 characters.
    pub name: String,
    /// Description of the copy (at most 1,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Who sees the copy; the source's visibility when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}

/// A dashboard's filter tree (`FilterExpression` of the reference): a leaf
/// filter, or `and` / `or` of sub-trees, or `not` of one. Variants are tried
/// in order; anything else reads as [`FilterExpression::Other`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FilterExpression {
    /// Every sub-tree matches.
    And {
        /// The sub-trees.
        and: Vec<FilterExpression>,
    },
    /// At least one sub-tree matches.
    Or {
        /// The sub-trees.
        or: Vec<FilterExpression>,
    },
    /// The sub-tree does not match.
    Not {
        /// The sub-tree.
        not: Box<FilterExpression>,
    },
    /// One filter.
    Leaf {
        /// The filter.
        filter: LogRecordsFilter,
    },
    /// A node this version of evalctl does not know, kept verbatim (reads
    /// tolerate what the service adds later).
    Other(serde_json::Value),
}

/// A filter on a column of log records, one shape for the seven kinds of the
/// reference (`LogRecordsIDFilter`, `...DateFilter`, `...NumberFilter`,
/// `...BooleanFilter`, `...CollectionFilter`, `...TextFilter`,
/// `...FullyAnnotatedFilter`), told apart by `type`. Which fields a kind
/// takes and which operators it allows is the reference's (the sandbox
/// checks it); reading tolerates kinds added later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogRecordsFilter {
    /// The kind of filter.
    #[serde(rename = "type")]
    pub filter_type: LogRecordsFilterType,
    /// The column filtered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_id: Option<String>,
    /// The operator (`eq` by default for id and boolean filters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<LogRecordsOperator>,
    /// The value: a string, number, boolean or list, per kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// Case sensitivity of text and collection filters (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
    /// Queue members of a `fully_annotated` filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ids: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_requests_tell_left_out_from_null() {
        let r: WidgetUpdateRequest =
            serde_json::from_str(r#"{"section_id": null, "name": "n"}"#).unwrap();
        assert_eq!(r.section_id, Some(None));
        assert_eq!(r.description, None);
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"name": "n", "section_id": null})
        );
        let r = WidgetUpdateRequest {
            section_id: Some(Some("s".into())),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"section_id": "s"})
        );
        let d: TrendsDashboardUpdateRequest =
            serde_json::from_str(r#"{"group_by": null, "interval_mins": null}"#).unwrap();
        assert_eq!(d.group_by, Some(None));
        assert_eq!(d.interval_mins, None);
    }

    #[test]
    fn filter_trees_read_and_write_every_node() {
        let text = r#"{"and":[{"filter":{"type":"text","column_id":"input","operator":"contains","value":"refund","case_sensitive":false}},{"not":{"filter":{"type":"boolean","column_id":"has_error","value":true}}},{"or":[{"filter":{"type":"number","column_id":"latency_ms","operator":"between","value":[0,500]}}]}]}"#;
        let tree: FilterExpression = serde_json::from_str(text).unwrap();
        let FilterExpression::And { and } = &tree else {
            panic!("{tree:?}")
        };
        assert!(matches!(&and[1], FilterExpression::Not { .. }));
        let back = serde_json::to_value(&tree).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn unknown_filter_nodes_read_and_write_back_verbatim() {
        let text = r#"{"or":[{"xor":[{"filter":{"type":"id","column_id":"a","value":"b"}}]},{"filter":{"type":"vector","column_id":"e","value":[0.1]}}]}"#;
        let tree: FilterExpression = serde_json::from_str(text).unwrap();
        let FilterExpression::Or { or } = &tree else {
            panic!("{tree:?}")
        };
        assert!(matches!(&or[0], FilterExpression::Other(_)));
        let FilterExpression::Leaf { filter } = &or[1] else {
            panic!("{or:?}")
        };
        assert_eq!(
            filter.filter_type,
            LogRecordsFilterType::Unknown("vector".into())
        );
        assert_eq!(
            serde_json::to_value(&tree).unwrap(),
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }
}
