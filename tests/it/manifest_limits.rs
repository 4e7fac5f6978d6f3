//! The service's limits, refused offline (issue 11 item 7): what apply would have the
//! service refuse with a 422 (51 sections on one dashboard, a host name that is not a
//! URI, an id that is not a UUID, a name too long) is refused by `validate` and by `plan`,
//! before any request, at `file:line:column`, exit 65.

use std::path::Path;
use std::process::Command;

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

/// Runs `evalctl` in `dir` with no service configured and no colour.
fn evalctl(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(args)
        .current_dir(dir)
        .env_remove("CLICOLOR_FORCE")
        .env_remove("EVALCTL_BASE_URL")
        .env_remove("EVALCTL_API_KEY")
        .env("NO_COLOR", "1")
        .env("NVIDIA_API_KEY", "nv-test")
        .env("DATABRICKS_TOKEN", "db-test")
        .output()
        .expect("evalctl runs");
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A project whose dashboard has `sections` sections.
fn dashboard(sections: usize) -> String {
    let mut text = String::from(
        "kind: Project\nname: demo\nlog_streams:\n  - name: production\n    trends:\n      sections:\n",
    );
    for i in 0..sections {
        text.push_str(&format!("        - name: Section {i}\n"));
    }
    text
}

#[test]
fn fifty_one_sections_are_refused_by_validate_and_plan() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("fifty.yaml"), dashboard(50)).expect("write");
    let run = evalctl(dir.path(), &["validate", "fifty.yaml"]);
    assert_eq!(run.status, 0, "{}", run.stderr);

    std::fs::write(dir.path().join("many.yaml"), dashboard(51)).expect("write");
    let run = evalctl(dir.path(), &["validate", "many.yaml"]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    insta::assert_snapshot!(run.stderr, @r"
    error: log_streams[0].trends.sections: must have at most 50 items, found 51
     --> many.yaml:7:9
      |
    7 |         - name: Section 0
      |         ^
    ");
    assert_eq!(run.stdout, "1 error in 1 file\n");

    // Plan refuses them the same way, before it needs a service.
    let run = evalctl(dir.path(), &["plan", "many.yaml"]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("sections: must have at most 50 items, found 51\n --> many.yaml:7:9"),
        "{}",
        run.stderr
    );
}

#[test]
fn host_names_ids_and_names_are_checked_as_the_service_checks_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let integrations = "\
kind: Integration
provider: nvidia
token: ${NVIDIA_API_KEY}
hostname: integrate.api.nvidia.com
---
kind: Integration
provider: databricks
token: ${DATABRICKS_TOKEN}
hostname: https://dbc-0000.cloud.databricks.com
";
    let project = format!(
        "\
kind: Project
id: demo-project
log_streams:
  - id: 0f8fad5b-d9cb-469f-a165-70867728950e
    metric_settings:
      scorers:
        - id: correctness
    trends:
      sections:
        - name: {}
          color: '#1F77B4'
",
        "x".repeat(101)
    );
    std::fs::write(dir.path().join("integrations.yaml"), integrations).expect("write");
    std::fs::write(dir.path().join("project.yaml"), project).expect("write");
    let run = evalctl(dir.path(), &["validate", "."]);
    assert_eq!(run.status, 65, "{}", run.stderr);
    insta::assert_snapshot!(run.stderr, @r#"
    error: hostname: is not a valid uri: relative URL without a base
     --> ./integrations.yaml:4:11
      |
    4 | hostname: integrate.api.nvidia.com
      |           ^^^^^^^^^^^^^^^^^^^^^^^^
      |
      = help: write an absolute URL, e.g. `https://integrate.api.example.com/v1`

    error: id: is not a valid uuid: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `m` at 3
     --> ./project.yaml:2:5
      |
    2 | id: demo-project
      |     ^^^^^^^^^^^^
      |
      = help: an id is a UUID, e.g. `0f8fad5b-d9cb-469f-a165-70867728950e`; to name the object instead, write `name`

    error: log_streams[0].metric_settings.scorers[0].id: is not a valid uuid: invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `o` at 2
     --> ./project.yaml:7:15
      |
    7 |         - id: correctness
      |               ^^^^^^^^^^^
      |
      = help: an id is a UUID, e.g. `0f8fad5b-d9cb-469f-a165-70867728950e`; to name the object instead, write `name`

    error: log_streams[0].trends.sections[0].name: must have at most 100 characters
      --> ./project.yaml:10:17
       |
    10 |         - name: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
       |                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    "#);
}
