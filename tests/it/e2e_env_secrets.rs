//! Values an Integration document takes from the environment are secrets: a
//! canary in every kind of field that accepts `${...}` (a top-level string, a
//! header map, a header mapping, a deployment map, init kwargs at depth, a
//! value under a credential key, a named custom integration's settings) is
//! sent to the service, yet appears in no plan (text, JSON, markdown), saved
//! plan, apply output, `-vvv` log or error; a changed value is seen (by
//! fingerprint) and shown without its value. Export, which knows no manifest,
//! writes the configuration the service returns and keeps a reference for
//! whatever may be a credential.

use crate::e2e_support;

use e2e_support::{Run, TestContext};

/// The variables and their canary values.
const VARS: &[(&str, &str)] = &[
    ("AZURE_TOKEN", "CANARY-01-1234abcd"),
    ("AZ_HOST", "canary-02-1234abcd"),
    ("HDR_TEAM", "CANARY-03-1234abcd"),
    ("HDR_AUTH", "CANARY-04-1234abcd"),
    ("MAP_USER", "CANARY-05-1234abcd"),
    ("DEP", "CANARY-06-1234abcd"),
    ("CUSTOM_KEY", "CANARY-07-1234abcd"),
    ("KW_KEY", "CANARY-08-1234abcd"),
    ("KW_DEEP", "CANARY-09-1234abcd"),
    ("PROFILE", "CANARY-10-1234abcd"),
    ("AWS_ID", "CANARY-11-1234abcd"),
    ("AWS_SECRET", "CANARY-12-1234abcd"),
    ("NAMED_KW", "CANARY-13-1234abcd"),
    ("NAMED_KEY", "CANARY-14-1234abcd"),
];

/// The new value of `HDR_TEAM` in the second round.
const ROTATED: &str = "CANARY-15-1234abcd";

const REPO: &str = r#"
kind: Integration
provider: azure
token: ${AZURE_TOKEN}
endpoint: https://${AZ_HOST}.openai.example.com
default_headers:
  X-Team: ${HDR_TEAM}
  Authorization: Bearer ${HDR_AUTH}
  X-Plain: plain-header
custom_header_mapping:
  user_id: ${MAP_USER}
deployments:
  gpt-4o: ${DEP}
---
kind: Integration
provider: custom
endpoint: https://llm.internal.example.com/v1
authentication_type: api_key
api_key_value: ${CUSTOM_KEY}
custom_llm_config:
  file_name: handler.py
  class_name: Handler
  init_kwargs:
    api_key: ${KW_KEY}
    retries: 3
    options:
      region: eu-${KW_DEEP}
---
kind: Integration
provider: aws_bedrock
region: eu-west-1
token:
  aws_access_key_id: ${AWS_ID}
  aws_secret_access_key: ${AWS_SECRET}
inference_profiles:
  claude: ${PROFILE}
---
kind: Integration
provider: custom
name: team-llm
endpoint: https://team.example.com/v1
authentication_type: api_key
api_key_value: ${NAMED_KEY}
custom_llm_config:
  file_name: team.py
  class_name: Team
  init_kwargs:
    password: ${NAMED_KW}
"#;

fn canaries() -> Vec<&'static str> {
    VARS.iter()
        .map(|(_, v)| *v)
        .chain([ROTATED, "1234abcd"])
        .collect()
}

#[track_caller]
fn assert_clean(text: &str, what: &str) {
    let lower = text.to_lowercase();
    for canary in canaries() {
        assert!(
            !lower.contains(&canary.to_lowercase()),
            "{what}: `{canary}` leaked:\n{text}"
        );
    }
}

fn context(rotated: bool) -> TestContext {
    let mut ctx = TestContext::new();
    for (name, value) in VARS {
        let value = if rotated && *name == "HDR_TEAM" {
            ROTATED
        } else {
            value
        };
        ctx = ctx.env(name, value);
    }
    ctx
}

/// Every stored field of the caller's integration `name`, as JSON text.
fn stored(ctx: &TestContext, name: &str) -> String {
    ctx.sandbox.read_state(|s| {
        s.integrations
            .iter()
            .find(|i| i.name == name)
            .map(|i| serde_json::Value::Object(i.fields.clone()).to_string())
            .unwrap_or_default()
    })
}

fn run(ctx: &TestContext, env: &[(&str, &str)], args: &[&str], status: i32) -> Run {
    let run = ctx.evalctl_with(env, args);
    run.expect(status);
    assert_clean(&run.all_output(), &args.join(" "));
    run
}

#[test]
fn values_from_the_environment_are_sent_but_never_shown() {
    let ctx = context(false);
    ctx.write("repo/integrations.yaml", REPO);

    run(&ctx, &[], &["-vvv", "validate", "repo"], 0);
    let plan = run(
        &ctx,
        &[],
        &["-vvv", "plan", "--detailed-exitcode", "repo"],
        2,
    );
    // The references are shown where the values would be.
    for shown in [
        "${HDR_TEAM}",
        "Bearer ${HDR_AUTH}",
        "${MAP_USER}",
        "${DEP}",
        "eu-${KW_DEEP}",
        "https://${AZ_HOST}.openai.example.com",
        "plain-header",
    ] {
        assert!(plan.stdout.contains(shown), "{shown}:\n{}", plan.stdout);
    }
    assert!(
        plan.stderr.contains("TRACE") || plan.stderr.contains("DEBUG"),
        "the log is on"
    );
    let json = run(
        &ctx,
        &[],
        &["-vvv", "plan", "--detailed-exitcode", "repo", "-o", "json"],
        2,
    );
    assert!(json.stdout.contains("${KW_KEY}"), "{}", json.stdout);
    run(
        &ctx,
        &[],
        &[
            "-vvv",
            "plan",
            "--detailed-exitcode",
            "repo",
            "-o",
            "markdown",
        ],
        2,
    );
    run(
        &ctx,
        &[],
        &[
            "-vvv",
            "plan",
            "--detailed-exitcode",
            "repo",
            "--out",
            "plan.json",
            "-o",
            "json",
        ],
        2,
    );
    let saved = std::fs::read_to_string(ctx.path("plan.json")).unwrap();
    assert_clean(&saved, "the saved plan");
    assert!(saved.contains("Bearer ${HDR_AUTH}"), "{saved}");

    // apply sends the real values.
    run(
        &ctx,
        &[],
        &["-vvv", "apply", "--plan", "plan.json", "--auto-approve"],
        0,
    );
    let azure = stored(&ctx, "azure");
    for value in [
        "\"X-Team\":\"CANARY-03-1234abcd\"",
        "\"Authorization\":\"Bearer CANARY-04-1234abcd\"",
        "\"user_id\":\"CANARY-05-1234abcd\"",
        "\"gpt-4o\":\"CANARY-06-1234abcd\"",
        "https://canary-02-1234abcd.openai.example.com",
    ] {
        assert!(azure.contains(value), "{value} in {azure}");
    }
    let custom = stored(&ctx, "custom");
    assert!(
        custom.contains("\"api_key\":\"CANARY-08-1234abcd\""),
        "{custom}"
    );
    assert!(
        custom.contains("\"region\":\"eu-CANARY-09-1234abcd\""),
        "{custom}"
    );
    assert!(stored(&ctx, "aws_bedrock").contains("\"claude\":\"CANARY-10-1234abcd\""));
    assert!(stored(&ctx, "team-llm").contains("\"password\":\"CANARY-13-1234abcd\""));

    // Converged: the values compare equal by fingerprint.
    run(
        &ctx,
        &[],
        &["-vvv", "plan", "--detailed-exitcode", "repo"],
        0,
    );
    run(&ctx, &[], &["-vvv", "drift", "repo", "-o", "json"], 0);

    // A new value of one variable is a change, shown without either value.
    let rotated = [("HDR_TEAM", ROTATED)];
    let changed = run(
        &ctx,
        &rotated,
        &["-vvv", "plan", "--detailed-exitcode", "repo"],
        2,
    );
    assert!(
        changed.stdout.contains("default_headers.X-Team")
            && changed.stdout.contains("[redacted]")
            && changed.stdout.contains("${HDR_TEAM}"),
        "{}",
        changed.stdout
    );
    assert!(
        changed.stdout.contains(
            "default_headers.X-Team takes its value from the environment and differs from live (compared by fingerprint"
        ),
        "{}",
        changed.stdout
    );
    assert!(
        !changed.stdout.contains("Authorization") && !changed.stdout.contains("deployments"),
        "only the changed value is shown:\n{}",
        changed.stdout
    );
    run(
        &ctx,
        &rotated,
        &["-vvv", "plan", "--detailed-exitcode", "repo", "-o", "json"],
        2,
    );
    run(
        &ctx,
        &rotated,
        &[
            "-vvv",
            "plan",
            "--detailed-exitcode",
            "repo",
            "-o",
            "markdown",
        ],
        2,
    );
    run(&ctx, &rotated, &["-vvv", "drift", "repo"], 2);
    run(
        &ctx,
        &rotated,
        &["-vvv", "apply", "repo", "--auto-approve"],
        0,
    );
    assert!(stored(&ctx, "azure").contains(ROTATED));
    run(
        &ctx,
        &rotated,
        &["-vvv", "plan", "--detailed-exitcode", "repo"],
        0,
    );

    // Export knows no manifest: it writes what the service returns for
    // fields that are configuration as read (issue 22: the first apply after
    // an export needs only the token variables), and a reference for every
    // value that may be a credential: under a credential key, and in header
    // maps and init kwargs under a key that reads like one.
    run(
        &ctx,
        &[],
        &["-vvv", "export", "--dir", "exported", "--verify"],
        0,
    );
    let exported = std::fs::read_to_string(ctx.path("exported/integrations.yaml")).unwrap();
    let credentials = [
        "AZURE_TOKEN",
        "HDR_AUTH",
        "CUSTOM_KEY",
        "KW_KEY",
        "AWS_ID",
        "AWS_SECRET",
        "NAMED_KW",
        "NAMED_KEY",
    ];
    for (name, canary) in VARS.iter().filter(|(n, _)| credentials.contains(n)) {
        assert!(
            !exported.to_lowercase().contains(&canary.to_lowercase()),
            "the export: {name}'s `{canary}` leaked:\n{exported}"
        );
    }
    for reference in [
        "${AZURE_DEFAULT_HEADERS_AUTHORIZATION}",
        "${CUSTOM_INIT_KWARGS_API_KEY}",
        "X-Plain: plain-header",
        "retries: 3",
    ] {
        assert!(exported.contains(reference), "{reference}:\n{exported}");
    }
}

#[test]
fn errors_about_values_from_the_environment_never_show_them() {
    let ctx = context(false);
    // A literal under a credential key is refused, and not quoted.
    ctx.write(
        "literal/integrations.yaml",
        "kind: Integration\nprovider: azure\ntoken: ${AZURE_TOKEN}\nendpoint: https://a.example.com\ndefault_headers:\n  Authorization: Bearer CANARY-16-1234abcd\n",
    );
    let refused = run(&ctx, &[], &["-vvv", "validate", "literal"], 65);
    assert!(
        refused
            .stderr
            .contains("credential must come from the environment")
            && refused
                .stderr
                .contains("AZURE_DEFAULT_HEADERS_AUTHORIZATION"),
        "{}",
        refused.stderr
    );
    assert!(!refused.all_output().contains("CANARY-16"));
    run(&ctx, &[], &["-vvv", "plan", "literal", "-o", "json"], 65);

    // A value the schema refuses is reported without the value.
    ctx.write(
        "invalid/integrations.yaml",
        "kind: Integration\nprovider: nvidia\ntoken: ${AZURE_TOKEN}\nhostname: ${HDR_TEAM}\n",
    );
    let long = "x".repeat(3000);
    let refused = run(
        &ctx,
        &[("HDR_TEAM", &format!("CANARY-03-1234abcd{long}"))],
        &["-vvv", "plan", "invalid"],
        65,
    );
    assert!(
        refused.stderr.contains("not shown: it is a secret"),
        "{}",
        refused.stderr
    );

    // A variable missing at apply is named, never valued.
    ctx.write(
        "missing/integrations.yaml",
        "kind: Integration\nprovider: azure\ntoken: ${AZURE_TOKEN}\nendpoint: https://a.example.com\ndefault_headers:\n  X-Unset: ${NOT_SET_ANYWHERE}\n",
    );
    let plan = run(
        &ctx,
        &[],
        &["-vvv", "plan", "--detailed-exitcode", "missing"],
        2,
    );
    assert!(plan.stderr.contains("NOT_SET_ANYWHERE"), "{}", plan.stderr);
    assert!(
        plan.stdout.contains("${NOT_SET_ANYWHERE}"),
        "{}",
        plan.stdout
    );
    let refused = run(
        &ctx,
        &[],
        &["-vvv", "apply", "missing", "--auto-approve"],
        1,
    );
    assert!(
        refused.stderr.contains("NOT_SET_ANYWHERE"),
        "{}",
        refused.stderr
    );
    assert!(
        ctx.sandbox
            .read_state(|s| s.integrations.iter().all(|i| i.name != "azure")),
        "nothing was sent"
    );
}
