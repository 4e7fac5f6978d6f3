//! Live state to manifest specs, minimal: what a user would write to get
//! exactly this live state, and nothing the plan fills in itself.
//!
//! It starts from the state the plan's readers build (already normalized:
//! defaults filled, sets sorted), and writes the least that plans empty:
//! - scorers by catalog name (by `id` when the catalog has no unique name),
//!   `scorer_version` only where live pins one; `output_type`, `input_type`,
//!   `model_type` and `roll_up_method` only where they differ from the
//!   catalog's (the service fills those from the catalog); other scorer
//!   fields wherever live has them; sets (`scoreable_node_types`,
//!   `multimodal_capabilities`, `one_of`/`not_in` values) sorted;
//! - `case_sensitive` only when false, `llm_scorers`/`multimodal_scorers`
//!   only when true; empty section descriptions left out;
//! - `favorite: user` when the dashboard is favorited, with a comment: the
//!   service reads back only that the caller has it favorited, not for whom,
//!   so export does not guess `project`; otherwise no `favorite` (leaving it
//!   unmanaged: `none` would round-trip too, but it would make every apply
//!   unstar a dashboard someone stars in the UI);
//! - each section's `widgets` and the top level's, written even empty (the
//!   list then manages the place), a widget's `description` and `dataset`
//!   only where it has them; the settings `interval_mins`, `relative_time`
//!   (left out for an absolute time range, which a manifest cannot hold) and
//!   `group_by` (left out when none);
//! - the log stream's other dashboards under `dashboards`, by name with
//!   their `visibility` and description, contents and settings as above;
//!   `dashboards` is left out when there are none (unmanaged: writing `[]`
//!   would make every plan list every log stream's dashboards), and
//!   `copy_from` always (it matters only to a dashboard that does not exist);
//! - every list of a run or project is written, even empty, so the exported
//!   file manages what is live (a scorer enabled in the UI later is drift);
//! - runs, scorers, sections, widgets, dashboards and templates sorted by
//!   name (the service's order of sections and templates follows creation,
//!   which concurrent applies make vary: sorting keeps exports of the same
//!   configuration identical); names of runs and scorers that are not unique become ids,
//!   with the name in a comment; of sections, widgets (per place), dashboards
//!   and templates of one name, the first the service lists is kept (the one
//!   `plan` pairs with it), with a warning.
//!
//! Integrations are in [`super::integrations`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::write::{Body, Document};
use crate::api::{ContentModality, Visibility};
use crate::manifest::types::{
    DashboardSpec, ExperimentSpec, FavoriteSpec, FilterSpec, FilterValueSpec, LogStreamSpec,
    MetricSettingsSpec, ModalityValueSpec, ProjectSpec, ScorerSpec, SectionSpec, SegmentFilterSpec,
    TrendsSpec, WidgetSpec,
};
use crate::state::metric_settings::{NormFilter, NormScorer, NormSegmentFilter, NormValue};
use crate::state::{Catalog, DashboardState, NormMetricSettings, ProjectState, RunState};

/// Collects the comments of one document (by JSON pointer) and the warnings
/// of the export.
struct Notes<'w> {
    comments: BTreeMap<String, String>,
    warnings: &'w mut Vec<String>,
}

/// The Project document of one live project. `name_is_unique` says whether
/// no other visible project has the same name (else it is written by id).
pub fn project_document(
    project: &ProjectState,
    catalog: &Catalog,
    name_is_unique: bool,
    warnings: &mut Vec<String>,
) -> Document {
    let mut notes = Notes {
        comments: BTreeMap::new(),
        warnings,
    };
    let (name, id) = if name_is_unique {
        (Some(project.name.clone()), None)
    } else {
        notes.comments.insert(
            "/id".to_owned(),
            format!("project `{}` (another project has this name)", project.name),
        );
        (None, Some(project.id.clone()))
    };
    let log_streams = sorted_runs(project.log_streams.values())
        .into_iter()
        .enumerate()
        .map(|(i, (run, unique))| {
            let pointer = format!("/log_streams/{i}");
            let (name, id) = run_identity(run, unique, "log stream", &pointer, &mut notes);
            LogStreamSpec {
                name,
                id,
                renamed_from: Vec::new(),
                metric_settings: run.metric_settings.as_ref().map(|m| {
                    Arc::new(metric_settings(
                        m,
                        catalog,
                        &format!("{pointer}/metric_settings"),
                        &mut notes,
                    ))
                }),
                trends: run.dashboard.as_ref().map(|d| {
                    Arc::new(trends(
                        d,
                        run.dashboards.as_deref(),
                        &project.name,
                        &run.name,
                        &format!("{pointer}/trends"),
                        &mut notes,
                    ))
                }),
                // The service's counts are read again at each plan.
                forecast: None,
            }
        })
        .collect();
    let experiments = sorted_runs(project.experiments.values())
        .into_iter()
        .enumerate()
        .map(|(i, (run, unique))| {
            let pointer = format!("/experiments/{i}");
            let (name, id) = run_identity(run, unique, "experiment", &pointer, &mut notes);
            ExperimentSpec {
                name,
                id,
                metric_settings: run.metric_settings.as_ref().map(|m| {
                    Arc::new(metric_settings(
                        m,
                        catalog,
                        &format!("{pointer}/metric_settings"),
                        &mut notes,
                    ))
                }),
            }
        })
        .collect();
    let mut spec = ProjectSpec {
        name,
        id,
        log_streams,
        experiments,
        // The kinds a project holds fill theirs in (`kinds::export_project_parts`),
        // the project's own description and labels too.
        annotation_templates: None,
        feedback_templates: None,
        prompt_templates: None,
        protect_stages: None,
        // Export does not claim the log streams it did not see declared.
        prune_log_streams: false,
        renamed_from: Vec::new(),
        description: None,
        labels: None,
    };
    crate::kinds::export_project_parts(project, &mut spec, notes.warnings);
    Document {
        preamble: Vec::new(),
        body: Body::Project(Box::new(spec)),
        comments: notes.comments,
    }
}

/// Runs sorted by name then id, each with whether its name is unique among them.
fn sorted_runs<'r>(runs: impl Iterator<Item = &'r RunState>) -> Vec<(&'r RunState, bool)> {
    let mut runs: Vec<&RunState> = runs.collect();
    runs.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &runs {
        *count.entry(r.name.as_str()).or_default() += 1;
    }
    runs.iter()
        .map(|r| (*r, count.get(r.name.as_str()) == Some(&1)))
        .collect()
}

fn run_identity(
    run: &RunState,
    unique: bool,
    kind: &str,
    pointer: &str,
    notes: &mut Notes<'_>,
) -> (Option<String>, Option<String>) {
    if unique && !run.name.is_empty() {
        (Some(run.name.clone()), None)
    } else {
        notes.comments.insert(
            format!("{pointer}/id"),
            format!("{kind} `{}` (its name is not unique)", run.name),
        );
        (None, Some(run.id.clone()))
    }
}

fn metric_settings(
    live: &NormMetricSettings,
    catalog: &Catalog,
    pointer: &str,
    notes: &mut Notes<'_>,
) -> MetricSettingsSpec {
    let mut scorers: Vec<(String, ScorerSpec, Option<String>)> = live
        .scorers
        .iter()
        .map(|(shown, c)| scorer(shown, c, catalog, notes))
        .collect();
    scorers.sort_by(|a, b| {
        let key = |s: &(String, ScorerSpec, Option<String>)| (s.0.clone(), s.1.id.clone());
        key(a).cmp(&key(b))
    });
    let mut specs = Vec::new();
    for (index, (_, spec, comment)) in scorers.into_iter().enumerate() {
        if let Some(comment) = comment {
            notes
                .comments
                .insert(format!("{pointer}/scorers/{index}/id"), comment);
        }
        specs.push(spec);
    }
    MetricSettingsSpec {
        scorers: Some(specs),
        segment_filters: Some(live.segment_filters.iter().map(segment_filter).collect()),
    }
}

/// A scorer config (shown under `shown`) as a spec, with its sort key and the
/// comment of its `id` when it is referred to by id.
fn scorer(
    shown: &str,
    c: &NormScorer,
    catalog: &Catalog,
    notes: &mut Notes<'_>,
) -> (String, ScorerSpec, Option<String>) {
    let entry = catalog.by_id(&c.id);
    let unique = entry
        .filter(|e| catalog.scorers.iter().filter(|s| s.name == e.name).count() == 1)
        .map(|e| e.name.clone());
    let (name, id, comment) = match (&unique, entry) {
        (Some(name), _) => (Some(name.clone()), None, None),
        (None, Some(e)) => (
            None,
            Some(c.id.clone()),
            Some(format!(
                "`{}` (the catalog has several scorers of this name)",
                e.name
            )),
        ),
        (None, None) => {
            notes.warnings.push(format!(
                "scorer `{shown}` ({}) is enabled but not in the catalog the credentials can see; it is written by id",
                c.id
            ));
            (
                None,
                Some(c.id.clone()),
                Some(format!("`{shown}` (not in the catalog)")),
            )
        }
    };
    // Only where live differs from what the catalog would fill in.
    fn unless_default<T: Clone + PartialEq>(live: &Option<T>, catalog: Option<&T>) -> Option<T> {
        live.as_ref().filter(|v| Some(*v) != catalog).cloned()
    }
    let non_empty = |items: &Vec<String>| (!items.is_empty()).then(|| items.clone());
    let filters: Vec<FilterSpec> = c.filters.iter().map(filter).collect();
    let spec = ScorerSpec {
        name,
        id,
        scorer_version: c.scorer_version,
        model_name: c.model_name.clone(),
        num_judges: c.num_judges,
        filters: (!filters.is_empty()).then_some(filters),
        scoreable_node_types: non_empty(&c.scoreable_node_types),
        cot_enabled: c.cot_enabled,
        output_type: unless_default(&c.output_type, entry.and_then(|e| e.output_type.as_ref())),
        input_type: unless_default(&c.input_type, entry.and_then(|e| e.input_type.as_ref())),
        model_type: unless_default(&c.model_type, entry.and_then(|e| e.model_type.as_ref())),
        multimodal_capabilities: (!c.multimodal_capabilities.is_empty())
            .then(|| c.multimodal_capabilities.clone()),
        roll_up_method: unless_default(
            &c.roll_up_method,
            entry.and_then(|e| e.roll_up_method.as_ref()),
        ),
        score_type: c.score_type.clone(),
    };
    (shown.to_owned(), spec, comment)
}

fn value_spec(v: &NormValue) -> FilterValueSpec {
    match v {
        NormValue::One(s) => FilterValueSpec::One(s.clone()),
        NormValue::Many(vs) => FilterValueSpec::Many(vs.clone()),
    }
}

fn filter(f: &NormFilter) -> FilterSpec {
    match f {
        NormFilter::NodeName {
            operator,
            value,
            case_sensitive,
        } => FilterSpec::NodeName {
            operator: operator.clone(),
            value: value_spec(value),
            case_sensitive: (!case_sensitive).then_some(false),
        },
        NormFilter::Metadata {
            operator,
            key,
            value,
        } => FilterSpec::Metadata {
            operator: operator.clone(),
            key: key.clone(),
            value: value_spec(value),
        },
        NormFilter::Modality { operator, value } => FilterSpec::Modality {
            operator: operator.clone(),
            value: match value {
                NormValue::One(s) => ModalityValueSpec::One(ContentModality::from(s.as_str())),
                NormValue::Many(vs) => ModalityValueSpec::Many(
                    vs.iter()
                        .map(|s| ContentModality::from(s.as_str()))
                        .collect(),
                ),
            },
        },
    }
}

fn segment_filter(f: &NormSegmentFilter) -> SegmentFilterSpec {
    SegmentFilterSpec {
        sample_rate: f.sample_rate,
        filter: f.filter.as_ref().map(filter),
        llm_scorers: f.llm_scorers.then_some(true),
        multimodal_scorers: f.multimodal_scorers.then_some(true),
    }
}

fn is_colour(c: &str) -> bool {
    c.len() == 7 && c.starts_with('#') && c[1..].chars().all(|h| h.is_ascii_hexdigit())
}

/// The default dashboard of a log stream (at `pointer`), with the log
/// stream's other dashboards when they were read.
fn trends(
    dashboard: &DashboardState,
    others: Option<&[DashboardState]>,
    project: &str,
    log_stream: &str,
    pointer: &str,
    notes: &mut Notes<'_>,
) -> TrendsSpec {
    let place = format!("log stream `{log_stream}` of project `{project}`");
    let own = contents(
        dashboard,
        &format!("the default dashboard of {place}"),
        notes,
    );
    if dashboard.is_favorited {
        notes.comments.insert(
            format!("{pointer}/favorite"),
            "the service reads back only that it is favorited for you, not whether for the whole project: `project` if so (export does not guess)".to_owned(),
        );
    }
    let dashboards = others.filter(|o| !o.is_empty()).map(|others| {
        let mut seen = BTreeSet::new();
        let mut specs = Vec::new();
        for d in others {
            if !seen.insert(d.name.clone()) {
                notes.warnings.push(format!(
                    "dashboard `{}` of {place} is the second of that name; only the first is exported",
                    d.name
                ));
                continue;
            }
            let what = format!("dashboard `{}` of {place}", d.name);
            let description = d
                .settings
                .as_ref()
                .and_then(|s| s.description.clone())
                .filter(|d| !d.is_empty());
            if description
                .as_ref()
                .is_some_and(|d| d.chars().count() > 1000)
            {
                notes.warnings.push(format!(
                    "{what}: its description is over 1,000 characters; it was left out (unmanaged)"
                ));
            }
            let c = contents(d, &what, notes);
            specs.push(DashboardSpec {
                name: d.name.clone(),
                renamed_from: Vec::new(),
                visibility: Some(Visibility::from(d.visibility.as_str())),
                copy_from: None,
                description: description.filter(|d| d.chars().count() <= 1000),
                sections: c.sections,
                widgets: c.widgets,
                interval_mins: c.interval_mins,
                relative_time: c.relative_time,
                group_by: c.group_by,
            });
        }
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs
    });
    TrendsSpec {
        sections: own.sections,
        widgets: own.widgets,
        favorite: dashboard.is_favorited.then_some(FavoriteSpec::User),
        interval_mins: own.interval_mins,
        relative_time: own.relative_time,
        group_by: own.group_by,
        dashboards,
    }
}

/// What the default dashboard and the others have in common.
struct Contents {
    sections: Option<Vec<SectionSpec>>,
    widgets: Option<Vec<WidgetSpec>>,
    interval_mins: Option<i64>,
    relative_time: Option<String>,
    group_by: Option<String>,
}

/// A dashboard's sections (each with its widgets), its top-level widgets
/// and its settings; `what` names the dashboard in warnings. Widgets are
/// written only when they were read, settings likewise; an absolute time
/// range (no `relative_time`) and no group-by are left out (unmanaged).
fn contents(dashboard: &DashboardState, what: &str, notes: &mut Notes<'_>) -> Contents {
    let mut seen = BTreeSet::new();
    let mut sections = Vec::new();
    for s in &dashboard.sections {
        let place = || format!("section `{}` of {what}", s.name);
        if !seen.insert(s.name.clone()) {
            notes.warnings.push(format!(
                "{} is the second of that name; only the first is exported",
                place()
            ));
            continue;
        }
        // Left out, a description or colour is left as it is: what a manifest
        // cannot hold (a colour that is not `#RRGGBB`, a description over 500
        // characters) is left out rather than written invalid.
        let color = s.color.clone().filter(|c| !c.is_empty());
        if color.as_deref().is_some_and(|c| !is_colour(c)) {
            notes.warnings.push(format!(
                "{}: its colour is not `#RRGGBB`; it was left out (unmanaged)",
                place()
            ));
        }
        let description = s.description.clone().filter(|d| !d.is_empty());
        if description
            .as_ref()
            .is_some_and(|d| d.chars().count() > 500)
        {
            notes.warnings.push(format!(
                "{}: its description is over 500 characters; it was left out (unmanaged)",
                place()
            ));
        }
        sections.push(SectionSpec {
            name: s.name.clone(),
            renamed_from: Vec::new(),
            description: description.filter(|d| d.chars().count() <= 500),
            color: color.filter(|c| is_colour(c)),
            widgets: widgets(dashboard, Some(&s.id), &place(), notes),
        });
    }
    sections.sort_by(|a, b| a.name.cmp(&b.name));
    let settings = dashboard.settings.as_ref();
    Contents {
        sections: Some(sections),
        widgets: widgets(dashboard, None, &format!("the top level of {what}"), notes),
        interval_mins: settings.map(|s| s.interval_mins),
        relative_time: settings.and_then(|s| s.relative_time.clone()),
        group_by: settings.and_then(|s| s.group_by.clone()),
    }
}

/// The widgets of one place of a dashboard (`section_id`, or the top level
/// when `None`), sorted by name, the first listed of each name (the one
/// `plan` pairs with it); `None` when the widgets were not read.
fn widgets(
    dashboard: &DashboardState,
    section_id: Option<&str>,
    place: &str,
    notes: &mut Notes<'_>,
) -> Option<Vec<WidgetSpec>> {
    let live = dashboard.widgets.as_ref()?;
    let mut seen = BTreeSet::new();
    let mut specs = Vec::new();
    for w in live
        .iter()
        .filter(|w| w.section_id.as_deref() == section_id)
    {
        if !seen.insert(w.name.clone()) {
            notes.warnings.push(format!(
                "widget `{}` of {place} is the second of that name; only the first is exported",
                w.name
            ));
            continue;
        }
        specs.push(WidgetSpec {
            name: w.name.clone(),
            renamed_from: Vec::new(),
            widget_type: w.widget_type.clone(),
            metric: w.metric.clone(),
            aggregation: w.aggregation.clone(),
            description: w.description.clone(),
            dataset: w.dataset.clone(),
        });
    }
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    Some(specs)
}

#[cfg(test)]
#[path = "to_spec_tests.rs"]
mod tests;
