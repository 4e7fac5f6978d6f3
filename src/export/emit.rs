//! A small YAML emitter for exported manifests: JSON values (in their key
//! order) to block-style YAML text written the way the examples are.
//!
//! Its output is meant to be read back by the manifest loader (YAML 1.2 core
//! schema) into the same values, and to be read the same by YAML 1.1 tools:
//! - strings are plain where that is unambiguous and double-quoted otherwise
//!   (`"#1F77B4"`, `"yes"`, `"null"`, `"0.5"`, `"- x"`, leading or trailing
//!   spaces, control characters); mapping keys follow the same rule;
//! - a multi-line string that is a mapping value is a literal block (`|`),
//!   (`|` with one trailing newline, `|-` with none) and an explicit
//!   indentation indicator when its first line starts with a space;
//! - short lists of scalars are flow sequences (`[llm, chat]`), other lists
//!   block sequences; empty collections are `[]` and `{}`;
//! - a comment can follow a scalar mapping entry, found by the entry's JSON
//!   pointer.
//!
//! Everything is deterministic: the same value gives the same text.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::manifest::yaml::escape_token;

/// Flow sequences longer than this (with their indentation and key) are
/// written as block sequences instead.
const MAX_FLOW_WIDTH: usize = 80;

/// Emits one document's value (a mapping) as YAML lines, each ending in `\n`.
///
/// `comments` maps the JSON pointer of a scalar mapping entry to a comment
/// written after it on the same line. Entries of the top-level mapping whose
/// value is a collection are set apart by blank lines, and so are
/// the items of their sequences when those items hold collections (a log
/// stream, a template), as in the examples.
#[must_use]
pub fn emit_document(value: &Map<String, Value>, comments: &BTreeMap<String, String>) -> String {
    let mut emitter = Emitter {
        out: String::new(),
        comments,
    };
    emitter.map(value, 0, "", true);
    emitter.out
}

struct Emitter<'c> {
    out: String,
    comments: &'c BTreeMap<String, String>,
}

fn is_collection(v: &Value) -> bool {
    match v {
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => false,
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

impl Emitter<'_> {
    /// Writes the entries of `map` at `indent`. With `top`, collections are
    /// separated by blank lines.
    fn map(&mut self, map: &Map<String, Value>, indent: usize, pointer: &str, top: bool) {
        let mut after_collection = false;
        for (key, value) in map {
            let here = format!("{pointer}/{}", escape_token(key));
            let collection = !is_scalar(value);
            if top && (collection || after_collection) && !self.out.is_empty() {
                self.out.push('\n');
            }
            after_collection = collection;
            let pad = " ".repeat(indent);
            let key_text = scalar_text(key, Context::Key);
            match value {
                Value::Object(inner) if !inner.is_empty() => {
                    self.out.push_str(&format!("{pad}{key_text}:\n"));
                    self.map(inner, indent + 2, &here, false);
                }
                Value::Array(items) if !items.is_empty() => {
                    let prefix = format!("{pad}{key_text}: ");
                    if let Some(flow) = flow_sequence(items, prefix.len()) {
                        self.out.push_str(&prefix);
                        self.out.push_str(&flow);
                        self.end_line(&here);
                    } else {
                        self.out.push_str(&format!("{pad}{key_text}:\n"));
                        let spaced = top && items.iter().any(item_holds_collections);
                        self.sequence(items, indent + 2, &here, spaced);
                    }
                }
                Value::String(s) if s.contains('\n') => {
                    match literal_block(s, indent) {
                        Some(block) => {
                            // The header line takes the comment; the block follows.
                            self.out
                                .push_str(&format!("{pad}{key_text}: {}", block.header));
                            self.end_line(&here);
                            self.out.push_str(&block.body);
                        }
                        None => {
                            self.out.push_str(&format!(
                                "{pad}{key_text}: {}",
                                scalar_value(value, Context::Block)
                            ));
                            self.end_line(&here);
                        }
                    }
                }
                _ => {
                    self.out.push_str(&format!(
                        "{pad}{key_text}: {}",
                        scalar_value(value, Context::Block)
                    ));
                    self.end_line(&here);
                }
            }
        }
    }

    /// Ends a line, with the comment of `pointer` if there is one.
    fn end_line(&mut self, pointer: &str) {
        if let Some(comment) = self.comments.get(pointer) {
            self.out.push_str("  # ");
            self.out.push_str(&one_line(comment));
        }
        self.out.push('\n');
    }

    /// Writes the items of a block sequence whose dashes are at `indent`.
    fn sequence(&mut self, items: &[Value], indent: usize, pointer: &str, spaced: bool) {
        let pad = " ".repeat(indent);
        for (index, item) in items.iter().enumerate() {
            let here = format!("{pointer}/{index}");
            if spaced && index > 0 {
                self.out.push('\n');
            }
            match item {
                Value::Object(inner) if !inner.is_empty() => {
                    // The mapping is written two columns in, then its first
                    // line's indentation becomes the dash.
                    let start = self.out.len();
                    self.map(inner, indent + 2, &here, false);
                    self.dash_at(start, indent);
                }
                Value::Array(inner) if !inner.is_empty() => {
                    if let Some(flow) = flow_sequence(inner, indent + 2) {
                        self.out.push_str(&format!("{pad}- {flow}\n"));
                    } else {
                        let start = self.out.len();
                        self.sequence(inner, indent + 2, &here, false);
                        self.dash_at(start, indent);
                    }
                }
                _ => {
                    self.out
                        .push_str(&format!("{pad}- {}", scalar_value(item, Context::Block)));
                    self.end_line(&here);
                }
            }
        }
    }

    /// Replaces the indentation of the line starting at `start` (which is
    /// `indent + 2` spaces) by `indent` spaces and a dash.
    fn dash_at(&mut self, start: usize, indent: usize) {
        let end = start + indent + 2;
        if self.out.len() >= end && self.out[start..end].bytes().all(|b| b == b' ') {
            self.out
                .replace_range(start..end, &format!("{}- ", " ".repeat(indent)));
        }
    }
}

fn item_holds_collections(item: &Value) -> bool {
    match item {
        Value::Object(map) => map.values().any(is_collection),
        _ => false,
    }
}

/// A flow sequence of scalars (`[a, "b c", 1]`), when every item is a scalar
/// that fits on one line and the line stays short.
fn flow_sequence(items: &[Value], prefix_width: usize) -> Option<String> {
    if !items.iter().all(is_scalar) {
        return None;
    }
    let parts: Vec<String> = items
        .iter()
        .map(|v| scalar_value(v, Context::Flow))
        .collect();
    let text = format!("[{}]", parts.join(", "));
    (prefix_width + text.chars().count() <= MAX_FLOW_WIDTH && !text.contains('\n')).then_some(text)
}

/// Where a scalar is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// A block mapping value or block sequence item.
    Block,
    /// An item of a flow sequence.
    Flow,
    /// A mapping key.
    Key,
}

/// A scalar value as YAML text (never a block scalar).
fn scalar_value(value: &Value, context: Context) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_text(s, context),
        // Not reached: collections are written by the emitter.
        Value::Array(_) => "[]".to_owned(),
        Value::Object(_) => "{}".to_owned(),
    }
}

/// A string as a YAML scalar: plain when that reads back as the same string
/// in YAML 1.2 and 1.1, else double-quoted.
#[must_use]
pub fn scalar_text(s: &str, context: Context) -> String {
    if plain_ok(s, context) {
        s.to_owned()
    } else {
        double_quoted(s)
    }
}

/// Whether a character must be escaped in a double-quoted scalar (and so
/// rules out a plain one): controls, whitespace other than the space, the
/// byte order mark and the non-characters U+FFFE/U+FFFF.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}')
}

fn plain_ok(s: &str, context: Context) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.starts_with(' ') || s.ends_with(' ') || s.chars().any(needs_escape) {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    if context != Context::Block && s.contains([',', '[', ']', '{', '}']) {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    // YAML 1.2 core and 1.1 booleans and nulls.
    if matches!(
        lower.as_str(),
        "null" | "~" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
    ) {
        return false;
    }
    // Anything that starts like a number (ints, floats, dates, 1_000, 0x1f, .5, -1, .inf).
    let mut chars = s.chars();
    let second = {
        chars.next();
        chars.next()
    };
    if first.is_ascii_digit()
        || ("+-.".contains(first) && second.is_some_and(|c| c.is_ascii_digit()))
        || matches!(lower.as_str(), ".inf" | "-.inf" | "+.inf" | ".nan")
    {
        return false;
    }
    true
}

/// A double-quoted scalar: `\`, `"`, controls, whitespace other than the
/// space, the byte order mark and U+FFFE/U+FFFF are escaped.
#[must_use]
fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => {
                let code = u32::from(c);
                if code <= 0xFFFF {
                    out.push_str(&format!("\\u{code:04X}"));
                } else {
                    out.push_str(&format!("\\U{code:08X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A literal block scalar: the header (`|` or `|-`, with `2` first when
/// the indentation must be explicit) and the body lines.
struct LiteralBlock {
    header: String,
    body: String,
}

/// The literal block of `s` as the value of a key at `key_indent`, or `None`
/// when `s` is better double-quoted (characters a block cannot hold, nothing
/// but newlines, or several trailing newlines).
fn literal_block(s: &str, key_indent: usize) -> Option<LiteralBlock> {
    if s.chars().any(|c| c != '\n' && c != '\t' && needs_escape(c)) {
        return None;
    }
    let body = s.trim_end_matches('\n');
    if body.trim().is_empty() {
        return None;
    }
    // Keeping several trailing newlines (`|+`) would also keep the blank
    // lines that follow the block: such strings are double-quoted instead.
    let chomp = match s.len() - body.len() {
        0 => "-",
        1 => "",
        _ => return None,
    };
    let explicit = if body.starts_with([' ', '\n', '\t']) {
        "2"
    } else {
        ""
    };
    let pad = " ".repeat(key_indent + 2);
    let mut text = String::new();
    for line in body.split('\n') {
        if !line.is_empty() {
            text.push_str(&pad);
            text.push_str(line);
        }
        text.push('\n');
    }
    Some(LiteralBlock {
        header: format!("|{explicit}{chomp}"),
        body: text,
    })
}

/// A comment's text on one line.
fn one_line(comment: &str) -> String {
    comment
        .chars()
        .map(|c| if needs_escape(c) { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::yaml::{Limits, parse};
    use serde_json::json;

    fn emit(value: Value) -> String {
        let Value::Object(map) = value else {
            panic!("a mapping")
        };
        emit_document(&map, &BTreeMap::new())
    }

    fn reread(text: &str) -> Value {
        let docs = parse(text, &Limits::default()).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
        assert_eq!(docs.len(), 1, "{text}");
        docs.into_iter().next().unwrap().value
    }

    #[test]
    fn writes_the_examples_style() {
        let value = json!({
            "kind": "Project",
            "name": "demo-project",
            "log_streams": [
                {"name": "production", "metric_settings": {
                    "scorers": [{"name": "correctness", "scoreable_node_types": ["chat", "llm"]}],
                    "segment_filters": []}},
                {"name": "staging", "trends": {"sections": [{"name": "Quality", "color": "#1F77B4"}]}}
            ],
            "feedback_templates": [{"name": "resolved", "constraints": {"choices": ["yes", "no"]}}]
        });
        let text = emit(value.clone());
        let expected = r##"kind: Project
name: demo-project

log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          scoreable_node_types: [chat, llm]
      segment_filters: []

  - name: staging
    trends:
      sections:
        - name: Quality
          color: "#1F77B4"

feedback_templates:
  - name: resolved
    constraints:
      choices: ["yes", "no"]
"##;
        assert_eq!(text, expected);
        assert_eq!(reread(&text), value);
    }

    #[test]
    fn quotes_what_would_change_meaning() {
        for s in [
            "",
            " x",
            "x ",
            "yes",
            "No",
            "null",
            "~",
            "true",
            "0.5",
            "12",
            "-1",
            ".5",
            ".inf",
            "2025-01-01",
            "#c",
            "- x",
            "a: b",
            "a #b",
            "a:",
            "@x",
            "`x",
            "*x",
            "&x",
            "!x",
            "|",
            ">",
            "%x",
            "'x'",
            "\"x\"",
            "{a}",
            "[a]",
            "a\tb",
            "a\u{85}b",
            "a\u{2028}b",
            "\u{feff}x",
            "a\rb",
        ] {
            let text = emit(json!({"k": s, "l": [s, "z"]}));
            assert_eq!(
                reread(&text),
                json!({"k": s, "l": [s, "z"]}),
                "{s:?}: {text}"
            );
        }
        assert_eq!(scalar_text("off-topic", Context::Block), "off-topic");
        assert_eq!(scalar_text("a,b", Context::Block), "a,b");
        assert_eq!(scalar_text("a,b", Context::Flow), "\"a,b\"");
        assert_eq!(scalar_text("yes", Context::Key), "\"yes\"");
    }

    #[test]
    fn multi_line_strings_are_literal_blocks_that_read_back() {
        for s in [
            "a\nb",
            "a\nb\n",
            "a\nb\n\n\n",
            "  indented\nfirst",
            "\nleading newline",
            "x\n\n  y  \n",
            "tab\tinside\n\tand first",
            "\n\n",
            "only\r\nwindows",
        ] {
            let value = json!({"outer": [{"k": s, "after": 1}], "k": s, "z": "end"});
            let text = emit(value.clone());
            assert_eq!(reread(&text), value, "{s:?}:\n{text}");
        }
        let text = emit(json!({"criteria": "line one\nline two"}));
        assert_eq!(text, "criteria: |-\n  line one\n  line two\n");
    }

    #[test]
    fn comments_follow_their_entry() {
        let Value::Object(map) = json!({"scorers": [{"id": "s1", "num": 1}]}) else {
            panic!()
        };
        let comments = BTreeMap::from([("/scorers/0/id".to_owned(), "foo\nbar".to_owned())]);
        let text = emit_document(&map, &comments);
        assert_eq!(text, "scorers:\n  - id: s1  # foo bar\n    num: 1\n");
    }

    #[test]
    fn nested_sequences_and_long_lists() {
        let long: Vec<String> = (0..30).map(|i| format!("item-{i}")).collect();
        let value = json!({"a": [[1, 2], [[3], {"b": 4}]], "long": long, "e": {}, "f": [],
            "n": 1.0, "m": 1e-7, "keys": {"yes": 1, "a: b": 2, "": 3}});
        let text = emit(value.clone());
        assert_eq!(reread(&text), value, "{text}");
        assert!(text.contains("long:\n  - item-0\n"), "{text}");
    }

    proptest::proptest! {
        #[test]
        fn any_string_reads_back(s in "\\PC{0,12}|[ \\n\\t:#\\-\"'a-z0-9]{0,16}") {
            let value = json!({"k": s, "l": [s], "m": [{"k": s}], "o": {"k": s}});
            let text = emit(value.clone());
            let docs = parse(&text, &Limits::default());
            proptest::prop_assert!(docs.is_ok(), "{:?}:\n{}", s, text);
            let back = docs.map(|d| d.into_iter().next().map(|d| d.value)).ok().flatten();
            proptest::prop_assert_eq!(back, Some(value), "{}", text);
        }
    }
}
