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
//! - `favorite: user` when the dashboard is favorited, otherwise no
//!   `favorite` (leaving it unmanaged: `none` would round-trip too, but it
//!   would make every apply unstar a dashboard someone stars in the UI);
//! - every list of a run or project is written, even empty, so the exported
//!   file manages what is live (a scorer enabled in the UI later is drift);
//! - runs, scorers, sections and templates sorted by name (the service's
//!   order of sections and templates follows creation, which concurrent
//!   applies make vary: sorting keeps exports of the same configuration
//!   identical); names of runs and scorers that are not unique become ids,
//!   with the name in a comment; of sections and templates of one name, the
//!   first the service lists is kept (the one `plan` pairs with it).
//!
//! Integrations are in [`super::integrations`].

use std::collections::{BTreeMap, BTreeSet};

use super::write::{Body, Document};
use crate::api::{AnnotationConstraints, ContentModality};
use crate::manifest::types::{
    ExperimentSpec, FavoriteSpec, FilterSpec, FilterValueSpec, LogStreamSpec, MetricSettingsSpec,
    ModalityValueSpec, ProjectSpec, ScorerSpec, SectionSpec, SegmentFilterSpec, TemplateSpec,
    TrendsSpec,
};
use crate::state::metric_settings::{NormFilter, NormScorer, NormSegmentFilter, NormValue};
use crate::state::{
    Catalog, DashboardState, NormMetricSettings, ProjectState, RunState, TemplateState,
};

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
                metric_settings: run.metric_settings.as_ref().map(|m| {
                    metric_settings(
                        m,
                        catalog,
                        &format!("{pointer}/metric_settings"),
                        &mut notes,
                    )
                }),
                trends: run
                    .dashboard
                    .as_ref()
                    .map(|d| trends(d, &project.name, &run.name, &mut notes)),
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
                    metric_settings(
                        m,
                        catalog,
                        &format!("{pointer}/metric_settings"),
                        &mut notes,
                    )
                }),
            }
        })
        .collect();
    let what = |kind: &str| format!("{kind} templates of project `{}`", project.name);
    let annotation_templates = project.annotation_templates.as_ref().map(|ts| {
        templates(ts, &what("annotation"), notes.warnings, |c| match c {
            // The service derives the YAML from the tree: the tree is what users write.
            AnnotationConstraints::TreeChoice {
                choices_tree: Some(tree),
                choices_tree_yaml: Some(_),
            } => AnnotationConstraints::TreeChoice {
                choices_tree: Some(tree.clone()),
                choices_tree_yaml: None,
            },
            other => other.clone(),
        })
    });
    let feedback_templates = project
        .feedback_templates
        .as_ref()
        .map(|ts| templates(ts, &what("feedback"), notes.warnings, Clone::clone));
    let spec = ProjectSpec {
        name,
        id,
        log_streams,
        experiments,
        annotation_templates,
        feedback_templates,
    };
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

fn trends(
    dashboard: &DashboardState,
    project: &str,
    log_stream: &str,
    notes: &mut Notes<'_>,
) -> TrendsSpec {
    let mut seen = BTreeSet::new();
    let mut sections = Vec::new();
    for s in &dashboard.sections {
        let place = || {
            format!(
                "section `{}` of log stream `{log_stream}` of project `{project}`",
                s.name
            )
        };
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
            widgets: None,
        });
    }
    sections.sort_by(|a, b| a.name.cmp(&b.name));
    TrendsSpec {
        sections: Some(sections),
        favorite: dashboard.is_favorited.then_some(FavoriteSpec::User),
        ..TrendsSpec::default()
    }
}

/// Templates sorted by name, the first listed of each name (the one `plan`
/// pairs with it); `constraints` maps live constraints to what users write.
fn templates<C: Clone>(
    live: &[TemplateState<C>],
    what: &str,
    warnings: &mut Vec<String>,
    constraints: impl Fn(&C) -> C,
) -> Vec<TemplateSpec<C>> {
    let mut seen = BTreeSet::new();
    let mut kept: Vec<&TemplateState<C>> = Vec::new();
    for t in live {
        if seen.insert(t.name.clone()) {
            kept.push(t);
        } else {
            warnings.push(format!(
                "{what}: a second template is named `{}`; only the first is exported",
                t.name
            ));
        }
    }
    kept.sort_by(|a, b| a.name.cmp(&b.name));
    kept.into_iter()
        .map(|t| TemplateSpec {
            name: t.name.clone(),
            renamed_from: Vec::new(),
            criteria: t.criteria.clone(),
            include_explanation: t.include_explanation.then_some(true),
            constraints: constraints(&t.constraints),
        })
        .collect()
}

#[cfg(test)]
#[path = "to_spec_tests.rs"]
mod tests;
