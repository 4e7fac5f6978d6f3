//! Projects and log streams as code, through the binary on the sandbox
//! (issue 20, item 3): a declared project or log stream that does not exist
//! is created before anything inside it, in the same apply; a second apply
//! is empty; a create whose answer is lost is settled by reading back by
//! name, never making two.

use crate::e2e_support;

use e2e_support::{TestContext, report};
use evalctl::plan::OutcomeStatus;
use evalctl::sandbox::{Fault, Faults};

const NEW_TEAM: &str = r#"
kind: Project
name: new-team
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
prompt_templates:
  - name: greeting
    template: "Hello {name}"
"#;

/// The ids of the projects named `name`, read out of band.
pub(crate) fn projects_named(ctx: &TestContext, name: &str) -> Vec<String> {
    let client = ctx.client();
    ctx.block_on(async {
        client
            .list_projects(Default::default())
            .await
            .expect("the projects are listed")
            .into_iter()
            .filter(|p| p.name == name)
            .map(|p| p.id)
            .collect()
    })
}

/// The names of the log streams of the project `project_id`.
fn log_streams(ctx: &TestContext, project_id: &str) -> Vec<String> {
    let client = ctx.client();
    ctx.block_on(async {
        client
            .search_log_streams_all(project_id, Default::default())
            .await
            .expect("the log streams are listed")
            .into_iter()
            .map(|l| l.name)
            .collect()
    })
}

fn posts_to(ctx: &TestContext, path: &str) -> usize {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == path)
        .count()
}

#[test]
fn a_new_project_with_a_log_stream_and_its_settings_is_created_in_one_apply() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", NEW_TEAM);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for line in [
        "+ project[new-team]",
        "+ project[new-team].log_stream[production]",
        "project[new-team].log_stream[production].metric_settings",
        "+ project[new-team].prompt_template[greeting]",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    for o in &report(&run).outcomes {
        assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
    }
    let ids = projects_named(&ctx, "new-team");
    assert_eq!(ids.len(), 1, "one project");
    assert_eq!(log_streams(&ctx, &ids[0]), vec!["production".to_owned()]);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_new_log_stream_in_an_existing_project_is_created_with_its_settings() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/project.yaml",
        r#"
kind: Project
name: demo-project
log_streams:
  - name: canary
    metric_settings:
      scorers:
        - name: correctness
"#,
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout
            .contains("+ project[demo-project].log_stream[canary]"),
        "{}",
        plan.stdout
    );
    assert!(
        !plan.stdout.contains("+ project[demo-project]\n"),
        "{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert!(log_streams(&ctx, &ctx.demo_project_id()).contains(&"canary".to_owned()));
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_lost_answer_to_a_create_is_settled_by_reading_back_without_a_duplicate() {
    // Half the POSTs under /v2/projects (the project's create, but also the
    // listings and searches, which are retried) are processed, then their
    // answer is lost (a dropped connection, or a 5xx). Across the seeds,
    // the project's create is hit at least once, and every apply makes one
    // project with one log stream, its create sent once.
    let mut creates_hit = 0;
    for seed in 1..=6 {
        let drop_after = seed % 2 == 1;
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", NEW_TEAM);
        ctx.faults(Faults {
            fail_after_rate: if drop_after { 0.0 } else { 0.5 },
            drop_after_rate: if drop_after { 0.5 } else { 0.0 },
            seed,
            path_contains: Some("/v2/projects".into()),
            method: Some("POST".into()),
            ..Faults::none()
        });
        let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
        ctx.faults(Faults::none());
        let r = report(&run);
        assert_eq!(run.status, 0, "{}", run.all_output());
        let hit = ctx.sandbox.requests().iter().any(|r| {
            r.path == "/v2/projects"
                && matches!(r.fault, Some(Fault::FailAfter(_) | Fault::DropAfter))
        });
        if hit {
            creates_hit += 1;
            let project = r
                .outcomes
                .iter()
                .find(|o| o.address.to_string() == "project[new-team]")
                .expect("the project's outcome");
            assert_eq!(project.status, OutcomeStatus::Succeeded);
            assert!(
                project
                    .detail
                    .as_deref()
                    .unwrap_or_default()
                    .contains("a re-read found the project, so it was created once"),
                "{:?}",
                project.detail
            );
        }
        assert_eq!(posts_to(&ctx, "/v2/projects"), 1, "one create was sent");
        let ids = projects_named(&ctx, "new-team");
        assert_eq!(ids.len(), 1, "one project");
        assert_eq!(log_streams(&ctx, &ids[0]), vec!["production".to_owned()]);
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
    assert!(creates_hit > 0, "the fault never hit a project's create");
}

const MANAGED: &str = r#"
kind: Project
name: demo-project
prune_log_streams: true
log_streams:
  - name: production
"#;

/// Whether the demo project still has its `staging` log stream.
fn has_staging(ctx: &TestContext) -> bool {
    log_streams(ctx, &ctx.demo_project_id()).contains(&"staging".to_owned())
}

#[test]
fn deleting_a_log_stream_destroys_its_traces_so_it_needs_prune_and_allow_destroy() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", MANAGED);

    // --prune alone: the plan says what it would delete and that the flag
    // is needed; apply deletes nothing.
    let plan = ctx.evalctl(&["plan", "repo", "--prune"]);
    assert_eq!(plan.status, 0, "{}", plan.all_output());
    assert!(
        plan.stdout.contains("log stream `staging`")
            && plan.stdout.contains("give --allow-destroy with --prune"),
        "{}",
        plan.stdout
    );
    assert!(
        !plan
            .stdout
            .contains("- project[demo-project].log_stream[staging]")
    );
    ctx.evalctl(&["apply", "repo", "--prune", "--auto-approve"])
        .expect(0);
    assert!(has_staging(&ctx), "deleted without --allow-destroy");
    // --allow-destroy alone prunes nothing.
    let plan = ctx.evalctl(&["plan", "repo", "--allow-destroy", "--detailed-exitcode"]);
    plan.expect(0);

    // Both: the delete, its traces counted in bold.
    let plan = ctx.evalctl(&[
        "plan",
        "repo",
        "--prune",
        "--allow-destroy",
        "--color",
        "always",
    ]);
    assert_eq!(plan.status, 0, "{}", plan.all_output());
    let warning = plan
        .stdout
        .lines()
        .find(|l| l.contains("DESTROYS log stream `staging` and its "))
        .unwrap_or_else(|| panic!("no destroy warning:\n{}", plan.stdout));
    assert!(warning.contains("\u{1b}[1m"), "not bold: {warning:?}");
    assert!(
        warning.contains(" traces, which cannot be recovered"),
        "{warning:?}"
    );
    assert!(
        !warning.contains("not counted"),
        "the count is the run search's num_traces: {warning:?}"
    );

    // A saved plan made without --allow-destroy cannot delete it, even
    // edited to hold the delete.
    saved_destroy_without_its_flag_is_refused(&ctx, "project[demo-project].log_stream[staging]");
    assert!(has_staging(&ctx));
    // Made with the flag, it deletes.
    ctx.evalctl(&["apply", "--plan", "destroy.json", "--auto-approve"])
        .expect(0);
    assert!(
        !has_staging(&ctx),
        "the saved plan made with both flags deletes"
    );
    ctx.evalctl(&[
        "plan",
        "repo",
        "--prune",
        "--allow-destroy",
        "--detailed-exitcode",
    ])
    .expect(0);
}

#[test]
fn apply_with_prune_and_allow_destroy_deletes_an_undeclared_log_stream() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", MANAGED);
    ctx.evalctl(&[
        "apply",
        "repo",
        "--prune",
        "--allow-destroy",
        "--auto-approve",
    ])
    .expect(0);
    assert!(!has_staging(&ctx));
    assert!(log_streams(&ctx, &ctx.demo_project_id()).contains(&"production".to_owned()));
    ctx.evalctl(&[
        "plan",
        "repo",
        "--prune",
        "--allow-destroy",
        "--detailed-exitcode",
    ])
    .expect(0);
}

#[test]
fn renamed_from_renames_a_project_and_a_log_stream_keeping_their_ids() {
    let ctx = TestContext::new();
    let support_id = projects_named(&ctx, "support-bot")
        .pop()
        .expect("the demo's support-bot");
    ctx.write(
        "repo/project.yaml",
        r#"
kind: Project
name: support-assistant
renamed_from: [support-bot]
---
kind: Project
name: demo-project
log_streams:
  - name: pre-production
    renamed_from: [staging]
"#,
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for line in [
        "~ project[support-assistant]",
        "~ project[demo-project].log_stream[pre-production]",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    assert!(
        !plan.stdout.contains("+ project["),
        "a rename creates nothing:\n{}",
        plan.stdout
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    assert_eq!(projects_named(&ctx, "support-assistant"), vec![support_id]);
    assert!(projects_named(&ctx, "support-bot").is_empty());
    let streams = log_streams(&ctx, &ctx.demo_project_id());
    assert!(
        streams.contains(&"pre-production".to_owned()) && !streams.contains(&"staging".to_owned()),
        "{streams:?}"
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_saved_plan_that_creates_a_project_resolves_its_ids_when_applied() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", NEW_TEAM);
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let saved = std::fs::read_to_string(ctx.dir.path().join("plan.json")).unwrap();
    assert!(saved.contains("pending:project:new-team"), "{saved}");
    let run = ctx.evalctl(&[
        "apply",
        "--plan",
        "plan.json",
        "--auto-approve",
        "-o",
        "json",
    ]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    for o in &report(&run).outcomes {
        assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
    }
    let ids = projects_named(&ctx, "new-team");
    assert_eq!(ids.len(), 1);
    assert_eq!(log_streams(&ctx, &ids[0]), vec!["production".to_owned()]);
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

/// Saves a plan made with `--prune --allow-destroy` as `destroy.json`, and
/// checks that the same plan with the record of the flag taken out is
/// refused when applied, naming `address`.
pub(crate) fn saved_destroy_without_its_flag_is_refused(ctx: &TestContext, address: &str) {
    ctx.evalctl(&[
        "plan",
        "repo",
        "--prune",
        "--allow-destroy",
        "--out",
        "destroy.json",
    ])
    .expect(0);
    let saved = std::fs::read_to_string(ctx.dir.path().join("destroy.json"))
        .expect("the saved plan is read");
    assert!(saved.contains("\"allow_destroy\": true"), "{saved}");
    let tampered = saved.replace("\"allow_destroy\": true,", "");
    assert_ne!(tampered, saved);
    ctx.write("tampered.json", &tampered);
    let refused = ctx.evalctl(&["apply", "--plan", "tampered.json", "--auto-approve"]);
    assert_eq!(refused.status, 1, "{}", refused.all_output());
    assert!(
        refused.stderr.contains("was not made with --allow-destroy")
            && refused.stderr.contains(address),
        "{}",
        refused.stderr
    );
}
