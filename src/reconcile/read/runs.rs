//! Finding a project's log streams or experiments: by the names and ids the
//! manifests use (one filtered search each way), or all of them (an export).
//! The searches ask for the runs' counts (`include_counts`): the traffic the
//! judge-call forecast reads comes with them, at no request of its own.

use std::collections::BTreeMap;

use super::error::{ReadError, ctx};
use super::projects::{FoundProject, split_keys};
use crate::api::{FilterValue, Operator, RunFilter, RunSearchRequest};
use crate::client::{ApiError, Client};
use crate::plan::RunKind;
use crate::state::{MissingObject, ObjectKey, Traffic};
use crate::suggest::nearest;

/// A run's id and name, and what the search counted of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FoundRun {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Traces, spans and age, as the search found them.
    pub traffic: Traffic,
}

/// The noun of a run kind in messages.
pub(crate) fn noun(kind: RunKind) -> &'static str {
    match kind {
        RunKind::LogStream => "log stream",
        RunKind::Experiment => "experiment",
    }
}

async fn search(
    client: &Client,
    project_id: &str,
    kind: RunKind,
    request: RunSearchRequest,
) -> Result<Vec<FoundRun>, ApiError> {
    let request = RunSearchRequest {
        include_counts: Some(true),
        ..request
    };
    let now = chrono::Utc::now();
    Ok(match kind {
        RunKind::LogStream => client
            .search_log_streams_all(project_id, request)
            .await?
            .into_iter()
            .map(|r| FoundRun {
                traffic: Traffic::of(r.num_traces, r.num_spans, Some(&r.created_at), now),
                id: r.id,
                name: r.name,
            })
            .collect(),
        RunKind::Experiment => client
            .search_experiments_all(project_id, request)
            .await?
            .into_iter()
            .map(|r| FoundRun {
                traffic: Traffic::of(r.num_traces, r.num_spans, r.created_at.as_deref(), now),
                id: r.id,
                name: r.name,
            })
            .collect(),
    })
}

/// Every run of `kind` of a project.
pub async fn list_runs(
    client: &Client,
    project: &FoundProject,
    kind: RunKind,
) -> Result<Vec<FoundRun>, ReadError> {
    search(client, &project.id, kind, RunSearchRequest::default())
        .await
        .map_err(ctx(|| {
            format!("the {}s of project `{}`", noun(kind), project.name)
        }))
}

/// Finds the runs of `kind` that `keys` name in a project; those that do not
/// exist are returned as missing, with the nearest names.
pub async fn find_runs(
    client: &Client,
    project: &FoundProject,
    kind: RunKind,
    keys: &[ObjectKey],
) -> Result<(BTreeMap<ObjectKey, FoundRun>, Vec<MissingObject>), ReadError> {
    if keys.is_empty() {
        return Ok((BTreeMap::new(), Vec::new()));
    }
    let what = || format!("the {}s of project `{}`", noun(kind), project.name);
    let (names, ids) = split_keys(keys);
    // The searches by name and by id run at once; either may be skipped.
    let by = |filter: Option<RunFilter>| async move {
        let Some(filter) = filter else {
            return Ok(Vec::new());
        };
        let request = RunSearchRequest {
            filters: vec![filter],
            ..RunSearchRequest::default()
        };
        search(client, &project.id, kind, request)
            .await
            .map_err(ctx(what))
    };
    let by_name = (!names.is_empty()).then_some(RunFilter::Name {
        operator: Operator::OneOf,
        value: FilterValue::Many(names),
        case_sensitive: Some(true),
    });
    let by_id = (!ids.is_empty()).then(|| RunFilter::id_one_of(ids));
    let (named, identified) = tokio::try_join!(by(by_name), by(by_id))?;
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
    if keys.iter().any(|k| !found.contains_key(k)) {
        let all = list_runs(client, project, kind).await?;
        let all_names: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
        for key in keys.iter().filter(|k| !found.contains_key(*k)) {
            missing.push(MissingObject {
                kind: noun(kind).to_owned(),
                key: key.clone(),
                project: Some(project.name.clone()),
                suggestions: nearest(key.text(), all_names.iter().copied()),
            });
        }
    }
    Ok((found, missing))
}
