//! The one read path: one reader per resource kind, each knowing how to
//! find its objects, read them and reduce them to `crate::state` as they
//! arrive. Every command reads through them, with different selectors:
//!
//! - [`read_state`]: what the manifests name, narrowed to the targets
//!   ([`Selection`]): `plan`, `apply`, `drift`, and the confirmation after an
//!   apply (the touched addresses as targets). Those commands read in two
//!   steps, [`find`] (catalog, integrations, projects and runs found) then
//!   [`read_projects`], which hands each project to the planner as it
//!   arrives (`crate::reconcile::read_and_plan`);
//! - [`touched`]: the objects a saved plan's changes name, by id: the check
//!   before `apply --plan` and its confirmation after;
//! - `crate::reconcile::collect`: everything the credentials can see.
//!
//! Requests, for P projects with L runs each: one project listing (a
//! `one_of` name filter, paginated), one log stream search and one
//! experiment search per project (also `one_of`; each with
//! `include_counts`, which brings the traffic the forecast reads), one metric-settings read
//! and one dashboard read per managed run (and, where other dashboards are
//! managed, one dashboard listing and one read per other dashboard), one
//! template listing per managed kind, the scorer catalog once (when metric
//! settings are compared), the versions of pinned scorers, one read per
//! integration, and one integration listing when named custom integrations
//! are declared. Objects that do not
//! exist are collected with the nearest existing names (one extra listing,
//! only when something is missing). The client bounds requests in flight.

pub mod catalog;
pub mod error;
pub mod integrations;
pub mod metric_settings;
pub mod projects;
pub mod runs;
pub mod selection;
pub mod touched;
pub mod trends;

use std::collections::BTreeMap;

use futures::future::try_join_all;
use futures::{StreamExt, TryStreamExt};

pub use error::ReadError;
pub use selection::{ProjectSelection, RunParts, RunSelection, Selection};

use crate::reconcile::pending::is_pending;
use error::ctx;
use projects::{FoundProject, find_projects};
use runs::{FoundRun, find_runs, noun};

use crate::client::Client;
use crate::plan::RunKind;
use crate::state::{Catalog, MissingObject, ObjectKey, ProjectState, RunState, State};

/// Reads the live state of everything `selection` names, whole (a
/// three-way plan plans several manifest sets against it).
pub async fn read_state(client: &Client, selection: &Selection) -> Result<State, ReadError> {
    let Found {
        mut state,
        projects,
    } = find(client, selection, None).await?;
    state.projects = read_projects(client, &state.catalog, projects, |_, _| {}).await?;
    Ok(state)
}

/// What is read before the projects' contents: the state but its projects
/// (the catalog, integrations, the objects found missing), and the
/// projects and runs found, with what to read of each.
pub struct Found<'s> {
    /// Live state without its projects.
    pub state: State,
    /// The projects found, to give [`read_projects`].
    pub projects: Vec<Discovered<'s>>,
}

/// Reads the catalog and integrations `selection` names and finds its
/// projects and runs (ids and names), taking those `known` (a state read
/// earlier) already holds from it, without searching again: how an apply is
/// confirmed (one round trip of reads, not three).
pub async fn find<'s>(
    client: &Client,
    selection: &'s Selection,
    known: Option<&State>,
) -> Result<Found<'s>, ReadError> {
    let catalog = async {
        match (&selection.catalog, known) {
            // The catalog does not change with an apply, unless it made
            // custom scorers: otherwise the one known is kept.
            (Some(_), Some(known)) if !selection.global.may_change_catalog() => {
                Ok(known.catalog.clone())
            }
            (Some(pinned), _) => catalog::read_catalog(client, pinned).await,
            (None, _) => Ok(Catalog::default()),
        }
    };
    let integrations = integrations::read_integrations(client, selection.integrations.clone());
    let custom = integrations::read_custom_integrations(client, &selection.custom_integrations);
    let discovered = discover(client, &selection.projects, known);
    let global = crate::kinds::read_global_parts(client, &selection.global);
    let (catalog, integrations, custom_integrations, (projects, mut missing), global) =
        tokio::try_join!(catalog, integrations, custom, discovered, global)?;
    missing.sort();
    Ok(Found {
        state: State {
            projects: BTreeMap::new(),
            integrations: integrations.into_iter().collect(),
            custom_integrations,
            catalog,
            missing,
            global,
        },
        projects,
    })
}

/// Reads the contents of the projects `found` found ([`PROJECTS_AT_ONCE`]
/// at a time), giving each to `each` as it arrives (what lets a caller plan
/// a project and release what it no longer needs before the next ones
/// arrive), and returns them as `each` left them.
pub async fn read_projects(
    client: &Client,
    catalog: &Catalog,
    found: Vec<Discovered<'_>>,
    mut each: impl FnMut(&ObjectKey, &mut ProjectState),
) -> Result<BTreeMap<ObjectKey, ProjectState>, ReadError> {
    let loads = found.into_iter().map(|(wanted, project, runs)| async move {
        let state = read_project(client, catalog, wanted, &project, runs).await?;
        Ok::<_, ReadError>((wanted.key.clone(), state))
    });
    let mut projects = BTreeMap::new();
    let mut loads = std::pin::pin!(futures::stream::iter(loads).buffer_unordered(PROJECTS_AT_ONCE));
    while let Some((key, mut state)) = loads.try_next().await? {
        each(&key, &mut state);
        projects.insert(key, state);
    }
    Ok(projects)
}

/// How many projects are read at once, and how many runs of a project.
/// Every read in progress holds a future of a few kilobytes, so reading
/// every run of a large organization at once would hold one per run, a
/// memory that grows with the organization (measured: docs/performance.md,
/// Figures behind choices in the code). The
/// product (1,024 runs, two requests each) stays far above the client's cap
/// on requests in flight (64 by default), so the client is never starved and
/// the order the results come in does not matter (they are keyed).
const PROJECTS_AT_ONCE: usize = 16;
/// See [`PROJECTS_AT_ONCE`].
const RUNS_AT_ONCE: usize = 64;

/// The runs of one kind found for a project, with what to read of each.
type FoundRuns<'s> = Vec<(&'s RunSelection, FoundRun)>;

/// A project found, with its runs found: log streams, then experiments.
pub type Discovered<'s> = (&'s ProjectSelection, FoundProject, [FoundRuns<'s>; 2]);

/// Whether a project or run read earlier, under `key`, is as the manifests
/// name it: neither to be created (pending) nor to be renamed. A
/// confirmation finds one that is not again, by name.
fn settled(key: &ObjectKey, id: &str, name: &str) -> bool {
    !is_pending(id) && !matches!(key, ObjectKey::Name(n) if n != name)
}

/// Finds the projects and runs `wanted` names (ids and names only), taking
/// those `known` already holds from it.
async fn discover<'s>(
    client: &Client,
    wanted: &'s [ProjectSelection],
    known: Option<&State>,
) -> Result<(Vec<Discovered<'s>>, Vec<MissingObject>), ReadError> {
    // A project the apply was to create or rename is found again, by name.
    let known_project = |key: &ObjectKey| {
        known
            .and_then(|k| k.projects.get(key))
            .filter(|p| settled(key, &p.id, &p.name))
    };
    let keys: Vec<ObjectKey> = wanted
        .iter()
        .filter(|p| known_project(&p.key).is_none())
        .map(|p| p.key.clone())
        .collect();
    let (mut found, mut missing) = find_projects(client, &keys).await?;
    crate::kinds::missing_projects(client, wanted, &mut found, &mut missing).await?;
    for w in wanted {
        if let Some(p) = known_project(&w.key) {
            let project = FoundProject {
                id: p.id.clone(),
                name: p.name.clone(),
            };
            found.insert(w.key.clone(), project);
        }
    }
    let searches = wanted.iter().filter_map(|w| {
        let project = found.get(&w.key)?.clone();
        let known = known_project(&w.key);
        Some(async move {
            let (log_streams, experiments) = tokio::try_join!(
                find_selected(
                    client,
                    &project,
                    RunKind::LogStream,
                    &w.log_streams,
                    known.map(|k| &k.log_streams)
                ),
                find_selected(
                    client,
                    &project,
                    RunKind::Experiment,
                    &w.experiments,
                    known.map(|k| &k.experiments)
                ),
            )?;
            Ok::<_, ReadError>((w, project, log_streams, experiments))
        })
    });
    let mut out = Vec::new();
    for (w, project, (ls, ls_missing), (ex, ex_missing)) in try_join_all(searches).await? {
        missing.extend(ls_missing);
        missing.extend(ex_missing);
        out.push((w, project, [ls, ex]));
    }
    Ok((out, missing))
}

async fn find_selected<'s>(
    client: &Client,
    project: &FoundProject,
    kind: RunKind,
    wanted: &'s [RunSelection],
    known: Option<&BTreeMap<ObjectKey, RunState>>,
) -> Result<(FoundRuns<'s>, Vec<MissingObject>), ReadError> {
    let known_run = |key: &ObjectKey| {
        known
            .and_then(|k| k.get(key))
            .filter(|r| settled(key, &r.id, &r.name))
    };
    let keys: Vec<ObjectKey> = wanted
        .iter()
        .filter(|r| known_run(&r.key).is_none())
        .map(|r| r.key.clone())
        .collect();
    let (mut found, missing) = if is_pending(&project.id) {
        crate::kinds::runs_of_pending_project(project, kind, &keys)
    } else {
        let (mut found, mut missing) = find_runs(client, project, kind, &keys).await?;
        crate::kinds::missing_runs(client, project, kind, wanted, &mut found, &mut missing).await?;
        (found, missing)
    };
    for w in wanted {
        if let Some(r) = known_run(&w.key) {
            let run = FoundRun {
                id: r.id.clone(),
                name: r.name.clone(),
                traffic: r.traffic,
            };
            found.insert(w.key.clone(), run);
        }
    }
    let runs = wanted
        .iter()
        .filter_map(|w| found.remove(&w.key).map(|run| (w, run)))
        .collect();
    Ok((runs, missing))
}

async fn read_project(
    client: &Client,
    catalog: &Catalog,
    wanted: &ProjectSelection,
    project: &FoundProject,
    [log_streams, experiments]: [FoundRuns<'_>; 2],
) -> Result<ProjectState, ReadError> {
    // A project this plan creates holds nothing yet.
    let pending = is_pending(&project.id);
    let declared_log_streams: Vec<String> = log_streams.iter().map(|(_, r)| r.id.clone()).collect();
    let (log_streams, experiments, parts) = tokio::try_join!(
        read_runs(client, catalog, project, RunKind::LogStream, log_streams),
        read_runs(client, catalog, project, RunKind::Experiment, experiments),
        crate::kinds::read_project_parts(client, wanted, project, &declared_log_streams, pending),
    )?;
    Ok(ProjectState {
        id: project.id.clone(),
        name: project.name.clone(),
        log_streams: log_streams.into_iter().collect(),
        experiments: experiments.into_iter().collect(),
        parts,
    })
}

async fn read_runs(
    client: &Client,
    catalog: &Catalog,
    project: &FoundProject,
    kind: RunKind,
    runs: FoundRuns<'_>,
) -> Result<Vec<(ObjectKey, RunState)>, ReadError> {
    futures::stream::iter(runs.into_iter().map(|(w, run)| async move {
        let state = read_run(client, catalog, project, kind, &run, w.parts).await?;
        Ok::<_, ReadError>((w.key.clone(), state))
    }))
    .buffer_unordered(RUNS_AT_ONCE)
    .try_collect()
    .await
}

/// Reads a run's metric settings, its default trends dashboard and its other
/// dashboards, each only when asked for, concurrently.
pub async fn read_run(
    client: &Client,
    catalog: &Catalog,
    project: &FoundProject,
    kind: RunKind,
    run: &FoundRun,
    parts: RunParts,
) -> Result<RunState, ReadError> {
    if is_pending(&run.id) {
        return Ok(crate::kinds::pending_run(catalog, run, parts));
    }
    let what = || {
        format!(
            "{} `{}` of project `{}`",
            noun(kind),
            run.name,
            project.name
        )
    };
    let settings = async {
        if !parts.metric_settings {
            return Ok(None);
        }
        metric_settings::read_metric_settings(client, catalog, &project.id, kind, &run.id)
            .await
            .map_err(ctx(|| format!("the metric settings of {}", what())))
    };
    let dashboard = async {
        let Some(wanted) = parts.trends else {
            return Ok(None);
        };
        trends::read_dashboard(client, &project.id, &run.id, None, wanted)
            .await
            .map_err(ctx(|| format!("the trends dashboard of {}", what())))
    };
    let dashboards = async {
        let Some(wanted) = parts.dashboards else {
            return Ok(None);
        };
        trends::read_other_dashboards(client, &project.id, &run.id, wanted)
            .await
            .map(Some)
            .map_err(ctx(|| format!("the dashboards of {}", what())))
    };
    let (metric_settings, dashboard, dashboards) =
        tokio::try_join!(settings, dashboard, dashboards)?;
    Ok(RunState {
        id: run.id.clone(),
        name: run.name.clone(),
        metric_settings: metric_settings.map(Box::new),
        dashboard: dashboard.map(Box::new),
        dashboards,
        traffic: run.traffic,
    })
}
