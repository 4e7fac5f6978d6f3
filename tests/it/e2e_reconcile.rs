//! End to end: the real binary against an in-process sandbox. The defining
//! invariant (after apply, plan is empty), drift, saved plans, and recovery
//! from partial failure.

use crate::e2e_support;

use e2e_support::{TestContext, repo_root};
use evalctl::api::{Section, SectionUpdateRequest};
use evalctl::sandbox::Faults;

const OPENAI_TOKEN: &str = "sk-test-e2e-0123456789abcdef";

fn context() -> TestContext {
    TestContext::new()
        .env("OPENAI_API_KEY", OPENAI_TOKEN)
        .env("ANTHROPIC_API_KEY", "sk-ant-e2e-secret")
        .env("MISTRAL_API_KEY", "mistral-e2e-secret")
}

fn example_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(repo_root().join("examples"))
        .expect("examples/ exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir() && e.file_name() != "ci" && holds_manifests(&e.path()))
        .map(|e| format!("examples/{}", e.file_name().to_string_lossy()))
        .collect();
    dirs.sort();
    dirs
}

/// Whether a directory of examples/ is a config repo (the others hold code).
fn holds_manifests(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "yaml" || x == "yml")
        })
    })
}

#[test]
fn every_example_applies_and_then_plans_empty() {
    let examples = example_dirs();
    assert!(
        examples.iter().any(|e| e.ends_with("quickstart")),
        "{examples:?}"
    );
    for example in examples {
        let ctx = context();
        let repo = ctx.copy_dir(&example, "repo");
        let repo = repo.to_str().unwrap();
        ctx.evalctl(&["plan", repo, "--detailed-exitcode"])
            .expect(2);
        ctx.evalctl(&["apply", repo, "--auto-approve"]).expect(0);
        let after = ctx.evalctl(&["plan", repo, "--detailed-exitcode"]);
        after.expect(0);
        assert!(
            after.stdout.contains("No changes"),
            "{example}: {}",
            after.stdout
        );
    }
}

const DRIFT_REPO: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
    trends:
      sections:
        - name: Quality
          description: Quality charts
          color: "#2ca02c"
"##;

#[test]
fn an_out_of_band_change_is_drift_naming_the_field() {
    let ctx = context();
    ctx.write("repo/project.yaml", DRIFT_REPO);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["drift", "repo"]).expect(0);

    // Someone recolours the section in the UI.
    let recolour = SectionUpdateRequest {
        color: Some("#ff0000".into()),
        ..Default::default()
    };
    edit_section(&ctx, "production", "Quality", &recolour);

    let drift = ctx.evalctl(&["drift", "repo"]);
    drift.expect(2);
    assert!(
        drift.stdout.contains("trends.section[Quality]"),
        "{}",
        drift.stdout
    );
    assert!(drift.stdout.contains("color"), "{}", drift.stdout);
    assert!(
        drift.stdout.contains("#ff0000") && drift.stdout.contains("#2ca02c"),
        "{}",
        drift.stdout
    );
    let json = ctx.evalctl(&["drift", "repo", "-o", "json"]);
    json.expect(2);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(doc["changes"].as_array().unwrap().len(), 1);
}

#[test]
fn a_saved_plan_is_refused_after_a_concurrent_change() {
    let ctx = context();
    ctx.write("repo/project.yaml", DRIFT_REPO);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let saved = std::fs::read_to_string(ctx.path("plan.json")).unwrap();
    assert!(saved.contains("\"format_version\": 2"));

    // Between plan and apply, someone changes the object the plan touches.
    let edit = SectionUpdateRequest {
        description: Some("edited in the UI".into()),
        ..Default::default()
    };
    edit_section(&ctx, "production", "Quality", &edit);

    let refused = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    refused.expect(1);
    assert!(
        refused.stderr.contains("refusing to apply"),
        "{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("project[demo-project].log_stream[production].trends.section[Quality]"),
        "{}",
        refused.stderr
    );
    // Nothing was written: the scorer change of the same plan was not applied either.
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(2);

    // A fresh plan applies.
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"])
        .expect(0);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

/// The writes (method and path) an `-v` run logged.
fn writes(run: &e2e_support::Run) -> Vec<String> {
    run.stderr
        .lines()
        .filter(|l| {
            ["method=PUT ", "method=PATCH ", "method=DELETE "]
                .iter()
                .any(|m| l.contains(m))
                // POST is a write, but for the catalog's listing.
                || (l.contains("method=POST ") && !l.contains("/scorers/list"))
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_saved_plan_applied_again_sends_nothing_and_says_so() {
    let ctx = context();
    ctx.write("repo/project.yaml", DRIFT_REPO);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let first = ctx.evalctl(&["-v", "apply", "--plan", "plan.json", "--auto-approve"]);
    first.expect(0);
    assert!(!writes(&first).is_empty(), "{}", first.stderr);
    // The same plan again (a re-run CI job): live already holds its targets.
    let again = ctx.evalctl(&["-v", "apply", "--plan", "plan.json", "--auto-approve"]);
    again.expect(0);
    assert_eq!(writes(&again), Vec::<String>::new(), "{}", again.stderr);
    assert!(
        again.stderr.contains(
            "plan.json was already applied: live holds what its 2 change(s) set, so nothing is sent"
        ),
        "{}",
        again.stderr
    );
    assert!(!again.stdout.contains("updated"), "{}", again.stdout);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // Part of a plan applied by another route: the rest is sent, alone.
    ctx.write(
        "repo/project.yaml",
        &DRIFT_REPO
            .replace("num_judges: 3", "num_judges: 5")
            .replace("Quality charts", "Quality, again"),
    );
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    ctx.evalctl(&[
        "apply",
        "repo",
        "--auto-approve",
        "--target",
        "project[demo-project].log_stream[production].trends.section[Quality]",
    ])
    .expect(0);
    let rest = ctx.evalctl(&["-v", "apply", "--plan", "plan.json", "--auto-approve"]);
    rest.expect(0);
    assert!(
        rest.stderr.contains(
            "1 of the 2 changes of plan.json were already applied (live holds what they set): they are not sent again"
        ),
        "{}",
        rest.stderr
    );
    let sent = writes(&rest);
    assert!(
        !sent.is_empty()
            && sent
                .iter()
                .all(|w| w.contains("metric-settings") || w.contains("metric_settings")),
        "{sent:#?}"
    );
    assert!(!rest.stdout.contains("section[Quality]"), "{}", rest.stdout);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

const MANY_SECTIONS: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: staging
    trends:
      sections:
        - {name: S1, color: "#000001"}
        - {name: S2, color: "#000002"}
        - {name: S3, color: "#000003"}
        - {name: S4, color: "#000004"}
        - {name: S5, color: "#000005"}
        - {name: S6, color: "#000006"}
        - {name: S7, color: "#000007"}
        - {name: S8, color: "#000008"}
"##;

#[test]
fn a_partial_failure_then_a_second_apply_converges_without_duplicates() {
    let ctx = context();
    ctx.write("repo/project.yaml", MANY_SECTIONS);
    // Section creates are processed, then half of them answer 502 or lose
    // the connection: the outcome of those creates is unknown to evalctl.
    ctx.faults(Faults {
        fail_after_rate: 0.3,
        drop_after_rate: 0.2,
        fail_rate: 0.2,
        seed: 7,
        path_contains: Some("/trends/sections".into()),
        ..Faults::default()
    });
    let first = ctx.evalctl(&["apply", "repo", "--auto-approve"]);
    eprintln!("FIRST APPLY:\n{}", first.all_output());
    assert!(
        first.status == 0 || first.status == 3,
        "{}",
        first.all_output()
    );
    ctx.faults(Faults::none());
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    let names: Vec<String> = sections(&ctx, "staging")
        .into_iter()
        .map(|s| s.name)
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        names.len(),
        "no section was created twice: {names:?}"
    );
    assert_eq!(sorted, ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"]);
}

#[test]
fn a_refused_write_skips_the_changes_not_yet_started() {
    let ctx = context();
    ctx.write("repo/project.yaml", MANY_SECTIONS);
    // The viewer may read (the plan works) but not write: the first write
    // gets a 403, and the rest are not sent.
    let viewer = [("EVALCTL_API_KEY", evalctl::sandbox::fixture::VIEWER_API_KEY)];
    let planned = ctx.evalctl_with(&viewer, &["plan", "repo", "-o", "json"]);
    planned.expect(0);
    let plan: serde_json::Value = serde_json::from_str(&planned.stdout).expect("a JSON plan");
    let changes = plan["changes"].as_array().expect("changes").len();
    assert!(changes >= 8, "{}", planned.stdout);

    let run = ctx.evalctl_with(
        &viewer,
        &["apply", "repo", "--auto-approve", "--concurrency", "1"],
    );
    run.expect(3);
    let summary = format!("Apply: 0 succeeded, 1 failed, {} skipped.", changes - 1);
    assert!(run.stdout.contains(&summary), "{}", run.all_output());
    assert!(
        run.all_output().contains("not attempted"),
        "{}",
        run.all_output()
    );
    let made: Vec<String> = sections(&ctx, "staging")
        .into_iter()
        .map(|s| s.name)
        .filter(|n| n.len() == 2 && n.starts_with('S'))
        .collect();
    assert!(made.is_empty(), "nothing was written: {made:?}");

    // With credentials that may write, the next apply makes every change.
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn apply_without_a_terminal_requires_auto_approve() {
    let ctx = context();
    ctx.write("repo/project.yaml", DRIFT_REPO);
    let run = ctx.evalctl(&["apply", "repo"]);
    run.expect(64);
    assert!(run.stderr.contains("--auto-approve"), "{}", run.stderr);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(2);
}

#[test]
fn apply_against_an_in_process_sandbox_replans_without_loading_the_manifests_again() {
    let ctx = context();
    ctx.write("repo/project.yaml", DRIFT_REPO);
    // An unset variable of a non-secret field is a load warning (counted:
    // printed once, so the manifests were loaded once); --target leaves the
    // integration out, so apply does not need it, nor the unset token (not
    // mentioned: apply names a token only when its plan sends it).
    ctx.write(
        "repo/integrations.yaml",
        "kind: Integration\nprovider: openai\ntoken: ${EVALCTL_E2E_UNSET_TOKEN}\norganization_id: ${EVALCTL_E2E_UNSET_ORG}\n",
    );
    let run = ctx.evalctl(&[
        "apply",
        "repo",
        "--sandbox",
        "--auto-approve",
        "--target",
        "project[demo-project]",
    ]);
    run.expect(0);
    assert_eq!(
        run.stderr
            .matches("environment variable `EVALCTL_E2E_UNSET_ORG` is not set")
            .count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("EVALCTL_E2E_UNSET_TOKEN"),
        "{}",
        run.stderr
    );
    let after = run
        .stdout
        .split_once("Plan after apply, against the same sandbox:")
        .map(|(_, after)| after);
    assert!(
        after.is_some_and(|after| after.contains("No changes")),
        "{}",
        run.stdout
    );
}

#[test]
fn missing_objects_name_the_nearest_existing_ones() {
    // A project or log stream declared by a name that does not exist is
    // created (docs/projects.md); one declared by an id that does not exist
    // is a manifest problem, named with the nearest existing names.
    let ctx = context();
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - id: 00000000-0000-4000-8000-000000000000\n    trends: {favorite: user}\n",
    );
    let run = ctx.evalctl(&["plan", "repo"]);
    run.expect(65);
    assert!(
        run.stderr.contains(
            "error: log stream `id:00000000-0000-4000-8000-000000000000` not found in project `demo-project`\n --> repo/project.yaml:4:9\n"
        ),
        "{}",
        run.stderr
    );
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nid: 00000000-0000-4000-8000-000000000000\n",
    );
    let run = ctx.evalctl(&["plan", "repo"]);
    run.expect(65);
    assert!(
        run.stderr.contains(
            "error: project `id:00000000-0000-4000-8000-000000000000` not found\n --> repo/project.yaml:2:5\n"
        ),
        "{}",
        run.stderr
    );
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-projet\nlog_streams:\n  - name: prodution\n",
    );
    let run = ctx.evalctl(&["plan", "repo"]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    assert!(
        run.stdout.contains("+ project[demo-projet]")
            && run
                .stdout
                .contains("+ project[demo-projet].log_stream[prodution]"),
        "{}",
        run.stdout
    );
}

#[test]
fn usage_errors_exit_64_not_2() {
    let ctx = context();
    ctx.evalctl(&["plan", "--no-such-flag"]).expect(64);
    ctx.evalctl(&["--version"]).expect(0);
}

/// The sections of the default dashboard of a log stream of `demo-project`.
fn sections(ctx: &TestContext, log_stream: &str) -> Vec<Section> {
    ctx.demo_dashboard(log_stream).dashboard.sections
}

/// Edits a section out of band, as someone using the service's UI would.
fn edit_section(ctx: &TestContext, log_stream: &str, name: &str, body: &SectionUpdateRequest) {
    let read = ctx.demo_dashboard(log_stream);
    let section = read
        .dashboard
        .sections
        .iter()
        .find(|s| s.name == name)
        .expect("the section");
    let client = ctx.client();
    ctx.block_on(async {
        client
            .update_section(
                &read.project_id,
                &read.log_stream_id,
                &section.id,
                None,
                body,
            )
            .await
            .expect("the edit is accepted");
    });
}

/// A result that cannot be written is a failure that says so, not a
/// truncated file behind exit 0 (a full disk under `plan > plan.txt`); a
/// reader that went away (`| head`) is not.
#[cfg(target_os = "linux")]
#[test]
fn a_plan_that_cannot_be_written_fails_and_a_closed_pipe_does_not() {
    let ctx = context();
    ctx.write(
        "repo/demo.yaml",
        &std::fs::read_to_string(repo_root().join("examples/quickstart/demo-project.yaml"))
            .expect("the quickstart"),
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = ctx
        .evalctl_command(&[], &["plan", "repo"])
        .stdout(full)
        .output()
        .expect("run evalctl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write the output: No space left on device"),
        "{stderr}"
    );

    let mut child = ctx
        .evalctl_command(&[], &["plan", "repo"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run evalctl");
    // The reader goes away before reading a byte.
    drop(child.stdout.take());
    assert_eq!(child.wait().expect("evalctl ends").code(), Some(0));
}
