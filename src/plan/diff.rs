//! Field-level differences between two normalized objects, and the value a
//! difference's path points at (what confirming an apply checks).

use serde_json::Value;

use super::types::FieldChange;

/// How a field path is shown to people: the empty path, the whole object,
/// as `(the object)`.
pub fn path_label(path: &str) -> &str {
    if path.is_empty() {
        "(the object)"
    } else {
        path
    }
}

/// The field-level differences between `before` and `after`.
///
/// Objects are compared key by key. Keys of the fields named in `keyed_sets`
/// hold keyed sets (e.g. `scorers`), whose entries are shown as
/// `scorers[name]`; other keys as `.field`. Arrays of equal length are
/// compared element by element (`[i]`); arrays whose length changed are one
/// change of the whole array.
pub fn field_changes(before: &Value, after: &Value, keyed_sets: &[&str]) -> Vec<FieldChange> {
    object_changes(Some(before), Some(after), keyed_sets)
}

/// Like [`field_changes`], for objects that may not exist: a missing side is
/// `None` in every resulting [`FieldChange`] (never a JSON `null`).
pub fn object_changes(
    before: Option<&Value>,
    after: Option<&Value>,
    keyed_sets: &[&str],
) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk(String::new(), before, after, keyed_sets, false, &mut out);
    // A plan keeps tens of thousands of these, most of one or two fields:
    // the spare room of a growing vector would be a third of their size.
    out.shrink_to_fit();
    out
}

fn join(path: &str, key: &str, keyed: bool) -> String {
    if keyed {
        format!("{path}[{key}]")
    } else if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(
    path: String,
    before: Option<&Value>,
    after: Option<&Value>,
    keyed_sets: &[&str],
    entries_keyed: bool,
    out: &mut Vec<FieldChange>,
) {
    match (before, after) {
        (Some(b), Some(a)) if b == a => {}
        (Some(Value::Object(b)), Some(Value::Object(a))) => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let child_keyed = keyed_sets.contains(&key.as_str());
                walk(
                    join(&path, key, entries_keyed),
                    b.get(key),
                    a.get(key),
                    keyed_sets,
                    child_keyed,
                    out,
                );
            }
        }
        (Some(Value::Array(b)), Some(Value::Array(a))) if a.len() == b.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                walk(
                    format!("{path}[{i}]"),
                    Some(bv),
                    Some(av),
                    keyed_sets,
                    false,
                    out,
                );
            }
        }
        (None, None) => {}
        (b, a) => out.push(FieldChange::of_refs(path, b, a)),
    }
}

/// Every node of `value` by the path [`field_changes`] would name it with
/// (the same `keyed_sets`): the whole value at `""`.
pub fn values_by_path<'v>(
    value: &'v Value,
    keyed_sets: &[&str],
) -> std::collections::BTreeMap<String, &'v Value> {
    let mut out = std::collections::BTreeMap::new();
    index(String::new(), value, keyed_sets, false, &mut out);
    out
}

fn index<'v>(
    path: String,
    value: &'v Value,
    keyed_sets: &[&str],
    entries_keyed: bool,
    out: &mut std::collections::BTreeMap<String, &'v Value>,
) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let child_keyed = keyed_sets.contains(&key.as_str());
                index(
                    join(&path, key, entries_keyed),
                    child,
                    keyed_sets,
                    child_keyed,
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                index(format!("{path}[{i}]"), child, keyed_sets, false, out);
            }
        }
        _ => {}
    }
    out.insert(path, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keyed_sets_and_fields_get_readable_paths() {
        let before = json!({"scorers": {"correctness": {"num_judges": 3}, "bleu": {}},
                            "segment_filters": [{"sample_rate": 0.5}]});
        let after = json!({"scorers": {"correctness": {"num_judges": 5}, "rouge": {}},
                           "segment_filters": [{"sample_rate": 0.25}]});
        let paths: Vec<String> = field_changes(&before, &after, &["scorers"])
            .into_iter()
            .map(|c| c.path)
            .collect();
        assert_eq!(
            paths,
            [
                "scorers[bleu]",
                "scorers[correctness].num_judges",
                "scorers[rouge]",
                "segment_filters[0].sample_rate"
            ]
        );
    }

    #[test]
    fn every_path_a_difference_names_can_be_looked_up() {
        let before = json!({"scorers": {"correctness": {"num_judges": 3}},
                            "segment_filters": [{"sample_rate": 0.5}]});
        let after = json!({"scorers": {"correctness": {"num_judges": 5}, "rouge": {}},
                           "segment_filters": [{"sample_rate": 0.25}]});
        let values = values_by_path(&after, &["scorers"]);
        for change in field_changes(&before, &after, &["scorers"]) {
            assert_eq!(
                values.get(&change.path).copied().cloned(),
                change.after_value()
            );
        }
        assert_eq!(values.get(""), Some(&&after));
        assert!(!values.contains_key("scorers[bleu]"));
    }
}
