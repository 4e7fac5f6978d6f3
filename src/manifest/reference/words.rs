//! Wording and markdown of the manifest reference: limits in words, values as written
//! in YAML, code spans, table cells, headings and the anchors GitHub gives them.

use std::fmt::Write as _;

use serde_json::Value;

use super::str_of;

/// Length, range and size limits, in words.
pub(super) fn limits(schema: &Value) -> Option<String> {
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    let mut parts = Vec::new();
    let range = |min: Option<f64>, max: Option<f64>, unit: &str| -> Option<String> {
        let unit = |n: f64| {
            if unit.is_empty() {
                String::new()
            } else if n == 1.0 {
                format!(" {}", unit.trim_end_matches('s'))
            } else {
                format!(" {unit}")
            }
        };
        match (min, max) {
            (Some(min), Some(max)) if min == max => {
                Some(format!("exactly {}{}", num(min), unit(max)))
            }
            (Some(min), Some(max)) => Some(format!("{} to {}{}", num(min), num(max), unit(max))),
            (Some(min), None) => Some(format!("at least {}{}", num(min), unit(min))),
            (None, Some(max)) => Some(format!("at most {}{}", num(max), unit(max))),
            (None, None) => None,
        }
    };
    parts.extend(range(
        number("minLength"),
        number("maxLength"),
        "characters",
    ));
    parts.extend(range(number("minimum"), number("maximum"), ""));
    if let Some(min) = number("exclusiveMinimum") {
        parts.push(format!("greater than {}", num(min)));
    }
    if let Some(max) = number("exclusiveMaximum") {
        parts.push(format!("less than {}", num(max)));
    }
    parts.extend(range(number("minItems"), number("maxItems"), "items"));
    if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
        parts.push("no duplicates".to_owned());
    }
    parts.extend(range(
        number("minProperties"),
        number("maxProperties"),
        "entries",
    ));
    let also = schema
        .get("allOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| str_of(s, "pattern"));
    let patterns: Vec<String> = str_of(schema, "pattern")
        .into_iter()
        .chain(also)
        .map(code)
        .collect();
    if !patterns.is_empty() {
        parts.push(format!("matches {}", patterns.join(" and ")));
    }
    match str_of(schema, "format") {
        Some("uri") => parts.push("an absolute URI".to_owned()),
        Some("uuid") => parts.push("a UUID".to_owned()),
        Some("date-time") => parts.push("an RFC 3339 date-time".to_owned()),
        Some("date") => parts.push("a date (`YYYY-MM-DD`)".to_owned()),
        _ => {}
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A number as people write it: `1`, not `1.0`.
pub(super) fn num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// A value as written in YAML: strings bare, others as JSON.
pub(super) fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => compact(other),
    }
}

pub(super) fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A code span holding `text`, fenced with enough backticks.
pub(super) fn code(text: &str) -> String {
    if text.contains('`') {
        format!("`` {text} ``")
    } else {
        format!("`{text}`")
    }
}

/// A description on one line: wrapped lines joined, paragraphs kept apart.
pub(super) fn one_line(text: &str) -> String {
    text.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("<br><br>")
}

/// A heading with exactly one blank line before and after it.
pub(super) fn heading(out: &mut String, level: usize, text: &str) {
    let end = out.trim_end().len();
    out.truncate(end);
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    let _ = writeln!(out, "{} {text}\n", "#".repeat(level));
}

/// A schema's description as a paragraph of its own, when it has one.
pub(super) fn paragraph(out: &mut String, schema: &Value) {
    if let Some(description) = str_of(schema, "description") {
        let text = description
            .split("\n\n")
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        if !text.is_empty() {
            let _ = writeln!(out, "{text}\n");
        }
    }
}

/// Text safe in a table cell: a `|` would end the cell, even in a code span.
pub(super) fn cell_escape(text: &str) -> String {
    text.replace('|', "\\|")
}

pub(super) fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as `-`.
pub(super) fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slugs_follow_github() {
        assert_eq!(
            slug("Project document (kind: Project)"),
            "project-document-kind-project"
        );
        assert_eq!(slug("Integration: aws_bedrock"), "integration-aws_bedrock");
        assert_eq!(slug("EnvRef"), "envref");
    }

    #[test]
    fn limits_read_like_sentences() {
        assert_eq!(
            limits(&json!({"minLength": 1, "maxLength": 100})).as_deref(),
            Some("1 to 100 characters")
        );
        assert_eq!(
            limits(&json!({"minLength": 1})).as_deref(),
            Some("at least 1 character")
        );
        assert_eq!(
            limits(&json!({"minimum": 0.0, "maximum": 1.0})).as_deref(),
            Some("0 to 1")
        );
        assert_eq!(
            limits(&json!({"maxItems": 50, "pattern": "^a|b$"})).as_deref(),
            Some("at most 50 items, matches `^a|b$`")
        );
        assert_eq!(limits(&json!({"type": "string"})), None);
        assert_eq!(
            limits(&json!({"maxLength": 2083, "format": "uri"})).as_deref(),
            Some("at most 2083 characters, an absolute URI")
        );
        assert_eq!(
            limits(&json!({"maxProperties": 50, "format": "uuid"})).as_deref(),
            Some("at most 50 entries, a UUID")
        );
        assert_eq!(
            limits(&json!({"pattern": "^a", "allOf": [{"pattern": "b$"}]})).as_deref(),
            Some("matches `^a` and `b$`")
        );
    }
}
