//! Live state as plain data: what the service holds for the objects a
//! command reads, one module per resource kind, each reduced to what is
//! compared (and the counts that warnings need) and normalized as it
//! arrives, so that memory follows what is compared, not what the service
//! returns.
//!
//! The readers that fill it are in `crate::reconcile::read`; the planner
//! reads it; nothing here does I/O or knows about plans.
//!
//! - [`key`]: how manifests refer to objects ([`ObjectKey`]), and objects
//!   that were looked for and not found ([`MissingObject`]).
//! - [`catalog`]: the scorer catalog.
//! - [`metric_settings`]: a run's scorers and sampling rules, normalized.
//! - [`trends`]: a log stream's dashboards: the default one and the others,
//!   their sections, widgets and settings.
//! - the kinds in folders of their own (`crate::kinds`): their state in
//!   each project's [`crate::kinds::ProjectParts`].
//! - [`traffic`]: a run's traces and spans as the run search counts them.
//! - [`integrations`]: the caller's model-provider integrations, and its
//!   named custom integrations (as the listing shows them).
//! - [`wire`]: the same state as the service returns it, normalized by the
//!   readers' own functions (for tests and fixtures written as JSON).

pub mod catalog;
pub mod integrations;
pub mod key;
pub mod metric_settings;
pub mod snapshot;
pub mod traffic;
pub mod trends;
pub mod wire;

use std::collections::BTreeMap;

pub use catalog::{Catalog, CatalogScorer, VersionRef};
pub use integrations::{CustomIntegrationState, IntegrationState};
pub use key::{MissingObject, ObjectKey};
pub use metric_settings::NormMetricSettings;
pub use traffic::Traffic;
pub use trends::{DashboardState, SectionState, SettingsState, TrendsParts, WidgetState};

/// The live state of the objects a command read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Projects, by how the manifests refer to them (by id for an export).
    pub projects: BTreeMap<ObjectKey, ProjectState>,
    /// Integrations of the calling user, by provider; `None` when the user
    /// has no integration of that provider.
    pub integrations: BTreeMap<String, Option<IntegrationState>>,
    /// Named custom integrations of the calling user, by name; `None` when
    /// the user has none of that name.
    pub custom_integrations: BTreeMap<String, Option<CustomIntegrationState>>,
    /// The scorer catalog.
    pub catalog: Catalog,
    /// Objects that were looked for and do not exist, with the nearest names.
    pub missing: Vec<MissingObject>,
    /// What the kinds of the registry read of the organization beside the
    /// projects (the custom scorers, the global prompt templates, the
    /// projects the repo owns and does not declare), when read:
    /// `kinds::GlobalParts`.
    pub global: crate::kinds::GlobalParts,
}

/// A project and the parts of it that were read.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectState {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Log streams, by how the manifests refer to them.
    pub log_streams: BTreeMap<ObjectKey, RunState>,
    /// Experiments, by how the manifests refer to them.
    pub experiments: BTreeMap<ObjectKey, RunState>,
    /// The state of the kinds a project holds that keep it in the registry
    /// (`kinds::ProjectParts`: one field per kind).
    pub parts: crate::kinds::ProjectParts,
}

impl ProjectState {
    /// Drops what planning compares (templates, each run's metric settings
    /// and dashboards) and keeps ids and names: what is left of a project
    /// once it is planned, for reading it again by id.
    pub fn release_compared(&mut self) {
        self.parts.release_compared();
        for run in self
            .log_streams
            .values_mut()
            .chain(self.experiments.values_mut())
        {
            run.metric_settings = None;
            run.dashboard = None;
            run.dashboards = None;
        }
    }
}

/// A log stream or experiment and the parts of it that were read.
#[derive(Debug, Clone, PartialEq)]
pub struct RunState {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Metric settings, when read; `None` also when the run vanished
    /// between being found and being read. Boxed, as the dashboard: a run
    /// is kept, released of both, once its project is planned (ids and
    /// names of 10,000 runs), and would otherwise keep their room.
    pub metric_settings: Option<Box<NormMetricSettings>>,
    /// The default trends dashboard, when read.
    pub dashboard: Option<Box<DashboardState>>,
    /// The log stream's other dashboards the caller sees, in the listing's
    /// order, when read.
    pub dashboards: Option<Vec<DashboardState>>,
    /// What the run search counted of it (for the judge-call forecast).
    pub traffic: Traffic,
}
