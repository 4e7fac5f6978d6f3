//! Quiet CI logs (issue 11 item 10): what would repeat per object is said once. A note
//! the planner makes per project with the same words (feedback templates read with the
//! service's deprecated listing) is one line with a count (and, as nobody can act on it,
//! only in JSON and at -v: issue 22 item 4); `plan` and `drift`, which
//! never read integration tokens, say once that they do not need them instead of a
//! warning per integration; `apply`, which sends them, still shows each unset one it
//! sends at its field.

use std::path::Path;
use std::process::Command;

const MANIFESTS: &str = "kind: Project\nname: demo-project\nfeedback_templates: []\n---\n\
kind: Project\nname: support-bot\nfeedback_templates: []\n---\n\
kind: Integration\nprovider: openai\ntoken: ${OPENAI_API_KEY}\n---\n\
kind: Integration\nprovider: anthropic\ntoken: ${ANTHROPIC_API_KEY}\n";

/// Runs `evalctl <args> --sandbox` in `dir` without the integration tokens set:
/// (status, stdout, stderr).
fn evalctl(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(args)
        .arg("--sandbox")
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("EVALCTL_LOG")
        .output()
        .expect("evalctl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn plan_and_drift_say_once_what_repeats_per_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.yaml"), MANIFESTS).expect("write");
    for command in ["plan", "drift"] {
        let (status, stdout, stderr) = evalctl(dir.path(), &[command, "config.yaml"]);
        assert!(status == 0 || status == 2, "{command}: {status}\n{stderr}");
        let tokens: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("token") || l.contains("_API_KEY"))
            .collect();
        assert_eq!(
            tokens,
            [
                "note: plan and drift do not need integration tokens; apply does (2 not set here: ANTHROPIC_API_KEY, OPENAI_API_KEY)"
            ],
            "{command}:\n{stderr}"
        );
        assert!(!stderr.contains("warning"), "{command}:\n{stderr}");
        // A note nobody can act on is not in the text (nor in a PR
        // comment); it is in JSON, once for both projects, and at -v.
        assert!(
            !stdout.contains("deprecated listing"),
            "{command}:\n{stdout}"
        );
        let (_, json, _) = evalctl(dir.path(), &[command, "config.yaml", "-o", "json"]);
        let deprecated: Vec<&str> = json
            .lines()
            .filter(|l| l.contains("deprecated listing"))
            .collect();
        assert_eq!(deprecated.len(), 1, "{command}:\n{json}");
        assert!(
            deprecated[0].contains(
                "2 projects (`demo-project` and `support-bot`): feedback templates were read with the service's deprecated listing"
            ),
            "{command}: {}",
            deprecated[0]
        );
        assert!(json.contains("\"kind\": \"detail\""), "{command}:\n{json}");
        let (_, _, verbose) = evalctl(dir.path(), &["-v", command, "config.yaml"]);
        assert!(
            verbose.contains(
                "note: 2 projects (`demo-project` and `support-bot`): feedback templates were read"
            ),
            "{command}:\n{verbose}"
        );
        // Quiet means quiet.
        let (_, _, quiet) = evalctl(dir.path(), &["-q", command, "config.yaml"]);
        assert_eq!(quiet, "", "{command} -q");
    }
    // With the tokens set there is nothing to say about them.
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(["plan", "config.yaml", "--sandbox"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("OPENAI_API_KEY", "sk-test-quiet-logs-0123")
        .env("ANTHROPIC_API_KEY", "sk-ant-test-quiet-logs")
        .output()
        .expect("evalctl runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("token"), "{stderr}");
}

#[test]
fn apply_still_shows_each_unset_token_at_its_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.yaml"), MANIFESTS).expect("write");
    let (status, _, stderr) = evalctl(dir.path(), &["apply", "config.yaml", "--auto-approve"]);
    assert_ne!(status, 0, "{stderr}");
    for (name, line) in [("OPENAI_API_KEY", 11), ("ANTHROPIC_API_KEY", 15)] {
        assert!(
            stderr.contains(&format!(
                "warning: environment variable `{name}` is not set; `apply` will need it\n  --> config.yaml:{line}:8"
            )),
            "{name}:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("do not need integration tokens"),
        "{stderr}"
    );
}
