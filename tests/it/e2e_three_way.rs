//! End to end: three-way plans (`plan --base`, `drift --base`) through the
//! real binary against the sandbox. Every cell of the attribution table —
//! proposed, drift, conflict, pending (with `--applied`; drift without) —
//! on sections of one dashboard, with objects on one side only (created by
//! the PR, deleted out of band, declared only at the base), a base whose
//! manifests do not load, `--fail-on` and `--detailed-exitcode`.

use crate::e2e_support;

use e2e_support::{Run, TestContext};
use serde_json::Value;

/// Sections of demo-project's production dashboard, as manifests:
/// `(name, description, color)`.
fn sections(list: &[(&str, &str, &str)]) -> String {
    let mut out = String::from(
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections:\n",
    );
    for (name, description, color) in list {
        out.push_str(&format!(
            "        - {{name: {name}, description: \"{description}\", color: \"{color}\"}}\n"
        ));
    }
    out
}

/// What was last applied (and live before anyone touched it).
const APPLIED: [(&str, &str, &str); 4] = [
    ("Quality", "Quality charts", "#1f77b4"),
    ("Safety", "Safety charts", "#d62728"),
    ("Cost", "Cost charts", "#2ca02c"),
    ("Gone", "Deleted in the UI", "#111111"),
];

/// The base branch: a reviewed description of Safety that was never
/// applied, and a section `Retired` the PR no longer declares.
const BASE: [(&str, &str, &str); 5] = [
    ("Quality", "Quality charts", "#1f77b4"),
    ("Safety", "Safety, reviewed", "#d62728"),
    ("Cost", "Cost charts", "#2ca02c"),
    ("Gone", "Deleted in the UI", "#111111"),
    ("Retired", "Only at the base", "#222222"),
];

/// The PR: changes Quality's and Cost's descriptions, adds Fresh, drops
/// Retired.
const PR: [(&str, &str, &str); 5] = [
    ("Quality", "Quality, by the PR", "#1f77b4"),
    ("Safety", "Safety, reviewed", "#d62728"),
    ("Cost", "Cost, by the PR", "#2ca02c"),
    ("Gone", "Deleted in the UI", "#111111"),
    ("Fresh", "Only in the PR", "#333333"),
];

/// Applies [`APPLIED`], then changes live out of band: Safety's colour and
/// Cost's description edited, Gone deleted.
fn scenario() -> TestContext {
    let ctx = TestContext::new();
    ctx.write("applied/demo.yaml", &sections(&APPLIED));
    ctx.write("base/demo.yaml", &sections(&BASE));
    ctx.write("pr/demo.yaml", &sections(&PR));
    ctx.evalctl(&["apply", "applied", "--auto-approve"])
        .expect(0);
    ctx.write(
        "ui/demo.yaml",
        &sections(&[
            ("Safety", "Safety charts", "#000000"),
            ("Cost", "Hot-fixed", "#2ca02c"),
        ]),
    );
    ctx.evalctl(&["apply", "ui", "--auto-approve"]).expect(0);
    delete_section(&ctx, "Gone");
    ctx
}

fn delete_section(ctx: &TestContext, name: &str) {
    let read = ctx.demo_dashboard("production");
    let section = read
        .dashboard
        .sections
        .iter()
        .find(|s| s.name == name)
        .expect("the section exists");
    let client = ctx.client();
    ctx.block_on(async {
        client
            .delete_section(
                &read.project_id,
                &read.log_stream_id,
                &section.id,
                None,
                false,
            )
            .await
            .expect("deleted");
    });
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}\n{}", run.stdout))
}

/// `section: attribution` of each change, then `section.path: attribution`
/// of each field.
fn attributions(doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for c in doc["changes"].as_array().expect("changes") {
        let name = c["address"]["name"].as_str().unwrap_or("?");
        out.push(format!(
            "{name} ({}): {}",
            c["action"].as_str().unwrap_or("?"),
            c["attribution"].as_str().unwrap_or("-")
        ));
        for f in c["fields"].as_array().expect("fields") {
            out.push(format!(
                "  {}: {}",
                f["path"].as_str().unwrap_or("?"),
                f["attribution"].as_str().unwrap_or("-")
            ));
        }
    }
    out
}

#[test]
fn every_cell_of_the_attribution_table_on_the_sandbox() {
    let ctx = scenario();
    let run = ctx.evalctl(&[
        "plan",
        "pr",
        "-o",
        "json",
        "--base",
        "base",
        "--applied",
        "applied",
    ]);
    run.expect(0);
    let doc = json(&run);
    assert_eq!(
        attributions(&doc),
        [
            "Cost (update): conflict",
            "  description: conflict",
            "Fresh (create): proposed",
            "  : proposed",
            "Gone (create): drift",
            "  : drift",
            "Quality (update): proposed",
            "  description: proposed",
            "Safety (update): drift",
            "  color: drift",
            "  description: pending",
        ]
    );
    // A conflict carries the base's value beside live's and the PR's.
    let cost = &doc["changes"][0]["fields"][0];
    assert_eq!(cost["before"], "Hot-fixed");
    assert_eq!(cost["after"], "Cost, by the PR");
    assert_eq!(cost["base"], "Cost charts");
    assert_eq!(
        doc["attribution"],
        serde_json::json!({"proposed": 2, "drift": 2, "conflict": 1, "pending": 0})
    );
    // Declared only at the base (never created): a note, no change.
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n["address"]["name"] == "Retired")
        .filter_map(|n| n["message"].as_str())
        .collect();
    assert_eq!(
        notes,
        [
            "declared at the base, not by this PR: evalctl stops managing it and this apply leaves it as it is live (the base would create it)"
        ]
    );

    // The PR comment: a section per attribution, counted under the summary.
    let run = ctx.evalctl(&[
        "plan",
        "pr",
        "-o",
        "markdown",
        "--base",
        "base",
        "--applied",
        "applied",
    ]);
    run.expect(0);
    for line in [
        "This PR changes: **2** · Out-of-band changes this apply would revert: **2** · Conflicts: **1** · Pending: **0**",
        "### Conflicts (1)",
        "### Out-of-band changes this apply would revert (2)",
        "### This PR changes (2)",
        "@@ conflict: the base has \"Cost charts\" @@",
        "@@ pending: the base's change, never applied @@",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
    // The terminal: grouped the same way.
    let run = ctx.evalctl(&["plan", "pr", "--base", "base", "--applied", "applied"]);
    run.expect(0);
    for line in [
        "Changed by this PR (2):",
        "Out-of-band changes this apply would revert (2):",
        "Conflicts: changed by this PR and out of band since the base (1):",
        "(conflict: the base has \"Cost charts\")",
        "By attribution: 2 by this PR, 2 reverting out-of-band changes, 1 in conflict, 0 pending.",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }

    // Without the manifests as last applied, pending cannot be told from
    // drift: the never-applied description is drift.
    let run = ctx.evalctl(&["plan", "pr", "-o", "json", "--base", "base"]);
    run.expect(0);
    let got = attributions(&json(&run));
    assert!(
        got.contains(&"  description: drift".to_owned())
            && !got.iter().any(|l| l.ends_with("pending")),
        "{got:#?}"
    );

    // Without --base: no attribution anywhere.
    let run = ctx.evalctl(&["plan", "pr", "-o", "json"]);
    run.expect(0);
    let doc = json(&run);
    assert!(doc.get("attribution").is_none());
    assert!(attributions(&doc).iter().all(|l| l.ends_with(": -")));
}

#[test]
fn fail_on_and_detailed_exitcode() {
    let ctx = scenario();
    let base = ["plan", "pr", "--base", "base"];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        ctx.evalctl(&args)
    };
    with(&[]).expect(0);
    with(&["--detailed-exitcode"]).expect(2);
    let run = with(&["--fail-on", "conflict"]);
    run.expect(4);
    assert!(
        run.stderr
            .contains("1 change is a conflict (--fail-on conflict)"),
        "{}",
        run.stderr
    );
    let run = with(&["--fail-on", "drift", "--detailed-exitcode"]);
    run.expect(4);
    assert!(
        run.stderr
            .contains("2 changes revert out-of-band changes (--fail-on drift)"),
        "{}",
        run.stderr
    );
    // The PR keeps the hot-fix (its manifests match live): nothing conflicts.
    ctx.write(
        "pr/demo.yaml",
        &sections(&[
            ("Quality", "Quality, by the PR", "#1f77b4"),
            ("Safety", "Safety, reviewed", "#d62728"),
            ("Cost", "Hot-fixed", "#2ca02c"),
        ]),
    );
    let run = with(&["--fail-on", "conflict", "-o", "json"]);
    run.expect(0);
    let doc = json(&run);
    let cost: Vec<&str> = doc["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter(|n| n["address"]["name"] == "Cost")
        .filter_map(|n| n["message"].as_str())
        .collect();
    assert_eq!(
        cost,
        [
            "the base would update it (`description`); this PR's manifests match live there, so this apply leaves it as it is (the PR adopts the live value)"
        ]
    );
    // --fail-on and --applied need --base.
    ctx.evalctl(&["plan", "pr", "--fail-on", "conflict"])
        .expect(64);
}

#[test]
fn a_base_that_does_not_load_gives_the_usual_plan_and_says_why() {
    let ctx = scenario();
    ctx.write(
        "broken/demo.yaml",
        "kind: Project\nname: demo-project\nlog_streams: 3\n",
    );
    let run = ctx.evalctl(&["plan", "pr", "--base", "broken", "--fail-on", "conflict"]);
    // Not attributed, so nothing fails the job for a conflict it cannot see.
    run.expect(0);
    assert!(
        run.stderr
            .contains("the base manifests do not load (1 error;")
            && run.stderr.contains("this plan is not attributed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("changes are not attributed"),
        "{}",
        run.stdout
    );
    let doc = json(&ctx.evalctl(&["plan", "pr", "--base", "broken", "-o", "json"]));
    assert!(attributions(&doc).iter().all(|l| l.ends_with(": -")));
    // A base path that does not exist declares nothing (the first PR adding
    // the manifests): every difference is this PR's, with a warning in case
    // of a typo.
    let run = ctx.evalctl(&["plan", "pr", "--base", "no-such-dir", "-o", "json"]);
    run.expect(0);
    assert!(
        run.stderr
            .contains("--base no-such-dir: no such file or directory; the base manifests there declare nothing"),
        "{}",
        run.stderr
    );
    let got = attributions(&json(&run));
    assert!(got.iter().all(|l| l.ends_with(": proposed")), "{got:#?}");
    // The base refers to a log stream that does not exist live.
    ctx.write(
        "elsewhere/demo.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - id: 00000000-0000-4000-8000-000000000000\n    trends: {sections: []}\n",
    );
    let run = ctx.evalctl(&["plan", "pr", "--base", "elsewhere"]);
    run.expect(0);
    assert!(
        run.stderr
            .contains("the base manifests refer to objects that do not exist"),
        "{}",
        run.stderr
    );
}

#[test]
fn drift_with_a_base_attributes_what_differs() {
    let ctx = scenario();
    // The schedule: main now (the PR merged) against main's previous commit.
    let run = ctx.evalctl(&["drift", "pr", "--base", "base", "-o", "json"]);
    run.expect(2);
    let got = attributions(&json(&run));
    assert!(
        got.contains(&"Cost (update): conflict".to_owned()),
        "{got:#?}"
    );
    assert!(
        got.contains(&"Quality (update): proposed".to_owned()),
        "{got:#?}"
    );
    ctx.evalctl(&["drift", "pr", "--base", "base", "--fail-on", "drift"])
        .expect(4);
}

#[test]
fn base_takes_one_path_and_the_manifests_are_the_arguments_after_it() {
    let ctx = scenario();
    // The manifests after the option are the manifests, not a second base
    // (clap took every path up to the next option, and the manifests
    // defaulted to `.`, which holds the base).
    let run = ctx.evalctl(&["plan", "--base", "base", "pr", "-o", "json"]);
    run.expect(0);
    let got = attributions(&json(&run));
    assert!(
        got.contains(&"Fresh (create): proposed".to_owned()),
        "{got:#?}"
    );
    let run = ctx.evalctl(&["drift", "--base", "base", "--applied", "applied", "pr"]);
    run.expect(2);
    // No manifest path: `.` holds the base, so every project would be
    // declared twice. Said before anything is read, with the fix.
    for command in ["plan", "drift"] {
        let run = ctx.evalctl(&[command, "--base", "base"]);
        run.expect(64);
        assert!(
            run.stderr.contains(
                "the manifests `.` hold the --base path `base`, so each project would be declared twice; no manifest path was given, so the manifests default to `.`: name them after the options, e.g. `--base base config/`"
            ),
            "{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("declared twice: here"),
            "{}",
            run.stderr
        );
    }
    let run = ctx.evalctl(&["plan", "--base", "../elsewhere", "--applied", "applied"]);
    run.expect(64);
    assert!(
        run.stderr
            .contains("the manifests `.` hold the --applied path `applied`"),
        "{}",
        run.stderr
    );
    // The same directory on both sides is loaded once on each: allowed.
    ctx.evalctl(&["plan", "pr", "--base", "pr"]).expect(0);
}
