//! Projects as code, the rest of issue 20 item 3, through the binary on the
//! sandbox: deleting the projects a repo owns without declaring them
//! (`prune_projects:` in `kind: Settings`, only with `--prune` and
//! `--allow-destroy`, never outside that scope); a project's description
//! and labels, managed when written; the dashboards and metric settings of
//! a log stream the same apply creates.

use crate::e2e_support;

use crate::e2e_projects::projects_named;
use e2e_support::{Run, TestContext, report};
use evalctl::plan::OutcomeStatus;

fn all_projects(ctx: &TestContext) -> Vec<String> {
    let client = ctx.client();
    let mut names: Vec<String> = ctx.block_on(async {
        client
            .list_projects(Default::default())
            .await
            .expect("the projects are listed")
            .into_iter()
            .map(|p| p.name)
            .collect()
    });
    names.sort();
    names
}

/// The repo owns `support-*`, and declares demo-project only.
const OWNS_SUPPORT: &str = r#"
kind: Settings
prune_projects: ["support-*"]
---
kind: Project
name: demo-project
"#;

#[test]
fn deleting_a_project_needs_prune_and_allow_destroy_and_says_what_is_lost() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", OWNS_SUPPORT);
    let before = all_projects(&ctx);
    assert!(before.contains(&"support-bot".to_owned()), "{before:?}");

    // Without --prune: not even read.
    ctx.evalctl(&["plan", "repo", "--allow-destroy", "--detailed-exitcode"])
        .expect(0);
    // --prune alone: a note of what would be lost, and the flag needed.
    let plan = ctx.evalctl(&["plan", "repo", "--prune", "--detailed-exitcode"]);
    plan.expect(0);
    assert!(
        plan.stdout
            .contains("project `support-bot` matches prune_projects")
            && plan
                .stdout
                .contains("deleting it would destroy 1 log stream, 1 experiment and ")
            && plan.stdout.contains("give --allow-destroy with --prune"),
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("not counted"), "{}", plan.stdout);
    ctx.evalctl(&["apply", "repo", "--prune", "--auto-approve"])
        .expect(0);
    assert_eq!(
        all_projects(&ctx),
        before,
        "deleted without --allow-destroy"
    );

    // A plan saved without --allow-destroy holds no delete.
    ctx.evalctl(&["plan", "repo", "--prune", "--out", "safe.json"])
        .expect(0);
    let safe = std::fs::read_to_string(ctx.dir.path().join("safe.json")).unwrap();
    assert!(!safe.contains("delete_project"), "{safe}");

    // Both flags: the delete, what it destroys in bold.
    let plan = ctx.evalctl(&[
        "plan",
        "repo",
        "--prune",
        "--allow-destroy",
        "--color",
        "always",
    ]);
    assert_eq!(plan.status, 0, "{}", plan.all_output());
    assert!(
        plan.stdout.contains("project[support-bot]"),
        "{}",
        plan.stdout
    );
    let warning = plan
        .stdout
        .lines()
        .find(|l| l.contains("DESTROYS project `support-bot` with its "))
        .unwrap_or_else(|| panic!("no destroy warning:\n{}", plan.stdout));
    assert!(warning.contains("\u{1b}[1m"), "not bold: {warning:?}");
    assert!(
        warning.contains("with its 1 log stream, 1 experiment and ")
            && warning.contains(" traces, which cannot be recovered"),
        "{warning:?}"
    );

    // A saved plan that deletes it, without the record of the flag, is
    // refused when applied.
    crate::e2e_projects::saved_destroy_without_its_flag_is_refused(&ctx, "project[support-bot]");
    let saved = std::fs::read_to_string(ctx.dir.path().join("destroy.json")).unwrap();
    assert!(saved.contains("delete_project"), "{saved}");
    assert_eq!(all_projects(&ctx), before);
}

#[test]
fn apply_with_prune_and_allow_destroy_deletes_an_owned_undeclared_project_only() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", OWNS_SUPPORT);
    let before = all_projects(&ctx);
    let run = ctx.evalctl(&[
        "apply",
        "repo",
        "--prune",
        "--allow-destroy",
        "--auto-approve",
        "-o",
        "json",
    ]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    let outcomes = report(&run).outcomes;
    assert_eq!(outcomes.len(), 1, "{}", run.all_output());
    assert_eq!(outcomes[0].address.to_string(), "project[support-bot]");
    assert_eq!(outcomes[0].status, OutcomeStatus::Succeeded);
    let after = all_projects(&ctx);
    let expected: Vec<String> = before.into_iter().filter(|n| n != "support-bot").collect();
    assert_eq!(after, expected, "only support-bot is deleted");
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
fn a_project_outside_the_scope_is_never_planned_for_deletion() {
    let ctx = TestContext::new();
    let before = all_projects(&ctx);
    let destroy = ["--prune", "--allow-destroy", "--detailed-exitcode"];
    let plan_of = |dir: &str, extra: &[&str]| {
        let mut args = vec!["plan", dir];
        args.extend_from_slice(&destroy);
        args.extend_from_slice(extra);
        ctx.evalctl(&args)
    };

    // No prune_projects (the quickstart): no project is ever deleted.
    ctx.copy_dir("examples/quickstart", "quickstart");
    let plan = plan_of("quickstart", &[]);
    assert!(
        !plan.stdout.contains("DESTROYS project") && !plan.stdout.contains("prune_projects"),
        "{}",
        plan.stdout
    );

    // A pattern that matches none of the undeclared projects.
    ctx.write(
        "other/project.yaml",
        "kind: Settings\nprune_projects: [\"team-*\"]\n---\nkind: Project\nname: demo-project\n",
    );
    plan_of("other", &[]).expect(0);

    // Declared projects are never deleted, whatever the targets select;
    // nor one declared under an old name (renamed_from).
    ctx.write(
        "both/project.yaml",
        r#"
kind: Settings
prune_projects: ["*-project", "support-*"]
---
kind: Project
name: demo-project
---
kind: Project
name: support-assistant
renamed_from: [support-bot]
"#,
    );
    let plan = plan_of("both", &["--target", "project[demo-project]"]);
    plan.expect(0);
    assert!(!plan.stdout.contains("DESTROYS"), "{}", plan.stdout);
    let plan = plan_of("both", &[]);
    assert!(!plan.stdout.contains("DESTROYS"), "{}", plan.stdout);
    assert!(
        plan.stdout.contains("~ project[support-assistant]"),
        "{}",
        plan.stdout
    );

    // --target narrows the deletes too.
    ctx.write("target/project.yaml", OWNS_SUPPORT);
    let plan = plan_of("target", &["--target", "project[demo-project]"]);
    plan.expect(0);
    assert!(!plan.stdout.contains("DESTROYS"), "{}", plan.stdout);
    let mut args = vec!["apply", "target", "--prune", "--allow-destroy"];
    args.extend(["--auto-approve", "--target", "project[demo-project]"]);
    ctx.evalctl(&args).expect(0);
    assert_eq!(
        all_projects(&ctx),
        before,
        "nothing outside the scope moved"
    );
}

#[test]
fn a_pattern_of_stars_only_is_refused_offline() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/project.yaml",
        "kind: Settings\nprune_projects: [\"*\"]\n---\nkind: Project\nname: demo-project\n",
    );
    let run = ctx.evalctl(&["validate", "repo"]);
    assert_eq!(run.status, 65, "{}", run.all_output());
    assert!(
        run.all_output().contains("project.yaml:2:"),
        "{}",
        run.all_output()
    );
}

/// The description and labels of the project `id`, read out of band.
fn meta(ctx: &TestContext, id: &str) -> (Option<String>, Vec<String>) {
    let client = ctx.client();
    ctx.block_on(async {
        let p = client
            .get_project(id)
            .await
            .expect("read")
            .expect("the project");
        (p.description, p.labels)
    })
}

#[test]
fn a_projects_description_and_labels_are_managed_when_written() {
    let ctx = TestContext::new();
    let id = ctx.demo_project_id();
    // Omitted: not managed.
    ctx.write("repo/project.yaml", "kind: Project\nname: demo-project\n");
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\ndescription: The demo's answers\nlabels: [sample]\n---\nkind: Project\nname: support-bot\n",
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for line in [
        "~ project[demo-project]",
        "description:",
        "\"The demo's answers\"",
        "labels:",
    ] {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    // Selected by --target like any change.
    ctx.evalctl(&[
        "plan",
        "repo",
        "--target",
        "project[support-bot]",
        "--detailed-exitcode",
    ])
    .expect(0);
    ctx.evalctl(&[
        "apply",
        "repo",
        "--target",
        "project[demo-project]",
        "--auto-approve",
    ])
    .expect(0);
    assert_eq!(
        meta(&ctx, &id),
        (
            Some("The demo's answers".to_owned()),
            vec!["sample".to_owned()]
        )
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // One field changed: only it is shown and sent; the other is kept.
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\ndescription: Answers\nlabels: [sample]\n",
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(!plan.stdout.contains("labels:"), "{}", plan.stdout);
    // Applied from a saved plan: checked before, confirmed after.
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let run = ctx.evalctl(&[
        "apply",
        "--plan",
        "plan.json",
        "--auto-approve",
        "-o",
        "json",
    ]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    assert_eq!(
        meta(&ctx, &id),
        (Some("Answers".to_owned()), vec!["sample".to_owned()])
    );

    // Export writes them, and its plan is empty.
    let export = ctx.evalctl(&["export", "--dir", "exported", "--verify"]);
    assert_eq!(export.status, 0, "{}", export.all_output());
    let written = std::fs::read_to_string(ctx.dir.path().join("exported/demo-project.yaml"))
        .unwrap_or_else(|e| panic!("{e}\n{}", export.all_output()));
    assert!(
        written.contains("description: Answers") && written.contains("- sample"),
        "{written}"
    );
    ctx.evalctl(&["plan", "exported", "--detailed-exitcode"])
        .expect(0);

    // Cleared: `""` and `[]`.
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\ndescription: \"\"\nlabels: []\n",
    );
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let (description, labels) = meta(&ctx, &id);
    assert_eq!(description.unwrap_or_default(), "");
    assert!(labels.is_empty());
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn a_new_project_is_created_with_its_description_and_labels() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: new-team\ndescription: A new team\nlabels: [sample]\n",
    );
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    assert!(
        plan.stdout.contains("+ project[new-team]") && plan.stdout.contains("A new team"),
        "{}",
        plan.stdout
    );
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
    assert_eq!(run.status, 0, "{}", run.all_output());
    let ids = projects_named(&ctx, "new-team");
    assert_eq!(ids.len(), 1);
    assert_eq!(
        meta(&ctx, &ids[0]),
        (Some("A new team".to_owned()), vec!["sample".to_owned()])
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
}

#[test]
fn an_unknown_label_is_refused_offline() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\nlabels: [urgent]\n",
    );
    let run = ctx.evalctl(&["validate", "repo"]);
    assert_eq!(run.status, 65, "{}", run.all_output());
    assert!(
        run.all_output().contains("project.yaml:3:"),
        "{}",
        run.all_output()
    );
}

const TRENDS: &str = r#"
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
      segment_filters: []
    trends:
      interval_mins: 60
      widgets:
        - {name: Traces, type: number, metric: num_traces, aggregation: Count}
      sections:
        - name: Quality
          description: Quality charts
          widgets:
            - {name: Correctness, type: bar_chart, metric: correctness, aggregation: Average}
      favorite: project
      dashboards:
        - name: On-call
          visibility: project
          widgets:
            - {name: Errors, type: table, metric: error_count, aggregation: Sum}
"#;

/// Applies `manifest` (a log stream the apply creates, with metric
/// settings and trends), from a saved plan when `saved`, and checks one
/// apply converges.
fn converges_in_one_apply(ctx: &TestContext, manifest: &str, created: &[&str], saved: bool) {
    ctx.write("repo/project.yaml", manifest);
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    plan.expect(2);
    for line in created
        .iter()
        .copied()
        .chain(["metric_settings", "section[Quality]", "widget[Correctness]"])
        .chain(["dashboard[On-call]", "widget[Errors]", "favorite"])
    {
        assert!(plan.stdout.contains(line), "{line}\n{}", plan.stdout);
    }
    let run = if saved {
        ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
            .expect(0);
        ctx.evalctl(&[
            "apply",
            "--plan",
            "plan.json",
            "--auto-approve",
            "-o",
            "json",
        ])
    } else {
        ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"])
    };
    assert_eq!(run.status, 0, "{}", run.all_output());
    for o in &report(&run).outcomes {
        assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
    }
    let second = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    assert_eq!(second.status, 0, "{}", second.all_output());
}

#[test]
fn a_new_log_streams_metric_settings_and_trends_are_applied_with_it() {
    let ctx = TestContext::new();
    let manifest = format!(
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: canary\n{}",
        TRENDS.trim_start_matches('\n')
    );
    converges_in_one_apply(
        &ctx,
        &manifest,
        &["+ project[demo-project].log_stream[canary]"],
        false,
    );
}

#[test]
fn a_new_projects_log_stream_gets_its_metric_settings_and_trends_in_one_apply() {
    let ctx = TestContext::new();
    let manifest = format!(
        "kind: Project\nname: new-team\nlog_streams:\n  - name: production\n{}",
        TRENDS.trim_start_matches('\n')
    );
    converges_in_one_apply(
        &ctx,
        &manifest,
        &[
            "+ project[new-team]",
            "+ project[new-team].log_stream[production]",
        ],
        true,
    );
    let ids = projects_named(&ctx, "new-team");
    assert_eq!(ids.len(), 1);
}

/// The attribution of the one change of a JSON plan, a project's.
fn attribution_of(run: &Run) -> String {
    let doc: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON plan ({e})\n{}", run.all_output()));
    let changes = doc["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{}", run.stdout);
    assert_eq!(
        changes[0]["address"]["project"], "demo-project",
        "{}",
        run.stdout
    );
    changes[0]["attribution"].as_str().unwrap_or("-").to_owned()
}

#[test]
fn a_projects_description_is_attributed_in_a_three_way_plan() {
    let ctx = TestContext::new();
    let doc = |description: &str| {
        format!("kind: Project\nname: demo-project\ndescription: {description}\n")
    };
    ctx.write("base/project.yaml", &doc("Base text"));
    ctx.evalctl(&["apply", "base", "--auto-approve"]).expect(0);
    // Changed by the PR.
    ctx.write("pr/project.yaml", &doc("By the PR"));
    let run = ctx.evalctl(&["plan", "pr", "-o", "json", "--base", "base"]);
    run.expect(0);
    assert_eq!(attribution_of(&run), "proposed");
    // Changed out of band since: the PR, as the base, reverts it.
    ctx.write("ui/project.yaml", &doc("Hot-fixed"));
    ctx.evalctl(&["apply", "ui", "--auto-approve"]).expect(0);
    ctx.write("pr/project.yaml", &doc("Base text"));
    let run = ctx.evalctl(&["plan", "pr", "-o", "json", "--base", "base"]);
    run.expect(0);
    assert_eq!(attribution_of(&run), "drift");
}
