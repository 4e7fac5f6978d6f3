//! Loading everything an export writes: the selected projects with every log
//! stream and experiment (metric settings, and each log stream's trends
//! dashboards, widgets and settings included), both kinds of templates, the
//! scorer catalog, and the caller's integrations.
//!
//! Reads go through the plan's own readers (`crate::reconcile::read`) and
//! land in the plan's state types, gathered as a [`Snapshot`] that `crate::export`
//! renders without reading anything itself ([`ProjectState`], [`RunState`],
//! [`Catalog`]), keyed by id, so what is exported is read exactly as `plan`
//! reads it. Reads run concurrently; the client bounds how many are in flight.
//!
//! Requests, for P projects of L log streams and E experiments: the project
//! listing, the scorer catalog, the integration listing and one read per
//! provider; per project, one log stream search, one experiment search and
//! one listing per template kind; one metric-settings read per run; per log
//! stream, one read of its default dashboard, one dashboard listing and one
//! read per other dashboard the caller sees.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;

use super::read::catalog::read_catalog;
use super::read::integrations::{list_providers, read_integrations};
use super::read::projects::{FoundProject, list_projects};
use super::read::runs::list_runs;
use super::read::{ReadError, RunParts, read_run};
use crate::api::ProjectItem;
use crate::client::Client;
use crate::plan::RunKind;
use crate::state::snapshot::{ProjectRef, Selection, Snapshot};
use crate::state::{Catalog, IntegrationState, MissingObject, ObjectKey, ProjectState, RunState};
use crate::suggest::nearest;

/// Why loading failed.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// A read failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Projects named in the selection do not exist (with the nearest names).
    #[error("{}", render_missing(.0))]
    UnknownProjects(Vec<MissingObject>),
}

fn render_missing(missing: &[MissingObject]) -> String {
    let lines: Vec<String> = missing.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

/// Loads everything `selection` names.
pub async fn collect(client: &Client, selection: &Selection) -> Result<Snapshot, CollectError> {
    let no_pins = BTreeSet::new();
    let catalog = read_catalog(client, &no_pins);
    let integrations = async {
        if selection.integrations {
            collect_integrations(client).await.map(Some)
        } else {
            Ok(None)
        }
    };
    let global = crate::kinds::GlobalSelection::of_export(selection);
    let global = crate::kinds::read_global_parts(client, &global);
    let (listed, catalog, integrations, global) =
        tokio::try_join!(list_projects(client), catalog, integrations, global)?;
    let (integrations, mut warnings) = match integrations {
        Some((found, warnings)) => (Some(found), warnings),
        None => (None, Vec::new()),
    };
    let mut visible: Vec<ProjectRef> = listed
        .iter()
        .map(|p| ProjectRef {
            name: p.name.clone(),
            id: p.id.clone(),
        })
        .collect();
    visible.sort();
    visible.dedup();
    let selected = select(&listed, &selection.projects)?;
    let catalog = &catalog;
    let loads = selected.iter().map(|p| load_project(client, catalog, p));
    let mut projects = Vec::new();
    for (project, project_warnings) in try_join_all(loads).await? {
        projects.push(project);
        warnings.extend(project_warnings);
    }
    projects.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    Ok(Snapshot {
        visible,
        projects,
        catalog: catalog.clone(),
        integrations,
        global,
        warnings,
    })
}

/// The listed projects the selection names (every one when it names none),
/// or every name that matched nothing, with the nearest names.
fn select<'p>(
    listed: &'p [ProjectItem],
    names: &[String],
) -> Result<Vec<&'p ProjectItem>, CollectError> {
    let mut seen = BTreeSet::new();
    let mut out: Vec<&ProjectItem> = listed
        .iter()
        .filter(|p| names.is_empty() || names.contains(&p.name))
        .filter(|p| seen.insert(p.id.clone()))
        .collect();
    out.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    let mut missing: Vec<MissingObject> = names
        .iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|n| !listed.iter().any(|p| &&p.name == n))
        .map(|n| MissingObject {
            kind: "project".to_owned(),
            key: ObjectKey::Name(n.clone()),
            project: None,
            suggestions: nearest(n, listed.iter().map(|p| p.name.as_str())),
        })
        .collect();
    if missing.is_empty() {
        Ok(out)
    } else {
        missing.sort_by(|a, b| a.key.cmp(&b.key));
        Err(CollectError::UnknownProjects(missing))
    }
}

async fn collect_integrations(
    client: &Client,
) -> Result<(Vec<IntegrationState>, Vec<String>), ReadError> {
    let providers = list_providers(client).await?;
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for (provider, config) in read_integrations(client, providers).await? {
        match config {
            Some(config) => found.push(config),
            None => warnings.push(format!(
                "integration `{provider}` is listed but could not be read; it was not exported"
            )),
        }
    }
    Ok((found, warnings))
}

async fn load_project(
    client: &Client,
    catalog: &Catalog,
    project: &ProjectItem,
) -> Result<(ProjectState, Vec<String>), ReadError> {
    let found = FoundProject {
        id: project.id.clone(),
        name: project.name.clone(),
    };
    let found = &found;
    let name = project.name.as_str();
    let (log_streams, experiments, parts) = tokio::try_join!(
        list_runs(client, found, RunKind::LogStream),
        list_runs(client, found, RunKind::Experiment),
        crate::kinds::read_all_project_parts(client, project),
    )?;
    // Every run's metric settings; a log stream's dashboards too.
    let log_stream_reads = log_streams.iter().map(|ls| {
        let parts = RunParts::all(RunKind::LogStream);
        read_run(client, catalog, found, RunKind::LogStream, ls, parts)
    });
    let experiment_reads = experiments.iter().map(|e| {
        let parts = RunParts::all(RunKind::Experiment);
        read_run(client, catalog, found, RunKind::Experiment, e, parts)
    });
    let (log_streams, experiments) = tokio::try_join!(
        try_join_all(log_stream_reads),
        try_join_all(experiment_reads)
    )?;
    let mut warnings = Vec::new();
    for (kind, run) in log_streams
        .iter()
        .map(|r| ("log stream", r))
        .chain(experiments.iter().map(|r| ("experiment", r)))
    {
        if run.metric_settings.is_none() {
            warnings.push(format!(
                "{kind} `{}` of project `{name}` disappeared while it was exported; it was left out",
                run.name
            ));
        }
    }
    let keyed = |runs: Vec<RunState>| -> BTreeMap<ObjectKey, RunState> {
        runs.into_iter()
            .filter(|r| r.metric_settings.is_some())
            .map(|r| (ObjectKey::Id(r.id.clone()), r))
            .collect()
    };
    Ok((
        ProjectState {
            id: project.id.clone(),
            name: project.name.clone(),
            log_streams: keyed(log_streams),
            experiments: keyed(experiments),
            parts,
        },
        warnings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(name: &str, id: &str) -> ProjectItem {
        serde_json::from_value(serde_json::json!({
            "id": id, "name": name, "created_at": "t", "updated_at": "t"
        }))
        .unwrap()
    }

    #[test]
    fn selection_by_name_keeps_duplicates_and_names_the_nearest_for_unknowns() {
        let listed = vec![item("b", "2"), item("a", "1"), item("a", "3")];
        let all = select(&listed, &[]).unwrap();
        let ids: Vec<&str> = all.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["1", "3", "2"]);
        let some = select(&listed, &["a".to_owned()]).unwrap();
        assert_eq!(some.len(), 2);
        let Err(CollectError::UnknownProjects(missing)) =
            select(&listed, &["demo-projct".to_owned(), "a".to_owned()])
        else {
            panic!("an unknown name is an error");
        };
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].key, ObjectKey::Name("demo-projct".into()));
    }
}
