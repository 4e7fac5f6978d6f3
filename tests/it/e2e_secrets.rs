//! Secrets appear in no output, log, plan file or error message, at any
//! verbosity: every command runs at -vvv with known secrets, and every byte
//! it printed or wrote is searched for them.

use crate::e2e_support;

use e2e_support::{Run, TestContext};

const INTEGRATION_TOKEN: &str = "sk-live-SECRET-integration-7d1f9a";
const ANTHROPIC_TOKEN: &str = "sk-ant-SECRET-anthropic-55aa";

const REPO: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 5
    trends:
      sections:
        - name: Secrets test
          color: "#123456"
---
kind: Integration
provider: openai
organization_id: org-demo
token: ${OPENAI_API_KEY}
---
kind: Integration
provider: anthropic
token: ${ANTHROPIC_API_KEY}
rotate_secrets: true
"##;

fn assert_clean(run: &Run, secrets: &[&str], what: &str) {
    let all = run.all_output();
    for secret in secrets {
        assert!(
            !all.contains(secret),
            "{what}: a secret leaked into the output:\n{all}"
        );
    }
}

fn assert_file_clean(path: &std::path::Path, secrets: &[&str]) {
    let text = std::fs::read_to_string(path).expect("read the file");
    for secret in secrets {
        assert!(!text.contains(secret), "{} holds a secret", path.display());
    }
}

#[test]
fn no_command_prints_or_writes_a_secret_at_any_verbosity() {
    let ctx = TestContext::new()
        .env("OPENAI_API_KEY", INTEGRATION_TOKEN)
        .env("ANTHROPIC_API_KEY", ANTHROPIC_TOKEN);
    ctx.write("repo/config.yaml", REPO);
    let secrets = [
        INTEGRATION_TOKEN,
        ANTHROPIC_TOKEN,
        e2e_support::DEMO_API_KEY,
    ];

    let runs = [
        ("validate", ctx.evalctl(&["-vvv", "validate", "repo"])),
        (
            "validate json",
            ctx.evalctl(&["-vvv", "validate", "repo", "-o", "json"]),
        ),
        (
            "plan",
            ctx.evalctl(&["-vvv", "plan", "repo", "--out", "plan.json"]),
        ),
        (
            "plan json",
            ctx.evalctl(&["-vvv", "plan", "repo", "-o", "json"]),
        ),
        (
            "plan markdown",
            ctx.evalctl(&["-vvv", "plan", "repo", "-o", "markdown", "--rotate-secrets"]),
        ),
        (
            "apply saved",
            ctx.evalctl(&["-vvv", "apply", "--plan", "plan.json", "--auto-approve"]),
        ),
        (
            "apply",
            ctx.evalctl(&[
                "-vvv",
                "apply",
                "repo",
                "--auto-approve",
                "--rotate-secrets",
            ]),
        ),
        (
            "drift",
            ctx.evalctl(&["-vvv", "drift", "repo", "-o", "json"]),
        ),
        ("whoami", ctx.evalctl(&["-vvv", "whoami"])),
    ];
    for (what, run) in &runs {
        assert!(
            run.status == 0 || run.status == 2,
            "{what}: {}",
            run.all_output()
        );
        assert_clean(run, &secrets, what);
    }
    // The debug log really is on (so the check above means something).
    assert!(
        runs[2].1.stderr.contains("DEBUG") || runs[2].1.stderr.contains("TRACE"),
        "{}",
        runs[2].1.stderr
    );
    assert_file_clean(&ctx.path("plan.json"), &secrets);
    let saved = std::fs::read_to_string(ctx.path("plan.json")).unwrap();
    assert!(
        saved.contains("${OPENAI_API_KEY}"),
        "the saved plan keeps the reference"
    );

    // The tokens did reach the service: the integration exists and was re-sent.
    let client = ctx.client();
    let found = ctx.block_on(async { client.get_integration("openai").await.unwrap() });
    assert!(found.is_some());
}

#[test]
fn passwords_and_rejected_keys_never_appear_in_errors() {
    let ctx = TestContext::new();
    ctx.write("repo/config.yaml", "kind: Project\nname: demo-project\n");
    // A wrong API key: the 401 says what to check, not the key.
    let wrong_key = "wrong-key-SECRET-991";
    let run = ctx.evalctl_with(&[("EVALCTL_API_KEY", wrong_key)], &["-vvv", "plan", "repo"]);
    run.expect(1);
    assert_clean(&run, &[wrong_key], "wrong key");
    assert!(
        run.stderr.contains("EVALCTL_API_KEY") || run.stderr.contains("credentials"),
        "{}",
        run.stderr
    );

    // Username and password: Basic where accepted, the password flow elsewhere.
    let password = "demo-password";
    let login = [
        ("EVALCTL_API_KEY", ""),
        ("EVALCTL_USERNAME", "demo@example.com"),
        ("EVALCTL_PASSWORD", password),
    ];
    let run = ctx.evalctl_with(&login, &["-vvv", "whoami"]);
    run.expect(0);
    assert_clean(&run, &[password], "password");
    let wrong_password = "not-the-password-SECRET";
    let login = [
        ("EVALCTL_API_KEY", ""),
        ("EVALCTL_USERNAME", "demo@example.com"),
        ("EVALCTL_PASSWORD", wrong_password),
    ];
    let run = ctx.evalctl_with(&login, &["-vvv", "whoami"]);
    run.expect(1);
    assert_clean(&run, &[wrong_password], "wrong password");
}

/// evalctl's own credentials, as canaries.
const OWN_KEY: &str = "sk-CANARY-own-api-key-0c1d";
const OWN_PASSWORD: &str = "CANARY-own-password-77e2";
const OWN_TOKEN: &str = "CANARY-own-access-token-51ab";

#[test]
fn a_manifest_cannot_read_evalctls_own_credentials() {
    let ctx = TestContext::new()
        .env("EVALCTL_API_KEY", OWN_KEY)
        .env("EVALCTL_USERNAME", "demo@example.com")
        .env("EVALCTL_PASSWORD", OWN_PASSWORD)
        .env("EVALCTL_ACCESS_TOKEN", OWN_TOKEN)
        // Other names for the same values.
        .env("KEY_COPY", OWN_KEY)
        .env("BEARER", &format!("Bearer {OWN_TOKEN}"))
        .env("OPENAI_API_KEY", INTEGRATION_TOKEN);
    // By name: evalctl's credential variables.
    ctx.write("repo/key.yaml", "kind: Project\nname: ${EVALCTL_API_KEY}\n");
    // By value: another variable set to the key, or holding the token.
    ctx.write(
        "repo/copy.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: ls-${KEY_COPY}\n",
    );
    ctx.write(
        "repo/integrations.yaml",
        "kind: Integration\nprovider: openai\ntoken: ${EVALCTL_PASSWORD}\n---\n\
         kind: Integration\nprovider: azure\ntoken: ${OPENAI_API_KEY}\nendpoint: https://x.example.com\n\
         default_headers:\n  Authorization: ${BEARER}\n",
    );
    ctx.write(
        "repo/token.yaml",
        "kind: Project\nname: support-bot\nexperiments:\n  - name: \"${EVALCTL_ACCESS_TOKEN}\"\n",
    );
    let basic = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(format!("demo@example.com:{OWN_PASSWORD}"))
    };
    let canaries = [
        OWN_KEY,
        OWN_PASSWORD,
        OWN_TOKEN,
        basic.as_str(),
        INTEGRATION_TOKEN,
    ];
    // Where each reference is written.
    let places = [
        ("repo/key.yaml", 2, 7),
        ("repo/copy.yaml", 4, 14),
        ("repo/integrations.yaml", 3, 8),
        ("repo/integrations.yaml", 10, 18),
        ("repo/token.yaml", 4, 12),
    ];
    let commands: [&[&str]; 9] = [
        &["validate", "repo"],
        &["validate", "repo", "-o", "json"],
        &["validate", "repo", "-o", "github"],
        &["plan", "--sandbox", "repo"],
        &[
            "-vvv",
            "plan",
            "--sandbox",
            "repo",
            "-o",
            "json",
            "--out",
            "plan.json",
        ],
        &[
            "plan",
            "--sandbox",
            "repo",
            "-o",
            "markdown",
            "--github-annotations",
        ],
        &["drift", "--sandbox", "repo", "-o", "markdown"],
        &[
            "-vv",
            "apply",
            "--sandbox",
            "repo",
            "--auto-approve",
            "-o",
            "json",
        ],
        &["plan", "repo"],
    ];
    for args in commands {
        let run = ctx.evalctl(args);
        let what = args.join(" ");
        run.expect(65);
        assert_clean(&run, &canaries, &what);
        let all = run.all_output();
        assert!(all.contains("evalctl's own credential"), "{what}:\n{all}");
        for (file, line, column) in places {
            let at = if args.contains(&"github") {
                format!("file={file},line={line},col={column}::")
            } else if args.contains(&"json") && args[0] == "validate" {
                format!("{file}:{line}:{column}")
            } else {
                format!("--> {file}:{line}:{column}")
            };
            let shown = all.contains(&at)
                || (args.contains(&"json") && all.contains(&format!("\"line\": {line}")));
            assert!(shown, "{what}: no error at {at}:\n{all}");
            if args.contains(&"--github-annotations") {
                let annotation = format!("::error file={file},line={line},col={column}::");
                assert!(all.contains(&annotation), "{what}: no {annotation}:\n{all}");
            }
        }
    }
    assert!(
        !ctx.path("plan.json").exists(),
        "a refused plan is not saved"
    );
    // Nothing was written into the service.
    ctx.sandbox.read_state(|s| {
        let text = serde_json::to_string(s).unwrap_or_default();
        for canary in canaries {
            assert!(!text.contains(canary), "the service holds {canary}");
        }
    });
}

#[test]
fn a_literal_credential_in_a_manifest_is_masked_wherever_it_shows() {
    // Written out, not referred to: the loader cannot refuse what it cannot
    // tell from a name, but no output shows a secret evalctl holds. (A
    // project declared by a name that does not exist is created; one
    // declared by an id that does not exist is an error, quoted here.)
    let ctx = TestContext::new().env("EVALCTL_API_KEY", OWN_KEY);
    ctx.write(
        "repo/key.yaml",
        &format!("kind: Project\nid: {OWN_KEY}\n---\nkind: Project\nname: demo-project\nlog_streams:\n  - name: x-{OWN_KEY}-y\n"),
    );
    for args in [
        &["plan", "--sandbox", "repo"][..],
        &["-vvv", "plan", "--sandbox", "repo", "-o", "json"],
        &["plan", "--sandbox", "repo", "-o", "markdown"],
        &["validate", "repo", "-o", "github"],
    ] {
        let run = ctx.evalctl(args);
        assert_clean(&run, &[OWN_KEY], &args.join(" "));
    }
    let run = ctx.evalctl(&["plan", "--sandbox", "repo"]);
    run.expect(65);
    // The quoted line tells not even the key's length.
    assert!(
        run.stderr.contains("2 | id: ********\n  |     ^^^^^^^^\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn export_writes_no_secret_evalctl_holds_though_the_service_does() {
    // A credential already in the service (a manifest of an older version wrote
    // it into a name): the exported files and the summary mask it.
    let ctx = TestContext::new();
    ctx.sandbox
        .with_state(|s| {
            let ls = s
                .log_streams
                .iter_mut()
                .find(|l| l.name == "production")
                .expect("a production log stream");
            ls.name = format!("prod-{}", e2e_support::DEMO_API_KEY);
        })
        .expect("the state is changed");
    let run = ctx.evalctl(&["-vvv", "export", "--dir", "exported"]);
    run.expect(0);
    assert_clean(&run, &[e2e_support::DEMO_API_KEY], "export");
    let mut masked = 0;
    for entry in std::fs::read_dir(ctx.path("exported")).expect("the export directory") {
        let path = entry.expect("an entry").path();
        assert_file_clean(&path, &[e2e_support::DEMO_API_KEY]);
        let text = std::fs::read_to_string(&path).expect("read the file");
        masked += text.matches("prod-********").count();
    }
    assert_eq!(masked, 1, "the name is written, masked");
}
