//! What a rule's expression sees: for each target, the objects of a loaded
//! [`ManifestSet`] and the variables each binds, as CEL values.
//!
//! An object is the manifest's own fields (the names written in YAML), with the
//! normalization the planner applies that needs no live state: the defaults of segment
//! filters (`llm_scorers` and `multimodal_scorers` false) and of node-name filters
//! (`case_sensitive` true) are filled, and the lists that are sets
//! (`scoreable_node_types`, `multimodal_capabilities`, the values of `one_of` /
//! `not_in`) are sorted. A field left out stays out (it is unmanaged: test it with
//! `has(...)`); the scorer catalog's defaults are not filled (validate reads no service).
//! Enclosing objects are given by name and id: `project` beside a log stream,
//! `log_stream` or `experiment` and `run` beside a scorer. docs/policies.md is the
//! user's reference for all of it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::spec::Target;
use crate::manifest::locate::FieldPath;
use crate::manifest::set::{ManifestSet, Origin};
use crate::manifest::types::ProjectSpec;

/// The figures of a plan's judge-call forecast a `target: forecast` rule sees, as the
/// variable `forecast` (the field names are the variable's keys). Filled by the
/// forecast and handed to [`super::evaluate_forecast`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ForecastFigures {
    /// LLM-judge calls a day across the repo, once the plan is applied.
    pub llm_judge_calls_per_day: f64,
    /// LLM-judge calls a day across the repo, live (before the plan).
    pub llm_judge_calls_per_day_before: f64,
    /// Other scorer evaluations a day (code, luna), once the plan is applied.
    pub other_calls_per_day: f64,
    /// Other scorer evaluations a day, live.
    pub other_calls_per_day_before: f64,
    /// Cost a month at the repo's prices (a `kind: Pricing` document), once applied;
    /// absent (test with `has(forecast.cost_per_month)`) without prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_month: Option<f64>,
    /// Cost a month at the repo's prices, live.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_month_before: Option<f64>,
    /// Whether a figure is an upper bound (a segment filter's selectivity is unknown).
    pub upper_bound: bool,
    /// The same figures per project, by project name.
    pub projects: BTreeMap<String, ProjectForecast>,
}

impl ForecastFigures {
    /// The figures a plan's forecast gives: its totals a day (log streams; an
    /// experiment scores its records once, not a day) and each project's.
    pub fn of(forecast: &crate::plan::Forecast) -> Self {
        let totals = &forecast.totals;
        let mut projects: BTreeMap<String, ProjectForecast> = BTreeMap::new();
        let mut upper_bound = false;
        for run in &forecast.runs {
            upper_bound |= run.upper_bound;
            if let crate::plan::forecast::Figures::PerDay {
                llm_judge_calls_per_day: judges,
                other_evaluations_per_day: others,
                ..
            } = &run.figures
            {
                let project = projects.entry(run.project.to_string()).or_default();
                project.llm_judge_calls_per_day += judges.after as f64;
                project.llm_judge_calls_per_day_before += judges.before as f64;
                project.other_calls_per_day += others.after as f64;
                project.other_calls_per_day_before += others.before as f64;
            }
        }
        ForecastFigures {
            llm_judge_calls_per_day: totals.llm_judge_calls_per_day.after as f64,
            llm_judge_calls_per_day_before: totals.llm_judge_calls_per_day.before as f64,
            other_calls_per_day: totals.other_evaluations_per_day.after as f64,
            other_calls_per_day_before: totals.other_evaluations_per_day.before as f64,
            cost_per_month: totals.cost_per_month.map(|c| c.after),
            cost_per_month_before: totals.cost_per_month.map(|c| c.before),
            upper_bound,
            projects,
        }
    }
}

/// One project's figures in [`ForecastFigures::projects`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectForecast {
    /// LLM-judge calls a day, once applied.
    pub llm_judge_calls_per_day: f64,
    /// LLM-judge calls a day, live.
    pub llm_judge_calls_per_day_before: f64,
    /// Other scorer evaluations a day, once applied.
    pub other_calls_per_day: f64,
    /// Other scorer evaluations a day, live.
    pub other_calls_per_day_before: f64,
}

/// One object a rule is evaluated on.
#[derive(Debug, Clone)]
pub struct Object {
    /// The document it is in.
    pub origin: Origin,
    /// Where in that document.
    pub field: FieldPath,
    /// How a violation names it: "log stream `production` of project `demo`".
    pub described: String,
    /// The variables bound for it.
    pub variables: Vec<(&'static str, cel::Value)>,
}

/// The objects of `target` in `set` (none for [`Target::Forecast`]: see [`forecast`]).
#[must_use]
pub fn of(set: &ManifestSet, target: Target) -> Vec<Object> {
    let mut out = Vec::new();
    match target {
        Target::Projects => {
            for project in &set.projects {
                out.push(Object {
                    origin: project.origin.clone(),
                    field: FieldPath::root(),
                    described: project_named(&project.spec),
                    variables: vec![("project", cel(normalized(&project.spec)))],
                });
            }
        }
        Target::LogStreams | Target::Experiments | Target::Scorers | Target::Templates => {
            for project in &set.projects {
                project_objects(&project.origin, &project.spec, target, &mut out);
            }
        }
        Target::Integrations => {
            for integration in &set.integrations {
                let value = to_json(&integration.spec);
                let provider = value
                    .get("provider")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned();
                let described = match value.get("name").and_then(Value::as_str) {
                    Some(name) => format!("integration `{provider}/{name}`"),
                    None => format!("integration `{provider}`"),
                };
                out.push(Object {
                    origin: integration.origin.clone(),
                    field: FieldPath::root(),
                    described,
                    variables: vec![("integration", cel(value))],
                });
            }
        }
        Target::Forecast => {}
    }
    out
}

/// The forecast as the object of the rule `rules[index]` of the Policy at `origin`.
#[must_use]
pub fn forecast(origin: &Origin, index: usize, figures: &ForecastFigures) -> Object {
    Object {
        origin: origin.clone(),
        field: FieldPath::root().key("rules").index(index),
        described: "the judge-call forecast".to_owned(),
        variables: vec![("forecast", cel(to_json(figures)))],
    }
}

fn project_objects(origin: &Origin, spec: &ProjectSpec, target: Target, out: &mut Vec<Object>) {
    let project = identity(spec.name.as_deref(), spec.id.as_deref());
    let project_named = project_named(spec);
    let whole = normalized(spec);
    let runs = [
        ("log_streams", "log_stream", "log stream"),
        ("experiments", "experiment", "experiment"),
    ];
    for (list, variable, noun) in runs {
        let Some(items) = whole.get(list).and_then(Value::as_array) else {
            continue;
        };
        for (i, run) in items.iter().enumerate() {
            let run_named = format!("{noun} {} of {project_named}", named(run));
            let field = FieldPath::root().key(list).index(i);
            let wanted = match target {
                Target::LogStreams => list == "log_streams",
                Target::Experiments => list == "experiments",
                _ => false,
            };
            if wanted {
                out.push(Object {
                    origin: origin.clone(),
                    field: field.clone(),
                    described: run_named.clone(),
                    variables: vec![
                        (variable, cel(run.clone())),
                        ("project", cel(project.clone())),
                    ],
                });
            }
            if target != Target::Scorers {
                continue;
            }
            let Some(scorers) = run
                .pointer("/metric_settings/scorers")
                .and_then(Value::as_array)
            else {
                continue;
            };
            let run_identity = identity(
                run.get("name").and_then(Value::as_str),
                run.get("id").and_then(Value::as_str),
            );
            let mut run_value = run_identity.clone();
            if let Some(map) = run_value.as_object_mut() {
                map.insert("kind".to_owned(), Value::from(variable));
            }
            // The other kind of run is an empty map: `has(log_stream.name)` is false
            // for an experiment's scorer.
            let other = if variable == "log_stream" {
                "experiment"
            } else {
                "log_stream"
            };
            for (j, scorer) in scorers.iter().enumerate() {
                out.push(Object {
                    origin: origin.clone(),
                    field: field.clone().key("metric_settings").key("scorers").index(j),
                    described: format!("scorer {} of {run_named}", named(scorer)),
                    variables: vec![
                        ("scorer", cel(scorer.clone())),
                        (variable, cel(run_identity.clone())),
                        (other, cel(Value::Object(Map::new()))),
                        ("run", cel(run_value.clone())),
                        ("project", cel(project.clone())),
                    ],
                });
            }
        }
    }
    if target == Target::Templates {
        for (list, kind) in [
            ("annotation_templates", "annotation"),
            ("feedback_templates", "feedback"),
        ] {
            let Some(items) = whole.get(list).and_then(Value::as_array) else {
                continue;
            };
            for (i, template) in items.iter().enumerate() {
                let mut value = template.clone();
                if let Some(map) = value.as_object_mut() {
                    map.insert("kind".to_owned(), Value::from(kind));
                }
                out.push(Object {
                    origin: origin.clone(),
                    field: FieldPath::root().key(list).index(i),
                    described: format!("{kind} template {} of {project_named}", named(template)),
                    variables: vec![("template", cel(value)), ("project", cel(project.clone()))],
                });
            }
        }
    }
}

/// `{name, id}`, with the ones given.
fn identity(name: Option<&str>, id: Option<&str>) -> Value {
    let mut map = Map::new();
    if let Some(name) = name {
        map.insert("name".to_owned(), Value::from(name));
    }
    if let Some(id) = id {
        map.insert("id".to_owned(), Value::from(id));
    }
    Value::Object(map)
}

fn project_named(spec: &ProjectSpec) -> String {
    match (&spec.name, &spec.id) {
        (Some(name), _) => format!("project `{name}`"),
        (None, Some(id)) => format!("project with id `{id}`"),
        (None, None) => "project".to_owned(),
    }
}

/// "`name`" (or "with id `id`") of a manifest object.
fn named(object: &Value) -> String {
    match (
        object.get("name").and_then(Value::as_str),
        object.get("id").and_then(Value::as_str),
    ) {
        (Some(name), _) => format!("`{name}`"),
        (None, Some(id)) => format!("with id `{id}`"),
        (None, None) => "?".to_owned(),
    }
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A project as its rules see it: its fields, normalized (see the module docs).
fn normalized(spec: &ProjectSpec) -> Value {
    let mut value = to_json(spec);
    for list in ["log_streams", "experiments"] {
        let Some(runs) = value.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for run in runs {
            let Some(settings) = run.get_mut("metric_settings") else {
                continue;
            };
            if let Some(filters) = settings
                .get_mut("segment_filters")
                .and_then(Value::as_array_mut)
            {
                for filter in filters.iter_mut().filter_map(Value::as_object_mut) {
                    filter.entry("llm_scorers").or_insert(json!(false));
                    filter.entry("multimodal_scorers").or_insert(json!(false));
                    if let Some(inner) = filter.get_mut("filter") {
                        normalize_filter(inner);
                    }
                }
            }
            if let Some(scorers) = settings.get_mut("scorers").and_then(Value::as_array_mut) {
                for scorer in scorers.iter_mut().filter_map(Value::as_object_mut) {
                    for set in ["scoreable_node_types", "multimodal_capabilities"] {
                        if let Some(items) = scorer.get_mut(set).and_then(Value::as_array_mut) {
                            sort_strings(items);
                        }
                    }
                    if let Some(filters) = scorer.get_mut("filters").and_then(Value::as_array_mut) {
                        filters.iter_mut().for_each(normalize_filter);
                    }
                }
            }
        }
    }
    value
}

fn normalize_filter(filter: &mut Value) {
    let Some(map) = filter.as_object_mut() else {
        return;
    };
    if map.get("name").and_then(Value::as_str) == Some("node_name") {
        map.entry("case_sensitive").or_insert(json!(true));
    }
    if let Some(items) = map.get_mut("value").and_then(Value::as_array_mut) {
        sort_strings(items);
    }
}

fn sort_strings(items: &mut [Value]) {
    items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
}

/// `value` as a CEL value (JSON objects become maps keyed by string).
fn cel(value: Value) -> cel::Value {
    cel::to_value(&value).unwrap_or(cel::Value::Null)
}

/// The CEL type of `value`, for a rule that gives no bool.
#[must_use]
pub fn type_name(value: &cel::Value) -> &'static str {
    match value {
        cel::Value::List(_) => "a list",
        cel::Value::Map(_) => "a map",
        cel::Value::Int(_) | cel::Value::UInt(_) => "an int",
        cel::Value::Float(_) => "a double",
        cel::Value::String(_) => "a string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Null => "null",
        _ => "a value",
    }
}

/// An evaluation error as a sentence, without the values it holds (they may be long).
#[must_use]
pub fn error_text(error: &cel::ExecutionError) -> String {
    match error {
        cel::ExecutionError::NoSuchKey(key) => format!("no field `{key}` here"),
        cel::ExecutionError::UndeclaredReference(name) => {
            format!("undeclared reference to `{name}`")
        }
        other => {
            let text = other.to_string();
            if text.chars().count() > 200 {
                let cut: String = text.chars().take(197).collect();
                format!("{cut}...")
            } else {
                text
            }
        }
    }
}

/// Variable names as prose: "`a`, `b` and `c`".
#[must_use]
pub fn listed(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => "nothing".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}
