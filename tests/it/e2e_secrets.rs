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
