//! End to end: `evalctl export`, the real binary against an in-process
//! sandbox. Exported files plan empty against the live state they came from
//! (with `--verify`, and with a separate `plan`), are byte-identical from one
//! export to the next, never hold a secret, and cover exactly the projects
//! asked for.

use crate::e2e_support;

use std::collections::BTreeMap;
use std::path::Path;

use e2e_support::{Run, TestContext};
use evalctl::api::{IntegrationCreate, Secret, SectionCreateRequest};
use evalctl::kinds::templates::{AnnotationConstraints, TemplateCreate};

const OPENAI_TOKEN: &str = "sk-test-export-openai-0123456789";
const ANTHROPIC_TOKEN: &str = "sk-ant-export-secret-9876543210";
const CUSTOM_KEY: &str = "custom-export-key-5555aaaa";

fn context() -> TestContext {
    TestContext::new()
        .env("OPENAI_API_KEY", OPENAI_TOKEN)
        .env("ANTHROPIC_API_KEY", ANTHROPIC_TOKEN)
}

/// Every file of `dir`, by name.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("the export directory exists") {
        let entry = entry.expect("an entry");
        let text = std::fs::read_to_string(entry.path()).expect("a text file");
        out.insert(entry.file_name().to_string_lossy().into_owned(), text);
    }
    out
}

/// Makes the demo fixture richer: everything of examples/full (every scorer
/// kind, every filter kind, sections, a favorite, every template kind of both
/// kinds, two integrations), then out-of-band objects whose text needs care in
/// YAML, and a custom integration whose key is known.
fn enrich(ctx: &TestContext) {
    ctx.copy_dir("examples/full", "full");
    ctx.evalctl(&["apply", "full", "--auto-approve"]).expect(0);
    let project_id = ctx.demo_project_id();
    let client = ctx.client();
    ctx.block_on(async {
        let ls = client
            .create_log_stream(&project_id, "2025-01-01: nightly")
            .await
            .expect("a log stream is created");
        client
            .create_section(
                &project_id,
                &ls.id,
                None,
                &SectionCreateRequest {
                    name: "yes".into(),
                    description: Some("Spend in ${USD}, # not a comment".into()),
                    color: Some("#abcdef".into()),
                },
            )
            .await
            .expect("a section is created");
        client
            .create_annotation_template(
                &project_id,
                &TemplateCreate {
                    name: "null".into(),
                    include_explanation: Some(true),
                    criteria: Some("First line: ${HOME}\n  - indented, yes\n# kept\n".into()),
                    constraints: AnnotationConstraints::Choice {
                        choices: vec!["yes".into(), "1.0".into(), "- dash".into(), "a, b".into()],
                        allow_other: false,
                    },
                },
            )
            .await
            .expect("a template is created");
        let custom: IntegrationCreate = serde_json::from_value(serde_json::json!({
            "provider": "custom",
            "endpoint": "https://llm.example.com/v1",
            "authentication_type": "api_key",
            "api_key_header": "X-API-Key",
            "api_key_value": CUSTOM_KEY,
            "headers": {"X-Tenant": "tenant-secret-header"},
            "model_properties": [{"name": "house-model", "alias": "House"}],
        }))
        .expect("a custom integration body");
        client
            .put_integration(&custom)
            .await
            .expect("the integration is stored");
    });
}

fn assert_no_secret(text: &str) {
    for secret in [
        OPENAI_TOKEN,
        ANTHROPIC_TOKEN,
        CUSTOM_KEY,
        "tenant-secret-header",
    ] {
        assert!(!text.contains(secret), "a secret leaked:\n{text}");
    }
}

fn exported(run: &Run) -> Vec<String> {
    run.stderr
        .lines()
        .filter_map(|l| l.trim().strip_prefix("wrote "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_demo_fixture_exports_and_plans_empty() {
    let ctx = context();
    let run = ctx.evalctl(&["export", "--dir", "plain", "--verify"]);
    run.expect(0);
    assert!(
        run.stderr.contains("Verified: planning the exported files"),
        "{}",
        run.stderr
    );
    assert_eq!(
        files(&ctx.path("plain")).keys().collect::<Vec<_>>(),
        [
            "demo-project.yaml",
            "scorer-helpfulness-judge.prompt.txt",
            "scorer-response-length-check.py",
            "scorers.yaml",
            "support-bot.yaml"
        ],
        "no integrations.yaml: the demo user has none; the demo's custom scorers with their prompt and code"
    );
    ctx.evalctl(&["plan", "plain", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_rich_configuration_round_trips_deterministically_without_secrets() {
    let ctx = context();
    enrich(&ctx);
    let run = ctx.evalctl(&["export", "--dir", "exported", "--verify"]);
    run.expect(0);
    assert_no_secret(&run.all_output());
    let written = exported(&run);
    // Three projects (examples/full's new-team among them), the
    // integrations, the custom scorers (the demo's two and examples/full's
    // two) and their prompt and code files.
    assert_eq!(written.len(), 9, "{}", run.stderr);
    assert!(run.stderr.contains("(4 custom scorers)"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("integrations `anthropic`, `custom`, `openai`"),
        "{}",
        run.stderr
    );

    // A separate plan of the exported directory: no changes, and no drift.
    let plan = ctx.evalctl(&["plan", "exported", "--detailed-exitcode"]);
    plan.expect(0);
    assert!(plan.stdout.contains("No changes"), "{}", plan.stdout);
    ctx.evalctl(&["drift", "exported"]).expect(0);

    let first = files(&ctx.path("exported"));
    for text in first.values() {
        assert_no_secret(text);
    }
    let integrations = &first["integrations.yaml"];
    for reference in [
        "token: ${OPENAI_API_KEY}",
        "token: ${ANTHROPIC_API_KEY}",
        "api_key_value: ${CUSTOM_API_KEY}",
        "endpoint: https://llm.example.com/v1",
        "organization_id: org-demo",
        "api_key_header: X-API-Key",
    ] {
        assert!(
            integrations.contains(reference),
            "{reference}:\n{integrations}"
        );
    }
    let project = &first["demo-project.yaml"];
    for kind in ["preset", "llm", "code", "luna"] {
        let name = match kind {
            "preset" => "name: correctness",
            "llm" => "name: helpfulness-judge",
            "code" => "name: response-length-check",
            _ => "name: brand-safety-luna",
        };
        assert!(project.contains(name), "{kind} scorer: {project}");
    }

    // Determinism: a second export is byte-identical.
    ctx.evalctl(&["export", "--dir", "again"]).expect(0);
    assert_eq!(files(&ctx.path("again")), first);

    let mut settings = ctx.insta_settings();
    settings.add_filter(r"evalctl \d+\.\d+\.\d+\S*", "evalctl [VERSION]");
    settings.bind(|| insta::assert_snapshot!("demo_project_after_examples_full", project));
}

#[test]
fn overwriting_needs_force_and_project_limits_the_export() {
    let ctx = context();
    ctx.evalctl(&["export", "--dir", "out", "--project", "support-bot"])
        .expect(0);
    assert_eq!(
        files(&ctx.path("out")).keys().collect::<Vec<_>>(),
        ["support-bot.yaml"]
    );
    let again = ctx.evalctl(&["export", "--dir", "out", "--project", "support-bot"]);
    again.expect(1);
    assert!(
        again.stderr.contains("support-bot.yaml") && again.stderr.contains("--force"),
        "{}",
        again.stderr
    );
    ctx.evalctl(&[
        "export",
        "--dir",
        "out",
        "--project",
        "support-bot",
        "--force",
    ])
    .expect(0);

    let unknown = ctx.evalctl(&["export", "--dir", "out", "--project", "demo-projekt"]);
    // A project named on the command line that does not exist: a usage error.
    unknown.expect(64);
    assert!(
        unknown.stderr.contains("project `demo-projekt` not found")
            && unknown.stderr.contains("did you mean `demo-project`"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn the_schema_line_points_at_the_repository_schema() {
    let ctx = context();
    ctx.write("schemas/evalctl-manifest.schema.json", "{}");
    ctx.evalctl(&[
        "export",
        "--dir",
        "config/prod",
        "--project",
        "demo-project",
    ])
    .expect(0);
    let text = std::fs::read_to_string(ctx.path("config/prod/demo-project.yaml")).unwrap();
    assert!(
        text.starts_with(
            "# yaml-language-server: $schema=../../schemas/evalctl-manifest.schema.json\n"
        ),
        "{text}"
    );
    ctx.evalctl(&[
        "export",
        "--dir",
        "config/prod",
        "--force",
        "--schema-url",
        "https://example.com/evalctl.json",
    ])
    .expect(0);
    let text = std::fs::read_to_string(ctx.path("config/prod/support-bot.yaml")).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=https://example.com/evalctl.json\n"),
        "{text}"
    );
}

#[test]
fn an_integration_with_a_known_token_is_exported_as_a_reference() {
    let ctx = context();
    let client = ctx.client();
    ctx.block_on(async {
        let body: IntegrationCreate = IntegrationCreate::Openai {
            token: Secret::new(OPENAI_TOKEN),
            organization_id: Some("org-known".into()),
        };
        client.put_integration(&body).await.unwrap();
    });
    let run = ctx.evalctl(&["export", "--dir", "out", "--verify", "-vvv"]);
    run.expect(0);
    assert_no_secret(&run.all_output());
    let integrations = std::fs::read_to_string(ctx.path("out/integrations.yaml")).unwrap();
    assert_no_secret(&integrations);
    assert!(
        integrations
            .contains("provider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: org-known\n"),
        "{integrations}"
    );
}

#[test]
fn a_scaled_fixture_exports_every_project_and_plans_empty() {
    // The benchmark's 2,000 log streams (50 x 40) are slow in a debug
    // build; a smaller scale keeps the suite fast and covers the same paths.
    let ctx = TestContext::with_fixture(evalctl::sandbox::Fixture::scaled(12, 6, 2));
    ctx.evalctl(&["export", "--dir", "scaled", "--verify"])
        .expect(0);
    let written = files(&ctx.path("scaled"));
    // The projects, and the custom scorers with their prompt and code.
    assert_eq!(written.len(), 15, "{:?}", written.keys());
    ctx.evalctl(&["plan", "scaled", "--detailed-exitcode"])
        .expect(0);
}

/// Adoption (issue 22 item 1): an export of an organization whose
/// integrations carry non-secret settings (an OpenAI organization, an Azure
/// endpoint, deployment and team header) writes them as values, so that
/// with only the token variables set (as the apply recipe sets them)
/// validate and plan say nothing about other variables and the first
/// integration change applies.
#[test]
fn after_an_export_only_the_token_variables_are_needed() {
    const AZURE_TOKEN: &str = "azure-export-token-0000bbbb";
    let ctx = TestContext::new();
    ctx.write(
        "setup/integrations.yaml",
        "kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: org-adopt-1\n---\n\
         kind: Integration\nprovider: azure\ntoken: ${AZURE_API_KEY}\nendpoint: https://team-a.openai.azure.com\n\
         azure_deployment: gpt-4o-prod\ndefault_headers:\n  X-Team: team-a\n",
    );
    let tokens = [
        ("OPENAI_API_KEY", OPENAI_TOKEN),
        ("AZURE_API_KEY", AZURE_TOKEN),
    ];
    ctx.evalctl_with(&tokens, &["apply", "setup", "--auto-approve"])
        .expect(0);
    // The new repo: exported without any variable set.
    let run = ctx.evalctl(&["export", "--dir", "repo", "--verify"]);
    run.expect(0);
    let integrations = std::fs::read_to_string(ctx.path("repo/integrations.yaml")).unwrap();
    for line in [
        "organization_id: org-adopt-1\n",
        "endpoint: https://team-a.openai.azure.com\n",
        "azure_deployment: gpt-4o-prod\n",
        "X-Team: team-a\n",
        "token: ${OPENAI_API_KEY}\n",
        "token: ${AZURE_API_KEY}\n",
    ] {
        assert!(integrations.contains(line), "{line}:\n{integrations}");
    }
    for secret in [OPENAI_TOKEN, AZURE_TOKEN] {
        assert!(!integrations.contains(secret), "{integrations}");
    }
    // CI: the token variables only.
    let run = ctx.evalctl_with(&tokens, &["validate", "repo"]);
    run.expect(0);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let run = ctx.evalctl_with(&tokens, &["plan", "repo", "--detailed-exitcode"]);
    run.expect(0);
    assert!(run.stdout.contains("No changes"), "{}", run.stdout);
    assert!(
        !run.all_output().contains("Not verifiable"),
        "{}",
        run.all_output()
    );
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    // The first integration change after the export applies.
    std::fs::write(
        ctx.path("repo/integrations.yaml"),
        integrations.replace(
            "organization_id: org-adopt-1",
            "organization_id: org-adopt-2",
        ),
    )
    .unwrap();
    let run = ctx.evalctl_with(&tokens, &["apply", "repo", "--auto-approve"]);
    run.expect(0);
    assert!(run.stdout.contains("org-adopt-2"), "{}", run.stdout);
    ctx.evalctl_with(&tokens, &["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    // Rotation too.
    ctx.evalctl_with(
        &tokens,
        &["apply", "repo", "--auto-approve", "--rotate-secrets"],
    )
    .expect(0);
}
