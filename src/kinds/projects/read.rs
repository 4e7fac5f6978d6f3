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
//! it), found with one more read by the old names. The core's reader calls
//! these through the registry (`crate::kinds::missing_projects`,
//! `missing_runs`, `runs_of_pending_project`, `pending_run`).
//!
//! A project's own live state beside what the kinds it holds read (its
//! description and labels, its undeclared log streams) is read here too
//! ([`ProjectOwn`], in `crate::kinds::ProjectParts`).

use std::collections::BTreeMap;

use super::pending;
use crate::client::Client;
use crate::plan::RunKind;
use crate::reconcile::read::projects::{FoundProject, find_projects};
use crate::reconcile::read::runs::{FoundRun, find_runs, list_runs};
use crate::reconcile::read::{ProjectSelection, ReadError, RunParts, RunSelection};
use crate::state::metric_settings::metric_settings_from_wire;
use crate::state::{
    Catalog, DashboardState, MissingObject, ObjectKey, RunState, SettingsState, Traffic,
};

/// Moves the projects declared by name that reading found missing into
/// `found`, pending.
fn pending_projects(
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
fn pending_log_streams(
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

use crate::reconcile::pending::is_pending;

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
/// are not among `declared` (the ids of those the manifests name, found).
fn undeclared(all: Vec<FoundRun>, declared: &[String]) -> Vec<LiveLogStream> {
    let mut out: Vec<LiveLogStream> = all
        .into_iter()
        .filter(|r| !declared.contains(&r.id))
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
async fn renamed_projects(
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
async fn renamed_log_streams(
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

/// Accounts for the projects `wanted` names that reading found `missing`:
/// found by a name of their `renamed_from` (renamed), else, declared by
/// name, to be created (pending).
pub(crate) async fn missing_projects(
    client: &Client,
    wanted: &[ProjectSelection],
    found: &mut BTreeMap<ObjectKey, FoundProject>,
    missing: &mut Vec<MissingObject>,
) -> Result<(), ReadError> {
    renamed_projects(client, wanted, found, missing).await?;
    pending_projects(found, missing);
    Ok(())
}

/// Accounts for the runs of `kind` of `project` that `wanted` names and
/// reading found `missing`: log streams found by a name of their
/// `renamed_from` (renamed), else, declared by name, to be created
/// (pending).
pub(crate) async fn missing_runs(
    client: &Client,
    project: &FoundProject,
    kind: RunKind,
    wanted: &[RunSelection],
    found: &mut BTreeMap<ObjectKey, FoundRun>,
    missing: &mut Vec<MissingObject>,
) -> Result<(), ReadError> {
    renamed_log_streams(client, project, kind, wanted, found, missing).await?;
    pending_log_streams(kind, found, missing);
    Ok(())
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
async fn read_meta(
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

/// A project's own live state, beside what the kinds it holds read
/// (`crate::kinds::ProjectParts::project`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectOwn {
    /// The live log streams the manifests do not declare, when the project
    /// manages its log streams (`prune_log_streams`).
    pub undeclared_log_streams: Option<Vec<LiveLogStream>>,
    /// Its description and labels, when read (the manifests manage them).
    pub meta: Option<ProjectMeta>,
}

impl ProjectOwn {
    /// As a project listing shows it (an export: every log stream is
    /// exported, none is undeclared).
    pub fn of_item(item: &crate::api::ProjectItem) -> Self {
        ProjectOwn {
            undeclared_log_streams: None,
            meta: Some(ProjectMeta::of_item(item)),
        }
    }
}

/// Reads what `wanted` selects of `project`'s own live state: its log
/// streams other than `declared` (the ids of those the manifests declare,
/// found), then its description and labels. A project this plan creates
/// (`pending`) holds no log streams yet.
pub(crate) async fn read_selected(
    client: &Client,
    wanted: &ProjectSelection,
    project: &FoundProject,
    declared: &[String],
    pending: bool,
) -> Result<ProjectOwn, ReadError> {
    let undeclared_log_streams = if wanted.undeclared_log_streams && !pending {
        let all = list_runs(client, project, RunKind::LogStream).await?;
        Some(undeclared(all, declared))
    } else {
        None
    };
    let meta = read_meta(client, project, wanted.meta).await?;
    Ok(ProjectOwn {
        undeclared_log_streams,
        meta,
    })
}

/// Selects what is read of a project's own live state, as its `spec`
/// declares it and `options` reach it: its undeclared log streams (it
/// manages its log streams, with `--prune`) and its description and labels
/// (the manifests manage them).
pub(crate) fn select(
    project: &str,
    spec: &crate::manifest::types::ProjectSpec,
    options: &crate::plan::PlanOptions,
    wanted: &mut ProjectSelection,
) {
    wanted.undeclared_log_streams = spec.prune_log_streams && options.prune;
    wanted.meta = super::plan::manages_meta(spec, project, options);
}
