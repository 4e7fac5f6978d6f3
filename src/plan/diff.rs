//! Field-level differences between two normalized objects, and the stable
//! fingerprint a saved plan uses to notice that live state moved.

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
        (b, a) => out.push(FieldChange {
            path,
            before: b.cloned(),
            after: a.cloned(),
        }),
    }
}

/// A stable fingerprint of a normalized object: FNV-1a (64 bit) of its
/// canonical JSON, as 16 hex digits; `absent` when there is no object.
///
/// Canonical: serde_json writes struct fields in declaration order and maps
/// from `BTreeMap`s in key order, so equal objects give equal text.
pub fn fingerprint(value: Option<&Value>) -> String {
    match value {
        None => "absent".to_owned(),
        Some(v) => {
            let text = v.to_string();
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for byte in text.as_bytes() {
                hash ^= u64::from(*byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            format!("{hash:016x}")
        }
    }
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
    fn fingerprints_are_stable_and_distinguish() {
        let a = json!({"a": 1});
        assert_eq!(fingerprint(Some(&a)), fingerprint(Some(&json!({"a": 1}))));
        assert_ne!(fingerprint(Some(&a)), fingerprint(Some(&json!({"a": 2}))));
        assert_eq!(fingerprint(None), "absent");
    }
}
