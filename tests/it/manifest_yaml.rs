//! Loading manifests: YAML with positions, limits against hostile input, the directory walk,
//! and how the resulting diagnostics read.

use std::fs;
use std::path::Path;

use evalctl::manifest::diagnostic::{self, Span};
use evalctl::manifest::files::{self, FileError, ManifestFile};
use evalctl::manifest::yaml::{self, Document, Limits, YamlError};
use serde_json::json;

fn parse(source: &str) -> Vec<Document> {
    match yaml::parse(source, &Limits::default()) {
        Ok(documents) => documents,
        Err(errors) => panic!("unexpected errors: {errors:#?}"),
    }
}

fn parse_err(source: &str) -> Vec<YamlError> {
    parse_err_with(source, &Limits::default())
}

fn parse_err_with(source: &str, limits: &Limits) -> Vec<YamlError> {
    match yaml::parse(source, limits) {
        Ok(documents) => panic!("expected errors, got {} documents", documents.len()),
        Err(errors) => errors,
    }
}

/// `line:column` of a span.
fn lc(span: Span) -> (u32, u32) {
    (span.line, span.column)
}

const PROJECT: &str = "\
# Team A's project.
project: demo
log_streams:
  - name: main
    metric_settings:
      scorers:
        - name: correctness
          sample_rate: 1.5
        - {name: toxicity, enabled: true}
---
# only a comment in between
---
kind: template
name: \"quoted: string\"
";

#[test]
fn multi_document_values() {
    let docs = parse(PROJECT);
    assert_eq!(docs.len(), 2, "the comment-only document is skipped");
    assert_eq!(
        docs[0].value,
        json!({
            "project": "demo",
            "log_streams": [{
                "name": "main",
                "metric_settings": {"scorers": [
                    {"name": "correctness", "sample_rate": 1.5},
                    {"name": "toxicity", "enabled": true},
                ]},
            }],
        })
    );
    assert_eq!(
        docs[1].value,
        json!({"kind": "template", "name": "quoted: string"})
    );
}

#[test]
fn spans_of_nested_values_and_keys() {
    let docs = parse(PROJECT);
    let doc = &docs[0];
    let rate = doc
        .span("/log_streams/0/metric_settings/scorers/0/sample_rate")
        .unwrap();
    assert_eq!(lc(rate.value), (8, 24));
    assert_eq!(lc(rate.key.unwrap()), (8, 11));
    assert_eq!(
        &PROJECT[rate.value.offset..rate.value.offset + rate.value.len],
        "1.5"
    );

    let name = doc
        .span("/log_streams/0/metric_settings/scorers/1/name")
        .unwrap();
    assert_eq!(lc(name.value), (9, 18));
    assert_eq!(lc(name.key.unwrap()), (9, 12));
    let (_, listed) = doc
        .spans()
        .into_iter()
        .find(|(pointer, _)| pointer == "/log_streams/0/metric_settings/scorers/1/name")
        .unwrap();
    assert_eq!(listed, name);

    let stream = doc.span("/log_streams/0").unwrap();
    assert_eq!(lc(stream.value), (4, 5));
    assert_eq!(stream.key, None);
    assert_eq!(lc(doc.root().value), (2, 1));

    // A second document's lines count from the top of the file.
    let quoted = docs[1].span("/name").unwrap();
    assert_eq!(lc(quoted.value), (14, 7));
    assert_eq!(quoted.value.len, "\"quoted: string\"".len());
}

#[test]
fn crlf_line_endings() {
    let source = "a: 1\r\nb:\r\n  c: x\r\n";
    let docs = parse(source);
    let c = docs[0].span("/b/c").unwrap();
    assert_eq!((lc(c.key.unwrap()), lc(c.value)), ((3, 3), (3, 6)));
    let diagnostic = diagnostic::Diagnostic::error("crlf.yaml", Some(c.value), "bad");
    assert!(
        diagnostic
            .render(Some(source), false)
            .contains("3 |   c: x\n  |      ^\n")
    );
}

#[test]
fn missing_paths_fall_back_to_nearest_ancestor() {
    let docs = parse(PROJECT);
    let doc = &docs[0];
    assert!(doc.span("/log_streams/0/nope").is_none());
    assert!(doc.span("/log_streams/7").is_none());
    assert!(doc.span("no-slash").is_none());
    assert_eq!(lc(doc.locate("/log_streams/0/nope/deeper").value), (4, 5));
    assert_eq!(lc(doc.locate("/log_streams/x").value), (4, 3));
    assert_eq!(doc.locate(""), *doc.root());
}

#[test]
fn span_table_lists_every_path_in_document_order() {
    let docs = parse("b: 1\na: [x, {c: ~}]\n\"s/l~\": 2\n");
    let table: Vec<String> = docs[0]
        .spans()
        .into_iter()
        .map(|(path, span)| format!("{path:?} {}:{}", span.value.line, span.value.column))
        .collect();
    insta::assert_snapshot!(table.join("\n"), @r#"
    "" 1:1
    "/b" 1:4
    "/a" 2:4
    "/a/0" 2:5
    "/a/1" 2:8
    "/a/1/c" 2:12
    "/s~1l~0" 3:9
    "#);
    assert_eq!(lc(docs[0].span("/s~1l~0").unwrap().key.unwrap()), (3, 1));
}

/// A list of scalars keeps only their spans; found, listed and located as any other.
#[test]
fn lists_of_scalars_are_found_item_by_item() {
    let docs = parse("anchor: &x é\nlist: [a, 'b c', 3]\nmixed: [*x, d]\nblock:\n  - e\n  - f\n");
    let doc = &docs[0];
    let b = doc.span("/list/1").unwrap();
    assert_eq!(
        (lc(b.value), b.value.len, b.key, b.defined),
        ((2, 11), 5, None, None)
    );
    assert_eq!(lc(doc.span("/block/1").unwrap().value), (6, 5));
    // Nothing inside a scalar, nothing past the end: the nearest value is the scalar or
    // the list.
    assert!(doc.span("/list/1/x").is_none());
    assert_eq!(doc.locate("/list/1/x"), b);
    assert!(doc.span("/list/3").is_none());
    assert_eq!(lc(doc.locate("/list/3").value), (2, 7));
    // An alias among the items keeps where it is defined.
    let alias = doc.span("/mixed/0").unwrap();
    assert_eq!(
        (lc(alias.value), alias.defined.map(lc)),
        ((3, 9), Some((1, 12)))
    );
    let table: Vec<String> = doc
        .spans()
        .into_iter()
        .map(|(path, span)| format!("{path} {}:{}", span.value.line, span.value.column))
        .collect();
    assert_eq!(
        table,
        [
            " 1:1",
            "/anchor 1:12",
            "/list 2:7",
            "/list/0 2:8",
            "/list/1 2:11",
            "/list/2 2:18",
            "/mixed 3:8",
            "/mixed/0 3:9",
            "/mixed/1 3:13",
            "/block 5:3",
            "/block/0 5:5",
            "/block/1 6:5",
        ]
    );
}

/// A flow collection spans to its closing bracket, across lines and comments, nested ones
/// too; an alias spans its `*name`.
#[test]
fn flow_collections_span_to_their_closing_bracket() {
    let source =
        "a: &x [1, {b: [2, 3] }, []]\nc: {d: [4,\n  5 # five\n  ], e: {}}\nf: *x\ng: [*x, {}]\n";
    let docs = parse(source);
    let doc = &docs[0];
    let text = |pointer: &str| {
        let span = doc.span(pointer).unwrap().value;
        &source[span.offset..span.offset + span.len]
    };
    assert_eq!(text("/a"), "[1, {b: [2, 3] }, []]");
    assert_eq!(text("/a/1"), "{b: [2, 3] }");
    assert_eq!(text("/a/1/b"), "[2, 3]");
    assert_eq!(text("/a/2"), "[]");
    assert_eq!(text("/c"), "{d: [4,\n  5 # five\n  ], e: {}}");
    assert_eq!(text("/c/d"), "[4,\n  5 # five\n  ]");
    assert_eq!(text("/c/e"), "{}");
    assert_eq!(text("/f"), "*x");
    assert_eq!(text("/g"), "[*x, {}]");
}

#[test]
fn scalars_follow_the_yaml_1_2_core_schema() {
    let docs = parse(
        "a: yes\nb: True\nc: ~\nd:\ne: '1'\nf: 012\ng: 0x1F\nh: -3\ni: 1e3\nj: 2.5\nk: 18446744073709551615\nl: 2024-01-01\n",
    );
    assert_eq!(
        docs[0].value,
        json!({
            "a": "yes", "b": true, "c": null, "d": null, "e": "1", "f": 12, "g": 31,
            "h": -3, "i": 1000.0, "j": 2.5, "k": 18446744073709551615u64, "l": "2024-01-01",
        })
    );
    assert!(docs[0].value["f"].is_u64());
}

#[test]
fn anchors_aliases_and_merge_keys() {
    let source = "base: &b {retries: 3}\ncopy: *b\nmerged:\n  <<: *b\n  extra: 1\n";
    let docs = parse(source);
    assert_eq!(
        docs[0].value,
        json!({"base": {"retries": 3}, "copy": {"retries": 3}, "merged": {"extra": 1, "retries": 3}})
    );
    let copied = docs[0].span("/copy/retries").unwrap();
    assert_eq!(lc(copied.value), (2, 7), "points at the alias");
    assert_eq!(
        lc(copied.defined.unwrap()),
        (1, 20),
        "and knows the definition"
    );
}

#[test]
fn duplicate_keys_name_both_places_and_all_are_reported() {
    let errors = parse_err("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n---\nx: 1\nx: 2\n");
    let described: Vec<String> = errors
        .iter()
        .map(|e| {
            format!(
                "{}:{} {e}",
                e.span().unwrap().line,
                e.span().unwrap().column
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            "4:3 duplicate key `c` (first at line 3, column 3)",
            "5:1 duplicate key `a` (first at line 1, column 1)",
            "8:1 duplicate key `x` (first at line 7, column 1)",
        ]
    );
}

#[test]
fn non_string_keys_are_errors() {
    let errors = parse_err("1: a\ntrue: b\n~: c\n? [x]\n: d\nok: e\n");
    let kinds: Vec<_> = errors
        .iter()
        .map(|e| match e {
            YamlError::NonStringKey { kind, at } => (*kind, lc(*at)),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("an integer", (1, 1)),
            ("a boolean", (2, 1)),
            ("null", (3, 1)),
            ("a sequence", (4, 3)),
        ]
    );
}

#[test]
fn numbers_json_cannot_hold_are_errors() {
    let errors = parse_err("big: 99999999999999999999\ninf: .inf\nhuge: -1e999\nnan: .NaN\n");
    let described: Vec<String> = errors
        .iter()
        .map(|e| {
            format!(
                "{}:{} {e}",
                e.span().unwrap().line,
                e.span().unwrap().column
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            "1:6 integer out of range: it does not fit in 64 bits",
            "2:6 number out of range: not finite, or too large for a 64-bit float",
            "3:7 number out of range: not finite, or too large for a 64-bit float",
            "4:6 number out of range: not finite, or too large for a 64-bit float",
        ]
    );
}

#[test]
fn syntax_error_keeps_its_location() {
    let errors = parse_err("a: 1\nb: [1, 2\nc: 3\n");
    let [YamlError::Syntax { message, at }] = &errors[..] else {
        panic!("{errors:?}");
    };
    assert!(!message.is_empty());
    assert_eq!(lc(at.unwrap()), (3, 2));

    let errors = parse_err("a: 1\n  b: 2\n");
    assert_eq!(lc(errors[0].span().unwrap()), (2, 4));
    let errors = parse_err("a: !custom 1\n");
    assert!(errors[0].to_string().contains("!custom"), "{errors:?}");
    let errors = parse_err("a: *nowhere\n");
    assert_eq!(lc(errors[0].span().unwrap()), (1, 4));
}

/// The "billion laughs": nine levels of nine aliases each would expand to 9^9 values.
#[test]
fn alias_bomb_is_refused() {
    let mut source = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (name, prev) in "bcdefghi".chars().zip("abcdefgh".chars()) {
        let refs = vec![format!("*{prev}"); 9].join(",");
        source.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let errors = parse_err(&source);
    assert!(
        matches!(
            &errors[..],
            [YamlError::AliasExpansionTooLarge {
                limit: 100_000,
                at: Some(_)
            }]
        ),
        "{errors:?}"
    );
    assert!(
        errors[0]
            .help()
            .unwrap()
            .contains("write the repeated values out")
    );
}

#[test]
fn many_aliases_are_refused() {
    let limits = Limits {
        max_aliases: 10,
        ..Limits::default()
    };
    let refs = ["*a"; 11].join(", ");
    let errors = parse_err_with(&format!("a: &a 1\nb: [{refs}]\n"), &limits);
    assert!(
        matches!(&errors[..], [YamlError::TooManyAliases { limit: 10, .. }]),
        "{errors:?}"
    );
    // One anchor used a hundred times is fine by default.
    let refs = vec!["*a"; 100].join(", ");
    let docs = parse(&format!("a: &a {{x: 1}}\nb: [{refs}]\n"));
    assert_eq!(docs[0].value["b"].as_array().unwrap().len(), 100);
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let flow = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let errors = parse_err(&flow);
    assert!(
        matches!(&errors[..], [YamlError::TooDeep { limit: 64, .. }]),
        "{errors:?}"
    );

    let mut block = String::new();
    for depth in 0..1_000 {
        block.push_str(&"  ".repeat(depth));
        block.push_str("a:\n");
    }
    let errors = parse_err(&block);
    assert!(
        matches!(
            &errors[..],
            [YamlError::TooDeep {
                limit: 64,
                at: Some(_)
            }]
        ),
        "{errors:?}"
    );

    let sequences = format!("{}x\n", "- ".repeat(10_000));
    let errors = parse_err(&sequences);
    assert!(
        matches!(&errors[..], [YamlError::TooDeep { .. }]),
        "{errors:?}"
    );

    // The limit itself is allowed.
    let ok = format!("{}1{}", "[".repeat(64), "]".repeat(64));
    assert_eq!(parse(&ok).len(), 1);
}

#[test]
fn deepest_allowed_nesting_fits_a_test_thread_stack() {
    let limits = Limits {
        max_depth: usize::MAX,
        ..Limits::default()
    };
    let depth = yaml::MAX_DEPTH_CEILING;
    let mut source = String::new();
    for level in 0..depth {
        source.push_str(&"  ".repeat(level));
        source.push_str("a:\n");
    }
    source.push_str(&"  ".repeat(depth));
    source.push_str("end\n");
    // Runs on a test thread (2 MiB stack unless RUST_MIN_STACK says otherwise).
    let docs = yaml::parse(&source, &limits).unwrap();
    let pointer = "/a".repeat(depth);
    assert_eq!(docs[0].span(&pointer).unwrap().value.line, depth as u32 + 1);
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    let limits = Limits {
        max_file_bytes: 16,
        ..Limits::default()
    };
    // Not even valid YAML: the size check comes first.
    let errors = parse_err_with("[[[[[[[[[[[[[[[[[[[[[[[[", &limits);
    assert!(
        matches!(
            &errors[..],
            [YamlError::TooLarge {
                size: 24,
                limit: 16
            }]
        ),
        "{errors:?}"
    );
}

#[test]
fn too_many_documents_and_nodes_are_refused() {
    let limits = Limits {
        max_documents: 3,
        max_nodes: 50,
        ..Limits::default()
    };
    let errors = parse_err_with(&"---\na: 1\n".repeat(4), &limits);
    assert!(
        matches!(&errors[..], [YamlError::TooManyDocuments { limit: 3, .. }]),
        "{errors:?}"
    );
    let list = format!("[{}]", vec!["1"; 60].join(","));
    let errors = parse_err_with(&list, &limits);
    assert!(
        matches!(&errors[..], [YamlError::TooManyNodes { limit: 50, .. }]),
        "{errors:?}"
    );
}

fn write(root: &Path, relative: &str, contents: &[u8]) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create directory");
    fs::write(path, contents).expect("write file");
}

/// The files found under `paths` and read, and the problems that kept others from being
/// found or read.
struct Loaded {
    files: Vec<ManifestFile>,
    errors: Vec<FileError>,
}

impl Loaded {
    fn has_errors(&self) -> bool {
        !self.errors.is_empty() || self.files.iter().any(|f| f.parsed.is_err())
    }

    /// Every problem, as diagnostics in [`diagnostic::sort`] order.
    fn diagnostics(&self) -> Vec<diagnostic::Diagnostic> {
        let mut out: Vec<_> = self.errors.iter().map(FileError::to_diagnostic).collect();
        out.extend(self.files.iter().flat_map(ManifestFile::diagnostics));
        diagnostic::sort(&mut out);
        out
    }

    fn source(&self, name: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.text.as_str())
    }
}

/// Finds (`files::discover`) and reads (`ManifestFile::read`) the manifests under `paths`.
fn load<P: AsRef<Path>>(paths: &[P], limits: &Limits) -> Loaded {
    let (found, mut errors) = files::discover(paths);
    let mut files = Vec::new();
    for path in found {
        match ManifestFile::read(&path, limits) {
            Ok(file) => files.push(file),
            Err(error) => errors.push(error),
        }
    }
    Loaded { files, errors }
}

/// The paths `load` reports, relative to `root`, with `/` separators.
fn names(loaded: &Loaded, root: &Path) -> Vec<String> {
    loaded
        .files
        .iter()
        .map(|f| {
            f.path
                .strip_prefix(root)
                .expect("found under root")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

#[test]
fn directory_walk_is_sorted_and_skips_hidden() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in [
        "z.yaml",
        "b/2.yml",
        "a.yaml",
        "b/1.YAML",
        "b/c/0.yaml",
        "a/x.yaml",
        ".git/config.yaml",
        ".hidden.yaml",
        "b/.cache/x.yaml",
        "notes.txt",
        "b/readme.md",
    ] {
        write(root, name, b"a: 1\n");
    }
    let loaded = load(&[root], &Limits::default());
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics());
    let expected = [
        "a/x.yaml",
        "a.yaml",
        "b/1.YAML",
        "b/2.yml",
        "b/c/0.yaml",
        "z.yaml",
    ];
    assert_eq!(names(&loaded, root), expected);
    // Naming the same files again, or in another order, changes nothing.
    let again = load(
        &[root.join("z.yaml"), root.join("b"), root.to_path_buf()],
        &Limits::default(),
    );
    assert_eq!(names(&again, root), expected);
    let documents: usize = loaded.files.iter().map(|f| f.documents().len()).sum();
    assert_eq!(documents, 6);
}

#[cfg(unix)]
#[test]
fn symlink_loops_end() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "m/a.yaml", b"a: 1\n");
    std::os::unix::fs::symlink(root.join("m"), root.join("m/loop")).unwrap();
    std::os::unix::fs::symlink(root.join("m/a.yaml"), root.join("m/alias.yaml")).unwrap();
    let loaded = load(&[root], &Limits::default());
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics());
    assert_eq!(names(&loaded, root), ["m/a.yaml"]);
}

#[test]
fn file_problems_are_reported_together() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "good.yaml", b"\xEF\xBB\xBFname: ok\n");
    write(root, "latin1.yaml", b"name: caf\xE9\n");
    write(root, "dup.yaml", b"a: 1\na: 2\n");
    write(root, "empty/readme.txt", b"");
    let loaded = load(
        &[root.to_path_buf(), root.join("missing"), root.join("empty")],
        &Limits::default(),
    );
    assert_eq!(names(&loaded, root), ["dup.yaml", "good.yaml"]);
    let good = &loaded.files[1];
    assert_eq!(good.text, "name: ok\n", "the byte order mark is dropped");
    assert_eq!(good.documents()[0].span("/name").unwrap().value.offset, 6);

    let not_utf8 = loaded
        .errors
        .iter()
        .find_map(|e| match e {
            FileError::NotUtf8 { at, .. } => Some(*at),
            _ => None,
        })
        .unwrap();
    assert_eq!(lc(not_utf8), (1, 10));
    assert!(
        loaded
            .errors
            .iter()
            .any(|e| matches!(e, FileError::NotFound { .. }))
    );
    assert!(
        loaded
            .errors
            .iter()
            .any(|e| matches!(e, FileError::NoManifests { .. }))
    );

    let diagnostics = loaded.diagnostics();
    assert_eq!(diagnostics.len(), 4, "{diagnostics:#?}");
    let root_name = root.display().to_string();
    let rendered =
        diagnostic::render_all(&diagnostics, |d| loaded.source(&d.file).zip(d.span), false)
            .replace(&root_name, "[ROOT]")
            .replace('\\', "/");
    insta::assert_snapshot!(rendered, @r"
    error: duplicate key `a` (first at line 1, column 1)
     --> [ROOT]/dup.yaml:2:1
      |
    2 | a: 2
      | ^
      |
      = help: remove or rename one of the two entries

    error: no manifests (`*.yaml` or `*.yml` files) in directory `[ROOT]/empty`
    --> [ROOT]/empty
     = help: manifests are files named `*.yaml` or `*.yml`; hidden directories are skipped

    error: file is not valid UTF-8 text
    --> [ROOT]/latin1.yaml:1:10
     = help: save the file as UTF-8

    error: path `[ROOT]/missing` does not exist
    --> [ROOT]/missing
     = help: check the spelling of the path
    ");
}

#[test]
fn oversized_file_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.yaml", &[b'#'; 100]);
    let limits = Limits {
        max_file_bytes: 64,
        ..Limits::default()
    };
    let loaded = load(&[dir.path()], &limits);
    assert!(
        matches!(
            &loaded.errors[..],
            [FileError::TooLarge {
                size: 100,
                limit: 64,
                ..
            }]
        ),
        "{:?}",
        loaded.errors
    );
}

#[test]
fn yaml_error_diagnostic_snapshot() {
    let source = "project: demo\nlog_streams:\n  - name: main\n    sample_rate: [0.5\n";
    let file = ManifestFile::from_text("team-a/project.yaml", source, &Limits::default());
    let rendered = diagnostic::render_all(
        &file.diagnostics(),
        |d| d.span.map(|span| (file.text.as_str(), span)),
        false,
    );
    insta::assert_snapshot!(rendered, @r"
    error: unclosed bracket '['
     --> team-a/project.yaml:4:18
      |
    4 |     sample_rate: [0.5
      |                  ^
    ");
}

/// A quoted string left open is reported at the quote that opened it, not where the
/// parser gave up (lines later, or past the end of the file).
#[test]
fn an_unclosed_quote_is_reported_where_it_opens() {
    for (source, opened) in [
        ("kind: Project\nname: \"abc\nlog_streams: []\n", (2, 7)),
        (
            "kind: Integration\nprovider: openai\ntoken: \"sk-open\n",
            (3, 8),
        ),
        ("a:\n  - x\n  - 'it''s\n", (3, 5)),
    ] {
        let errors = yaml::parse(source, &Limits::default()).expect_err(source);
        let error = &errors[0];
        let at = error.span().expect("a place");
        assert_eq!(lc(at), opened, "{source}: {error}");
        assert!(
            error.to_string().starts_with("quoted string not closed"),
            "{error}"
        );
    }
}
