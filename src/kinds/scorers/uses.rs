//! Which declared metric settings use each custom scorer, and how: following
//! the latest version (no `scorer_version`) or pinned to one. Gathered from
//! the manifests before their projects are planned (planning releases a
//! project's metric settings), so that a plan that adds a version can say,
//! for every log stream and experiment using the scorer, whether it will run
//! the new version or stays pinned.

use std::collections::BTreeMap;

use crate::manifest::set::ManifestSet;
use crate::plan::address::{MetricSettingsAddress, RunKind};

/// The uses of each scorer, by scorer name: each run's metric settings
/// address and the version it pins (`None`: it follows the latest).
pub type Uses = BTreeMap<String, Vec<(MetricSettingsAddress, Option<i64>)>>;

/// The uses the manifests declare of the scorers they also declare.
pub fn declared_uses(desired: &ManifestSet) -> Uses {
    let mut uses = Uses::new();
    if desired.global.scorers.is_empty() {
        return uses;
    }
    for project in &desired.projects {
        let Some(p) = project.spec.name.as_deref().or(project.spec.id.as_deref()) else {
            continue;
        };
        let runs = project
            .spec
            .log_streams
            .iter()
            .map(|r| {
                (
                    RunKind::LogStream,
                    r.name.as_deref().or(r.id.as_deref()),
                    &r.metric_settings,
                )
            })
            .chain(project.spec.experiments.iter().map(|r| {
                (
                    RunKind::Experiment,
                    r.name.as_deref().or(r.id.as_deref()),
                    &r.metric_settings,
                )
            }));
        for (run_kind, run, settings) in runs {
            let (Some(run), Some(settings)) = (run, settings) else {
                continue;
            };
            for scorer in settings.scorers.iter().flatten() {
                let Some(name) = scorer.name.as_deref() else {
                    continue;
                };
                if !desired.global.scorers.iter().any(|s| s.spec.name == name) {
                    continue;
                }
                uses.entry(name.to_owned()).or_default().push((
                    MetricSettingsAddress {
                        project: p.to_owned(),
                        run_kind,
                        run: run.to_owned(),
                    },
                    scorer.scorer_version,
                ));
            }
        }
    }
    uses
}

/// What each use will run once version `new` exists: one line per use.
pub fn what_runs(uses: &[(MetricSettingsAddress, Option<i64>)], new: u32) -> Vec<String> {
    uses.iter()
        .map(|(address, pinned)| {
            let at = crate::plan::Address::MetricSettings(address.clone());
            match pinned {
                None => format!("{at}: follows the latest, so it runs the new version {new}"),
                Some(n) => format!("{at}: stays pinned to version {n}"),
            }
        })
        .collect()
}
