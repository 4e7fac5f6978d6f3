//! End to end: blast radius through the real binary. The scorer versions a
//! metric-settings change touches are worked out as each project is read
//! and planned (its metric settings are released right after), then the
//! other projects using each version are listed beside the change, in a
//! two-way and a three-way plan alike.

use crate::e2e_support::TestContext;

/// support-bot's `default` log stream, with `scorers` as YAML flow text.
fn support_bot(scorers: &str) -> String {
    format!(
        "kind: Project\napi_version: evalctl/v1\nname: support-bot\nlog_streams:\n  - name: default\n    metric_settings:\n      scorers: {scorers}\n"
    )
}

/// A sandbox where support-bot runs `correctness` (demo-project's
/// production log stream runs it in the fixture), and manifests that
/// disable it again in `repo`.
fn context() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("setup/project.yaml", &support_bot("[{name: correctness}]"));
    ctx.evalctl(&["apply", "setup", "--auto-approve"]).expect(0);
    ctx.write("repo/project.yaml", &support_bot("[]"));
    ctx
}

#[test]
fn a_plan_names_the_other_projects_using_a_scorer_version_it_touches() {
    let ctx = context();
    let text = ctx.evalctl(&["plan", "repo"]);
    text.expect(0);
    assert!(
        text.stdout
            .contains("is also used by 1 other project: demo-project"),
        "{}",
        text.all_output()
    );

    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    json.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("a JSON plan");
    let change = &doc["changes"][0];
    assert_eq!(change["address"]["type"], "metric_settings", "{doc:#}");
    let radius = change["blast_radius"].as_array().expect("a blast radius");
    assert_eq!(radius.len(), 1, "{doc:#}");
    assert_eq!(radius[0]["scorer"], "correctness");
    assert_eq!(radius[0]["projects"], serde_json::json!(["demo-project"]));
}

#[test]
fn a_three_way_plan_names_them_too() {
    let ctx = context();
    // The base branch declares correctness: this PR proposes disabling it.
    ctx.write("base/project.yaml", &support_bot("[{name: correctness}]"));
    let run = ctx.evalctl(&["plan", "repo", "--base", "base"]);
    run.expect(0);
    assert!(
        run.stdout
            .contains("is also used by 1 other project: demo-project"),
        "{}",
        run.all_output()
    );
}

#[test]
fn a_change_that_touches_no_version_another_project_uses_has_no_blast_radius() {
    let ctx = context();
    // Enabling a scorer nobody else runs: nothing to list.
    ctx.write(
        "repo/project.yaml",
        &support_bot("[{name: correctness}, {name: completeness}]"),
    );
    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    json.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("a JSON plan");
    assert_eq!(doc["changes"].as_array().map(Vec::len), Some(1), "{doc:#}");
    assert!(
        doc["changes"][0]["blast_radius"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{doc:#}"
    );
}
