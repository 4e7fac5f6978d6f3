//! Hiding literal secrets in the source text that diagnostics quote.
//!
//! Diagnostics show the offending source line. When a secret field holds a literal (which
//! the loader refuses), that line, or any other line holding the literal, must not
//! repeat it. The loader keeps only a masked copy of each file's text for rendering:
//! - [`mask_spans`] replaces the given values (found from the parsed document): a value
//!   that ends its line becomes `********`, whatever its length; a value followed by
//!   more text on its line (flow style) has each character replaced by `*`, so the
//!   columns of what follows stay right; line breaks inside a value are kept.
//! - [`mask_secret_lines`] is the fallback for text that did not parse (no document to
//!   find values in): on every line of the form `token: value` (any of the secret field
//!   names, block style) whose value is not a `${NAME}` reference, the value is masked;
//!   so is every `token: value` entry inside a flow mapping on a line
//!   (`{"token": "sk-...", ...}`), character by character.

use std::sync::OnceLock;

use regex::Regex;

use super::diagnostic::{Span, char_floor, lines};
use super::types::EnvRef;

/// What a masked value is shown as.
pub const MASK: &str = "********";

/// `source` with each span's text masked. Spans may overlap or repeat.
#[must_use]
pub fn mask_spans(source: &str, spans: &[Span]) -> String {
    let mut ranges: Vec<(usize, usize)> = spans
        .iter()
        .filter_map(|span| range(source, span))
        .collect();
    ranges.sort_unstable();
    // Merge overlapping ranges, so each byte is masked once.
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for (start, end) in merged {
        out.push_str(&source[at..start]);
        out.push_str(&masked(
            &source[start..end],
            rest_of_line_is_empty(&source[end..]),
        ));
        at = end;
    }
    out.push_str(&source[at..]);
    out
}

/// The byte range of a span's value in `source`, at character boundaries. A span without
/// a length covers the rest of its line.
fn range(source: &str, span: &Span) -> Option<(usize, usize)> {
    let start = span.offset;
    if start >= source.len() || !source.is_char_boundary(start) {
        return None;
    }
    let mut end = if span.len == 0 {
        start + line_end(&source[start..])
    } else {
        char_floor(source, start.saturating_add(span.len))
    };
    // A block scalar's span may take its final line break: keep it.
    while end > start && matches!(source.as_bytes()[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    (end > start).then_some((start, end))
}

/// Bytes up to the end of the line (before any comment).
fn line_end(text: &str) -> usize {
    let line_text = lines(text).next().map_or("", |(_, line)| line);
    match line_text.find(" #") {
        Some(comment) => comment,
        None => line_text.len(),
    }
}

fn rest_of_line_is_empty(after: &str) -> bool {
    let line = lines(after).next().map_or("", |(_, line)| line);
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

fn masked(value: &str, ends_line: bool) -> String {
    if ends_line && !value.contains(['\n', '\r']) {
        return MASK.to_owned();
    }
    value
        .chars()
        .map(|c| if matches!(c, '\n' | '\r') { c } else { '*' })
        .collect()
}

/// `source` with the value of every `secret_field: value` line masked, unless the value
/// is a `${NAME}` reference. For text that could not be parsed.
#[must_use]
pub fn mask_secret_lines(source: &str, secret_fields: &[&str]) -> String {
    static LINE: OnceLock<Option<Regex>> = OnceLock::new();
    static REFERENCE: OnceLock<Option<Regex>> = OnceLock::new();
    let (Some(line), Some(reference)) = (
        LINE.get_or_init(|| {
            Regex::new(r#"^(\s*(?:-\s+)?["']?([A-Za-z_]+)["']?\s*:[ \t]+)(\S.*?)\s*$"#).ok()
        }),
        REFERENCE.get_or_init(|| {
            // A reference, maybe quoted, maybe followed by a comment.
            let bare = EnvRef::PATTERN
                .strip_prefix('^')
                .and_then(|p| p.strip_suffix('$'))?;
            Regex::new(&format!(r#"^["']?{bare}["']?(\s+#.*)?$"#)).ok()
        }),
    ) else {
        return source.to_owned();
    };
    let mut out = String::with_capacity(source.len());
    for (start, text) in lines(source) {
        let after = &source[start + text.len()..];
        let line_break = if after.starts_with("\r\n") {
            "\r\n"
        } else {
            &after[..after.len().min(1)]
        };
        match line.captures(text) {
            Some(caps)
                if caps
                    .get(2)
                    .is_some_and(|key| secret_fields.contains(&key.as_str()))
                    && caps
                        .get(3)
                        .is_some_and(|value| !reference.is_match(value.as_str())) =>
            {
                let prefix = caps.get(1).map_or("", |m| m.as_str());
                out.push_str(prefix);
                out.push_str(MASK);
            }
            _ => out.push_str(&mask_flow_entries(text, secret_fields, reference)),
        }
        out.push_str(line_break);
    }
    out
}

/// `line` with the value of every flow-style `secret_field: value` entry (inside `{...}`,
/// quoted or not) masked character by character, unless it is a `${NAME}` reference.
fn mask_flow_entries(line: &str, secret_fields: &[&str], reference: &Regex) -> String {
    static ENTRY: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(entry) = ENTRY.get_or_init(|| {
        Regex::new(
            r#"(?:^|[\s{\[,])["']?([A-Za-z_]+)["']?\s*:[ \t]*("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?|\$\{[A-Za-z_][A-Za-z0-9_]*\}|[^,\]}\[{\s][^,\]}]*)"#,
        )
        .ok()
    }) else {
        return line.to_owned();
    };
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    for caps in entry.captures_iter(line) {
        let (Some(key), Some(value)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if !secret_fields.contains(&key.as_str()) || reference.is_match(value.as_str().trim()) {
            continue;
        }
        out.push_str(&line[at..value.start()]);
        out.extend(value.as_str().chars().map(|_| '*'));
        at = value.end();
    }
    out.push_str(&line[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[&str] = &["token", "api_key_value"];

    fn span_of(source: &str, needle: &str) -> Span {
        let offset = source.find(needle).unwrap_or(0);
        Span::from_offset(source, offset, needle.len())
    }

    #[test]
    fn values_that_end_their_line_become_a_fixed_mask() {
        let source = "provider: openai\ntoken: sk-live-0123456789 # note\nother: 1\n";
        let masked = mask_spans(source, &[span_of(source, "sk-live-0123456789")]);
        assert_eq!(
            masked,
            "provider: openai\ntoken: ******** # note\nother: 1\n"
        );
    }

    #[test]
    fn values_inside_a_line_keep_the_columns() {
        let source = "{token: sk-abc, provider: openai}\n";
        let span = span_of(source, "sk-abc");
        let masked = mask_spans(source, &[span, span]);
        assert_eq!(masked, "{token: ******, provider: openai}\n");
    }

    #[test]
    fn multi_line_values_keep_their_lines_and_empty_spans_run_to_the_line_end() {
        let source = "token: |\n  sk-one\n  sk-two\nnext: 1\n";
        let masked = mask_spans(source, &[span_of(source, "|\n  sk-one\n  sk-two")]);
        assert_eq!(masked, "token: *\n********\n********\nnext: 1\n");
        let empty = Span {
            len: 0,
            ..span_of(source, "sk-one")
        };
        assert_eq!(
            mask_spans(
                "a: x\ntoken: sk-secret # c\n",
                &[Span {
                    offset: 12,
                    ..empty
                }]
            ),
            "a: x\ntoken: ******** # c\n"
        );
    }

    #[test]
    fn secret_lines_are_masked_in_unparsed_text() {
        let source = "token: sk-live-1\r\n  - api_key_value: \"sk 2\"\nname: x\ntoken: ${OPENAI_API_KEY}\ntoken: '${A}' # ok\n";
        assert_eq!(
            mask_secret_lines(source, FIELDS),
            "token: ********\r\n  - api_key_value: ********\nname: x\ntoken: ${OPENAI_API_KEY}\ntoken: '${A}' # ok\n"
        );
    }

    #[test]
    fn secret_lines_after_a_lone_carriage_return_are_masked() {
        // A lone `\r` ends a line for YAML, and so for the excerpts that quote it.
        let source = "name: x\rtoken: sk-live-1\r\rapi_key_value: sk-2";
        assert_eq!(
            mask_secret_lines(source, FIELDS),
            "name: x\rtoken: ********\r\rapi_key_value: ********"
        );
    }

    #[test]
    fn secret_entries_of_flow_mappings_are_masked_in_unparsed_text() {
        let source = "{\"kind\": \"Integration\", \"token\": \"sk-live-1\",}}\nextra: {token: sk-2, a: [}\n{'api_key_value': 'sk 3', my_token: keep, token: ${OK}}\n";
        assert_eq!(
            mask_secret_lines(source, FIELDS),
            "{\"kind\": \"Integration\", \"token\": ***********,}}\nextra: {token: ****, a: [}\n{'api_key_value': ******, my_token: keep, token: ${OK}}\n"
        );
    }
}
