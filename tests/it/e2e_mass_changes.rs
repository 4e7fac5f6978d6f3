//! End to end: the mass-change guard. A manifest directory emptied by
//! mistake (here: a log stream's `sections: []`, and the templates gone)
//! applied with `--prune` would delete every section of the dashboard; apply
//! refuses it before any write unless given `--allow-mass-changes`, naming
//! each collection with its counts, and `plan` warns in every format.

use crate::e2e_support::TestContext;

/// demo-project's production log stream with `sections` as YAML flow text.
fn production(sections: &str) -> String {
    format!(
        "kind: Project\napi_version: evalctl/v1\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections: {sections}\n"
    )
}

/// Ten sections, one per name.
fn ten_sections() -> String {
    let items: Vec<String> = (1..=10)
        .map(|i| format!("{{name: Section {i:02}}}"))
        .collect();
    format!("[{}]", items.join(", "))
}

/// A sandbox whose production dashboard holds exactly the ten sections
/// (the fixture's are pruned first).
fn context() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("setup/project.yaml", &production(&ten_sections()));
    ctx.evalctl(&[
        "apply",
        "setup",
        "--prune",
        "--auto-approve",
        "--allow-mass-changes",
    ])
    .expect(0);
    ctx.evalctl(&["plan", "setup", "--prune", "--detailed-exitcode"])
        .expect(0);
    ctx
}

fn sections_left(ctx: &TestContext) -> usize {
    ctx.demo_dashboard("production").dashboard.sections.len()
}

#[test]
fn apply_refuses_a_plan_that_empties_a_collection_and_writes_nothing() {
    let ctx = context();
    assert_eq!(sections_left(&ctx), 10);
    ctx.write("emptied/project.yaml", &production("[]"));

    let refused = ctx.evalctl(&["apply", "emptied", "--prune", "--auto-approve"]);
    refused.expect(1);
    let err = &refused.stderr;
    assert!(
        err.contains(
            "nothing was applied: the plan deletes or replaces a large share of 1 collection"
        ),
        "{}",
        refused.all_output()
    );
    assert!(
        err.contains(
            "project[demo-project].log_stream[production].trends: 10 deleted of its 10 sections (100%)"
        ),
        "{err}"
    );
    assert!(err.contains("--allow-mass-changes"), "{err}");
    assert_eq!(sections_left(&ctx), 10, "nothing may be deleted");

    // The same plan, saved and applied, is refused too.
    let saved = ctx.path("plan.json");
    let saved = saved.to_str().expect("a UTF-8 path");
    ctx.evalctl(&["plan", "emptied", "--prune", "--out", saved])
        .expect(0);
    ctx.evalctl(&["apply", "--plan", saved, "--auto-approve"])
        .expect(1);
    assert_eq!(sections_left(&ctx), 10, "nothing may be deleted");

    // Asked for, it is applied.
    ctx.evalctl(&[
        "apply",
        "emptied",
        "--prune",
        "--auto-approve",
        "--allow-mass-changes",
    ])
    .expect(0);
    assert_eq!(sections_left(&ctx), 0);
}

#[test]
fn plan_warns_in_every_format_and_a_small_share_passes() {
    let ctx = context();
    ctx.write("emptied/project.yaml", &production("[]"));

    let text = ctx.evalctl(&["plan", "emptied", "--prune"]);
    text.expect(0);
    assert!(
        text.stdout.contains(
            "Warning: this plan deletes or replaces a large share of 1 collection; apply refuses it unless given --allow-mass-changes:\n  - project[demo-project].log_stream[production].trends: 10 deleted of its 10 sections (100%)"
        ),
        "{}",
        text.stdout
    );

    let markdown = ctx.evalctl(&["plan", "emptied", "--prune", "-o", "markdown"]);
    markdown.expect(0);
    assert!(
        markdown.stdout.contains(
            "**⚠️ Mass change: this plan deletes or replaces a large share of 1 collection"
        ),
        "{}",
        markdown.stdout
    );
    assert!(
        markdown.stderr.contains("warning: this plan deletes"),
        "{}",
        markdown.stderr
    );

    let json = ctx.evalctl(&["plan", "emptied", "--prune", "-o", "json"]);
    json.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("a JSON plan");
    assert_eq!(
        doc["mass_changes"],
        serde_json::json!([{
            "container": "project[demo-project].log_stream[production].trends",
            "objects": "sections",
            "live": 10,
            "deleted": 10,
            "replaced": 0
        }]),
        "{doc:#}"
    );

    // Two of ten (20%) is within the default share: no warning, applied.
    let eight: Vec<String> = (1..=8)
        .map(|i| format!("{{name: Section {i:02}}}"))
        .collect();
    ctx.write(
        "two-fewer/project.yaml",
        &production(&format!("[{}]", eight.join(", "))),
    );
    let small = ctx.evalctl(&["plan", "two-fewer", "--prune", "-o", "json"]);
    small.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&small.stdout).expect("a JSON plan");
    assert!(doc.get("mass_changes").is_none(), "{doc:#}");
    assert_eq!(doc["summary"]["delete"], 2, "{doc:#}");
    ctx.evalctl(&["apply", "two-fewer", "--prune", "--auto-approve"])
        .expect(0);
    assert_eq!(sections_left(&ctx), 8);
}
