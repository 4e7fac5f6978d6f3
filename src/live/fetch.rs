//! Fetching live state for exactly what the manifests name, each object once,
//! concurrently (the client bounds requests in flight).
//!
//! Requests, for P projects with L runs each: one project listing (a `one_of`
//! name filter, paginated), one log stream search and one experiment search
//! per project (also `one_of`), one metric-settings read and one dashboard
//! read per managed run, one template listing per managed kind, the scorer
//! catalog once, the versions of pinned scorers, one read per integration.
//! Objects that do not exist are collected with the nearest existing names
//! (one extra listing, only when something is missing), not reported one by one.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;

use super::{Catalog, Live, LiveProject, LiveRun, MissingObject, ObjectKey};
use crate::api::{
    FilterValue, IntegrationConfig, ListScorersRequest, Operator, ProjectCollectionParams,
    ProjectFilter, RunFilter, RunSearchRequest,
};
use crate::client::{ApiError, Client};
use crate::manifest::set::ManifestSet;
use crate::manifest::types::{MetricSettingsSpec, ProjectSpec};
use crate::plan::resolve::nearest;

/// Loading live state failed.
#[derive(Debug, thiserror::Error)]
#[error("could not load {what}: {source}")]
pub struct FetchError {
    /// What was being loaded.
    pub what: String,
    /// The service's answer.
    #[source]
    pub source: ApiError,
}

/// Wraps a failed read of `what` into a [`FetchError`].
pub(crate) fn ctx(what: impl FnOnce() -> String) -> impl FnOnce(ApiError) -> FetchError {
    move |source| FetchError {
        what: what(),
        source,
    }
}

/// Loads the live state of everything `desired` names.
pub async fn fetch(client: &Client, desired: &ManifestSet) -> Result<Live, FetchError> {
    let (catalog, (projects, mut missing), integrations) = tokio::try_join!(
        fetch_catalog(client, desired),
        fetch_projects(client, desired),
        fetch_integrations(client, desired),
    )?;
    missing.sort_by(|a, b| (&a.project, &a.kind, &a.key).cmp(&(&b.project, &b.kind, &b.key)));
    Ok(Live {
        projects,
        integrations,
        catalog,
        missing,
    })
}

async fn fetch_integrations(
    client: &Client,
    desired: &ManifestSet,
) -> Result<BTreeMap<String, Option<IntegrationConfig>>, FetchError> {
    let providers: BTreeSet<String> = desired
        .integrations
        .iter()
        .map(|i| i.spec.config.provider().to_string())
        .collect();
    Ok(read_integrations(client, providers)
        .await?
        .into_iter()
        .collect())
}

/// Reads the integration of each provider, concurrently: `None` for one the
/// service does not have.
pub(crate) async fn read_integrations(
    client: &Client,
    providers: BTreeSet<String>,
) -> Result<Vec<(String, Option<IntegrationConfig>)>, FetchError> {
    let reads = providers.into_iter().map(|provider| async move {
        let found = client
            .get_integration(&provider)
            .await
            .map_err(ctx(|| format!("integration `{provider}`")))?;
        Ok::<_, FetchError>((provider, found))
    });
    try_join_all(reads).await
}

/// The catalog, plus the versions of every scorer whose version a manifest pins.
async fn fetch_catalog(client: &Client, desired: &ManifestSet) -> Result<Catalog, FetchError> {
    let scorers = client
        .list_scorers(ListScorersRequest::default())
        .await
        .map_err(ctx(|| "the scorer catalog".to_owned()))?;
    let mut catalog = Catalog {
        scorers,
        versions: BTreeMap::new(),
    };
    let mut pinned = BTreeSet::new();
    for spec in all_metric_settings(desired) {
        for scorer in spec
            .scorers
            .iter()
            .flatten()
            .filter(|s| s.scorer_version.is_some())
        {
            let found = match (&scorer.id, &scorer.name) {
                (Some(id), _) => catalog.by_id(id),
                (None, Some(name)) => catalog.by_name(name),
                (None, None) => None,
            };
            if let Some(found) = found {
                pinned.insert(found.id.clone());
            }
        }
    }
    let reads = pinned.into_iter().map(|id| async move {
        let versions = client
            .list_scorer_versions(&id)
            .await
            .map_err(ctx(|| format!("the versions of scorer {id}")))?;
        Ok::<_, FetchError>((id, versions))
    });
    catalog.versions = try_join_all(reads).await?.into_iter().collect();
    Ok(catalog)
}

fn all_metric_settings(desired: &ManifestSet) -> impl Iterator<Item = &MetricSettingsSpec> {
    desired.projects.iter().flat_map(|p| {
        p.spec
            .log_streams
            .iter()
            .filter_map(|l| l.metric_settings.as_ref())
            .chain(
                p.spec
                    .experiments
                    .iter()
                    .filter_map(|e| e.metric_settings.as_ref()),
            )
    })
}

/// A project found live: its id and name.
pub(crate) struct FoundProject {
    /// Id.
    pub(crate) id: String,
    /// Name.
    pub(crate) name: String,
}

async fn fetch_projects(
    client: &Client,
    desired: &ManifestSet,
) -> Result<(BTreeMap<ObjectKey, LiveProject>, Vec<MissingObject>), FetchError> {
    let specs: Vec<(ObjectKey, &ProjectSpec)> = desired
        .projects
        .iter()
        .filter_map(|p| {
            ObjectKey::from_parts(p.spec.name.as_deref(), p.spec.id.as_deref())
                .map(|k| (k, &p.spec))
        })
        .collect();
    let keys: Vec<ObjectKey> = specs.iter().map(|(k, _)| k.clone()).collect();
    let (found, mut missing) = find_projects(client, &keys).await?;
    let loads = specs.into_iter().filter_map(|(key, spec)| {
        found.get(&key).map(|project| async move {
            let (live, missing) = fetch_project(client, project, spec).await?;
            Ok::<_, FetchError>((key, live, missing))
        })
    });
    let mut projects = BTreeMap::new();
    for (key, live, project_missing) in try_join_all(loads).await? {
        projects.insert(key, live);
        missing.extend(project_missing);
    }
    Ok((projects, missing))
}

async fn find_projects(
    client: &Client,
    keys: &[ObjectKey],
) -> Result<(BTreeMap<ObjectKey, FoundProject>, Vec<MissingObject>), FetchError> {
    let (names, ids) = split_keys(keys);
    let by_name = async {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let params = ProjectCollectionParams {
            filters: vec![ProjectFilter::Name {
                operator: Operator::OneOf,
                value: FilterValue::Many(names.clone()),
                case_sensitive: Some(true),
            }],
            sort: None,
        };
        client
            .list_projects(params)
            .await
            .map_err(ctx(|| "the projects".to_owned()))
    };
    let by_id = try_join_all(ids.iter().map(|id| async move {
        let project = client
            .get_project(id)
            .await
            .map_err(ctx(|| format!("project {id}")))?;
        Ok::<_, FetchError>((id.clone(), project))
    }));
    let (listed, fetched) = tokio::try_join!(by_name, by_id)?;
    let mut found = BTreeMap::new();
    for p in listed {
        found
            .entry(ObjectKey::Name(p.name.clone()))
            .or_insert(FoundProject {
                id: p.id,
                name: p.name,
            });
    }
    for (id, project) in fetched {
        if let Some(p) = project {
            found.insert(
                ObjectKey::Id(id),
                FoundProject {
                    id: p.id,
                    name: p.name.unwrap_or_default(),
                },
            );
        }
    }
    let absent: Vec<&ObjectKey> = keys.iter().filter(|k| !found.contains_key(*k)).collect();
    let mut missing = Vec::new();
    if !absent.is_empty() {
        let all = client
            .list_projects(ProjectCollectionParams::default())
            .await
            .map_err(ctx(|| "the projects".to_owned()))?;
        let all_names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        for key in absent {
            let wanted = match key {
                ObjectKey::Name(n) => n.as_str(),
                ObjectKey::Id(i) => i.as_str(),
            };
            missing.push(MissingObject {
                kind: "project".to_owned(),
                key: key.clone(),
                project: None,
                suggestions: nearest(wanted, all_names.iter().copied()),
            });
        }
    }
    Ok((found, missing))
}

/// The names and the ids among `keys`, in order.
fn split_keys<'k>(keys: impl IntoIterator<Item = &'k ObjectKey>) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut ids = Vec::new();
    for key in keys {
        match key {
            ObjectKey::Name(n) => names.push(n.clone()),
            ObjectKey::Id(i) => ids.push(i.clone()),
        }
    }
    (names, ids)
}

/// Which runs of a project the manifests name, and what of each is managed.
struct RunWants {
    key: ObjectKey,
    metric_settings: bool,
    trends: bool,
}

async fn fetch_project(
    client: &Client,
    project: &FoundProject,
    spec: &ProjectSpec,
) -> Result<(LiveProject, Vec<MissingObject>), FetchError> {
    let log_stream_wants: Vec<RunWants> = spec
        .log_streams
        .iter()
        .filter_map(|l| {
            ObjectKey::from_parts(l.name.as_deref(), l.id.as_deref()).map(|key| RunWants {
                key,
                metric_settings: l.metric_settings.is_some(),
                trends: l.trends.is_some(),
            })
        })
        .collect();
    let experiment_wants: Vec<RunWants> = spec
        .experiments
        .iter()
        .filter_map(|e| {
            ObjectKey::from_parts(e.name.as_deref(), e.id.as_deref()).map(|key| RunWants {
                key,
                metric_settings: e.metric_settings.is_some(),
                trends: false,
            })
        })
        .collect();
    let annotation = async {
        match spec.annotation_templates {
            Some(_) => client
                .list_annotation_templates(&project.id)
                .await
                .map(Some)
                .map_err(ctx(|| {
                    format!("the annotation templates of project `{}`", project.name)
                })),
            None => Ok(None),
        }
    };
    let feedback = async {
        match spec.feedback_templates {
            Some(_) => client
                .list_feedback_templates(&project.id)
                .await
                .map(Some)
                .map_err(ctx(|| {
                    format!("the feedback templates of project `{}`", project.name)
                })),
            None => Ok(None),
        }
    };
    let (log_streams, experiments, annotation_templates, feedback_templates) = tokio::try_join!(
        fetch_runs(client, project, RunKindSel::LogStream, &log_stream_wants),
        fetch_runs(client, project, RunKindSel::Experiment, &experiment_wants),
        annotation,
        feedback,
    )?;
    let (log_streams, mut missing) = log_streams;
    let (experiments, missing_experiments) = experiments;
    missing.extend(missing_experiments);
    let live = LiveProject {
        id: project.id.clone(),
        name: project.name.clone(),
        log_streams,
        experiments,
        annotation_templates,
        feedback_templates,
    };
    Ok((live, missing))
}

/// Which kind of run to read.
#[derive(Clone, Copy)]
pub(crate) enum RunKindSel {
    /// A log stream.
    LogStream,
    /// An experiment.
    Experiment,
}

impl RunKindSel {
    fn noun(self) -> &'static str {
        match self {
            RunKindSel::LogStream => "log stream",
            RunKindSel::Experiment => "experiment",
        }
    }
}

/// A run's id and name.
pub(crate) struct FoundRun {
    /// Id.
    pub(crate) id: String,
    /// Name.
    pub(crate) name: String,
}

async fn search_runs(
    client: &Client,
    project_id: &str,
    kind: RunKindSel,
    request: RunSearchRequest,
) -> Result<Vec<FoundRun>, ApiError> {
    Ok(match kind {
        RunKindSel::LogStream => client
            .search_log_streams_all(project_id, request)
            .await?
            .into_iter()
            .map(|r| FoundRun {
                id: r.id,
                name: r.name,
            })
            .collect(),
        RunKindSel::Experiment => client
            .search_experiments_all(project_id, request)
            .await?
            .into_iter()
            .map(|r| FoundRun {
                id: r.id,
                name: r.name,
            })
            .collect(),
    })
}

async fn fetch_runs(
    client: &Client,
    project: &FoundProject,
    kind: RunKindSel,
    wants: &[RunWants],
) -> Result<(BTreeMap<ObjectKey, LiveRun>, Vec<MissingObject>), FetchError> {
    if wants.is_empty() {
        return Ok((BTreeMap::new(), Vec::new()));
    }
    let what = || format!("the {}s of project `{}`", kind.noun(), project.name);
    let (names, ids) = split_keys(wants.iter().map(|w| &w.key));
    // The searches by name and by id run at once; either may be skipped.
    let search = |filter: Option<RunFilter>| async move {
        let Some(filter) = filter else {
            return Ok(Vec::new());
        };
        let request = RunSearchRequest {
            filters: vec![filter],
            ..RunSearchRequest::default()
        };
        search_runs(client, &project.id, kind, request)
            .await
            .map_err(ctx(&what))
    };
    let by_name = (!names.is_empty()).then_some(RunFilter::Name {
        operator: Operator::OneOf,
        value: FilterValue::Many(names),
        case_sensitive: Some(true),
    });
    let by_id = (!ids.is_empty()).then(|| RunFilter::id_one_of(ids));
    let (named, identified) = tokio::try_join!(search(by_name), search(by_id))?;
    let mut found: BTreeMap<ObjectKey, FoundRun> = BTreeMap::new();
    for run in named {
        found
            .entry(ObjectKey::Name(run.name.clone()))
            .or_insert(run);
    }
    for run in identified {
        found.insert(ObjectKey::Id(run.id.clone()), run);
    }
    let mut missing = Vec::new();
    if wants.iter().any(|w| !found.contains_key(&w.key)) {
        let all = search_runs(client, &project.id, kind, RunSearchRequest::default())
            .await
            .map_err(ctx(&what))?;
        let all_names: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
        for want in wants.iter().filter(|w| !found.contains_key(&w.key)) {
            let wanted = match &want.key {
                ObjectKey::Name(n) | ObjectKey::Id(n) => n.as_str(),
            };
            missing.push(MissingObject {
                kind: kind.noun().to_owned(),
                key: want.key.clone(),
                project: Some(project.name.clone()),
                suggestions: nearest(wanted, all_names.iter().copied()),
            });
        }
    }
    let loads = wants.iter().filter_map(|want| {
        found.get(&want.key).map(|run| async move {
            let live = fetch_run(
                client,
                project,
                kind,
                run,
                want.metric_settings,
                want.trends,
            )
            .await?;
            Ok::<_, FetchError>((want.key.clone(), live))
        })
    });
    let runs = try_join_all(loads).await?.into_iter().collect();
    Ok((runs, missing))
}

/// Reads a run's metric settings and its default trends dashboard, each only
/// when asked for, concurrently.
pub(crate) async fn fetch_run(
    client: &Client,
    project: &FoundProject,
    kind: RunKindSel,
    run: &FoundRun,
    metric_settings: bool,
    trends: bool,
) -> Result<LiveRun, FetchError> {
    let what = || {
        format!(
            "{} `{}` of project `{}`",
            kind.noun(),
            run.name,
            project.name
        )
    };
    let settings = async {
        if !metric_settings {
            return Ok(None);
        }
        let read = match kind {
            RunKindSel::LogStream => {
                client
                    .get_log_stream_metric_settings(&project.id, &run.id)
                    .await
            }
            RunKindSel::Experiment => {
                client
                    .get_experiment_metric_settings(&project.id, &run.id)
                    .await
            }
        };
        read.map_err(ctx(|| format!("the metric settings of {}", what())))
    };
    let dashboard = async {
        if !trends {
            return Ok(None);
        }
        client
            .get_dashboard(&project.id, &run.id, None)
            .await
            .map_err(ctx(|| format!("the trends dashboard of {}", what())))
    };
    let (metric_settings, dashboard) = tokio::try_join!(settings, dashboard)?;
    Ok(LiveRun {
        id: run.id.clone(),
        name: run.name.clone(),
        metric_settings,
        dashboard,
    })
}
