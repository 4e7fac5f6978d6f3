//! Hostile input to manifest loading, property-based (issue 5 §3): the YAML
//! parser (`manifest::yaml::parse`) on arbitrary text, on arbitrary bytes,
//! and on generated hostile YAML (anchors and aliases, alias bombs, merge
//! keys, deep nesting, huge scalars, odd unicode, tabs, byte order marks,
//! directives, tags, many documents); and the whole loader
//! (`manifest::load`) on generated files, manifest-shaped or not.
//!
//! The properties: never a panic (the parser catches one and turns it into
//! an `Internal` error: that counts as a panic here); always either documents
//! or errors; every span points inside the text, on a character boundary, its
//! line and column agree with its offset (lines end where YAML ends them:
//! `\r\n`, `\n` or a lone `\r`), and every value of a parsed document has
//! one; a load without errors yields one manifest per document; diagnostics
//! render, name a place inside the file, and never quote a literal secret.
//!
//! Case counts are modest (CI runs them) and the seed is fixed; `PROPTEST_CASES` and
//! `PROPTEST_RNG_SEED` explore further (see `property_support::config`).

use crate::property_support;

use std::path::PathBuf;

use evalctl::manifest::diagnostic::Span;
use evalctl::manifest::yaml::{self, Limits, YamlError};
use proptest::prelude::*;
use serde_json::Value;

/// The shared configuration (fixed seed, `PROPTEST_CASES`), with room to shrink.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        // Shrinking YAML text is cheap; keep the minimal example readable.
        max_shrink_iters: 2_000,
        ..property_support::config(cases)
    }
}

/// Every JSON pointer of `value`, parents before children.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(v, format!("{at}/{}", yaml::escape_token(k)), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Where each line of a text starts, counted the way YAML counts lines (a line ends at
/// `\r\n`, `\n` or a lone `\r`; a byte order mark starting the text is no column), and how
/// many characters start before each byte, built once per text so checking every span stays
/// linear, however long the lines.
struct LineTable<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// `chars[i]`: the characters of `text[..i]`, for every char boundary `i`.
    chars: Vec<usize>,
}

impl<'a> LineTable<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![if text.starts_with('\u{feff}') { 3 } else { 0 }];
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                starts.push(i + 1);
            }
        }
        let mut chars = vec![0; text.len() + 1];
        for (n, (i, c)) in text.char_indices().enumerate() {
            for slot in &mut chars[i + 1..=i + c.len_utf8()] {
                *slot = n + 1;
            }
        }
        LineTable {
            text,
            starts,
            chars,
        }
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1].min(offset);
        (line, self.chars[offset] - self.chars[start] + 1)
    }
}

fn span_inside(span: &Span, lines: &LineTable, what: &str) -> Result<(), TestCaseError> {
    let text = lines.text;
    prop_assert!(
        span.offset <= text.len() && text.is_char_boundary(span.offset),
        "{what}: offset {} outside the text or inside a character ({} bytes)",
        span.offset,
        text.len()
    );
    prop_assert!(span.line >= 1 && span.column >= 1, "{what}: {span:?}");
    prop_assert!(
        span.line as usize <= lines.starts.len(),
        "{what}: line {} of {}",
        span.line,
        lines.starts.len()
    );
    let (line, column) = lines.position(span.offset);
    prop_assert!(
        (line, column) == (span.line as usize, span.column as usize),
        "{what}: {span:?} names line {} column {}, its offset is at line {line} column {column}",
        span.line,
        span.column,
    );
    Ok(())
}

/// The parser's contract on any text.
fn parses_sanely(text: &str) -> Result<(), TestCaseError> {
    let lines = LineTable::new(text);
    match yaml::parse(text, &Limits::default()) {
        Ok(documents) => {
            for (n, doc) in documents.iter().enumerate() {
                let mut all = Vec::new();
                pointers(&doc.value, String::new(), &mut all);
                // The table of every span agrees with looking each one up.
                for (pointer, listed) in doc.spans() {
                    prop_assert_eq!(doc.span(&pointer), Some(listed), "{}", pointer);
                }
                for pointer in all {
                    let span = doc.span(&pointer);
                    prop_assert!(
                        span.is_some(),
                        "document {n}: no span for {pointer:?} of {}",
                        doc.value
                    );
                    if let Some(span) = span {
                        span_inside(&span.value, &lines, &pointer)?;
                        if let Some(key) = &span.key {
                            span_inside(key, &lines, &pointer)?;
                        }
                    }
                }
            }
        }
        Err(errors) => {
            prop_assert!(!errors.is_empty(), "an error result without errors");
            for e in &errors {
                prop_assert!(
                    !matches!(e, YamlError::Internal(_)),
                    "the parser failed internally (a panic?): {e}"
                );
                let d = e.to_diagnostic("hostile.yaml");
                prop_assert!(!d.message.is_empty(), "{e:?}");
                if let Some(span) = &d.span {
                    span_inside(span, &lines, "error")?;
                }
            }
        }
    }
    Ok(())
}

/// Pieces that mean something to a YAML parser, to be strung together.
fn fragment() -> impl Strategy<Value = String> {
    let fixed: Vec<&'static str> = vec![
        "key: ",
        "- ",
        "? ",
        ": ",
        ":",
        "&a ",
        "&b ",
        "*a",
        "*b",
        "*undefined",
        "<<: *a\n",
        "<<: [*a, *b]\n",
        "{",
        "}",
        "[",
        "]",
        ",",
        "|\n",
        "|-\n",
        ">+\n",
        "|2\n",
        "'",
        "''",
        "\"",
        "\\",
        "\\u0000",
        "\\x",
        "#",
        " # comment\n",
        "---\n",
        "--- ",
        "...\n",
        "%YAML 1.2\n",
        "%YAML 1.1\n",
        "%TAG ! tag:example.com,2000:\n",
        "!!str ",
        "!!int ",
        "!!binary ",
        "!!map ",
        "!!seq ",
        "!!set ",
        "!!omap ",
        "!custom ",
        "!<tag:yaml.org,2002:int> ",
        "!",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "  ",
        "    ",
        "\u{feff}",
        "\u{202e}",
        "\u{200b}",
        "\u{2028}",
        "\u{85}",
        "\u{0}",
        "\u{7f}",
        "\u{fffd}",
        "😀",
        "é",
        "ﬁ",
        "~",
        "null",
        "Null",
        "true",
        "yes",
        "on",
        "y",
        "1e400",
        "-1e400",
        "0x1F",
        "0o17",
        "0b101",
        ".inf",
        "-.Inf",
        ".nan",
        "99999999999999999999999",
        "-9223372036854775809",
        "1_000",
        "012",
        "1.",
        "2001-12-14t21:59:43.10-05:00",
        "kind: Project\n",
        "kind: Integration\n",
        "name: demo-project\n",
        "log_streams:\n",
        "  - name: production\n",
        "token: sk-literal-secret-value\n",
        "provider: openai\n",
        "${OPENAI_API_KEY}",
        "${UNSET_VARIABLE}",
        "$${",
        "${",
        "sample_rate: ",
    ];
    prop_oneof![
        8 => prop::sample::select(fixed).prop_map(str::to_owned),
        2 => "[a-z_]{1,8}",
        1 => any::<char>().prop_map(String::from),
    ]
}

/// Hostile YAML built from fragments, and the classic attacks at sizes the
/// limits must catch.
fn hostile_yaml() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::collection::vec(fragment(), 0..40).prop_map(|v| v.concat()),
        1 => (1usize..3_000, prop::sample::select(vec!["[", "{a: ", "- ", "? "]))
            .prop_map(|(n, open)| open.repeat(n)),
        1 => (1usize..400).prop_map(|n| {
            // Block nesting by indentation.
            (0..n).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect::<String>()
        }),
        1 => (1usize..10, 1usize..12).prop_map(|(levels, width)| {
            // An alias bomb ("billion laughs"): each level repeats the last.
            let mut s = String::from("l0: &l0 [lol]\n");
            for l in 1..=levels {
                let refs = vec![format!("*l{}", l - 1); width].join(", ");
                s.push_str(&format!("l{l}: &l{l} [{refs}]\n"));
            }
            s
        }),
        1 => (0usize..2_000_000, any::<bool>()).prop_map(|(n, quoted)| {
            let body = "x".repeat(n);
            if quoted { format!("key: \"{body}\"\n") } else { format!("key: {body}\n") }
        }),
        1 => (1usize..3_000).prop_map(|n| "---\na: 1\n".repeat(n)),
        1 => (1usize..5_000).prop_map(|n| (0..n).map(|i| format!("k{i}: {i}\n")).collect::<String>()),
        1 => (1usize..2_000).prop_map(|n| "a: &x 1\n".repeat(n) + "b: *x\n"),
    ]
}

/// One value of a long flow list: scalars and small collections, with multi-byte text.
fn long_line_item() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z]{1,12}",
        3 => "[a-zéü€😀ﬁ]{1,8}",
        1 => "[0-9]{1,6}",
        1 => "\"[a-z é€😀]{0,8}\"",
        1 => "'[a-zü]{0,4}'",
        1 => "\\{a: [a-zé]{1,4}, b: \\[1, 😀\\]\\}",
    ]
}

/// A document whose values sit on one long line (tens of kilobytes, many column
/// checkpoints), between short lines, with any kind of line break.
fn long_line_yaml() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(long_line_item(), 1..3_000),
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
        any::<bool>(),
    )
        .prop_map(|(items, eol, bom)| {
            format!(
                "{}kind: Project{eol}list: [{}]{eol}after: é{eol}",
                if bom { "\u{feff}" } else { "" },
                items.join(", ")
            )
        })
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn the_parser_spans_every_value_of_long_lines(text in long_line_yaml()) {
        parses_sanely(&text)?;
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn the_parser_survives_any_text(text in any::<String>()) {
        parses_sanely(&text)?;
    }

    #[test]
    fn the_parser_survives_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        parses_sanely(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn the_parser_survives_hostile_yaml(text in hostile_yaml(), bom in any::<bool>()) {
        let text = if bom { format!("\u{feff}{text}") } else { text };
        parses_sanely(&text)?;
    }
}

#[test]
fn oversized_and_bombing_inputs_are_refused_not_parsed() {
    let limits = Limits::default();
    let huge = "a".repeat(limits.max_file_bytes + 1);
    let refused = yaml::parse(&huge, &limits).expect_err("too large");
    assert!(
        matches!(refused.as_slice(), [YamlError::TooLarge { .. }]),
        "{refused:?}"
    );
    let mut bomb = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for l in 1..=9 {
        let refs = vec![format!("*l{}", l - 1); 9].join(", ");
        bomb.push_str(&format!("l{l}: &l{l} [{refs}]\n"));
    }
    assert!(yaml::parse(&bomb, &limits).is_err());
    let deep = "[".repeat(100_000);
    assert!(yaml::parse(&deep, &limits).is_err());
}

// ---------------------------------------------------------------------------
// The loader on generated files.

/// A literal secret that must never be quoted back.
const LEAK: &str = "sk-LEAKED-literal-0123456789";

/// A scalar the manifest format may or may not accept.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![0.0, 0.5, 1.0, 1.5, -0.25, 1e300]).prop_map(Value::from),
        prop::sample::select(vec![
            "demo-project",
            "production",
            "correctness",
            "bleu",
            "#1F77B4",
            "#zzzzzz",
            "user",
            "project",
            "none",
            "eq",
            "one_of",
            "node_name",
            "metadata",
            "modality",
            "image",
            "like_dislike",
            "star",
            "tree_choice",
            "openai",
            "${OPENAI_API_KEY}",
            "${UNSET}",
            "$${literal}",
            "",
            " ",
            "é\u{202e}",
        ])
        .prop_map(Value::from),
        "[ -~]{0,12}".prop_map(Value::from),
    ]
}

/// Field names of the manifest format, and a few it does not have.
fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "kind",
        "api_version",
        "name",
        "id",
        "log_streams",
        "experiments",
        "metric_settings",
        "scorers",
        "segment_filters",
        "trends",
        "sections",
        "favorite",
        "annotation_templates",
        "feedback_templates",
        "scorer_version",
        "num_judges",
        "filters",
        "operator",
        "value",
        "key",
        "sample_rate",
        "filter",
        "description",
        "color",
        "renamed_from",
        "criteria",
        "constraints",
        "annotation_type",
        "feedback_type",
        "min",
        "max",
        "tags",
        "choices",
        "choices_tree",
        "provider",
        "token",
        "organization_id",
        "rotate_secrets",
        "scorers_",
        "unknown_field",
        "<<",
    ])
    .prop_map(str::to_owned)
}

/// A JSON value shaped roughly like a manifest.
fn manifest_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A document: a kind, maybe a name, and manifest-like fields; an
/// Integration document may hold a literal secret ([`LEAK`]) in one of its
/// secret fields.
fn document() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["Project", "Integration", "Other"]),
        manifest_value(),
        prop::option::of(prop::sample::select(vec![
            "token",
            "api_key_value",
            "service_account_credentials",
            "headers",
        ])),
    )
        .prop_map(|(kind, v, leak)| {
            let mut doc = match v {
                Value::Object(m) => m,
                other => {
                    let mut m = serde_json::Map::new();
                    m.insert("log_streams".into(), other);
                    m
                }
            };
            doc.insert("kind".into(), Value::from(kind));
            if kind == "Integration" {
                doc.entry("provider")
                    .or_insert_with(|| Value::from("openai"));
                match leak {
                    Some("headers") => {
                        doc.insert("headers".into(), serde_json::json!({"X-Key": LEAK}));
                    }
                    Some(field) => {
                        doc.insert(field.into(), Value::from(LEAK));
                    }
                    None => {}
                }
            } else {
                doc.entry("name")
                    .or_insert_with(|| Value::from("demo-project"));
            }
            Value::Object(doc)
        })
}

/// A file's content: manifest-shaped documents as YAML (block or flow), maybe
/// with hostile text spliced in (which can separate a secret from its field
/// name: then the text holds no secret field, and [`LEAK`] may be quoted).
fn file_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((document(), any::<bool>()), 1..4),
        prop::option::weighted(0.3, (hostile_yaml(), any::<prop::sample::Index>())),
        any::<bool>(),
    )
        .prop_map(|(docs, splice, bom)| {
            let mut text: String = docs
                .iter()
                .map(|(d, flow)| {
                    let body = if *flow {
                        d.to_string()
                    } else {
                        block_yaml(d, 0)
                    };
                    format!("---\n{body}\n")
                })
                .collect();
            if let Some((hostile, at)) = splice {
                let mut at = at.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.insert_str(at, &hostile);
                text = text.replace(LEAK, "sk-spliced");
            }
            if bom { format!("\u{feff}{text}") } else { text }
        })
}

/// `value` as block-style YAML (scalars as JSON, which YAML reads back).
fn block_yaml(value: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| match v {
                Value::Object(m) if !m.is_empty() => {
                    format!("{pad}{k}:\n{}", block_yaml(v, indent + 2))
                }
                Value::Array(a) if !a.is_empty() => {
                    format!("{pad}{k}:\n{}", block_yaml(v, indent + 2))
                }
                _ => format!("{pad}{k}: {v}\n"),
            })
            .collect(),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .map(|v| match v {
                Value::Object(m) if !m.is_empty() => {
                    let inner = block_yaml(v, indent + 2);
                    format!("{pad}- {}\n", inner.trim_start().trim_end_matches('\n'))
                }
                _ => format!("{pad}- {v}\n"),
            })
            .collect(),
        other => format!("{pad}{other}\n"),
    }
}

fn env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-from-the-environment".into()),
        "EMPTY" => Some(String::new()),
        _ => None,
    }
}

/// The loader's contract on a directory of `files`.
fn loads_sanely(files: &[String]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut texts = std::collections::BTreeMap::new();
    for (i, text) in files.iter().enumerate() {
        let path = dir.path().join(format!("m{i}.yaml"));
        std::fs::write(&path, text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        texts.insert(
            path.display().to_string(),
            text.strip_prefix('\u{feff}').unwrap_or(text).to_owned(),
        );
    }
    let outcome = evalctl::manifest::load(&[PathBuf::from(dir.path())], &env);
    let rendered = outcome.render_diagnostics(false);
    prop_assert!(
        !rendered.contains(LEAK),
        "a literal secret is quoted back:\n{rendered}"
    );
    for d in &outcome.diagnostics {
        prop_assert!(!d.message.is_empty(), "{d:?}");
        prop_assert!(!d.message.contains(LEAK), "{d:?}");
        if let (Some(span), Some(text)) = (&d.span, texts.get(&d.file)) {
            span_inside(span, &LineTable::new(text), &d.message)?;
        }
    }
    if !outcome.has_errors() {
        let loaded = outcome.set.projects.len() + outcome.set.integrations.len();
        prop_assert_eq!(
            loaded,
            outcome.documents,
            "loaded without errors, but not every document became a manifest:\n{}",
            rendered
        );
    } else {
        prop_assert!(!rendered.is_empty(), "errors that do not render");
    }
    Ok(())
}

/// A log stream of a one-line Project document: valid, or with a mistake the loader
/// reports at its place on the line.
fn long_line_log_stream() -> impl Strategy<Value = String> {
    (
        "[a-zéü€😀]{1,10}",
        prop_oneof![
            Just(String::new()),
            Just(", unknwn: ü".to_owned()),
            Just(", metric_settings: {segment_filters: [{sample_rate: 1.5}]}".to_owned()),
            Just(", trends: {sections: [{name: é, color: red}]}".to_owned()),
            Just(", metric_settings: {scorers: [{name: ${UNSET_VARIABLE}}]}".to_owned()),
        ],
    )
        .prop_map(|(name, rest)| format!("{{name: {name}{rest}}}"))
}

proptest! {
    #![proptest_config(config(16))]

    #[test]
    fn the_loader_points_at_mistakes_on_long_lines(
        streams in prop::collection::vec(long_line_log_stream(), 1..1_500),
    ) {
        let text = format!(
            "kind: Project\nname: é\nlog_streams: [{}]\n---\nkind: Integration\nprovider: openai\ntoken: {LEAK}\n",
            streams.join(", ")
        );
        loads_sanely(&[text])?;
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn the_loader_survives_manifest_shaped_files(files in prop::collection::vec(file_text(), 1..3)) {
        loads_sanely(&files)?;
    }

    #[test]
    fn the_loader_survives_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        std::fs::write(dir.path().join("bytes.yaml"), &bytes)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let outcome = evalctl::manifest::load(&[PathBuf::from(dir.path())], &env);
        let _ = outcome.render_diagnostics(true);
        if !outcome.has_errors() {
            prop_assert_eq!(
                outcome.set.projects.len() + outcome.set.integrations.len(),
                outcome.documents
            );
        }
    }
}
