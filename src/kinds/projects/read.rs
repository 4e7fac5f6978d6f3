//! What the reader makes of a declared project or log stream that does not
//! exist: not a missing object (an error), but one this plan creates, found
//! with a pending id (`super::pending`) and read as the service makes it,
//! empty (no templates; a log stream's metric settings as the service
//! creates them), without asking the service. Only a name can be created:
//! a project or log stream declared by id that does not exist stays missing,
//! as do experiments (evalctl does not create them).

use std::collections::BTreeMap;

use super::pending;
use crate::plan::RunKind;
use crate::reconcile::read::RunParts;
use crate::reconcile::read::projects::FoundProject;
use crate::reconcile::read::runs::FoundRun;
use crate::state::metric_settings::metric_settings_from_wire;
use crate::state::{Catalog, MissingObject, ObjectKey, RunState, Traffic};

/// Moves the projects declared by name that reading found missing into
/// `found`, pending.
pub fn pending_projects(
    found: &mut BTreeMap<ObjectKey, FoundProject>,
    missing: &mut Vec<MissingObject>,
) {
    missing.retain(|m| match &m.key {
        ObjectKey::Name(name) if m.kind == "project" => {
            found.insert(
                m.key.clone(),
                FoundProject {
                    id: pending::project_id(name),
                    name: name.clone(),
                },
            );
            false
        }
        _ => true,
    });
}

/// Moves the log streams declared by name that reading found missing into
/// `found`, pending.
pub fn pending_log_streams(
    kind: RunKind,
    found: &mut BTreeMap<ObjectKey, FoundRun>,
    missing: &mut Vec<MissingObject>,
) {
    if kind != RunKind::LogStream {
        return;
    }
    missing.retain(|m| match &m.key {
        ObjectKey::Name(name) if m.kind == "log stream" => {
            found.insert(
                m.key.clone(),
                FoundRun {
                    id: pending::log_stream_id(name),
                    name: name.clone(),
                    traffic: Traffic::default(),
                },
            );
            false
        }
        _ => true,
    });
}

/// The runs `keys` name in a project this plan creates: log streams by
/// name are pending, everything else is missing.
pub fn runs_of_pending_project(
    project: &FoundProject,
    kind: RunKind,
    keys: &[ObjectKey],
) -> (BTreeMap<ObjectKey, FoundRun>, Vec<MissingObject>) {
    let noun = match kind {
        RunKind::LogStream => "log stream",
        RunKind::Experiment => "experiment",
    };
    let mut missing: Vec<MissingObject> = keys
        .iter()
        .map(|key| MissingObject {
            kind: noun.to_owned(),
            key: key.clone(),
            project: Some(project.name.clone()),
            suggestions: Vec::new(),
        })
        .collect();
    let mut found = BTreeMap::new();
    pending_log_streams(kind, &mut found, &mut missing);
    (found, missing)
}

/// A pending log stream as the service creates it: default metric
/// settings, no dashboard but its default one (left unread: `None`), no
/// other dashboards.
pub fn pending_run(catalog: &Catalog, run: &FoundRun, parts: RunParts) -> RunState {
    RunState {
        id: run.id.clone(),
        name: run.name.clone(),
        metric_settings: parts
            .metric_settings
            .then(|| Box::new(metric_settings_from_wire(catalog, &Default::default()))),
        dashboard: None,
        dashboards: parts.dashboards.map(|_| Vec::new()),
        traffic: run.traffic,
    }
}

pub use super::pending::is_pending;

/// A live log stream the manifests do not declare, in a project that
/// manages its log streams: what deleting it would destroy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveLogStream {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Its traces, as the search counted them.
    pub num_traces: Option<u64>,
}

/// The log streams of `all` (a project's, listed with their counts) that
/// are not among `declared` (those the manifests name, found).
pub fn undeclared<S>(all: Vec<FoundRun>, declared: &[(S, FoundRun)]) -> Vec<LiveLogStream> {
    let mut out: Vec<LiveLogStream> = all
        .into_iter()
        .filter(|r| !declared.iter().any(|(_, d)| d.id == r.id))
        .map(|r| LiveLogStream {
            id: r.id,
            name: r.name,
            num_traces: r.traffic.num_traces,
        })
        .collect();
    out.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    out
}
