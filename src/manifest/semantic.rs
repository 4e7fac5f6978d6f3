//! Rules of a Project document that a JSON Schema cannot express, each reported at its
//! place: exactly one of `name` / `id`; nothing declared twice in its scope (log streams
//! and experiments of a project, scorers of a list, sections of a dashboard, widgets of
//! a section, dashboards of a log stream, templates of a kind); `renamed_from` naming
//! neither the object itself nor another declared one; a dashboard's relative time range
//! of at most five years; filter operators against the shape of their value; score
//! bounds in order; an annotation choice tree given one way or the other.
//!
//! The checks read the document's JSON value, not the typed spec, and skip whatever has
//! the wrong shape (the schema reports that), so they run alongside schema validation
//! and every problem of a document is reported at once.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::yaml::escape_token;

/// Where a finding points, for a value that is a mapping entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// At the key (the entry itself is the problem).
    Key,
    /// At the value.
    Value,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// JSON pointer of the offending value.
    pub pointer: String,
    /// Key or value.
    pub anchor: Anchor,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: Option<String>,
    /// The pointer of an earlier value this one clashes with (for "first at line N").
    pub first: Option<String>,
}

impl Finding {
    fn new(pointer: impl Into<String>, anchor: Anchor, message: impl Into<String>) -> Self {
        Finding {
            pointer: pointer.into(),
            anchor,
            message: message.into(),
            help: None,
            first: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    fn first(mut self, first: impl Into<String>) -> Self {
        self.first = Some(first.into());
        self
    }
}

/// Checks a Project document's value (after interpolation).
#[must_use]
pub fn check_project(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(project) = doc.as_object() else {
        return out;
    };
    name_or_id(project, "", "project", &mut out);
    for (key, what) in [("log_streams", "log stream"), ("experiments", "experiment")] {
        let base = format!("/{key}");
        let items = array(project, key);
        for (index, item) in items.iter().enumerate() {
            let pointer = format!("{base}/{index}");
            let Some(run) = item.as_object() else {
                continue;
            };
            name_or_id(run, &pointer, what, &mut out);
            if let Some(settings) = run.get("metric_settings").and_then(Value::as_object) {
                metric_settings(settings, &format!("{pointer}/metric_settings"), &mut out);
            }
            if let Some(trends) = run.get("trends").and_then(Value::as_object) {
                self::trends(trends, &format!("{pointer}/trends"), &mut out);
            }
        }
        unique_identities(items, &base, what, "in this project", &mut out);
    }
    for (key, what) in [
        ("annotation_templates", "annotation template"),
        ("feedback_templates", "feedback template"),
    ] {
        let base = format!("/{key}");
        let items = array(project, key);
        let named = names(items, "name", &base);
        unique(
            &named,
            |name| format!("{what} `{name}`"),
            "in this project",
            &mut out,
        );
        renames(items, &named, &base, what, &mut out);
        for (index, item) in items.iter().enumerate() {
            if let Some(constraints) = item.get("constraints").and_then(Value::as_object) {
                template_constraints(
                    constraints,
                    &format!("{base}/{index}/constraints"),
                    &mut out,
                );
            }
        }
    }
    let stages = array(project, "protect_stages");
    let named = names(stages, "name", "/protect_stages");
    unique(
        &named,
        |name| format!("Protect stage `{name}`"),
        "in this project",
        &mut out,
    );
    out
}

fn array<'v>(map: &'v Map<String, Value>, key: &str) -> &'v [Value] {
    map.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn present(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_some_and(|v| !v.is_null())
}

/// Exactly one of `name` and `id`.
fn name_or_id(map: &Map<String, Value>, pointer: &str, what: &str, out: &mut Vec<Finding>) {
    match (present(map, "name"), present(map, "id")) {
        (true, true) => out.push(
            Finding::new(
                format!("{pointer}/id"),
                Anchor::Key,
                format!("a {what} is named by `name` or by `id`, not both"),
            )
            .help("keep one of the two"),
        ),
        (false, false) => out.push(
            Finding::new(
                pointer,
                Anchor::Key,
                format!("a {what} needs a `name` or an `id`"),
            )
            .help(format!("add `name: <the {what}'s name>`")),
        ),
        _ => {}
    }
}

/// The string values of `field` of each item, with their pointers, in order.
fn names<'v>(items: &'v [Value], field: &str, base: &str) -> Vec<(&'v str, String)> {
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            let name = item.get(field)?.as_str()?;
            Some((name, format!("{base}/{index}/{}", escape_token(field))))
        })
        .collect()
}

/// Reports every repeat of a name, pointing back at its first occurrence. `label` says
/// what a name is ("section `A`").
fn unique(
    named: &[(&str, String)],
    label: impl Fn(&str) -> String,
    scope: &str,
    out: &mut Vec<Finding>,
) {
    let mut first: BTreeMap<&str, &str> = BTreeMap::new();
    for (name, pointer) in named {
        match first.get(name) {
            Some(earlier) => out.push(
                Finding::new(
                    pointer.clone(),
                    Anchor::Value,
                    format!("{} is declared twice {scope}", label(name)),
                )
                .help("merge the two declarations, or remove one")
                .first(*earlier),
            ),
            None => {
                first.insert(name, pointer);
            }
        }
    }
}

/// Names and ids of log streams, experiments or scorers are unique in their list.
fn unique_identities(items: &[Value], base: &str, what: &str, scope: &str, out: &mut Vec<Finding>) {
    let by_name = |name: &str| format!("{what} `{name}`");
    unique(&names(items, "name", base), by_name, scope, out);
    let by_id = |id: &str| format!("{what} with id `{id}`");
    unique(&names(items, "id", base), by_id, scope, out);
}

fn metric_settings(settings: &Map<String, Value>, pointer: &str, out: &mut Vec<Finding>) {
    let scorers = array(settings, "scorers");
    let base = format!("{pointer}/scorers");
    for (index, scorer) in scorers.iter().enumerate() {
        let Some(scorer) = scorer.as_object() else {
            continue;
        };
        let at = format!("{base}/{index}");
        name_or_id(scorer, &at, "scorer", out);
        for (f, filter) in array(scorer, "filters").iter().enumerate() {
            self::filter(filter, &format!("{at}/filters/{f}"), out);
        }
    }
    unique_identities(scorers, &base, "scorer", "in this list", out);
    for (index, rule) in array(settings, "segment_filters").iter().enumerate() {
        if let Some(filter) = rule.get("filter") {
            self::filter(
                filter,
                &format!("{pointer}/segment_filters/{index}/filter"),
                out,
            );
        }
    }
}

/// `one_of` / `not_in` take a list of at least one value; the other operators one value.
fn filter(filter: &Value, pointer: &str, out: &mut Vec<Finding>) {
    let (Some(operator), Some(value)) = (
        filter.get("operator").and_then(Value::as_str),
        filter.get("value"),
    ) else {
        return;
    };
    let at = format!("{pointer}/value");
    let list = matches!(operator, "one_of" | "not_in");
    match value {
        Value::String(one) if list => out.push(
            Finding::new(
                at,
                Anchor::Value,
                format!("operator `{operator}` needs a list of values"),
            )
            .help(format!("write `value: [{}]`", quote_yaml(one))),
        ),
        Value::Array(items) if list && items.is_empty() => out.push(
            Finding::new(
                at,
                Anchor::Value,
                format!("operator `{operator}` needs at least one value"),
            )
            .help("list the values to match, or remove the filter"),
        ),
        Value::Array(items) if !list => {
            let suggestion = if operator == "ne" { "not_in" } else { "one_of" };
            let help = if items.len() == 1 {
                format!(
                    "write the one value without brackets, or use `operator: {suggestion}` to match a list"
                )
            } else {
                format!("use `operator: {suggestion}` to match any of a list")
            };
            out.push(
                Finding::new(
                    at,
                    Anchor::Value,
                    format!("operator `{operator}` compares with one value, not a list"),
                )
                .help(help),
            );
        }
        _ => {}
    }
}

fn quote_yaml(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ' '))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
    {
        text.to_owned()
    } else {
        Value::String(text.to_owned()).to_string()
    }
}

/// A log stream's dashboards: the default one's contents, and the others,
/// each declared once, with their contents.
fn trends(trends: &Map<String, Value>, pointer: &str, out: &mut Vec<Finding>) {
    dashboard_contents(trends, pointer, out);
    let items = array(trends, "dashboards");
    let base = format!("{pointer}/dashboards");
    let named = names(items, "name", &base);
    unique(
        &named,
        |name| format!("dashboard `{name}`"),
        "for this log stream",
        out,
    );
    renames(items, &named, &base, "dashboard", out);
    for (index, item) in items.iter().enumerate() {
        if let Some(dashboard) = item.as_object() {
            dashboard_contents(dashboard, &format!("{base}/{index}"), out);
        }
    }
}

/// A dashboard's sections and widgets (each name once in its place, renames
/// that name earlier names only) and its relative time range (at most five
/// years).
fn dashboard_contents(dashboard: &Map<String, Value>, pointer: &str, out: &mut Vec<Finding>) {
    let items = array(dashboard, "sections");
    let base = format!("{pointer}/sections");
    let named = names(items, "name", &base);
    unique(
        &named,
        |name| format!("section `{name}`"),
        "in this dashboard",
        out,
    );
    renames(items, &named, &base, "section", out);
    widgets(
        dashboard,
        pointer,
        "at the top level of this dashboard",
        out,
    );
    for (index, item) in items.iter().enumerate() {
        if let Some(section) = item.as_object() {
            widgets(section, &format!("{base}/{index}"), "in this section", out);
        }
    }
    if let Some(relative) = dashboard.get("relative_time").and_then(Value::as_str)
        && relative_secs(relative).is_some_and(|secs| secs > MAX_RELATIVE_SECS)
    {
        out.push(
            Finding::new(
                format!("{pointer}/relative_time"),
                Anchor::Value,
                format!("`{relative}` is longer than five years, the longest range the service takes"),
            )
            .help("use a shorter window: at most `last_1825_days`, `last_260_weeks` or `last_60_months`"),
        );
    }
}

fn widgets(place: &Map<String, Value>, pointer: &str, scope: &str, out: &mut Vec<Finding>) {
    let items = array(place, "widgets");
    let base = format!("{pointer}/widgets");
    let named = names(items, "name", &base);
    unique(&named, |name| format!("widget `{name}`"), scope, out);
    renames(items, &named, &base, "widget", out);
}

/// The longest relative time range the service takes: five years of 365
/// days (months count 30 days).
const MAX_RELATIVE_SECS: u64 = 5 * 365 * 86_400;

/// The length of `last_<n>_<unit>` in seconds; `None` when it is not one
/// (the schema reports that) or does not fit.
fn relative_secs(relative: &str) -> Option<u64> {
    let (n, unit) = relative.strip_prefix("last_")?.split_once('_')?;
    let n: u64 = n.parse().ok()?;
    let secs = match unit.strip_suffix('s').unwrap_or(unit) {
        "second" => 1,
        "minute" => 60,
        "hour" => 3_600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        "month" => 30 * 86_400,
        _ => return None,
    };
    Some(n.saturating_mul(secs))
}

/// `renamed_from` names earlier names: not the item's own, not another declared item's,
/// and not one another item already claims.
fn renames(
    items: &[Value],
    named: &[(&str, String)],
    base: &str,
    what: &str,
    out: &mut Vec<Finding>,
) {
    let mut declared: BTreeMap<&str, &String> = BTreeMap::new();
    for (name, pointer) in named {
        declared.entry(name).or_insert(pointer);
    }
    let mut claimed: BTreeMap<&str, String> = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        let own = item.get("name").and_then(Value::as_str);
        let renamed = item
            .as_object()
            .map_or(&[][..], |item| array(item, "renamed_from"));
        for (r, old) in renamed.iter().enumerate() {
            let Some(old) = old.as_str() else {
                continue;
            };
            let at = format!("{base}/{index}/renamed_from/{r}");
            if Some(old) == own {
                out.push(
                    Finding::new(
                        at,
                        Anchor::Value,
                        format!("`renamed_from` names the {what} itself"),
                    )
                    .help("list only earlier names of this one"),
                );
            } else if let Some(other) = declared.get(old) {
                out.push(
                    Finding::new(
                        at,
                        Anchor::Value,
                        format!("`{old}` is declared as a {what} of its own, so no {what} can be renamed from it"),
                    )
                    .help(format!("remove `{old}` from `renamed_from`, or remove the other {what}"))
                    .first((*other).clone()),
                );
            } else if let Some(earlier) = claimed.get(old) {
                out.push(
                    Finding::new(
                        at,
                        Anchor::Value,
                        format!("two {what}s are renamed from `{old}`"),
                    )
                    .help(format!("only one {what} can take over `{old}`"))
                    .first(earlier.clone()),
                );
            } else {
                claimed.insert(old, at);
            }
        }
    }
}

fn template_constraints(constraints: &Map<String, Value>, pointer: &str, out: &mut Vec<Finding>) {
    let kind = constraints
        .get("annotation_type")
        .or_else(|| constraints.get("feedback_type"))
        .and_then(Value::as_str);
    match kind {
        Some("score") => {
            let min = constraints.get("min").and_then(Value::as_i64);
            let max = constraints.get("max").and_then(Value::as_i64);
            if let (Some(min), Some(max)) = (min, max)
                && min > max
            {
                out.push(
                    Finding::new(
                        format!("{pointer}/max"),
                        Anchor::Value,
                        format!("`max` ({max}) is less than `min` ({min})"),
                    )
                    .help("the score range runs from `min` up to `max`"),
                );
            }
        }
        Some("tree_choice")
            if constraints.contains_key("annotation_type")
                && !present(constraints, "choices_tree")
                && !present(constraints, "choices_tree_yaml") =>
        {
            out.push(
                Finding::new(
                    pointer,
                    Anchor::Key,
                    "a tree choice needs `choices_tree` (or `choices_tree_yaml`)",
                )
                .help("list the choices as nodes with `label`, `id` and `children`"),
            );
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(doc: Value) -> Vec<String> {
        check_project(&doc)
            .into_iter()
            .map(|f| format!("{}: {}", f.pointer, f.message))
            .collect()
    }

    #[test]
    fn a_sound_project_has_no_findings() {
        let doc = json!({
            "name": "demo",
            "log_streams": [{"name": "a", "trends": {"sections": [
                {"name": "Quality", "renamed_from": ["Old quality"]}, {"name": "Latency"}
            ]}}, {"id": "b"}],
            "experiments": [{"name": "a"}],
            "annotation_templates": [{"name": "t", "constraints": {"annotation_type": "score", "min": 1, "max": 1}}],
            "feedback_templates": [{"name": "t", "constraints": {"feedback_type": "tree_choice", "choices_tree": []}}],
        });
        assert_eq!(messages(doc), Vec::<String>::new());
    }

    #[test]
    fn identities_and_duplicates() {
        let doc = json!({
            "name": "demo", "id": "x",
            "log_streams": [
                {"name": "a", "metric_settings": {"scorers": [
                    {"name": "correctness"}, {"id": "s1"}, {"name": "correctness"}, {"id": "s1"}, {}
                ]}},
                {"name": "a"},
                {"id": "i"}, {"id": "i"},
            ],
        });
        assert_eq!(
            messages(doc),
            vec![
                "/id: a project is named by `name` or by `id`, not both",
                "/log_streams/0/metric_settings/scorers/4: a scorer needs a `name` or an `id`",
                "/log_streams/0/metric_settings/scorers/2/name: scorer `correctness` is declared twice in this list",
                "/log_streams/0/metric_settings/scorers/3/id: scorer with id `s1` is declared twice in this list",
                "/log_streams/1/name: log stream `a` is declared twice in this project",
                "/log_streams/3/id: log stream with id `i` is declared twice in this project",
            ]
        );
    }

    #[test]
    fn filters_sections_renames_and_constraints() {
        let doc = json!({
            "name": "demo",
            "log_streams": [{"name": "a",
                "metric_settings": {
                    "scorers": [{"name": "s", "filters": [
                        {"name": "node_name", "operator": "one_of", "value": "llm"},
                        {"name": "node_name", "operator": "eq", "value": ["a", "b"]},
                    ]}],
                    "segment_filters": [{"sample_rate": 1, "filter": {"name": "metadata", "key": "k", "operator": "not_in", "value": []}}],
                },
                "trends": {"sections": [
                    {"name": "A", "renamed_from": ["A", "B", "Old"]},
                    {"name": "B", "renamed_from": ["Old"]},
                    {"name": "A"},
                ]},
            }],
            "annotation_templates": [
                {"name": "s", "constraints": {"annotation_type": "score", "min": 5, "max": 3}},
                {"name": "t", "constraints": {"annotation_type": "tree_choice"}},
            ],
            "protect_stages": [{"name": "guard"}, {"name": "pii"}, {"name": "guard"}],
        });
        assert_eq!(
            messages(doc),
            vec![
                "/log_streams/0/metric_settings/scorers/0/filters/0/value: operator `one_of` needs a list of values",
                "/log_streams/0/metric_settings/scorers/0/filters/1/value: operator `eq` compares with one value, not a list",
                "/log_streams/0/metric_settings/segment_filters/0/filter/value: operator `not_in` needs at least one value",
                "/log_streams/0/trends/sections/2/name: section `A` is declared twice in this dashboard",
                "/log_streams/0/trends/sections/0/renamed_from/0: `renamed_from` names the section itself",
                "/log_streams/0/trends/sections/0/renamed_from/1: `B` is declared as a section of its own, so no section can be renamed from it",
                "/log_streams/0/trends/sections/1/renamed_from/0: two sections are renamed from `Old`",
                "/annotation_templates/0/constraints/max: `max` (3) is less than `min` (5)",
                "/annotation_templates/1/constraints: a tree choice needs `choices_tree` (or `choices_tree_yaml`)",
                "/protect_stages/2/name: Protect stage `guard` is declared twice in this project",
            ]
        );
    }
}
