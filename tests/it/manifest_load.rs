//! `manifest::load` end to end: the examples load cleanly, a file with many mistakes
//! reports all of them at once (snapshot), literal secrets never appear in any output,
//! rules across documents and files hold, and hostile YAML is refused with a clear error.

use std::path::{Path, PathBuf};

use evalctl::manifest::{LoadOutcome, load};

const MANY_ERRORS: &str = "tests/manifest_fixtures/many-errors.yaml";
const LEAKED: &str = "sk-live-DO-NOT-LEAK-0123456789";

fn no_env(_: &str) -> Option<String> {
    None
}

fn example_env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-test-openai".to_owned()),
        "ANTHROPIC_API_KEY" => Some("sk-test-anthropic".to_owned()),
        _ => None,
    }
}

fn load_paths(paths: &[&Path], env: &(dyn Fn(&str) -> Option<String> + Sync)) -> LoadOutcome {
    let paths: Vec<PathBuf> = paths.iter().map(|p| p.to_path_buf()).collect();
    load(&paths, env)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write a test manifest");
    path
}

fn messages(outcome: &LoadOutcome) -> Vec<String> {
    outcome
        .diagnostics
        .iter()
        .map(|d| {
            let at = d
                .span
                .map(|s| format!("{}:{}", s.line, s.column))
                .unwrap_or_default();
            format!("{:?} {at} {}", d.severity, d.message)
        })
        .collect()
}

#[test]
fn every_example_loads_without_a_diagnostic() {
    for (dir, projects, integrations) in [("examples/quickstart", 1, 0), ("examples/full", 2, 2)] {
        let outcome = load_paths(&[Path::new(dir)], &example_env);
        assert!(
            outcome.diagnostics.is_empty(),
            "{dir}:\n{}",
            outcome.render_diagnostics(false)
        );
        assert_eq!(outcome.set.projects.len(), projects, "{dir}");
        assert_eq!(outcome.set.integrations.len(), integrations, "{dir}");
    }
    let full = load_paths(&[Path::new("examples/full")], &example_env);
    assert_eq!(full.set.policies.len(), 1);
    assert_eq!(full.set.policies[0].spec.rules.len(), 4);
}

#[test]
fn examples_start_with_the_schema_comment() {
    let mut stack = vec![PathBuf::from("examples")];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read examples") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                if !path.ends_with("ci") {
                    stack.push(path);
                }
                continue;
            }
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            ) {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read example");
            let first = text.lines().next().unwrap_or_default();
            let depth = path.components().count() - 1;
            let expected = format!(
                "# yaml-language-server: $schema={}schemas/evalctl-manifest.schema.json",
                "../".repeat(depth)
            );
            assert_eq!(first, expected, "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 3, "found {seen} example files");
}

#[test]
fn undefined_secret_variables_are_warnings_only() {
    let outcome = load_paths(&[Path::new("examples/full")], &no_env);
    assert!(
        !outcome.has_errors(),
        "{}",
        outcome.render_diagnostics(false)
    );
    assert_eq!(outcome.warning_count(), 2);
    assert_eq!(outcome.set.integrations.len(), 2);
}

#[test]
fn many_errors_are_reported_at_once_and_the_literal_secret_nowhere() {
    let outcome = load_paths(&[Path::new(MANY_ERRORS)], &no_env);
    let rendered = outcome.render_diagnostics(false);
    insta::assert_snapshot!("many_errors", rendered);
    assert_eq!(outcome.error_count(), 9, "{rendered}");
    assert_eq!(outcome.warning_count(), 0);
    assert!(outcome.set.integrations.is_empty() && outcome.set.projects.is_empty());

    let coloured = outcome.render_diagnostics(true);
    let json = serde_json::to_string(&outcome.diagnostics).expect("serialize");
    let debug = format!("{outcome:?}");
    for (what, text) in [
        ("text", &rendered),
        ("coloured", &coloured),
        ("json", &json),
        ("debug", &debug),
    ] {
        assert!(
            !text.contains(LEAKED),
            "the literal secret leaks into {what}"
        );
        assert!(
            !text.contains("DO-NOT-LEAK"),
            "part of the secret leaks into {what}"
        );
    }
    assert!(rendered.contains("token: ********"), "{rendered}");
}

#[test]
fn diagnostics_are_deterministic_and_sorted() {
    let a = load_paths(&[Path::new(MANY_ERRORS)], &no_env);
    let b = load_paths(&[Path::new(MANY_ERRORS)], &no_env);
    assert_eq!(a.diagnostics, b.diagnostics);
    let mut sorted = a.diagnostics.clone();
    evalctl::manifest::diagnostic::sort(&mut sorted);
    assert_eq!(sorted, a.diagnostics);
}

#[test]
fn interpolation_replaces_non_secret_strings_only_and_keeps_integration_references() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        "p.yaml",
        "kind: Project\nname: ${TEAM}-project\nlog_streams:\n  - name: prod\n    trends:\n      sections:\n        - name: \"$${TEAM} is literal\"\n          description: ${TEAM}\n---\nkind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: ${ORG}\n",
    );
    let env = |name: &str| match name {
        "TEAM" => Some("payments".to_owned()),
        "ORG" => Some("org-payments".to_owned()),
        "OPENAI_API_KEY" => Some("sk-value".to_owned()),
        _ => None,
    };
    let outcome = load_paths(&[&path], &env);
    assert_eq!(messages(&outcome), Vec::<String>::new());
    let project = &outcome.set.projects[0];
    assert_eq!(project.spec.name.as_deref(), Some("payments-project"));
    assert_eq!(project.origin.line, 1);
    let sections = project.spec.log_streams[0]
        .trends
        .as_ref()
        .and_then(|t| t.sections.clone())
        .unwrap_or_default();
    assert_eq!(sections[0].name, "${TEAM} is literal");
    assert_eq!(sections[0].description.as_deref(), Some("payments"));
    let integration = serde_json::to_string(&outcome.set.integrations[0].spec).expect("json");
    assert!(
        integration.contains("\"token\":\"${OPENAI_API_KEY}\""),
        "{integration}"
    );
    // In an Integration a value from the environment is a secret: the spec keeps
    // the reference (apply expands it), and only a fingerprint of the value.
    assert!(
        integration.contains("\"organization_id\":\"${ORG}\""),
        "{integration}"
    );
    assert!(!integration.contains("sk-value") && !integration.contains("payments"));
    let env_fields = &outcome.set.integrations[0].spec.env;
    assert!(matches!(
        env_fields.get("/organization_id"),
        Some(evalctl::manifest::types::EnvField::FromEnv {
            fingerprint: Some(_)
        })
    ));
    assert!(!format!("{env_fields:?}").contains("payments"));
    assert_eq!(outcome.set.integrations[0].origin.line, 10);
}

#[test]
fn projects_and_providers_are_declared_once_across_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "a.yaml",
        "kind: Project\nname: demo-project\n---\nkind: Integration\nprovider: openai\ntoken: ${K}\n",
    );
    write(
        dir.path(),
        "b.yaml",
        "# again\nkind: Project\nname: demo-project\n---\nkind: Integration\nprovider: openai\ntoken: ${K}\n",
    );
    let env = |_: &str| Some("x".to_owned());
    let outcome = load_paths(&[dir.path()], &env);
    let a = dir.path().join("a.yaml").display().to_string();
    assert_eq!(
        messages(&outcome),
        vec![
            format!("Error 3:7 project `demo-project` is declared twice: here and at {a}:1"),
            format!(
                "Error 6:11 a second Integration document for provider `openai` (the first is at {a}:4)"
            ),
        ]
    );
    assert_eq!((outcome.files, outcome.documents), (2, 4));
    // b.yaml has nothing wrong of its own, so its text was not kept while
    // loading: the diagnostics found across files quote it all the same.
    let rendered = outcome.render_diagnostics(false);
    for quoted in ["3 | name: demo-project", "6 | provider: openai"] {
        assert!(rendered.contains(quoted), "{quoted:?} in:\n{rendered}");
    }
}

#[test]
fn the_loader_names_files_in_path_order_whatever_the_argument_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = write(dir.path(), "b.yaml", "kind: Project\nname: b\n");
    let a = write(dir.path(), "a.yaml", "kind: Project\nname: a\n");
    let outcome = load_paths(&[&b, &a], &no_env);
    let names: Vec<_> = outcome
        .set
        .projects
        .iter()
        .map(|p| p.spec.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

#[test]
fn paths_that_cannot_be_read_are_errors_named_by_their_path() {
    let missing = "tests/manifest_fixtures/does-not-exist";
    let outcome = load_paths(&[Path::new(missing)], &no_env);
    assert_eq!(outcome.error_count(), 1);
    let error = &outcome.diagnostics[0];
    assert_eq!(
        (error.file.as_str(), error.message.as_str()),
        (
            missing,
            "path `tests/manifest_fixtures/does-not-exist` does not exist"
        )
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let outcome = load_paths(&[dir.path()], &no_env);
    assert_eq!(outcome.error_count(), 1);
    assert!(
        outcome.diagnostics[0].message.starts_with("no manifests"),
        "{:?}",
        outcome.diagnostics
    );
}

/// Loads `text` as one file and asserts it is refused; returns the first message.
///
/// How fast, and in how much memory, is measured by the benchmark's `hostile` phase
/// (`cargo run --release --example bench`), not asserted here.
fn refused(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), name, text);
    let outcome = load_paths(&[&path], &no_env);
    assert!(outcome.has_errors(), "{name} was accepted");
    outcome.diagnostics[0].message.clone()
}

#[test]
fn hostile_yaml_is_refused_with_a_clear_error() {
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nkind: Project\n";
    let message = refused("bomb.yaml", bomb);
    assert!(message.contains("aliases expand to more than"), "{message}");

    let deep = format!(
        "kind: Project\nname: {}x{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let message = refused("deep.yaml", &deep);
    assert!(message.contains("nesting is deeper than"), "{message}");

    let block_deep: String = (0..200)
        .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
        .collect();
    let message = refused("block.yaml", &block_deep);
    assert!(message.contains("nesting is deeper than"), "{message}");

    let huge = format!(
        "kind: Project\nname: x\n# {}\n",
        "x".repeat(9 * 1024 * 1024)
    );
    let message = refused("huge.yaml", &huge);
    assert!(message.contains("over the limit"), "{message}");

    let many: String = (0..1_100)
        .map(|i| format!("---\nkind: Project\nname: p{i}\n"))
        .collect();
    let message = refused("many.yaml", &many);
    assert!(message.contains("documents in one file"), "{message}");
}

#[test]
fn a_large_but_sound_file_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = String::from("kind: Project\nname: big\nlog_streams:\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "  - name: stream-{i}\n    metric_settings:\n      scorers:\n        - name: correctness\n      segment_filters:\n        - sample_rate: 0.5\n          filter: {{name: node_name, operator: one_of, value: [llm, chat]}}\n"
        ));
    }
    let path = write(dir.path(), "big.yaml", &text);
    let outcome = load_paths(&[&path], &no_env);
    assert!(
        !outcome.has_errors(),
        "{}",
        outcome.render_diagnostics(false)
    );
}

#[test]
fn many_problems_in_one_document_are_all_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut integration =
        String::from("kind: Integration\nprovider: custom\nendpoint: https://x\nheaders:\n");
    for i in 0..5_000 {
        integration.push_str(&format!("  X-{i}: literal-{i}\n"));
    }
    for i in 0..5_000 {
        integration.push_str(&format!("unknown_{i}: secret-{i}\n"));
    }
    let mut project = String::from(
        "kind: Project\nname: p\nlog_streams:\n  - name: l\n    trends:\n      sections:\n",
    );
    for i in 0..5_000 {
        project.push_str(&format!(
            "        - {{name: s{i}, renamed_from: [old, s{}]}}\n",
            i + 1
        ));
    }
    let a = write(dir.path(), "integration.yaml", &integration);
    let b = write(dir.path(), "project.yaml", &project);
    let outcome = load_paths(&[&a, &b], &no_env);
    let rendered = outcome.render_diagnostics(false);
    // Unknown fields, literal secrets, repeated renames and names, and the service's
    // limits on the two lists: at most 50 headers, 50 sections.
    assert_eq!(outcome.error_count(), 5_000 + 5_000 + 4_999 + 4_999 + 2);
    assert!(!rendered.contains("literal-") && !rendered.contains("secret-"));
}

#[test]
fn api_version_is_azures_own_when_the_provider_variable_is_azure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        "i.yaml",
        "kind: Integration\nprovider: ${PROVIDER}\ntoken: ${AZURE_API_KEY}\nendpoint: https://azure.example.com\napi_version: \"2024-02-01\"\n",
    );
    let env = |name: &str| match name {
        "PROVIDER" => Some("azure".to_owned()),
        "AZURE_API_KEY" => Some("sk-azure".to_owned()),
        _ => None,
    };
    let outcome = load_paths(&[&path], &env);
    assert_eq!(messages(&outcome), Vec::<String>::new());
    let integration = serde_json::to_string(&outcome.set.integrations[0].spec).expect("json");
    assert!(
        integration.contains("\"api_version\":\"2024-02-01\""),
        "{integration}"
    );

    // Elsewhere `api_version` is the manifest format version, whatever the provider.
    let env = |name: &str| match name {
        "PROVIDER" => Some("openai".to_owned()),
        _ => Some("x".to_owned()),
    };
    let path = write(
        dir.path(),
        "i.yaml",
        "kind: Integration\nprovider: ${PROVIDER}\ntoken: ${OPENAI_API_KEY}\napi_version: \"2024-02-01\"\n",
    );
    let outcome = load_paths(&[&path], &env);
    assert_eq!(
        messages(&outcome),
        vec!["Error 4:14 unsupported api_version `2024-02-01`"]
    );
    assert_eq!(
        outcome.diagnostics[0].help.as_deref(),
        Some("this evalctl reads `api_version: evalctl/v1` (or leave it out)")
    );
    for (text, found) in [
        ("kind: Project\napi_version: v2\n", "`v2`"),
        ("kind: Project\napi_version: 2\n", "an integer"),
        ("kind: Projct\napi_version: [v1]\n", "an array"),
    ] {
        let path = write(dir.path(), "i.yaml", text);
        let outcome = load_paths(&[&path], &no_env);
        let messages = messages(&outcome);
        assert!(
            messages.contains(&format!("Error 2:14 unsupported api_version {found}")),
            "{messages:?}"
        );
    }
}

/// A masked secret is shorter or longer than the literal it hides (`********` whatever its
/// length): every line after it is still quoted as itself, underlined where the problem is.
#[test]
fn lines_after_masked_secrets_are_quoted_at_their_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let parsed = write(
        dir.path(),
        "parsed.yaml",
        "kind: Integration\nprovider: custom\nendpoint: https://x\nheaders:\n  X-Long: literal-value-much-longer-than-the-mask\n  X-Short: l\n  X-Wide: lé€😀\nunknown_field: 1\n",
    );
    let unparsed = write(
        dir.path(),
        "unparsed.yaml",
        "kind: Integration\nprovider: openai\ntoken: sk-literal-value-much-longer-than-the-mask\napi_key_value: x\nendpoint: [https://x\n",
    );
    let outcome = load_paths(&[&parsed, &unparsed], &no_env);
    let rendered = outcome
        .render_diagnostics(false)
        .replace(&dir.path().display().to_string(), "DIR");
    assert!(!rendered.contains("literal-value") && !rendered.contains("lé€"));
    insta::assert_snapshot!(rendered);
}

/// Literal secrets where a loader could forget them: a number too large to parse, what
/// reads as null, a file that does not parse (a header written twice), a Project holding
/// a credential key by mistake, and the keys of a misspelt secret field's mapping. None
/// is quoted in any form of the diagnostics; every line is still quoted, masked.
#[test]
fn secrets_in_odd_places_are_quoted_nowhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = [
        (
            "number.yaml",
            "kind: Integration\nprovider: openai\ntoken: 86753098675309867530986753098675309\n",
        ),
        (
            "null.yaml",
            "kind: Integration\nprovider: anthropic\ntoken: !!null zzsec-null\n",
        ),
        (
            "twice.yaml",
            "kind: Integration\nprovider: custom\nendpoint: https://x\nheaders:\n  X-A: ${A_VAR}\n  X-A: zzsec-dupe\n",
        ),
        (
            "project.yaml",
            "kind: Project\nname: p\ntoken: zzsec-token\napi_key: zzsec-key\n",
        ),
        (
            "misspelt.yaml",
            "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\ntokn:\n  zzsec-name: zzsec-value\n",
        ),
        (
            "flow.yaml",
            "kind: Integration\nprovider: mistral\ntoken: ${OPENAI_API_KEY}\nextra: {zzsec-k: [zzsec-v]}\n",
        ),
    ];
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, text)| write(dir.path(), name, text))
        .collect();
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-from-env".to_owned());
    let outcome = load_paths(&paths, &env);
    let rendered = outcome
        .render_diagnostics(false)
        .replace(&dir.path().display().to_string(), "DIR");
    let json = serde_json::to_string(&outcome.diagnostics).expect("serialize");
    let annotations = outcome.github_annotations();
    for (what, text) in [
        ("text", &rendered),
        ("json", &json),
        ("annotations", &annotations),
    ] {
        for secret in ["zzsec", "8675309", "sk-from-env"] {
            assert!(
                !text.contains(secret),
                "{secret} leaks into {what}:\n{text}"
            );
        }
    }
    insta::assert_snapshot!(rendered);
}

/// A variable an Integration keeps secret (its token, any of its fields but those that
/// name it) cannot be shown by a Project that refers to it too: an error at the
/// reference, and the value in no output. A variable both name is fine.
#[test]
fn a_project_cannot_show_what_an_integration_keeps_secret() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = write(
        dir.path(),
        "a-project.yaml",
        "kind: Project\nname: ${TEAM}\nlog_streams:\n  - name: production\n    trends:\n      sections:\n        - {name: \"S ${OPENAISEC}\", description: \"at ${HOST} for ${TEAM}\"}\n",
    );
    let integrations = write(
        dir.path(),
        "integrations.yaml",
        "kind: Integration\nprovider: openai\ntoken: ${OPENAISEC}\n---\nkind: Integration\nprovider: custom\nname: ${TEAM}\nendpoint: https://${HOST}/v1\n",
    );
    let env = |name: &str| match name {
        "OPENAISEC" => Some("zzsec-token".to_owned()),
        "HOST" => Some("zzsec-host".to_owned()),
        "TEAM" => Some("team-a".to_owned()),
        _ => None,
    };
    let outcome = load_paths(&[&project, &integrations], &env);
    let rendered = outcome
        .render_diagnostics(false)
        .replace(&dir.path().display().to_string(), "DIR");
    let json = serde_json::to_string(&outcome.diagnostics).expect("serialize");
    assert!(
        !rendered.contains("zzsec") && !json.contains("zzsec"),
        "{rendered}"
    );
    assert_eq!(outcome.error_count(), 2, "{rendered}");
    insta::assert_snapshot!(rendered);
}

/// A field whose value comes from an unset variable is unknown until `apply`: a warning,
/// not an error about the reference's text (`hostname` must be a URI); once set, its value
/// is checked, and refused without being shown.
#[test]
fn a_field_from_an_unset_variable_is_checked_once_it_is_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(
        dir.path(),
        "i.yaml",
        "kind: Integration\nprovider: nvidia\ntoken: ${NV_TOKEN}\nhostname: ${NV_HOST}\n",
    );
    let outcome = load_paths(&[&path], &no_env);
    assert!(
        !outcome.has_errors(),
        "{}",
        outcome.render_diagnostics(false)
    );
    assert_eq!(
        outcome.warning_count(),
        2,
        "{}",
        outcome.render_diagnostics(false)
    );
    assert_eq!(outcome.set.integrations.len(), 1);

    let env = |name: &str| (name == "NV_HOST").then(|| "zzsec not a uri".to_owned());
    let outcome = load_paths(&[&path], &env);
    let rendered = outcome.render_diagnostics(false);
    assert_eq!(outcome.error_count(), 1, "{rendered}");
    assert!(rendered.contains("not shown: it is a secret") && !rendered.contains("zzsec"));
}

/// A scalar of 100,000 `${...}` references (a 400 KB line): every reference expands, and a
/// bad one after 99,999 occurrences of its own text (in `$${X}` escapes, which hold `${X}`)
/// is reported at its own column. Counting each reference's earlier occurrences by searching
/// was quadratic in the references (issue 22 item 13); the benchmark's `100,000 references`
/// phase times it through the binary (docs/performance.md).
#[test]
fn a_hundred_thousand_references_in_one_scalar_expand_and_point_at_their_place() {
    const N: usize = 100_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let document = |value: &str| {
        format!(
            "kind: Project\nname: refs\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: correctness\n          filters:\n            - name: metadata\n              key: k\n              operator: eq\n              value: \"{value}\"\n"
        )
    };
    let env = |name: &str| (name == "A").then(|| "ab".to_owned());

    let good = write(dir.path(), "good.yaml", &document(&"${A}".repeat(N)));
    let outcome = load_paths(&[&good], &env);
    assert!(
        !outcome.has_errors(),
        "{}",
        outcome.render_diagnostics(false)
    );
    let spec = serde_json::to_string(&outcome.set.projects[0].spec).expect("json");
    assert!(
        spec.contains(&format!("\"{}\"", "ab".repeat(N))),
        "every reference expands"
    );

    let escapes = "$${X}".repeat(N - 1);
    let bad = write(
        dir.path(),
        "bad.yaml",
        &document(&format!("{escapes}${{X}}")),
    );
    let outcome = load_paths(&[&bad], &env);
    // The quote opening the value is at column 22; the bad reference follows the escapes.
    let column = 23 + escapes.len();
    assert_eq!(
        messages(&outcome),
        [format!(
            "Error 12:{column} environment variable `X` is not set"
        )]
    );
}
