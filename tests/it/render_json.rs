//! The JSON renderer: versioned, pretty-printed, and read back by `apply --plan`.

use crate::render_support;

use evalctl::plan::ApplyReport;
use evalctl::plan::{Changes, Enrichment, PLAN_FORMAT_VERSION, Plan};
use evalctl::render::{APPLY_FORMAT_VERSION, Applied, Format, Mode, render_apply};
use regex::Regex;
use render_support::*;
use serde_json::Value;

fn json(plan: &Plan, mode: Mode) -> String {
    render(plan, Format::Json, &opts(mode))
}

fn parse(s: &str) -> Value {
    match serde_json::from_str(s) {
        Ok(v) => v,
        Err(e) => panic!("not JSON ({e}): {s}"),
    }
}

#[test]
fn empty_plan() {
    insta::assert_snapshot!(json(&Plan::empty(), Mode::Plan), @r#"
    {
      "format_version": 2,
      "mode": "plan",
      "summary": {
        "create": 0,
        "update": 0,
        "replace": 0,
        "delete": 0
      },
      "changes": [],
      "notes": []
    }
    "#);
}

#[test]
fn plan_with_every_kind_of_change() {
    insta::assert_snapshot!(json(&full_plan(), Mode::Plan));
}

#[test]
fn document_carries_version_mode_and_summary() {
    let doc = parse(&json(&full_plan(), Mode::Drift));
    assert_eq!(doc["format_version"], PLAN_FORMAT_VERSION);
    assert_eq!(doc["mode"], "drift");
    assert_eq!(
        doc["summary"],
        serde_json::json!({"create": 2, "update": 3, "replace": 1, "delete": 1})
    );
    let keys: Vec<&String> = doc
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "format_version",
            "mode",
            "summary",
            "changes",
            "notes",
            "people"
        ]
    );
    assert!(json(&full_plan(), Mode::Plan).starts_with("{\n  \"format_version\": 2,\n"));
}

/// The planner writes an absent side of a created or deleted object as
/// `Some(null)`; JSON has one `null`, which reads back as `None`.
fn null_sides_as_absent(mut plan: Plan) -> Plan {
    let mut changes = std::mem::take(&mut plan.changes)
        .into_vec()
        .expect("held in memory");
    for change in &mut changes {
        for field in &mut change.fields {
            field.before = field.before.take().filter(|v| !v.is_null());
            field.after = field.after.take().filter(|v| !v.is_null());
        }
    }
    plan.changes = changes.into();
    plan
}

#[test]
fn rendered_plans_read_back_as_the_same_plan() {
    for make in [Plan::empty, full_plan, long_text_plan, || many_changes(20)] {
        let plan = make();
        for mode in [Mode::Plan, Mode::Drift] {
            let back: Plan = match serde_json::from_str(&json(&plan, mode)) {
                Ok(p) => p,
                Err(e) => panic!("does not read back: {e}"),
            };
            assert_eq!(back, null_sides_as_absent(make()));
            // What people see is the same either way.
            for format in [Format::Text, Format::Json, Format::Markdown] {
                assert_eq!(
                    render(&back, format, &opts(mode)),
                    render(&plan, format, &opts(mode))
                );
            }
        }
    }
}

/// `plan` with its changes spilled to a temporary file, in the same order.
fn spilled(mut plan: Plan) -> Plan {
    let mut changes = Changes::spilling_after(0);
    for change in std::mem::take(&mut plan.changes)
        .into_vec()
        .expect("held in memory")
    {
        changes.push(change);
    }
    assert!(changes.is_spilled());
    plan.changes = changes;
    plan
}

#[test]
fn a_plan_spilled_to_a_file_renders_as_the_same_plan_held_in_memory() {
    for make in [
        full_plan,
        long_text_plan,
        three_way_plan,
        || many_changes(1_300),
        || rollout_plan(40),
    ] {
        let (held, spilled) = (make(), spilled(make()));
        assert_eq!(held, spilled);
        for (format, mode) in all_formats() {
            assert_eq!(
                render(&held, format, &opts(mode)),
                render(&spilled, format, &opts(mode)),
                "{format:?} {mode:?}"
            );
        }
        let (report, nothing) = (ApplyReport::default(), Enrichment::default());
        for format in [Format::Text, Format::Json, Format::Markdown] {
            let applied = |plan| Applied {
                plan,
                enrichment: &nothing,
                report: &report,
                plan_after_apply: Some((plan, &nothing)),
            };
            assert_eq!(
                render_apply(&applied(&held), format, &opts(Mode::Plan)).expect("renders"),
                render_apply(&applied(&spilled), format, &opts(Mode::Plan)).expect("renders"),
                "{format:?}"
            );
        }
    }
}

#[test]
fn apply_report() {
    let out = render_report(
        &render_support::apply_report(),
        Format::Json,
        &opts(Mode::Plan),
    );
    insta::assert_snapshot!(out);
    let doc = parse(&out);
    assert_eq!(doc["format_version"], APPLY_FORMAT_VERSION);
    assert_eq!(doc["complete"], false);
    assert_eq!(
        doc["counts"],
        serde_json::json!({"succeeded": 3, "failed": 1, "skipped": 2})
    );
    let back: ApplyReport = match serde_json::from_str(&out) {
        Ok(r) => r,
        Err(e) => panic!("does not read back: {e}"),
    };
    assert_eq!(back, render_support::apply_report());
}

#[test]
fn integration_secrets_appear_only_as_environment_references() {
    let plan = plan_of(vec![integration_create()], Vec::new());
    // Long runs of token-like characters (sk-..., base64, hex) that are not
    // ids of the fixture would be a leaked literal.
    let token_like = match Regex::new(r"(sk-[A-Za-z0-9]{8,}|[A-Za-z0-9+/_-]{40,})") {
        Ok(re) => re,
        Err(e) => panic!("{e}"),
    };
    for (format, mode) in all_formats() {
        let out = render(&plan, format, &opts(mode));
        if mode == Mode::Plan || format == Format::Json {
            assert!(
                out.contains("${OPENAI_API_KEY}"),
                "{format:?} {mode:?}: {out}"
            );
        }
        assert!(!token_like.is_match(&out), "{format:?} {mode:?}: {out}");
    }
    let doc = parse(&json(&plan, Mode::Plan));
    assert_eq!(
        doc["changes"][0]["operations"][0]["body"]["token"],
        "${OPENAI_API_KEY}"
    );
}

#[test]
fn three_way_plan_attributes_changes_and_fields() {
    let rendered = json(&three_way_plan(), Mode::Plan);
    insta::assert_snapshot!(rendered);
    // It reads back, attributions included (rendered again, the same).
    let back: Plan = serde_json::from_str(&rendered).expect("reads back");
    assert_eq!(json(&back, Mode::Plan), rendered);
}
