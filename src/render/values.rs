//! How values look: small JSON values on one line, large objects as indented
//! YAML-like blocks, long strings as literal blocks or unified diffs, and
//! every piece of text from outside made safe for a terminal.

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// Widest a value may be and still be shown on its field's line.
pub(crate) const INLINE_WIDTH: usize = 60;

/// Longest a one-line string may be before it is shown as a block (and
/// changes to it as a unified diff).
pub(crate) const LONG_STRING: usize = 80;

/// Lines of context around each hunk of a text diff.
const DIFF_CONTEXT: usize = 3;

/// A value, ready to place after `path:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shown {
    /// On the field's line.
    Inline(String),
    /// An object or array, one line per entry, to indent under the field.
    Block(Vec<String>),
    /// A long string, one line per line, to indent under `path: |`.
    Literal(Vec<String>),
}

/// Whether a string is shown as a block rather than quoted on one line.
pub(crate) fn is_long_string(s: &str) -> bool {
    s.contains('\n') || s.chars().count() > LONG_STRING
}

/// Whether a value holds a long string anywhere.
fn has_long_string(v: &Value) -> bool {
    match v {
        Value::String(s) => is_long_string(s),
        Value::Array(items) => items.iter().any(has_long_string),
        Value::Object(map) => map.values().any(has_long_string),
        _ => false,
    }
}

/// How `v` is shown after its field's name.
pub(crate) fn show(v: &Value) -> Shown {
    if let Value::String(s) = v
        && is_long_string(s)
    {
        return Shown::Literal(literal_lines(s));
    }
    if !has_long_string(v) {
        let inline = compact(v);
        if inline.chars().count() <= INLINE_WIDTH {
            return Shown::Inline(inline);
        }
    }
    let mut lines = Vec::new();
    block(v, 0, &mut lines);
    Shown::Block(lines)
}

/// Whether the value `v` at `path` is an entry of a keyed set with nothing
/// to show besides its key (`scorers[correctness]` enabled as written, its
/// catalog-filled fields left out): shown as its path alone, not `{}`.
pub(crate) fn is_bare_entry(path: &str, v: &Value) -> bool {
    path.ends_with(']') && v.as_object().is_some_and(serde_json::Map::is_empty)
}

/// Whether `v` is shown on its field's line.
pub(crate) fn is_inline(v: &Value) -> bool {
    matches!(show(v), Shown::Inline(_))
}

/// One line, JSON with spaces after `,` and `:`; strings quoted and escaped.
pub(crate) fn compact(v: &Value) -> String {
    let mut out = String::new();
    write_compact(v, &mut out);
    out
}

fn write_compact(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(&quote(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_compact(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quote(k));
                out.push_str(": ");
                write_compact(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A string as a JSON literal, also escaping bidirectional controls.
pub(crate) fn quote(s: &str) -> String {
    sanitize(&Value::String(s.to_owned()).to_string())
}

fn key(k: &str) -> String {
    let mut chars = k.chars();
    let bare = matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c == '-' || c.is_ascii_alphanumeric());
    if bare { k.to_owned() } else { quote(k) }
}

/// An array of scalars fitting on a line stays on its key's line in a block.
fn inline_in_block(v: &Value) -> Option<String> {
    match v {
        Value::Array(items) if items.iter().all(|i| !i.is_array() && !i.is_object()) => {
            if has_long_string(v) {
                return None;
            }
            let s = compact(v);
            (s.chars().count() <= INLINE_WIDTH).then_some(s)
        }
        Value::Object(map) if map.is_empty() => Some("{}".to_owned()),
        Value::String(s) if is_long_string(s) => None,
        Value::Array(_) | Value::Object(_) => None,
        scalar => Some(compact(scalar)),
    }
}

fn block(v: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, item) in map {
                let k = key(k);
                entry(&format!("{pad}{k}:"), item, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        let mut sub = Vec::new();
                        block(item, 0, &mut sub);
                        for (i, line) in sub.into_iter().enumerate() {
                            let lead = if i == 0 { "- " } else { "  " };
                            out.push(format!("{pad}{lead}{line}"));
                        }
                    }
                    _ => entry(&format!("{pad}-"), item, indent, out),
                }
            }
        }
        Value::String(s) if is_long_string(s) => {
            for line in literal_lines(s) {
                out.push(format!("{pad}{line}"));
            }
        }
        other => out.push(format!("{pad}{}", compact(other))),
    }
}

/// `head` (e.g. `  key:`) followed by the value: on the same line when it
/// fits, else as a block indented under it.
fn entry(head: &str, v: &Value, indent: usize, out: &mut Vec<String>) {
    if let Some(inline) = inline_in_block(v) {
        out.push(format!("{head} {inline}"));
    } else if let Value::String(s) = v {
        out.push(format!("{head} |"));
        let pad = " ".repeat(indent + 2);
        for line in literal_lines(s) {
            out.push(format!("{pad}{line}"));
        }
    } else {
        out.push(head.to_owned());
        block(v, indent + 2, out);
    }
}

fn literal_lines(s: &str) -> Vec<String> {
    s.lines().map(sanitize).collect()
}

/// Text from outside (names, reasons, details) made safe for one line of a
/// terminal: control characters (escape sequences, carriage returns, tabs)
/// and bidirectional overrides are written as `\u{..}`.
pub(crate) fn sanitize(s: &str) -> String {
    crate::scrub::escape_controls(s).into_owned()
}

/// A multi-line text made safe line by line.
pub(crate) fn sanitize_lines(s: &str) -> Vec<String> {
    let lines: Vec<String> = s.lines().map(sanitize).collect();
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

/// One line of a unified diff of two texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DiffLine {
    /// `@@ -a,b +c,d @@`.
    Hunk(String),
    /// A line both texts have.
    Same(String),
    /// A line only the old text has.
    Old(String),
    /// A line only the new text has.
    New(String),
}

/// The unified diff of two texts, by line, with a few lines of context.
pub(crate) fn text_diff(old: &str, new: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for hunk in diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .iter_hunks()
    {
        out.push(DiffLine::Hunk(hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let text = sanitize(change.value().trim_end_matches(['\n', '\r']));
            out.push(match change.tag() {
                ChangeTag::Equal => DiffLine::Same(text),
                ChangeTag::Delete => DiffLine::Old(text),
                ChangeTag::Insert => DiffLine::New(text),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn small_values_inline_large_objects_as_blocks() {
        assert_eq!(show(&json!(3)), Shown::Inline("3".into()));
        assert_eq!(
            show(&json!({"a": "b", "c": [1, 2]})),
            Shown::Inline(r#"{"a": "b", "c": [1, 2]}"#.into())
        );
        let big = json!({"id": "0c9b3a4e-8a2f-4b7a-9c61-1f0e5d6b7a88", "scorer_type": "preset",
                         "scoreable_node_types": ["llm", "chat"],
                         "filters": [{"name": "node_name", "operator": "eq", "value": "llm"}],
                         "weird key": {}});
        let Shown::Block(lines) = show(&big) else {
            panic!("expected a block");
        };
        assert_eq!(
            lines,
            [
                r#"id: "0c9b3a4e-8a2f-4b7a-9c61-1f0e5d6b7a88""#,
                r#"scorer_type: "preset""#,
                r#"scoreable_node_types: ["llm", "chat"]"#,
                "filters:",
                r#"  - name: "node_name""#,
                r#"    operator: "eq""#,
                r#"    value: "llm""#,
                r#""weird key": {}"#,
            ]
        );
    }

    #[test]
    fn long_strings_are_literal_blocks_and_control_characters_escaped() {
        assert_eq!(
            show(&json!("a\nb\u{1b}[31m")),
            Shown::Literal(vec!["a".into(), "b\\u{1b}[31m".into()])
        );
        assert_eq!(quote("x\u{1b}"), r#""x\u001b""#);
        assert_eq!(sanitize("a\u{202e}b"), "a\\u{202e}b");
    }

    #[test]
    fn text_diffs_have_hunks_and_context() {
        let old = "one\ntwo\nthree\n";
        let new = "one\n2\nthree\n";
        assert_eq!(
            text_diff(old, new),
            [
                DiffLine::Hunk("@@ -1,3 +1,3 @@".into()),
                DiffLine::Same("one".into()),
                DiffLine::Old("two".into()),
                DiffLine::New("2".into()),
                DiffLine::Same("three".into()),
            ]
        );
    }
}
