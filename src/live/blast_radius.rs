//! Blast radius of scorer changes: when a plan enables or disables a scorer,
//! or changes its pinned version, list the other projects that use the
//! scorer versions involved (spec operation 6), so reviewers see who else is
//! affected. One listing per version, cached for the run.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;

use super::{Catalog, Live, LiveRun};
use crate::api::ScorerConfig;
use crate::client::{ApiError, Client};
use crate::plan::normalize::scorer_key;
use crate::plan::{Address, BlastRadius, Operation, Plan, RunKind};

/// A scorer version a change touches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Touched {
    scorer: String,
    version_id: String,
    version: i64,
}

fn version_of(catalog: &Catalog, config: &ScorerConfig) -> Option<(String, i64)> {
    match &config.scorer_version {
        Some(v) => Some((v.id.clone(), v.version)),
        None => catalog
            .by_id(&config.id)
            .and_then(|s| s.latest_version.as_ref())
            .map(|v| (v.id.clone(), v.version)),
    }
}

fn key(config: &ScorerConfig) -> (String, Option<i64>) {
    (
        config.id.clone(),
        config.scorer_version.as_ref().map(|v| v.version),
    )
}

fn find_run<'a>(
    live: &'a Live,
    project_id: &str,
    kind: RunKind,
    run_id: &str,
) -> Option<&'a LiveRun> {
    let project = live.projects.values().find(|p| p.id == project_id)?;
    let runs = match kind {
        RunKind::LogStream => &project.log_streams,
        RunKind::Experiment => &project.experiments,
    };
    runs.values().find(|r| r.id == run_id)
}

/// The scorer versions a metric-settings change adds, removes or re-pins.
fn touched_versions(live: &Live, op: &Operation) -> Vec<Touched> {
    let Operation::PatchMetricSettings {
        project_id,
        run,
        body,
    } = op
    else {
        return Vec::new();
    };
    let Some(wanted) = &body.scorers else {
        return Vec::new();
    };
    let current: Vec<ScorerConfig> = find_run(live, project_id, run.kind, &run.id)
        .and_then(|r| r.metric_settings.as_ref())
        .map(|s| s.scorers.clone())
        .unwrap_or_default();
    let before: BTreeSet<_> = current.iter().map(key).collect();
    let after: BTreeSet<_> = wanted.iter().map(key).collect();
    let name = |c: &ScorerConfig| scorer_key(&live.catalog, &c.id, c.name.as_deref());
    let mut out = BTreeSet::new();
    for (configs, other) in [(&current, &after), (wanted, &before)] {
        for c in configs.iter().filter(|c| !other.contains(&key(c))) {
            if let Some((version_id, version)) = version_of(&live.catalog, c) {
                out.insert(Touched {
                    scorer: name(c),
                    version_id,
                    version,
                });
            }
        }
    }
    out.into_iter().collect()
}

/// The blast radius of each change of `plan`, in plan order: for a
/// metric-settings change that touches scorer versions used by other projects,
/// those projects; empty otherwise. Each version is listed once.
pub async fn blast_radius(
    client: &Client,
    live: &Live,
    plan: &Plan,
) -> Result<Vec<Vec<BlastRadius>>, ApiError> {
    let per_change: Vec<Vec<Touched>> = plan
        .changes
        .iter()
        .map(|c| {
            c.operations
                .iter()
                .flat_map(|op| touched_versions(live, op))
                .collect()
        })
        .collect();
    let ids: BTreeSet<&str> = per_change
        .iter()
        .flatten()
        .map(|t| t.version_id.as_str())
        .collect();
    let listings = try_join_all(ids.into_iter().map(|id| async move {
        let projects = client.scorer_version_projects(id).await?;
        Ok::<_, ApiError>((id.to_owned(), projects))
    }))
    .await?;
    let by_version: BTreeMap<String, Vec<(String, String)>> = listings
        .into_iter()
        .map(|(id, projects)| (id, projects.into_iter().map(|p| (p.id, p.name)).collect()))
        .collect();
    let mut out = Vec::with_capacity(plan.changes.len());
    for (change, touched) in plan.changes.iter().zip(per_change) {
        let mut radius = Vec::new();
        if let (
            Address::MetricSettings { .. },
            Some(Operation::PatchMetricSettings { project_id, .. }),
        ) = (&change.address, change.operations.first())
        {
            for t in touched {
                let others: Vec<String> = by_version
                    .get(&t.version_id)
                    .into_iter()
                    .flatten()
                    .filter(|(id, _)| id != project_id)
                    .map(|(_, name)| name.clone())
                    .collect();
                if !others.is_empty() {
                    radius.push(BlastRadius {
                        scorer: t.scorer,
                        scorer_version_id: t.version_id,
                        version: t.version,
                        total_count: i64::try_from(others.len()).unwrap_or(i64::MAX),
                        projects: others,
                    });
                }
            }
        }
        out.push(radius);
    }
    Ok(out)
}
