//! End to end: a plan of more changes than are held in memory
//! (`evalctl::plan::changes::SPILL_AFTER`), which spills them to a
//! temporary file. The real binary plans it in every format, saves it,
//! applies it (from the manifests and from the saved plan) and converges,
//! exactly as a small plan does.

use crate::e2e_support;

use e2e_support::TestContext;
use evalctl::plan::changes::SPILL_AFTER;
use evalctl::sandbox::Fixture;
use serde_json::Value;

/// Projects of the scaled fixture, and log streams in each.
const PROJECTS: usize = 3;
const LOG_STREAMS: usize = 400;

/// A config repo that turns on `completeness` alone on every log stream of
/// the scaled fixture (which runs two other presets there): one change per
/// log stream.
fn repo(ctx: &TestContext) {
    for p in 0..PROJECTS {
        let mut text = format!("kind: Project\nname: bench-project-{p:03}\nlog_streams:\n");
        for l in 0..LOG_STREAMS {
            text.push_str(&format!(
                "  - name: ls-{l:03}\n    metric_settings:\n      scorers:\n        - name: completeness\n"
            ));
        }
        ctx.write(&format!("repo/project-{p:03}.yaml"), &text);
    }
}

#[test]
fn a_plan_that_spills_plans_saves_applies_and_converges_like_a_small_one() {
    let changes = PROJECTS * LOG_STREAMS;
    assert!(changes > SPILL_AFTER, "the plan must spill");
    let ctx = TestContext::with_fixture(Fixture::scaled(PROJECTS, LOG_STREAMS, 0));
    repo(&ctx);

    // Every change, in address order, in JSON; the same counts in text.
    let json = ctx.evalctl(&["plan", "repo", "-o", "json"]);
    json.expect(0);
    let doc: Value = serde_json::from_str(&json.stdout).expect("one JSON document");
    let listed = doc["changes"].as_array().expect("changes");
    assert_eq!(listed.len(), changes);
    assert_eq!(doc["summary"]["update"], changes);
    let runs: Vec<(&str, &str)> = listed
        .iter()
        .map(|c| {
            let a = &c["address"];
            (
                a["project"].as_str().expect("a project"),
                a["run"].as_str().expect("a run"),
            )
        })
        .collect();
    let mut sorted = runs.clone();
    sorted.sort_unstable();
    assert_eq!(runs, sorted, "changes are in address order");
    sorted.dedup();
    assert_eq!(sorted.len(), changes, "each log stream once");
    let text = ctx.evalctl(&["plan", "repo"]);
    text.expect(0);
    assert!(
        text.stdout.contains(&format!(
            "Plan: 0 to create, {changes} to update, 0 to replace, 0 to delete."
        )),
        "{}",
        text.stdout
    );
    assert_eq!(
        text.stdout.matches("  ~ project[bench-project-").count(),
        changes
    );
    let markdown = ctx.evalctl(&["plan", "repo", "-o", "markdown"]);
    markdown.expect(0);
    assert!(
        markdown
            .stdout
            .contains(&format!("**Total** | 0 | {changes} |"))
    );

    // Saved, it reads back whole; applied from the manifests, it converges.
    ctx.evalctl(&["plan", "repo", "--out", "plan.json"])
        .expect(0);
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(ctx.path("plan.json")).expect("the saved plan"),
    )
    .expect("JSON");
    assert_eq!(
        saved["plan"]["changes"].as_array().map(Vec::len),
        Some(changes)
    );
    let applied = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
    applied.expect(0);
    let report: Value = serde_json::from_str(&applied.stdout).expect("one JSON document");
    assert_eq!(report["counts"]["succeeded"], changes, "{}", applied.stderr);
    assert_eq!(report["complete"], true);
    assert_eq!(
        report["plan"]["changes"].as_array().map(Vec::len),
        Some(changes)
    );
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);

    // The saved plan, made before the apply, now finds every object moved
    // to what it sets: nothing is sent, and it says so.
    let again = ctx.evalctl(&["apply", "--plan", "plan.json", "--auto-approve"]);
    again.expect(0);
    assert!(
        again.stderr.contains(&format!(
            "plan.json was already applied: live holds what its {changes} change(s) set, so nothing is sent"
        )) && again.stdout.contains("No changes"),
        "{}\n{}",
        again.stdout,
        again.stderr
    );
}
