//! Field paths written and read, and fields found again in the files they were loaded
//! from.

use std::path::Path;

use super::*;

const TEAM: &str = "\
# The team's project.
kind: Project
name: demo
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
        - {name: corectness, model_name: gpt-4o}
---
kind: Integration
provider: custom
endpoint: https://gateway.example.com
headers:
  X.Team: ${TEAM_HEADER}
token: sk-literal-secret-0123
";

/// Writes `TEAM` to a file and returns the origins `load` gives its two documents.
fn team(dir: &Path) -> (Origin, Origin) {
    let file = dir.join("team.yaml");
    std::fs::write(&file, TEAM).expect("write");
    let outcome = crate::manifest::load(std::slice::from_ref(&file), &|_| None);
    let project = outcome.set.projects[0].origin.clone();
    // The integration is refused (a literal token), so its origin is the one `load`
    // would give: the line its document starts at.
    let integration = Origin { file, line: 11 };
    (project, integration)
}

#[test]
fn a_field_is_found_at_its_line_and_column() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (project, _) = team(dir.path());
    assert_eq!(project.line, 2);
    let path: FieldPath = "log_streams[0].metric_settings.scorers[1].name"
        .parse()
        .expect("path");
    let found = locate(&project, &path).expect("found");
    assert_eq!(
        (found.span.line, found.span.column, found.exact),
        (9, 18, true)
    );
    assert_eq!(&TEAM[found.span.offset..][..found.span.len], "corectness");
    assert_eq!(
        found.excerpt,
        "        - {name: corectness, model_name: gpt-4o}"
    );
    let diagnostic = found
        .diagnostic(Severity::Error, "unknown scorer `corectness`")
        .with_help("did you mean `correctness`?");
    let rendered = found
        .render(&diagnostic, false)
        .replace(&dir.path().display().to_string(), "DIR");
    insta::assert_snapshot!(rendered, @r"
    error: unknown scorer `corectness`
     --> DIR/team.yaml:9:18
      |
    9 |         - {name: corectness, model_name: gpt-4o}
      |                  ^^^^^^^^^^
      |
      = help: did you mean `correctness`?
    ");
}

#[test]
fn a_path_beyond_the_document_points_at_what_exists() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (project, _) = team(dir.path());
    let deeper = FieldPath::root().key("log_streams").index(0).key("trends");
    let found = locate(&project, &deeper).expect("found");
    assert!(!found.exact);
    assert_eq!((found.span.line, found.span.column), (5, 5));
    let root = locate(&project, &FieldPath::root()).expect("found");
    assert!(root.exact);
    assert_eq!((root.span.line, root.span.column), (2, 1));
}

#[test]
fn the_second_document_and_quoted_keys_are_found_and_secrets_stay_masked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, integration) = team(dir.path());
    let header = FieldPath::root().key("headers").key("X.Team");
    assert_eq!(header.to_string(), r#"headers["X.Team"]"#);
    let found = locate(&integration, &header).expect("found");
    assert_eq!((found.span.line, found.span.column), (15, 11));
    let token = locate(&integration, &FieldPath::root().key("token")).expect("found");
    assert_eq!(token.span.line, 16);
    assert_eq!(token.excerpt, "token: ********");
    let rendered = token.render(&token.diagnostic(Severity::Warning, "here"), false);
    assert!(!rendered.contains("sk-literal"), "{rendered}");
}

#[test]
fn no_location_when_the_document_or_file_is_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (project, _) = team(dir.path());
    let moved = Origin {
        line: 3,
        ..project.clone()
    };
    assert_eq!(locate(&moved, &FieldPath::root()), None);
    std::fs::remove_file(&project.file).expect("remove");
    assert_eq!(locate(&project, &FieldPath::root()), None);
}

#[test]
fn long_lines_are_quoted_around_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("wide.yaml");
    let names: Vec<String> = (0..400).map(|i| format!("{{name: s{i}}}")).collect();
    let text = format!(
        "kind: Project\nname: wide\nlog_streams: [{{name: l, trends: {{sections: [{}]}}}}]\n",
        names.join(", ")
    );
    std::fs::write(&file, &text).expect("write");
    let origin = Origin { file, line: 1 };
    let path: FieldPath = "log_streams[0].trends.sections[200].name"
        .parse()
        .expect("path");
    let found = locate(&origin, &path).expect("found");
    assert_eq!(&text[found.span.offset..][..found.span.len], "s200");
    assert!(
        found.excerpt.chars().count() <= 2 * WINDOW + 4,
        "{}",
        found.excerpt
    );
    let rendered = found.render(&found.diagnostic(Severity::Error, "x"), false);
    let shown = rendered.lines().nth(3).expect("the line");
    let carets = rendered.lines().nth(4).expect("the carets");
    assert!(
        shown.contains(" | ...") && shown.ends_with("..."),
        "{rendered}"
    );
    // The header gives the column in the file, not in the window the line was cut to.
    let header = format!(":{}:{}", found.span.line, found.span.column);
    assert!(
        rendered
            .lines()
            .nth(1)
            .expect("the header")
            .ends_with(&header),
        "{rendered}"
    );
    let at = carets.chars().position(|c| c == '^').expect("a caret");
    let under: String = shown.chars().skip(at).take(4).collect();
    assert_eq!(under, "s200", "{rendered}");
}

#[test]
fn paths_are_written_and_read_back() {
    for text in [
        "",
        "name",
        "log_streams[3].metric_settings.scorers[1].name",
        r#"headers["X.Team"]"#,
        r#"headers["a\"b"].c"#,
        r#"[""]"#,
        "[0][1].x-y_z",
    ] {
        let path: FieldPath = text.parse().expect(text);
        assert_eq!(path.to_string(), text);
    }
    let path: FieldPath = r#"headers["x/y~z"]"#.parse().expect("path");
    assert_eq!(path.to_pointer(), "/headers/x~1y~0z");
    for (text, position) in [
        (".name", 0),
        ("name.", 5),
        ("a..b", 2),
        ("a[x]", 2),
        ("a[1", 2),
        (r#"a["b"#, 2),
        (r#"a["b"x"#, 5),
        ("a]", 1),
        ("a[1]b", 4),
    ] {
        let error = text.parse::<FieldPath>().expect_err(text);
        assert_eq!(error.position, position, "{text}: {error}");
    }
}
