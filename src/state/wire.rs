//! Live state as the service returns it, before it is reduced: the shape
//! tests and fixtures write as JSON. [`WireState::normalize`] reduces it
//! with the very functions the readers apply to each response, so a state
//! built here is the state the readers would have built from the same
//! answers.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::metric_settings::metric_settings_from_wire;
use super::{
    Catalog, CatalogScorer, CustomIntegrationState, DashboardState, IntegrationState,
    MissingObject, ObjectKey, ProjectState, RunState, State, VersionRef,
};
use crate::api::{MetricSettingsResponse, Scorer, ScorerVersionRecord, TrendsDashboard};

/// Live state as the service returns it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WireState {
    /// Projects, by how the manifests refer to them.
    #[serde(default)]
    pub projects: BTreeMap<ObjectKey, WireProject>,
    /// Integrations, by provider.
    #[serde(default)]
    pub integrations: BTreeMap<String, Option<IntegrationState>>,
    /// Named custom integrations, by name.
    #[serde(default)]
    pub custom_integrations: BTreeMap<String, Option<CustomIntegrationState>>,
    /// The scorer catalog.
    #[serde(default)]
    pub catalog: WireCatalog,
    /// Objects not found.
    #[serde(default)]
    pub missing: Vec<MissingObject>,
}

/// The catalog as the service returns it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WireCatalog {
    /// Scorers.
    #[serde(default)]
    pub scorers: Vec<Scorer>,
    /// Versions, by scorer id.
    #[serde(default)]
    pub versions: BTreeMap<String, Vec<ScorerVersionRecord>>,
}

/// A project as the service returns its parts.
#[derive(Debug, Clone, Deserialize)]
pub struct WireProject {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Log streams.
    #[serde(default)]
    pub log_streams: BTreeMap<ObjectKey, WireRun>,
    /// Experiments.
    #[serde(default)]
    pub experiments: BTreeMap<ObjectKey, WireRun>,
    /// The kinds a project holds, as the service returns them (their
    /// fields beside the project's own).
    #[serde(flatten)]
    pub parts: crate::kinds::WireProjectParts,
}

/// A run as the service returns its parts.
#[derive(Debug, Clone, Deserialize)]
pub struct WireRun {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Metric settings, when read.
    #[serde(default)]
    pub metric_settings: Option<MetricSettingsResponse>,
    /// The default dashboard, when read.
    #[serde(default)]
    pub dashboard: Option<TrendsDashboard>,
    /// The other dashboards, when read.
    #[serde(default)]
    pub dashboards: Option<Vec<TrendsDashboard>>,
    /// What the run search counted (absent: nothing).
    #[serde(default)]
    pub traffic: super::Traffic,
}

impl WireCatalog {
    /// The catalog, reduced.
    pub fn normalize(self) -> Catalog {
        Catalog {
            scorers: self.scorers.into_iter().map(CatalogScorer::from).collect(),
            versions: self
                .versions
                .into_iter()
                .map(|(id, vs)| (id, vs.iter().map(VersionRef::from).collect()))
                .collect(),
        }
    }
}

impl WireState {
    /// The state the readers would build from these answers.
    pub fn normalize(self) -> State {
        let catalog = self.catalog.normalize();
        let run = |r: WireRun| RunState {
            metric_settings: r
                .metric_settings
                .as_ref()
                .map(|m| Box::new(metric_settings_from_wire(&catalog, m))),
            dashboard: r
                .dashboard
                .as_ref()
                .map(|d| Box::new(DashboardState::from(d))),
            dashboards: r
                .dashboards
                .as_ref()
                .map(|ds| ds.iter().map(DashboardState::from).collect()),
            id: r.id,
            name: r.name,
            traffic: r.traffic,
        };
        let projects = self
            .projects
            .into_iter()
            .map(|(key, p)| {
                let project = ProjectState {
                    id: p.id,
                    name: p.name,
                    log_streams: p
                        .log_streams
                        .into_iter()
                        .map(|(k, r)| (k, run(r)))
                        .collect(),
                    experiments: p
                        .experiments
                        .into_iter()
                        .map(|(k, r)| (k, run(r)))
                        .collect(),
                    parts: p.parts.normalize(),
                };
                (key, project)
            })
            .collect();
        State {
            projects,
            integrations: self.integrations,
            custom_integrations: self.custom_integrations,
            catalog,
            missing: self.missing,
            global: crate::kinds::GlobalParts::default(),
        }
    }
}
