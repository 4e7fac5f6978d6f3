//! Hiding literal secrets in the source text that diagnostics quote.
//!
//! Diagnostics show the offending source line. When a secret field holds a literal (which
//! the loader refuses), that line, or any other line holding the literal, must not
//! repeat it. The loader keeps only a masked copy of each file's text for rendering:
//! - [`mask_spans`] replaces the given values (found from the parsed document), and every
//!   secret evalctl holds ([`crate::scrub`]) found in the text, with `********`, whatever
//!   their length, so not even that is told; a value on several lines becomes `********` on
//!   each, its line breaks kept.
//! - [`mask_secret_lines`] is the fallback for text that did not parse (no document to
//!   find values in): on every line of the form `token: value` (any of the secret field
//!   names, block style) whose value is not a `${NAME}` reference, the value is masked;
//!   so is every `token: value` entry inside a flow mapping on a line
//!   (`{"token": "sk-...", ...}`), and every value on the lines nested under a secret
//!   field written as a block (`headers:` and its entries below it).
//!
//! A masked value can be shorter or longer than the value was, so byte offsets into the file
//! as read do not hold in the masked copy: [`Masked`] keeps where each masked value moved,
//! and [`Masked::shown`] moves a diagnostic's span to the masked text it quotes.

use std::sync::OnceLock;

use regex::Regex;

use super::diagnostic::{Span, char_floor, lines};
use super::types::EnvRef;

/// What a masked value is shown as.
pub const MASK: &str = "********";

/// A file's text with literal secrets masked, and where each masked value is in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Masked {
    text: String,
    /// Each masked value, in the order of the text.
    edits: Vec<Edit>,
}

/// One masked value: its bytes in the text as read, and in the masked text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Edit {
    read_start: usize,
    read_end: usize,
    shown_start: usize,
    shown_end: usize,
}

impl Masked {
    /// A text with nothing masked in it.
    #[must_use]
    pub fn plain(text: String) -> Masked {
        Masked {
            text,
            edits: Vec::new(),
        }
    }

    /// The masked text.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// `span` (of the file as read) moved to the masked text: what comes after a masked
    /// value moves by as much as the value shrank or grew; a place inside a masked value is
    /// the same place in its mask, or the mask's end. Line and column stay those of the file.
    #[must_use]
    pub fn shown(&self, span: Span) -> Span {
        let start = self.offset(span.offset);
        let end = self.offset(span.offset.saturating_add(span.len)).max(start);
        Span {
            offset: start,
            len: end - start,
            ..span
        }
    }

    /// Where byte `offset` of the file as read is in the masked text.
    fn offset(&self, offset: usize) -> usize {
        let before = self.edits.partition_point(|e| e.read_start <= offset);
        let Some(edit) = before.checked_sub(1).map(|i| self.edits[i]) else {
            return offset;
        };
        if offset < edit.read_end {
            edit.shown_start + (offset - edit.read_start).min(edit.shown_end - edit.shown_start)
        } else {
            (offset - edit.read_end).saturating_add(edit.shown_end)
        }
    }

    /// Appends `value` (read at `read_start..read_end`) as `shown`.
    fn push_masked(&mut self, read_start: usize, read_end: usize, shown: &str) {
        let shown_start = self.text.len();
        self.text.push_str(shown);
        self.edits.push(Edit {
            read_start,
            read_end,
            shown_start,
            shown_end: self.text.len(),
        });
    }
}

/// `source` with each span's text masked, and each secret evalctl holds that it holds
/// ([`crate::scrub`]: its API key pasted into a field, say), so that a quoted line
/// tells not even its length. Spans may overlap or repeat.
#[must_use]
pub fn mask_spans(source: &str, spans: &[Span]) -> Masked {
    let mut ranges: Vec<(usize, usize)> = spans
        .iter()
        .filter_map(|span| range(source, span))
        .chain(crate::scrub::occurrences(source))
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
    let mut out = Masked::plain(String::with_capacity(source.len()));
    let mut at = 0;
    for (start, end) in merged {
        out.text.push_str(&source[at..start]);
        let shown = masked(&source[start..end]);
        out.push_masked(start, end, &shown);
        at = end;
    }
    out.text.push_str(&source[at..]);
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

/// `value` as shown: each of its lines is [`MASK`] (a line break stays one).
fn masked(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while !rest.is_empty() {
        let text_len = rest.find(['\n', '\r']).unwrap_or(rest.len());
        if text_len > 0 {
            out.push_str(MASK);
        }
        let breaks = rest[text_len..]
            .find(|c| c != '\n' && c != '\r')
            .unwrap_or(rest.len() - text_len);
        out.push_str(&rest[text_len..text_len + breaks]);
        rest = &rest[text_len + breaks..];
    }
    out
}

/// `source` with the value of every `secret_field: value` line masked, unless the value
/// is a `${NAME}` reference. For text that could not be parsed.
#[must_use]
pub fn mask_secret_lines(source: &str, is_secret: &dyn Fn(&str) -> bool) -> Masked {
    static LINE: OnceLock<Option<Regex>> = OnceLock::new();
    static BLOCK: OnceLock<Option<Regex>> = OnceLock::new();
    static NESTED: OnceLock<Option<Regex>> = OnceLock::new();
    static REFERENCE: OnceLock<Option<Regex>> = OnceLock::new();
    let (Some(line), Some(block), Some(nested), Some(reference)) = (
        LINE.get_or_init(|| {
            Regex::new(r#"^(\s*(?:-\s+)?["']?([A-Za-z_]+)["']?\s*:[ \t]+)(\S.*?)\s*$"#).ok()
        }),
        // `key:` and nothing else (a comment at most): a block of values follows.
        BLOCK.get_or_init(|| {
            Regex::new(r#"^(\s*(?:-\s+)?)["']?([A-Za-z_]+)["']?\s*:\s*(#.*)?$"#).ok()
        }),
        // A line nested in such a block: its value, after `- ` or `key: `, if any.
        NESTED.get_or_init(|| {
            Regex::new(
                r#"^\s*(?:-\s+)?(?:(?:"[^"]*"|'[^']*'|[^\s"'#][^:#]*?)\s*:(?:[ \t]+|$))?(.*?)\s*$"#,
            )
            .ok()
        }),
        REFERENCE.get_or_init(|| {
            // A reference, maybe quoted, maybe followed by a comment.
            let bare = EnvRef::PATTERN
                .strip_prefix('^')
                .and_then(|p| p.strip_suffix('$'))?;
            Regex::new(&format!(r#"^["']?{bare}["']?(\s+#.*)?$"#)).ok()
        }),
    ) else {
        return Masked::plain(source.to_owned());
    };
    let mut out = Masked::plain(String::with_capacity(source.len()));
    // The indentation of the secret field whose block of lines is being read.
    let mut secret_block: Option<usize> = None;
    for (start, text) in lines(source) {
        let after = &source[start + text.len()..];
        let line_break = if after.starts_with("\r\n") {
            "\r\n"
        } else {
            &after[..after.len().min(1)]
        };
        let trimmed = text.trim_start();
        let indent = text.len() - trimmed.len();
        if let Some(parent) = secret_block {
            if trimmed.is_empty() || trimmed.starts_with('#') {
                out.text.push_str(text);
                out.text.push_str(line_break);
                continue;
            }
            if indent > parent {
                match nested.captures(text).and_then(|caps| caps.get(1)) {
                    Some(value)
                        if !value.as_str().is_empty() && !reference.is_match(value.as_str()) =>
                    {
                        out.text.push_str(&text[..value.start()]);
                        out.push_masked(start + value.start(), start + text.len(), MASK);
                    }
                    _ => out.text.push_str(text),
                }
                out.text.push_str(line_break);
                continue;
            }
            secret_block = None;
        }
        if let Some(caps) = block.captures(text)
            && caps.get(2).is_some_and(|key| is_secret(key.as_str()))
        {
            secret_block = Some(caps.get(1).map_or(0, |m| m.len()));
        }
        match line.captures(text) {
            Some(caps)
                if caps.get(2).is_some_and(|key| is_secret(key.as_str()))
                    && caps
                        .get(3)
                        .is_some_and(|value| !reference.is_match(value.as_str())) =>
            {
                let prefix = caps.get(1).map_or("", |m| m.as_str());
                out.text.push_str(prefix);
                // The value and any blanks after it.
                out.push_masked(start + prefix.len(), start + text.len(), MASK);
            }
            _ => mask_flow_entries(&mut out, start, text, is_secret, reference),
        }
        out.text.push_str(line_break);
    }
    out
}

/// Appends `line` (read at byte `line_start`) to `out` with the value of every flow-style
/// `secret_field: value` entry (inside `{...}`, quoted or not) masked, unless it is a
/// `${NAME}` reference.
fn mask_flow_entries(
    out: &mut Masked,
    line_start: usize,
    line: &str,
    is_secret: &dyn Fn(&str) -> bool,
    reference: &Regex,
) {
    static ENTRY: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(entry) = ENTRY.get_or_init(|| {
        Regex::new(
            r#"(?:^|[\s{\[,])["']?([A-Za-z_]+)["']?\s*:[ \t]*("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?|\$\{[A-Za-z_][A-Za-z0-9_]*\}|[^,\]}\[{\s][^,\]}]*)"#,
        )
        .ok()
    }) else {
        out.text.push_str(line);
        return;
    };
    let mut at = 0;
    for caps in entry.captures_iter(line) {
        let (Some(key), Some(value)) = (caps.get(1), caps.get(2)) else {
            continue;
        };
        if !is_secret(key.as_str()) || reference.is_match(value.as_str().trim()) {
            continue;
        }
        out.text.push_str(&line[at..value.start()]);
        out.push_masked(line_start + value.start(), line_start + value.end(), MASK);
        at = value.end();
    }
    out.text.push_str(&line[at..]);
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
            masked.text(),
            "provider: openai\ntoken: ******** # note\nother: 1\n"
        );
    }

    #[test]
    fn values_inside_a_line_are_masked_whatever_their_length() {
        let source = "{token: sk-abc, provider: openai}\n";
        let span = span_of(source, "sk-abc");
        let masked = mask_spans(source, &[span, span]);
        assert_eq!(masked.text(), "{token: ********, provider: openai}\n");
    }

    #[test]
    fn multi_line_values_keep_their_lines_and_empty_spans_run_to_the_line_end() {
        let source = "token: |\n  sk-one\n  sk-two\nnext: 1\n";
        let masked = mask_spans(source, &[span_of(source, "|\n  sk-one\n  sk-two")]);
        assert_eq!(
            masked.text(),
            "token: ********\n********\n********\nnext: 1\n"
        );
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
            )
            .text(),
            "a: x\ntoken: ******** # c\n"
        );
    }

    #[test]
    fn secret_lines_are_masked_in_unparsed_text() {
        let source = "token: sk-live-1\r\n  - api_key_value: \"sk 2\"\nname: x\ntoken: ${OPENAI_API_KEY}\ntoken: '${A}' # ok\n";
        assert_eq!(
            mask_secret_lines(source, &|key| FIELDS.contains(&key)).text(),
            "token: ********\r\n  - api_key_value: ********\nname: x\ntoken: ${OPENAI_API_KEY}\ntoken: '${A}' # ok\n"
        );
    }

    #[test]
    fn secret_lines_after_a_lone_carriage_return_are_masked() {
        // A lone `\r` ends a line for YAML, and so for the excerpts that quote it.
        let source = "name: x\rtoken: sk-live-1\r\rapi_key_value: sk-2";
        assert_eq!(
            mask_secret_lines(source, &|key| FIELDS.contains(&key)).text(),
            "name: x\rtoken: ********\r\rapi_key_value: ********"
        );
    }

    #[test]
    fn secret_entries_of_flow_mappings_are_masked_in_unparsed_text() {
        let source = "{\"kind\": \"Integration\", \"token\": \"sk-live-1\",}}\nextra: {token: sk-2, a: [}\n{'api_key_value': 'sk 3', my_token: keep, token: ${OK}}\n";
        assert_eq!(
            mask_secret_lines(source, &|key| FIELDS.contains(&key)).text(),
            "{\"kind\": \"Integration\", \"token\": ********,}}\nextra: {token: ********, a: [}\n{'api_key_value': ********, my_token: keep, token: ${OK}}\n"
        );
    }

    /// The place of each field after masked values, in the masked text: the same text
    /// there as in the file as read, however much each value shrank or grew.
    fn assert_places_kept(source: &str, masked: &Masked, fields: &[&str]) {
        for field in fields {
            let span = span_of(source, field);
            let shown = masked.shown(span);
            assert_eq!(
                &masked.text()[shown.offset..shown.offset + shown.len],
                *field,
                "{field} in {:?}",
                masked.text()
            );
            assert_eq!((shown.line, shown.column), (span.line, span.column));
        }
    }

    #[test]
    fn spans_after_masked_values_are_found_in_the_masked_text() {
        // Values longer and shorter than the mask, multi-byte ones, one masked inside a
        // line, and one on several lines.
        let source = "a: 1\ntoken: sk-live-0123456789\nb: 2\napi_key_value: x\nc: 3\n{token: sk-é€, d: 4}\ntoken: |\n  sk-one\n  sk-two\ne: 5\n";
        let secrets = [
            "sk-live-0123456789",
            "x\n",
            "sk-é€",
            "|\n  sk-one\n  sk-two",
        ];
        let spans: Vec<Span> = secrets
            .iter()
            .map(|secret| span_of(source, secret.trim_end()))
            .collect();
        let masked = mask_spans(source, &spans);
        assert_places_kept(source, &masked, &["a: 1", "b: 2", "c: 3", "d: 4", "e: 5"]);
        // A span on a masked value covers its mask.
        let shown = masked.shown(spans[0]);
        assert_eq!(&masked.text()[shown.offset..shown.offset + shown.len], MASK);
        let shown = masked.shown(spans[2]);
        assert_eq!(&masked.text()[shown.offset..shown.offset + shown.len], MASK);
    }

    #[test]
    fn spans_after_masked_lines_of_unparsed_text_are_found_in_the_masked_text() {
        let source = "token: sk-live-0123456789   \nb: 2\n  - api_key_value: \"é\"\nc: [3\nx: {token: sk-€€, d: 4\n";
        let masked = mask_secret_lines(source, &|key| FIELDS.contains(&key));
        assert_places_kept(source, &masked, &["b: 2", "c: [3", "d: 4"]);
        assert_eq!(
            Masked::plain(source.to_owned()).shown(span_of(source, "d: 4")),
            span_of(source, "d: 4")
        );
    }

    #[test]
    fn values_nested_under_a_secret_block_are_masked_in_unparsed_text() {
        let source = "kind: Integration\nheaders:\n  X-A: ${A_VAR}\n  # note\n\n  X-A: sk-dupe\n  \"X B\": sk-2 # c\n  - sk-3\nendpoint: https://x\n- token:\n    nested: sk-4\n";
        let masked = mask_secret_lines(source, &|key| FIELDS.contains(&key) || key == "headers");
        assert_eq!(
            masked.text(),
            "kind: Integration\nheaders:\n  X-A: ${A_VAR}\n  # note\n\n  X-A: ********\n  \"X B\": ********\n  - ********\nendpoint: https://x\n- token:\n    nested: ********\n"
        );
        assert_places_kept(source, &masked, &["endpoint: https://x", "- token:"]);
    }
}
