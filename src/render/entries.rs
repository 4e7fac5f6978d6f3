//! What a reviewer reads per change: the plan's field changes turned into
//! entries (a value added, removed or changed, a long text changed, a secret
//! sent), shared by the text and markdown renderers, with the wording
//! decisions both make the same way (which entries a report shows, how a
//! path, a secret and an apply outcome are worded).
//!
//! Three refinements over the raw field changes: a whole object created or
//! deleted is shown key by key; an array whose length changed is shown
//! element by element (`+ segment_filters[2]`), with elements that merely
//! changed diffed field by field; and a change of a long string becomes a
//! text diff.

use serde_json::Value;
use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::Mode;
use super::values::{compact, is_inline, is_long_string, sanitize};
use crate::api::IntegrationCreate;
use crate::manifest::types::EnvRef;
use crate::plan::diff::{field_changes, path_label};
use crate::plan::{
    Action, Attribution, BlastRadius, ChangeOutcome, FieldChange, Operation, OutcomeStatus,
    ResourceChange,
};

/// One thing a reviewer reads about a change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// A value changed.
    Changed {
        /// Path within the object.
        path: String,
        /// Before (plan), live (drift) or wanted (apply).
        before: Value,
        /// After (plan), configured (drift) or live (apply).
        after: Value,
    },
    /// A value that only the after side has.
    Added {
        /// Path within the object.
        path: String,
        /// The value.
        value: Value,
    },
    /// A value that only the before side has.
    Removed {
        /// Path within the object.
        path: String,
        /// The value.
        value: Value,
    },
    /// A long string changed: shown as a unified diff.
    Text {
        /// Path within the object.
        path: String,
        /// The old text.
        before: String,
        /// The new text.
        after: String,
    },
    /// A write-only secret the change sends, as its `${ENV}` reference.
    Secret {
        /// Path within the integration body.
        path: String,
        /// The reference, e.g. `${OPENAI_API_KEY}`.
        reference: String,
    },
}

/// The entries of a change: its fields, then the secrets it sends.
pub(crate) fn of_change(change: &ResourceChange) -> Vec<Entry> {
    let mut out = of_fields(&change.fields);
    for body in change
        .operations
        .iter()
        .filter_map(Operation::integration_body)
    {
        secrets(body, &mut out);
    }
    out
}

/// The entries a plan or drift report shows for `change`: a drift report is
/// about state, not about what apply would send, so it leaves secrets out.
pub(crate) fn shown(change: &ResourceChange, mode: Mode) -> Vec<Entry> {
    let mut entries = of_change(change);
    if mode == Mode::Drift {
        entries.retain(|e| !matches!(e, Entry::Secret { .. }));
    }
    entries
}

/// The entries a report shows for `change`, field by field, each with a
/// remark saying whose change the field is when the change is attributed
/// (a three-way plan) and the field's attribution is not the change's (a
/// conflict always, naming the base's value); the secrets it sends last.
pub(crate) fn shown_by_field(
    change: &ResourceChange,
    mode: Mode,
) -> Vec<(Vec<Entry>, Option<String>)> {
    if change.attribution.is_none() {
        return vec![(shown(change, mode), None)];
    }
    let mut out: Vec<(Vec<Entry>, Option<String>)> = change
        .fields
        .iter()
        .map(|f| {
            (
                of_fields(std::slice::from_ref(f)),
                attribution_remark(f, change.attribution, mode),
            )
        })
        .collect();
    let secrets: Vec<Entry> = shown(change, mode)
        .into_iter()
        .filter(|e| matches!(e, Entry::Secret { .. }))
        .collect();
    if !secrets.is_empty() {
        out.push((secrets, None));
    }
    out
}

/// Whose change `field` is, in words, when `group` (its change's
/// attribution) does not say it; a conflict names the base's value.
pub(crate) fn attribution_remark(
    field: &FieldChange,
    group: Option<Attribution>,
    mode: Mode,
) -> Option<String> {
    let remark = match field.attribution? {
        Attribution::Conflict => match field.base.as_ref() {
            None | Some(Value::Null) => "conflict: the base does not have it".to_owned(),
            Some(base) if is_inline(base) => {
                format!("conflict: the base has {}", compact(base))
            }
            Some(_) => "conflict: the base has another value".to_owned(),
        },
        a if Some(a) == group => return None,
        Attribution::Drift => match mode {
            Mode::Plan => "drift: changed out of band; this apply reverts it".to_owned(),
            Mode::Drift => "drift: changed out of band since the last apply".to_owned(),
        },
        Attribution::Pending => match mode {
            Mode::Plan => "pending: the base's change, never applied".to_owned(),
            Mode::Drift => "pending: merged, not applied yet".to_owned(),
        },
        Attribution::Proposed => match mode {
            Mode::Plan => "this PR's change".to_owned(),
            Mode::Drift => "changed in the manifests since the base".to_owned(),
        },
    };
    Some(remark)
}

/// The entries of field changes.
pub(crate) fn of_fields(fields: &[FieldChange]) -> Vec<Entry> {
    let mut out = Vec::new();
    for field in fields {
        let top = field.path.is_empty();
        // The whole object: absent is written as null by the planner.
        let before = field.before_value().filter(|v| !(top && v.is_null()));
        let after = field.after_value().filter(|v| !(top && v.is_null()));
        classify(&field.path, before.as_ref(), after.as_ref(), &mut out);
    }
    out
}

fn join(prefix: &str, sub: &str) -> String {
    if sub.is_empty() {
        prefix.to_owned()
    } else if prefix.is_empty() || sub.starts_with('[') {
        format!("{prefix}{sub}")
    } else {
        format!("{prefix}.{sub}")
    }
}

fn classify(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<Entry>) {
    match (before, after) {
        (None, None) => {}
        (Some(b), Some(a)) if b == a => {}
        (None, Some(Value::Object(map))) if path.is_empty() => {
            for (k, v) in map {
                classify(k, None, Some(v), out);
            }
        }
        (Some(Value::Object(map)), None) if path.is_empty() => {
            for (k, v) in map {
                classify(k, Some(v), None, out);
            }
        }
        (None, Some(a)) => out.push(Entry::Added {
            path: path.to_owned(),
            value: a.clone(),
        }),
        (Some(b), None) => out.push(Entry::Removed {
            path: path.to_owned(),
            value: b.clone(),
        }),
        (Some(Value::Object(_)), Some(Value::Object(_))) => nested(path, before, after, out),
        (Some(Value::String(b)), Some(Value::String(a)))
            if is_long_string(b) || is_long_string(a) =>
        {
            out.push(Entry::Text {
                path: path.to_owned(),
                before: b.clone(),
                after: a.clone(),
            });
        }
        (Some(bv @ Value::Array(b)), Some(av @ Value::Array(a)))
            if !(is_inline(bv) && is_inline(av)) =>
        {
            elements(path, b, a, out);
        }
        (Some(b), Some(a)) => out.push(Entry::Changed {
            path: path.to_owned(),
            before: b.clone(),
            after: a.clone(),
        }),
    }
}

/// Two different values of the same container type, diffed field by field.
fn nested(path: &str, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<Entry>) {
    let null = Value::Null;
    let changes = field_changes(before.unwrap_or(&null), after.unwrap_or(&null), &[]);
    for c in changes {
        let sub = join(path, &c.path);
        if c.path.is_empty() {
            // Not comparable below this point: one change of the whole value.
            match (c.before_value(), c.after_value()) {
                (Some(b), Some(a)) => out.push(Entry::Changed {
                    path: sub,
                    before: b,
                    after: a,
                }),
                (b, a) => classify(&sub, b.as_ref(), a.as_ref(), out),
            }
        } else {
            classify(
                &sub,
                c.before_value().as_ref(),
                c.after_value().as_ref(),
                out,
            );
        }
    }
}

/// Arrays of different lengths, element by element: removed elements by
/// their old index, added and changed ones by their new index.
fn elements(path: &str, before: &[Value], after: &[Value], out: &mut Vec<Entry>) {
    let old: Vec<String> = before.iter().map(Value::to_string).collect();
    let new: Vec<String> = after.iter().map(Value::to_string).collect();
    for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => {
                for i in old_range {
                    if let Some(v) = before.get(i) {
                        classify(&format!("{path}[{i}]"), Some(v), None, out);
                    }
                }
            }
            DiffTag::Insert => {
                for j in new_range {
                    if let Some(v) = after.get(j) {
                        classify(&format!("{path}[{j}]"), None, Some(v), out);
                    }
                }
            }
            DiffTag::Replace => {
                let paired = old_range.len().min(new_range.len());
                for (i, j) in old_range.clone().zip(new_range.clone()) {
                    if let (Some(b), Some(a)) = (before.get(i), after.get(j)) {
                        let sub = format!("{path}[{j}]");
                        if b.is_object() && a.is_object() {
                            nested(&sub, Some(b), Some(a), out);
                        } else {
                            classify(&sub, Some(b), Some(a), out);
                        }
                    }
                }
                for i in old_range.skip(paired) {
                    if let Some(v) = before.get(i) {
                        classify(&format!("{path}[{i}]"), Some(v), None, out);
                    }
                }
                for j in new_range.skip(paired) {
                    if let Some(v) = after.get(j) {
                        classify(&format!("{path}[{j}]"), None, Some(v), out);
                    }
                }
            }
        }
    }
}

/// The secret fields of an integration body: every string the body holds
/// where its public form holds nothing. Anything that is not an `${ENV}`
/// reference (which a plan never holds) is shown as `[redacted]`.
fn secrets(body: &IntegrationCreate<EnvRef>, out: &mut Vec<Entry>) {
    let Ok(Value::Object(full)) = serde_json::to_value(body) else {
        return;
    };
    let public = Value::Object(body.public_fields());
    walk_secrets("", &full, Some(&public), out);
}

fn walk_secrets(
    path: &str,
    full: &serde_json::Map<String, Value>,
    public: Option<&Value>,
    out: &mut Vec<Entry>,
) {
    for (k, v) in full {
        if path.is_empty() && k == "provider" {
            continue;
        }
        let public_v = public.and_then(|p| p.get(k));
        let sub = join(path, k);
        match v {
            Value::String(s) if public_v.is_none() => out.push(Entry::Secret {
                path: sub,
                reference: if is_env_ref(s) {
                    s.clone()
                } else {
                    "[redacted]".to_owned()
                },
            }),
            Value::Object(inner) => walk_secrets(&sub, inner, public_v, out),
            _ => {}
        }
    }
}

fn is_env_ref(s: &str) -> bool {
    s.strip_prefix("${")
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| {
            let mut chars = name.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        })
}

/// Whose words a renderer uses for the two sides of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wording {
    /// A plan: "before → after".
    Plan,
    /// A drift report: "configured X, live Y" (after is configured, before live).
    Drift,
    /// An apply report's unconverged fields: "wanted X, live holds Y".
    Apply,
}

impl Wording {
    /// How `mode` words a change of `action`: a drift report words both sides
    /// only where both exist.
    pub(crate) fn of_change(mode: Mode, action: Action) -> Self {
        match (mode, action) {
            (Mode::Drift, Action::Update | Action::Replace) => Wording::Drift,
            _ => Wording::Plan,
        }
    }

    /// Labels of the (before, after) sides.
    pub(crate) fn labels(self) -> (&'static str, &'static str) {
        match self {
            Wording::Plan => ("before", "after"),
            Wording::Drift => ("live", "configured"),
            Wording::Apply => ("wanted", "live holds"),
        }
    }

    /// The two sides in reading order, labelled; `None` is absent.
    pub(crate) fn parts<'v>(
        self,
        before: Option<&'v Value>,
        after: Option<&'v Value>,
    ) -> [(&'static str, Option<&'v Value>); 2] {
        let (b, a) = self.labels();
        match self {
            Wording::Drift => [(a, after), (b, before)],
            Wording::Plan | Wording::Apply => [(b, before), (a, after)],
        }
    }
}

/// A field path as shown (sanitized): the empty path is `(the object)`.
pub(crate) fn display_path(path: &str) -> String {
    sanitize(path_label(path))
}

/// How a change of `action` sends a secret: `sent` to a new object, `sent
/// again` to an existing one.
pub(crate) fn secret_sent(action: Action) -> &'static str {
    match action {
        Action::Create | Action::Replace => "sent",
        Action::Update | Action::Delete => "sent again",
    }
}

/// `s` after a count other than one.
pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// An apply outcome's symbol and words: `✓ created`, `✗ update failed`,
/// `- delete skipped`.
pub(crate) fn outcome(o: &ChangeOutcome) -> (&'static str, String) {
    match o.status {
        OutcomeStatus::Succeeded => ("✓", past(o.action).to_owned()),
        OutcomeStatus::Failed => ("✗", format!("{} failed", o.action.verb())),
        OutcomeStatus::Skipped => ("-", format!("{} skipped", o.action.verb())),
    }
}

/// `created`, `updated`, ...
fn past(action: Action) -> &'static str {
    match action {
        Action::Create => "created",
        Action::Update => "updated",
        Action::Replace => "replaced",
        Action::Delete => "deleted",
    }
}

/// How many project names a blast-radius line lists.
const BLAST_NAMES: usize = 5;

/// `scorer correctness v3 is also used by 4 other projects: a, b, c, d, … (12 total)`
/// (unescaped: callers make it safe for their format).
pub(crate) fn blast_radius_line(b: &BlastRadius) -> String {
    let n = b.projects.len();
    let total = usize::try_from(b.total_count).unwrap_or(0);
    let mut line = format!("scorer {} v{} is also used by ", b.scorer, b.version);
    if n == 0 && total == 0 {
        line.push_str("no other project");
        return line;
    }
    if n == 0 {
        line.push_str(&format!("other projects ({total} total)"));
        return line;
    }
    let names: Vec<&str> = b
        .projects
        .iter()
        .take(BLAST_NAMES)
        .map(String::as_str)
        .collect();
    line.push_str(&format!(
        "{n} other project{}: {}",
        plural(n),
        names.join(", ")
    ));
    if n > BLAST_NAMES {
        line.push_str(", …");
    }
    if total > n {
        line.push_str(&format!(" ({total} total)"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fc(path: &str, before: Option<Value>, after: Option<Value>) -> FieldChange {
        FieldChange::new(path, before, after)
    }

    fn paths(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match e {
                Entry::Changed { path, .. } => format!("~{path}"),
                Entry::Added { path, .. } => format!("+{path}"),
                Entry::Removed { path, .. } => format!("-{path}"),
                Entry::Text { path, .. } => format!("t{path}"),
                Entry::Secret { path, .. } => format!("s{path}"),
            })
            .collect()
    }

    #[test]
    fn whole_objects_expand_by_key() {
        let e = of_fields(&[fc(
            "",
            Some(Value::Null),
            Some(json!({"name": "a", "color": "#fff"})),
        )]);
        assert_eq!(paths(&e), ["+name", "+color"]);
    }

    #[test]
    fn arrays_of_changed_length_diff_by_element() {
        let f0 =
            json!({"sample_rate": 0.5, "llm_scorers": false, "multimodal_scorers": false, "x": 1});
        let f1 =
            json!({"sample_rate": 0.25, "llm_scorers": true, "multimodal_scorers": false, "x": 2});
        let f1b =
            json!({"sample_rate": 0.3, "llm_scorers": true, "multimodal_scorers": false, "x": 2});
        let f2 =
            json!({"sample_rate": 1.0, "llm_scorers": false, "multimodal_scorers": true, "x": 3});
        let e = of_fields(&[fc(
            "segment_filters",
            Some(json!([f0, f1, f2])),
            Some(json!([f0, f1b])),
        )]);
        assert_eq!(
            paths(&e),
            ["~segment_filters[1].sample_rate", "-segment_filters[2]"]
        );
    }

    #[test]
    fn long_strings_become_text_diffs() {
        let e = of_fields(&[fc("criteria", Some(json!("a\nb")), Some(json!("a\nc")))]);
        assert_eq!(paths(&e), ["tcriteria"]);
    }

    #[test]
    fn env_references_are_recognized() {
        assert!(is_env_ref("${OPENAI_API_KEY}"));
        assert!(!is_env_ref("sk-123"));
        assert!(!is_env_ref("${1X}"));
    }
}
