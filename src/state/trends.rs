//! A log stream's default trends dashboard as the planner needs it: its id,
//! whether the caller has it favorited, and its sections' names, descriptions
//! and colours. Widgets, layout and the dashboard's settings are dropped as
//! they arrive; a section keeps only how many widgets it holds (a deletion
//! warns about them).

use serde::Serialize;

use crate::api::{Section, TrendsDashboard};

/// A dashboard, reduced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DashboardState {
    /// Id.
    pub id: String,
    /// Whether the caller has it favorited (the service does not say for whom).
    pub is_favorited: bool,
    /// Sections, in the service's order.
    pub sections: Vec<SectionState>,
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

impl From<&Section> for SectionState {
    fn from(s: &Section) -> Self {
        SectionState {
            id: s.id.clone(),
            name: s.name.clone(),
            description: s.description.clone().filter(|d| !d.is_empty()),
            color: s.color.clone().filter(|c| !c.is_empty()),
            widget_count: s.widgets.len(),
        }
    }
}

impl From<&TrendsDashboard> for DashboardState {
    fn from(d: &TrendsDashboard) -> Self {
        DashboardState {
            id: d.id.clone(),
            is_favorited: d.is_favorited,
            sections: d.sections.iter().map(SectionState::from).collect(),
        }
    }
}
