//! What to read for a plan: the objects the manifests name, narrowed to the
//! `--target`s (and what they depend on: the project and run they are in,
//! the scorer catalog when metric settings are compared). The planner asks
//! the same scopes ([`PlanOptions::reaches`]), so it never looks for an
//! object that was not read.

use crate::plan::address::MetricSettingsAddress;
use std::collections::BTreeSet;

use super::catalog::ScorerRef;
use crate::manifest::set::ManifestSet;
use crate::manifest::types::{MetricSettingsSpec, TrendsSpec};
use crate::plan::target::integration_address;
use crate::plan::trends::trends_parts;
use crate::plan::{Address, PlanOptions, RunKind, Target};
use crate::state::{MissingObject, ObjectKey, State, TrendsParts};

/// What to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Projects, and what of each.
    pub projects: Vec<ProjectSelection>,
    /// Providers whose integration is read.
    pub integrations: BTreeSet<String>,
    /// Names of the named custom integrations looked for (in one listing).
    pub custom_integrations: BTreeSet<String>,
    /// The catalog, when metric settings are read: with the scorers whose
    /// versions the manifests pin.
    pub catalog: Option<BTreeSet<ScorerRef>>,
    /// What is read of the organization beside the projects by the kinds of
    /// the registry (the custom scorers, the global prompt templates, the
    /// projects the repo owns and does not declare).
    pub global: crate::kinds::GlobalSelection,
}

/// What to read of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectSelection {
    /// How the manifests refer to it.
    pub key: ObjectKey,
    /// Its log streams, and what of each.
    pub log_streams: Vec<RunSelection>,
    /// Its experiments, and what of each.
    pub experiments: Vec<RunSelection>,
    /// Whether its annotation templates are read.
    pub annotation_templates: bool,
    /// Whether its feedback templates are read.
    pub feedback_templates: bool,
    /// Whether its prompt templates are read.
    pub prompt_templates: bool,
    /// The names of the Protect stages read (`None`: not read); the stages
    /// evalctl's record names are read too.
    pub protect_stages: Option<Vec<String>>,
    /// Whether its log streams the manifests do not declare are listed.
    pub undeclared_log_streams: bool,
    /// The names it had (`renamed_from`), tried when its name finds nothing.
    pub renamed_from: Vec<String>,
    /// Whether its description and labels are read (the manifests manage
    /// them).
    pub meta: bool,
}

/// What to read of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSelection {
    /// How the manifests refer to it.
    pub key: ObjectKey,
    /// What of it.
    pub parts: RunParts,
    /// The names it had (`renamed_from`), tried when its name finds nothing.
    pub renamed_from: Vec<String>,
}

/// What to read of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunParts {
    /// Whether its metric settings are read.
    pub metric_settings: bool,
    /// Its default dashboard, when read, and which parts of it.
    pub trends: Option<TrendsParts>,
    /// Its other dashboards, when read, and which parts of them.
    pub dashboards: Option<TrendsParts>,
}

impl RunParts {
    /// Everything of a run: what an export reads.
    pub fn all(kind: RunKind) -> RunParts {
        let dashboards = (kind == RunKind::LogStream).then_some(TrendsParts::ALL);
        RunParts {
            metric_settings: true,
            trends: dashboards,
            dashboards,
        }
    }
}

/// What to read of a log stream's dashboards for `spec`, narrowed to what
/// `options` reach.
fn trends_selection(
    spec: &TrendsSpec,
    options: &PlanOptions,
    project: &str,
    log_stream: &str,
) -> (Option<TrendsParts>, Option<TrendsParts>) {
    let (default, others) = trends_parts(spec);
    let others = others.filter(|_| options.reaches(&Target::dashboard(project, log_stream, None)));
    let default = (options.reaches(&Target::trends(project, log_stream)) || others.is_some())
        .then_some(default);
    (default, others)
}

fn pinned(spec: &MetricSettingsSpec) -> impl Iterator<Item = ScorerRef> + '_ {
    spec.scorers
        .iter()
        .flatten()
        .filter(|s| s.scorer_version.is_some())
        .filter_map(|s| match (&s.id, &s.name) {
            (Some(id), _) => Some(ScorerRef::Id(id.clone())),
            (None, Some(name)) => Some(ScorerRef::Name(name.clone())),
            (None, None) => None,
        })
}

impl Selection {
    /// The objects `desired` names that `options`' targets reach.
    pub fn of_manifests(desired: &ManifestSet, options: &PlanOptions) -> Selection {
        let mut selection = Selection::default();
        let mut pins = BTreeSet::new();
        let mut any_settings = false;
        for project in &desired.projects {
            let spec = &project.spec;
            let Some(key) = ObjectKey::from_parts(spec.name.as_deref(), spec.id.as_deref()) else {
                continue;
            };
            let name = key.to_string();
            if !options.reaches(&Target::project(&name)) {
                continue;
            }
            let mut wanted = ProjectSelection {
                key,
                log_streams: Vec::new(),
                experiments: Vec::new(),
                // The kinds a project holds say what of theirs is read
                // (`kinds::select_project_parts`, below), the project's
                // own undeclared log streams and meta too.
                annotation_templates: false,
                feedback_templates: false,
                prompt_templates: false,
                protect_stages: None,
                undeclared_log_streams: false,
                renamed_from: spec.renamed_from.clone(),
                meta: false,
            };
            crate::kinds::select_project_parts(&name, spec, options, &mut wanted);
            let runs = spec
                .log_streams
                .iter()
                .map(|l| {
                    (
                        RunKind::LogStream,
                        ObjectKey::from_parts(l.name.as_deref(), l.id.as_deref()),
                        l.metric_settings.as_ref(),
                        l.trends.as_deref(),
                        l.renamed_from.as_slice(),
                    )
                })
                .chain(spec.experiments.iter().map(|e| {
                    (
                        RunKind::Experiment,
                        ObjectKey::from_parts(e.name.as_deref(), e.id.as_deref()),
                        e.metric_settings.as_ref(),
                        None,
                        &[][..],
                    )
                }));
            for (kind, run_key, settings, trends, renamed_from) in runs {
                let Some(run_key) = run_key else {
                    continue;
                };
                let run = run_key.to_string();
                if !options.reaches(&Target::run(&name, kind, &run)) {
                    continue;
                }
                let address = Address::MetricSettings(MetricSettingsAddress {
                    project: name.clone(),
                    run_kind: kind,
                    run: run.clone(),
                });
                let settings = settings.filter(|_| options.selects(&address));
                if let Some(settings) = settings {
                    any_settings = true;
                    pins.extend(pinned(settings));
                }
                let (trends, dashboards) = trends
                    .map(|t| trends_selection(t, options, &name, &run))
                    .unwrap_or_default();
                let run_selection = RunSelection {
                    key: run_key,
                    parts: RunParts {
                        metric_settings: settings.is_some(),
                        trends,
                        dashboards,
                    },
                    renamed_from: renamed_from.to_vec(),
                };
                match kind {
                    RunKind::LogStream => wanted.log_streams.push(run_selection),
                    RunKind::Experiment => wanted.experiments.push(run_selection),
                }
            }
            selection.projects.push(wanted);
        }
        for integration in &desired.integrations {
            let address = integration_address(&integration.spec);
            if !options.selects(&address) {
                continue;
            }
            match &integration.spec.name {
                Some(name) => {
                    selection.custom_integrations.insert(name.clone());
                }
                None => {
                    selection
                        .integrations
                        .insert(integration.spec.config.provider().to_string());
                }
            }
        }
        selection.global = crate::kinds::select_global_parts(desired, options);
        selection.catalog = any_settings.then_some(pins);
        selection
    }
}

fn union_parts(a: Option<TrendsParts>, b: Option<TrendsParts>) -> Option<TrendsParts> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.union(b)),
        (a, b) => a.or(b),
    }
}

fn union_runs(runs: &mut Vec<RunSelection>, others: Vec<RunSelection>) {
    for other in others {
        match runs.iter_mut().find(|r| r.key == other.key) {
            Some(run) => {
                let (a, b) = (run.parts, other.parts);
                run.parts = RunParts {
                    metric_settings: a.metric_settings || b.metric_settings,
                    trends: union_parts(a.trends, b.trends),
                    dashboards: union_parts(a.dashboards, b.dashboards),
                };
            }
            None => runs.push(other),
        }
    }
}

impl Selection {
    /// What either selection reads: one read for the plans of two sets of
    /// manifests (a three-way plan's pull request and base), so that both
    /// are planned against the same live state.
    #[must_use]
    pub fn union(mut self, other: Selection) -> Selection {
        for project in other.projects {
            match self.projects.iter_mut().find(|p| p.key == project.key) {
                Some(mine) => {
                    mine.annotation_templates |= project.annotation_templates;
                    mine.feedback_templates |= project.feedback_templates;
                    mine.prompt_templates |= project.prompt_templates;
                    if let Some(names) = project.protect_stages {
                        mine.protect_stages
                            .get_or_insert_with(Vec::new)
                            .extend(names);
                    }
                    mine.undeclared_log_streams |= project.undeclared_log_streams;
                    mine.meta |= project.meta;
                    union_runs(&mut mine.log_streams, project.log_streams);
                    union_runs(&mut mine.experiments, project.experiments);
                }
                None => self.projects.push(project),
            }
        }
        self.integrations.extend(other.integrations);
        self.custom_integrations.extend(other.custom_integrations);
        self.global = self.global.union(other.global);
        self.catalog = match (self.catalog, other.catalog) {
            (Some(mut a), Some(b)) => {
                a.extend(b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
        self
    }

    /// Whether this selection looks for `missing` (found missing by a read
    /// of a larger selection, into `state`): a project it names, or a run it
    /// names in one of its projects.
    pub fn looks_for(&self, missing: &MissingObject, state: &State) -> bool {
        let Some(project) = &missing.project else {
            return self.projects.iter().any(|p| p.key == missing.key);
        };
        let Some(key) = state
            .projects
            .iter()
            .find(|(_, p)| &p.name == project)
            .map(|(k, _)| k)
        else {
            return false;
        };
        self.projects.iter().filter(|p| &p.key == key).any(|p| {
            let runs = if missing.kind == "experiment" {
                &p.experiments
            } else {
                &p.log_streams
            };
            runs.iter().any(|r| r.key == missing.key)
        })
    }
}
