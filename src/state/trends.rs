//! A log stream's trends dashboards as the planner needs them: each
//! dashboard's identity (id, name, visibility, creator), whether the caller
//! has it favorited, its sections' names, descriptions and colours, and —
//! only when asked for ([`TrendsParts`]) — its widgets and its settings.
//! The layout, the time range's absolute bounds and the filter tree are
//! dropped as they arrive; a section always keeps how many widgets it holds
//! (a deletion warns about them).

use serde::Serialize;

use crate::api::{Dataset, MetricAggregation, Section, TrendsDashboard, Widget, WidgetType};

/// Which optional parts of a dashboard are kept as it is read: memory
/// follows what the manifests compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrendsParts {
    /// Keep the widgets.
    pub widgets: bool,
    /// Keep the settings (interval, relative time range, group-by).
    pub settings: bool,
}

impl TrendsParts {
    /// Every part.
    pub const ALL: TrendsParts = TrendsParts {
        widgets: true,
        settings: true,
    };

    /// The parts either asks for.
    #[must_use]
    pub fn union(self, other: TrendsParts) -> TrendsParts {
        TrendsParts {
            widgets: self.widgets || other.widgets,
            settings: self.settings || other.settings,
        }
    }
}

/// A dashboard, reduced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DashboardState {
    /// Id.
    pub id: String,
    /// Name (not unique: the service allows several dashboards of one name).
    pub name: String,
    /// Whether it is the log stream's default dashboard.
    pub is_default: bool,
    /// Who sees it: `user` (its creator) or `project`.
    pub visibility: String,
    /// Its creator (a user id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Whether the caller has it favorited (the service does not say for whom).
    pub is_favorited: bool,
    /// Sections, in the service's order.
    pub sections: Vec<SectionState>,
    /// Every widget, the top level's first, then each section's, in the
    /// service's order; `None` when they were not kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub widgets: Option<Vec<WidgetState>>,
    /// The settings, when kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<SettingsState>,
}

impl DashboardState {
    /// The section of `name` that is kept when several carry it: the first
    /// in the dashboard's order. Sections have no creation time (the
    /// service's `SectionResponse` has none), but the service appends a new
    /// section at the end of its dashboard and offers no way to reorder
    /// sections, so the order is the order of creation, the same for every
    /// reader; the planner pairs a declared section with this one and
    /// deletes the others.
    pub fn keeper(&self, name: &str) -> Option<&SectionState> {
        self.sections.iter().find(|s| s.name == name)
    }
}

/// A section, reduced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SectionState {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description; an empty one reads as none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Colour, as the service holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// How many widgets it holds.
    pub widget_count: usize,
}

/// A widget, with the compared fields (everything the service returns of it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WidgetState {
    /// Id.
    pub id: String,
    /// The section holding it (`None`: the dashboard's top level).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_id: Option<String>,
    /// Name.
    pub name: String,
    /// Chart type.
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    /// The metric charted.
    pub metric: String,
    /// Aggregation.
    pub aggregation: MetricAggregation,
    /// Description; an empty one reads as none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Data sets; an empty list reads as none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Dataset>,
}

/// The settings of a dashboard that manifests declare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingsState {
    /// Bucket width in minutes.
    pub interval_mins: i64,
    /// The rolling time range (`None`: an absolute one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_time: Option<String>,
    /// The group-by column; an empty one reads as none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_by: Option<String>,
    /// The dashboard's description; an empty one reads as none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

fn non_empty(s: Option<&String>) -> Option<String> {
    s.filter(|s| !s.is_empty()).cloned()
}

impl From<&Section> for SectionState {
    fn from(s: &Section) -> Self {
        SectionState {
            id: s.id.clone(),
            name: s.name.clone(),
            description: non_empty(s.description.as_ref()),
            color: non_empty(s.color.as_ref()),
            widget_count: s.widgets.len(),
        }
    }
}

impl WidgetState {
    /// A widget as read, in the section `section_id` (the response's own
    /// `section_id` is not trusted over where the widget was listed).
    pub fn of(w: &Widget, section_id: Option<&str>) -> Self {
        WidgetState {
            id: w.id.clone(),
            section_id: section_id.map(str::to_owned),
            name: w.name.clone(),
            widget_type: w.widget_type.clone(),
            metric: w.metric.clone(),
            aggregation: w.aggregation.clone(),
            description: non_empty(w.description.as_ref()),
            dataset: w.dataset.clone().filter(|d| !d.is_empty()),
        }
    }
}

impl DashboardState {
    /// Reduces a dashboard as it is read, keeping `parts`.
    pub fn reduce(d: &TrendsDashboard, parts: TrendsParts) -> Self {
        let widgets = parts.widgets.then(|| {
            d.widgets
                .iter()
                .map(|w| WidgetState::of(w, None))
                .chain(d.sections.iter().flat_map(|s| {
                    s.widgets
                        .iter()
                        .map(|w| WidgetState::of(w, Some(s.id.as_str())))
                }))
                .collect()
        });
        let settings = parts.settings.then(|| SettingsState {
            interval_mins: d.interval_mins,
            relative_time: non_empty(d.relative_time.as_ref()),
            group_by: non_empty(d.group_by.as_ref()),
            description: non_empty(d.description.as_ref()),
        });
        DashboardState {
            id: d.id.clone(),
            name: d.name.clone(),
            is_default: d.is_default,
            visibility: d.visibility.clone(),
            created_by: d.created_by.clone(),
            is_favorited: d.is_favorited,
            sections: d.sections.iter().map(SectionState::from).collect(),
            widgets,
            settings,
        }
    }

    /// The widgets, when they were kept (none otherwise).
    pub fn widgets(&self) -> &[WidgetState] {
        self.widgets.as_deref().unwrap_or_default()
    }

    /// How many widgets it holds, in sections and at the top level.
    pub fn widget_count(&self) -> usize {
        match &self.widgets {
            Some(ws) => ws.len(),
            None => self.sections.iter().map(|s| s.widget_count).sum(),
        }
    }

    /// The section of an id.
    pub fn section(&self, id: &str) -> Option<&SectionState> {
        self.sections.iter().find(|s| s.id == id)
    }
}

/// Every part kept: what tests and fixtures written as JSON use.
impl From<&TrendsDashboard> for DashboardState {
    fn from(d: &TrendsDashboard) -> Self {
        DashboardState::reduce(d, TrendsParts::ALL)
    }
}
