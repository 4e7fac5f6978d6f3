//! What the reader makes of a declared project or log stream that does not
//! exist: not a missing object (an error), but one this plan creates, found
//! with a pending id (`super::pending`) and read as the service makes it,
//! empty (no templates; a log stream's metric settings as the service
//! creates them), without asking the service. Only a name can be created:
//! a project or log stream declared by id that does not exist stays missing,
//! as do experiments (evalctl does not create them).
//!
//! A project or log stream declared by a name that does not exist, with
//! `renamed_from` naming one that does, is that one (the planner renames
//! it), found with one more read by the old names.

use std::collections::BTreeMap;

use super::pending;
use crate::client::Client;
use crate::plan::RunKind;
use crate::reconcile::read::projects::{FoundProject, find_projects};
use crate::reconcile::read::runs::{FoundRun, find_runs};
use crate::reconcile::read::{ProjectSelection, ReadError, RunParts, RunSelection};
use crate::state::metric_settings::metric_settings_from_wire;
use crate::state::{
    Catalog, DashboardState, MissingObject, ObjectKey, RunState, SettingsState, Traffic,
};

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
/// settings, its default dashboard (empty, with the service's default
/// settings, named by a pending id that apply resolves once the log stream
/// exists: [`pending::default_dashboard_id`]), no other dashboards.
pub fn pending_run(catalog: &Catalog, run: &FoundRun, parts: RunParts) -> RunState {
    RunState {
        id: run.id.clone(),
        name: run.name.clone(),
        metric_settings: parts
            .metric_settings
            .then(|| Box::new(metric_settings_from_wire(catalog, &Default::default()))),
        dashboard: parts
            .trends
            .map(|_| Box::new(pending_default_dashboard(&run.name))),
        dashboards: parts.dashboards.map(|_| Vec::new()),
        traffic: run.traffic,
    }
}

/// The default dashboard the service gives a new log stream `name`: no
/// section, no widget, not favorited, its settings an hour's buckets over
/// the last 7 days.
fn pending_default_dashboard(name: &str) -> DashboardState {
    DashboardState {
        id: pending::default_dashboard_id(name),
        name: "Default".to_owned(),
        is_default: true,
        visibility: "project".to_owned(),
        created_by: None,
        is_favorited: false,
        sections: Vec::new(),
        widgets: Some(Vec::new()),
        settings: Some(SettingsState {
            interval_mins: 60,
            relative_time: Some("last_7_days".to_owned()),
            group_by: None,
            description: None,
        }),
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

/// The names `renamed_from` gives for the keys reading found missing (by
/// name), each with the key.
fn renames<'w>(
    missing: &[MissingObject],
    kind: &str,
    wanted: impl Iterator<Item = (&'w ObjectKey, &'w [String])>,
) -> Vec<(ObjectKey, &'w [String])> {
    wanted
        .filter(|(key, old)| {
            !old.is_empty()
                && matches!(key, ObjectKey::Name(_))
                && missing.iter().any(|m| m.kind == kind && &m.key == *key)
        })
        .map(|(key, old)| (key.clone(), old))
        .collect()
}

/// Every old name of `renames`, as keys to look up.
fn old_names(renames: &[(ObjectKey, &[String])]) -> Vec<ObjectKey> {
    renames
        .iter()
        .flat_map(|(_, names)| names.iter().map(|n| ObjectKey::Name(n.clone())))
        .collect()
}

/// Moves each renamed key whose first old name `live` holds from `missing`
/// (of `kind`) into `found`, with the live object.
fn take_renamed<T: Clone>(
    renames: Vec<(ObjectKey, &[String])>,
    kind: &str,
    live: &BTreeMap<ObjectKey, T>,
    found: &mut BTreeMap<ObjectKey, T>,
    missing: &mut Vec<MissingObject>,
) {
    for (key, names) in renames {
        let first = names
            .iter()
            .find_map(|n| live.get(&ObjectKey::Name(n.clone())));
        if let Some(object) = first {
            found.insert(key.clone(), object.clone());
            missing.retain(|m| !(m.kind == kind && m.key == key));
        }
    }
}

/// Moves the projects reading found missing by name, that exist under a
/// name of their `renamed_from`, into `found` (with that live name): the
/// planner renames them.
pub async fn renamed_projects(
    client: &Client,
    wanted: &[ProjectSelection],
    found: &mut BTreeMap<ObjectKey, FoundProject>,
    missing: &mut Vec<MissingObject>,
) -> Result<(), ReadError> {
    let renames = renames(
        missing,
        "project",
        wanted.iter().map(|w| (&w.key, w.renamed_from.as_slice())),
    );
    if renames.is_empty() {
        return Ok(());
    }
    let (live, _) = find_projects(client, &old_names(&renames)).await?;
    take_renamed(renames, "project", &live, found, missing);
    Ok(())
}

/// Like [`renamed_projects`], for the log streams of `project`.
pub async fn renamed_log_streams(
    client: &Client,
    project: &FoundProject,
    kind: RunKind,
    wanted: &[RunSelection],
    found: &mut BTreeMap<ObjectKey, FoundRun>,
    missing: &mut Vec<MissingObject>,
) -> Result<(), ReadError> {
    if kind != RunKind::LogStream {
        return Ok(());
    }
    let renames = renames(
        missing,
        "log stream",
        wanted.iter().map(|w| (&w.key, w.renamed_from.as_slice())),
    );
    if renames.is_empty() {
        return Ok(());
    }
    let (live, _) = find_runs(client, project, kind, &old_names(&renames)).await?;
    take_renamed(renames, "log stream", &live, found, missing);
    Ok(())
}

/// Whether a project or log stream read earlier, under `key`, is as the
/// manifests name it: neither to be created (pending) nor to be renamed. A
/// confirmation finds one that is not again, by name.
pub fn settled(key: &ObjectKey, id: &str, name: &str) -> bool {
    !is_pending(id) && !matches!(key, ObjectKey::Name(n) if n != name)
}

/// A project's description and labels, as read (managed when the manifests
/// write them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectMeta {
    /// Description (`None`: the service holds none).
    pub description: Option<String>,
    /// Labels, as the service lists them.
    pub labels: Vec<String>,
}

impl ProjectMeta {
    /// As a project listing shows it.
    pub fn of_item(item: &crate::api::ProjectItem) -> Self {
        ProjectMeta {
            description: item.description.clone(),
            labels: item.labels.clone(),
        }
    }
}

/// The description and labels of `project`, when `wanted` (one GET of the
/// project); a project this plan creates has none, one that vanished since
/// it was found is `None` (nothing is planned for them).
pub async fn read_meta(
    client: &Client,
    project: &FoundProject,
    wanted: bool,
) -> Result<Option<ProjectMeta>, ReadError> {
    if !wanted {
        return Ok(None);
    }
    if is_pending(&project.id) {
        return Ok(Some(ProjectMeta::default()));
    }
    let read =
        client
            .get_project(&project.id)
            .await
            .map_err(crate::reconcile::read::error::ctx(|| {
                format!("project `{}`", project.name)
            }))?;
    Ok(read.map(|p| ProjectMeta {
        description: p.description,
        labels: p.labels,
    }))
}
