//! Resource addresses: the stable, human-readable name of every object a plan
//! can touch, e.g. `project[demo-project].log_stream[production].metric_settings`.
//!
//! Addresses order plans, name objects in every output, and are what
//! `--target` selects ([`super::target`] parses the same grammar).

use serde::{Deserialize, Serialize};

use super::target::{Kind, Segment, Target};
use super::types::Action;
pub use crate::kinds::Address;
use crate::state::{DashboardState, ObjectKey, ProjectState};

/// Whether a run is a log stream or an experiment.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A log stream.
    LogStream,
    /// An experiment.
    Experiment,
}

impl RunKind {
    /// `log_stream` or `experiment`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::LogStream => "log_stream",
            RunKind::Experiment => "experiment",
        }
    }
}

/// What the core asks of every kind's address: its segments (how it prints
/// and how `--target`s match it), the project it is in, the collection it
/// is one of, and which of its fields are keyed sets.
pub trait KindAddress {
    /// The address as segments, the way targets are matched against it and
    /// the way it prints.
    fn segments(&self) -> Vec<Segment>;

    /// The project the address is in, if any.
    fn project(&self) -> Option<&str>;

    /// The collection the object is one of, for objects `--prune` can delete
    /// or a plan can replace: the address of what holds it and the plural of
    /// its kind (`project[a]` and `annotation templates`). `None` for
    /// singletons.
    fn collection(&self) -> Option<(String, &'static str)> {
        None
    }

    /// The fields of this kind of object that hold keyed sets (shown as
    /// `field[key]` in differences).
    fn keyed_sets(&self) -> &'static [&'static str] {
        &[]
    }

    /// How many objects its [`collection`](KindAddress::collection) holds
    /// live, in `live`, the project it is in (0 for singletons).
    fn collection_size(&self, live: &ProjectState) -> usize {
        let _ = live;
        0
    }

    /// For objects that can be renamed or moved: the address of the live
    /// object a change acts on, with the live name (and, for a widget, the
    /// live section) in place of the declared ones. `before(field)` is the
    /// value the change's field `field` had before it (`Some(None)`: it had
    /// none; `None`: the change does not change that field).
    fn live_identity(&self, before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        let _ = before;
        None
    }

    /// The apply stage of a change of this kind and `action` (lower stages
    /// run first), for kinds that say their own; `None`: the kind's stage is
    /// in the apply's table (`reconcile::apply`).
    fn apply_stage(action: Action) -> Option<u8>
    where
        Self: Sized,
    {
        let _ = action;
        None
    }
}

/// `name`, or the live one when the change renames it (`before("name")`).
pub fn live_name(name: &str, before: &dyn Fn(&str) -> Option<Option<String>>) -> String {
    before("name").flatten().unwrap_or_else(|| name.to_owned())
}

/// The live dashboard of a log stream of `live`: its default one (`None`)
/// or the one of that name.
fn live_dashboard<'l>(
    live: &'l ProjectState,
    log_stream: &str,
    name: Option<&str>,
) -> Option<&'l DashboardState> {
    let run = live
        .log_streams
        .get(&ObjectKey::from(log_stream.to_owned()))?;
    match name {
        None => run.dashboard.as_deref(),
        Some(name) => run.dashboards.as_ref()?.iter().find(|d| d.name == name),
    }
}

impl Address {
    /// See [`KindAddress::collection`].
    pub fn collection(&self) -> Option<(String, &'static str)> {
        self.of_kind().collection()
    }

    /// The project the address is in, if any.
    pub fn project(&self) -> Option<&str> {
        self.of_kind().project()
    }

    /// The address as segments, the way targets are matched against it.
    pub fn segments(&self) -> Vec<Segment> {
        self.of_kind().segments()
    }

    /// The fields of this kind of object that hold keyed sets (shown as
    /// `field[key]` in differences).
    pub fn keyed_sets(&self) -> &'static [&'static str] {
        self.of_kind().keyed_sets()
    }

    /// See [`KindAddress::collection_size`].
    pub fn collection_size(&self, live: &ProjectState) -> usize {
        self.of_kind().collection_size(live)
    }

    /// See [`KindAddress::live_identity`].
    pub fn live_identity(
        &self,
        before: &dyn Fn(&str) -> Option<Option<String>>,
    ) -> Option<Address> {
        self.of_kind().live_identity(before)
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Target::scope(self.segments()).fmt(f)
    }
}

/// `name` quoted for an address (`]` and `\` escaped).
pub fn quote(name: &str) -> String {
    name.replace('\\', "\\\\").replace(']', "\\]")
}

/// The address of a log stream: `project[P].log_stream[L]`.
pub fn run(project: &str, log_stream: &str) -> String {
    format!(
        "project[{}].log_stream[{}]",
        quote(project),
        quote(log_stream)
    )
}

/// Where a dashboard's parts are: `trends` (the default dashboard) or
/// `dashboard[NAME]`.
pub fn dashboard_segment(dashboard: Option<&str>) -> String {
    match dashboard {
        None => "trends".to_owned(),
        Some(name) => format!("dashboard[{}]", quote(name)),
    }
}

/// The segment of a project.
pub fn project_segment(project: &str) -> Segment {
    Segment::named(Kind::Project, project)
}

/// The segments of a log stream's dashboard: the default one (`trends`) or
/// `dashboard[NAME]`.
fn dashboard_segments(project: &str, log_stream: &str, dashboard: Option<&str>) -> Vec<Segment> {
    vec![
        project_segment(project),
        Segment::run(RunKind::LogStream, log_stream),
        match dashboard {
            None => Segment::kind(Kind::Trends),
            Some(name) => Segment::named(Kind::Dashboard, name),
        },
    ]
}

/// The calling user's integration with a provider.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct IntegrationAddress {
    /// Provider.
    pub provider: String,
}

impl KindAddress for IntegrationAddress {
    fn segments(&self) -> Vec<Segment> {
        vec![Segment::named(Kind::Integration, &self.provider)]
    }

    fn project(&self) -> Option<&str> {
        None
    }
}

/// A named custom integration of the calling user.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct CustomIntegrationAddress {
    /// Its name.
    pub name: String,
}

impl KindAddress for CustomIntegrationAddress {
    fn segments(&self) -> Vec<Segment> {
        vec![Segment::named(Kind::CustomIntegration, &self.name)]
    }

    fn project(&self) -> Option<&str> {
        None
    }
}

/// Metric settings of a log stream or experiment.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct MetricSettingsAddress {
    /// Project.
    pub project: String,
    /// Log stream or experiment.
    pub run_kind: RunKind,
    /// Run, as the manifest refers to it.
    pub run: String,
}

impl KindAddress for MetricSettingsAddress {
    fn segments(&self) -> Vec<Segment> {
        vec![
            project_segment(&self.project),
            Segment::run(self.run_kind, &self.run),
            Segment::kind(Kind::MetricSettings),
        ]
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn keyed_sets(&self) -> &'static [&'static str] {
        &["scorers"]
    }
}

/// A dashboard of a log stream other than its default one: its name,
/// visibility and description.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct DashboardAddress {
    /// Project.
    pub project: String,
    /// Log stream.
    pub log_stream: String,
    /// Dashboard name.
    pub name: String,
}

impl KindAddress for DashboardAddress {
    fn segments(&self) -> Vec<Segment> {
        dashboard_segments(&self.project, &self.log_stream, Some(&self.name))
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn collection(&self) -> Option<(String, &'static str)> {
        Some((run(&self.project, &self.log_stream), "dashboards"))
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        live.log_streams
            .get(&ObjectKey::from(self.log_stream.clone()))
            .and_then(|r| r.dashboards.as_ref())
            .map_or(0, Vec::len)
    }

    fn live_identity(&self, before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::Dashboard(DashboardAddress {
            name: live_name(&self.name, before),
            ..self.clone()
        }))
    }
}

/// A section of a dashboard of a log stream.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct SectionAddress {
    /// Project.
    pub project: String,
    /// Log stream.
    pub log_stream: String,
    /// The dashboard, by name; `None`: the log stream's default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard: Option<String>,
    /// Section name.
    pub name: String,
}

impl KindAddress for SectionAddress {
    fn segments(&self) -> Vec<Segment> {
        let mut out =
            dashboard_segments(&self.project, &self.log_stream, self.dashboard.as_deref());
        out.push(Segment::named(Kind::Section, &self.name));
        out
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn collection(&self) -> Option<(String, &'static str)> {
        let dashboard = dashboard_segment(self.dashboard.as_deref());
        Some((
            format!("{}.{dashboard}", run(&self.project, &self.log_stream)),
            "sections",
        ))
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        live_dashboard(live, &self.log_stream, self.dashboard.as_deref())
            .map_or(0, |d| d.sections.len())
    }

    fn live_identity(&self, before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::Section(SectionAddress {
            name: live_name(&self.name, before),
            ..self.clone()
        }))
    }
}

/// The favorite state of a log stream's default dashboard.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FavoriteAddress {
    /// Project.
    pub project: String,
    /// Log stream.
    pub log_stream: String,
}

impl KindAddress for FavoriteAddress {
    fn segments(&self) -> Vec<Segment> {
        let mut out = dashboard_segments(&self.project, &self.log_stream, None);
        out.push(Segment::kind(Kind::Favorite));
        out
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }
}

/// A widget of a dashboard, in a section or at its top level.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct WidgetAddress {
    /// Project.
    pub project: String,
    /// Log stream.
    pub log_stream: String,
    /// The dashboard, by name; `None`: the log stream's default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard: Option<String>,
    /// The section it is declared in; `None`: the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Widget name.
    pub name: String,
}

impl KindAddress for WidgetAddress {
    fn segments(&self) -> Vec<Segment> {
        let mut out =
            dashboard_segments(&self.project, &self.log_stream, self.dashboard.as_deref());
        if let Some(section) = &self.section {
            out.push(Segment::named(Kind::Section, section));
        }
        out.push(Segment::named(Kind::Widget, &self.name));
        out
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    /// A dashboard's widgets are one collection, whichever section holds each.
    fn collection(&self) -> Option<(String, &'static str)> {
        let dashboard = dashboard_segment(self.dashboard.as_deref());
        Some((
            format!("{}.{dashboard}", run(&self.project, &self.log_stream)),
            "widgets",
        ))
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        live_dashboard(live, &self.log_stream, self.dashboard.as_deref())
            .and_then(|d| d.widgets.as_ref())
            .map_or(0, Vec::len)
    }

    fn live_identity(&self, before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::Widget(WidgetAddress {
            name: live_name(&self.name, before),
            section: before("section").unwrap_or_else(|| self.section.clone()),
            ..self.clone()
        }))
    }
}

/// The settings of a dashboard (interval, time range, group-by).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct SettingsAddress {
    /// Project.
    pub project: String,
    /// Log stream.
    pub log_stream: String,
    /// The dashboard, by name; `None`: the log stream's default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard: Option<String>,
}

impl KindAddress for SettingsAddress {
    fn segments(&self) -> Vec<Segment> {
        let mut out =
            dashboard_segments(&self.project, &self.log_stream, self.dashboard.as_deref());
        out.push(Segment::kind(Kind::Settings));
        out
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_like_paths() {
        let a = Address::Section(SectionAddress {
            project: "demo".into(),
            log_stream: "prod".into(),
            dashboard: None,
            name: "Latency [p95]".into(),
        });
        assert_eq!(
            a.to_string(),
            "project[demo].log_stream[prod].trends.section[Latency [p95\\]]"
        );
        let w = Address::Widget(WidgetAddress {
            project: "demo".into(),
            log_stream: "prod".into(),
            dashboard: Some("On-call".into()),
            section: Some("Errors".into()),
            name: "5xx".into(),
        });
        assert_eq!(
            w.to_string(),
            "project[demo].log_stream[prod].dashboard[On-call].section[Errors].widget[5xx]"
        );
    }
}
