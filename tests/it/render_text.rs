//! The text renderer: what people read in a terminal and in CI logs.

use crate::render_support;

use evalctl::plan::ApplyReport;
use evalctl::plan::Plan;
use evalctl::render::{Format, Mode, RenderOptions};
use render_support::*;

fn text(plan: &Plan, mode: Mode) -> String {
    render(plan, Format::Text, &opts(mode))
}

#[test]
fn empty_plan() {
    insta::assert_snapshot!(text(&Plan::empty(), Mode::Plan), @"No changes. Live state matches the manifests.");
    insta::assert_snapshot!(text(&Plan::empty(), Mode::Drift), @"No drift.");
}

#[test]
fn plan_with_every_kind_of_change() {
    insta::assert_snapshot!(text(&full_plan(), Mode::Plan));
}

#[test]
fn long_text_is_a_unified_diff() {
    insta::assert_snapshot!(text(&long_text_plan(), Mode::Plan));
}

#[test]
fn drift_report() {
    insta::assert_snapshot!(text(&full_plan(), Mode::Drift));
}

#[test]
fn apply_report_with_failures_and_unconverged_objects() {
    insta::assert_snapshot!(render_report(
        &apply_report(),
        Format::Text,
        &opts(Mode::Plan)
    ));
}

#[test]
fn complete_apply_has_no_second_apply_hint() {
    let mut report = apply_report();
    report.outcomes.retain(|o| o.detail.is_none());
    report.unconverged.clear();
    let out = render_report(&report, Format::Text, &opts(Mode::Plan));
    assert!(
        out.ends_with("Apply: 2 succeeded, 0 failed, 0 skipped.\n"),
        "{out}"
    );
    let empty = render_report(&ApplyReport::default(), Format::Text, &opts(Mode::Plan));
    assert_eq!(empty, "Apply: 0 succeeded, 0 failed, 0 skipped.\n");
}

#[test]
fn colour_only_when_asked_for() {
    let colored = RenderOptions {
        color: true,
        mode: Mode::Plan,
        saved_plan: None,
        artifact: None,
    };
    let plan = full_plan();
    let on = render(&plan, Format::Text, &colored);
    assert!(on.contains("\u{1b}[32m+\u{1b}[0m"), "{on}");
    assert!(on.contains("\u{1b}[33m~"), "{on}");
    assert!(on.contains("\u{1b}[35m-/+"), "{on}");
    assert!(on.contains("\u{1b}[31m-"), "{on}");
    assert!(render_report(&apply_report(), Format::Text, &colored).contains('\u{1b}'));
    assert!(
        render(&long_text_plan(), Format::Text, &colored).contains("\u{1b}[36m@@"),
        "hunk headers are coloured"
    );
    // Without colour, and in machine formats even with it, no escape codes.
    for (format, mode) in all_formats() {
        let off = render(&plan, format, &opts(mode));
        assert!(!off.contains('\u{1b}'), "{format:?} {mode:?}");
        if format != Format::Text {
            let on = render(
                &plan,
                format,
                &RenderOptions {
                    color: true,
                    mode,
                    saved_plan: None,
                    artifact: None,
                },
            );
            assert!(!on.contains('\u{1b}'), "{format:?} {mode:?}");
        }
    }
    assert!(!render_report(&apply_report(), Format::Text, &opts(Mode::Plan)).contains('\u{1b}'));
}

#[test]
fn every_output_ends_with_one_newline_and_has_no_trailing_spaces() {
    let plans = [
        Plan::empty(),
        full_plan(),
        long_text_plan(),
        many_changes(3),
    ];
    let mut outputs = Vec::new();
    for plan in &plans {
        for (format, mode) in all_formats() {
            outputs.push(render(plan, format, &opts(mode)));
        }
    }
    for format in [Format::Text, Format::Json, Format::Markdown] {
        outputs.push(render_report(&apply_report(), format, &opts(Mode::Plan)));
        outputs.push(render_report(
            &ApplyReport::default(),
            format,
            &opts(Mode::Plan),
        ));
    }
    for out in outputs {
        assert!(out.ends_with('\n') && !out.ends_with("\n\n"), "{out:?}");
        for line in out.lines() {
            assert_eq!(line, line.trim_end(), "trailing space in {out}");
        }
    }
}

#[test]
fn output_is_deterministic() {
    for (format, mode) in all_formats() {
        assert_eq!(
            render(&full_plan(), format, &opts(mode)),
            render(&full_plan(), format, &opts(mode))
        );
    }
}

#[test]
fn names_cannot_send_escape_sequences_to_the_terminal() {
    let plan = plan_of(
        vec![section_create(
            "Evil\u{1b}]0;pwned\u{7}\u{1b}[2J\r\nname\u{202e}",
        )],
        Vec::new(),
    );
    let out = text(&plan, Mode::Plan);
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\r'),
        "{out}"
    );
    assert!(!out.contains('\u{202e}'), "{out}");
    assert!(out.contains(r"Evil\u{1b}]0;pwned\u{7}\u{1b}[2J"), "{out}");
}

/// The planner's own output (not hand-built changes) renders as expected.
#[test]
fn real_planner_output() {
    use evalctl::manifest::set::{Located, ManifestSet, Origin};
    use serde_json::json;

    const CORRECTNESS: &str = "44444444-4444-4444-8444-444444444444";
    const BLEU: &str = "55555555-5555-4555-8555-555555555555";
    const LS: &str = "22222222-2222-4222-8222-222222222222";
    fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
        match serde_json::from_value(v) {
            Ok(x) => x,
            Err(e) => panic!("{e}"),
        }
    }
    let live = from::<evalctl::state::wire::WireState>(json!({
        "projects": {"demo": {
            "id": "11111111-1111-4111-8111-111111111111", "name": "demo",
            "log_streams": {"production": {
                "id": LS, "name": "production",
                "metric_settings": {
                    "scorers": [
                        {"id": CORRECTNESS, "scorer_type": "preset", "name": "correctness", "num_judges": 3},
                        {"id": BLEU, "scorer_type": "preset", "name": "bleu"}
                    ],
                    "segment_filters": [{"sample_rate": 0.5}]
                },
                "dashboard": {
                    "id": "33333333-3333-4333-8333-333333333333", "name": "Default", "is_default": true,
                    "visibility": "project", "is_favorited": false, "log_stream_id": LS,
                    "project_id": "11111111-1111-4111-8111-111111111111",
                    "sections": [{"id": "88888888-8888-4888-8888-888888888888", "name": "Old", "widgets": []}],
                    "widgets": [], "layout_map": {}, "interval_mins": 60, "start_time": 0, "end_time": 0
                }
            }},
            "experiments": {},
            "annotation_templates": [],
            "feedback_templates": null
        }},
        "integrations": {"openai": null},
        "catalog": {
            "scorers": [
                {"id": CORRECTNESS, "name": "correctness", "scorer_type": "preset", "tags": [],
                 "output_type": "boolean", "input_type": "basic", "model_type": "llm", "roll_up_method": "average"},
                {"id": BLEU, "name": "bleu", "scorer_type": "preset", "tags": []}
            ],
            "versions": {}
        }
    }))
    .normalize();
    let origin = Origin {
        file: "team/project.yaml".into(),
        line: 1,
    };
    let desired = ManifestSet {
        projects: vec![Located {
            origin: origin.clone(),
            spec: from(json!({"name": "demo", "log_streams": [{
                "name": "production",
                "metric_settings": {
                    "scorers": [{"name": "correctness", "num_judges": 5,
                                 "filters": [{"name": "node_name", "operator": "one_of", "value": ["llm", "chat"]}]}],
                    "segment_filters": [{"sample_rate": 0.5}, {"sample_rate": 0.1, "llm_scorers": true}]
                },
                "trends": {"sections": [{"name": "Latency", "color": "#FF8800"}], "favorite": "project"}
            }]})),
        }],
        pricing: None,
        integrations: vec![Located {
            origin,
            spec: from(
                json!({"provider": "openai", "token": "${OPENAI_API_KEY}", "organization_id": "org-1"}),
            ),
        }],
        ..ManifestSet::default()
    };
    let options = evalctl::plan::PlanOptions {
        prune: true,
        ..Default::default()
    };
    let plan = match evalctl::plan::plan(&desired, &live, &options) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    let out = evalctl::render::render_plan(
        &plan,
        &evalctl::plan::Enrichment::default(),
        Format::Text,
        &opts(Mode::Plan),
    )
    .unwrap();
    insta::assert_snapshot!(out);
}

#[test]
fn three_way_plan_groups_changes_by_attribution() {
    insta::assert_snapshot!(text(&three_way_plan(), Mode::Plan));
}

#[test]
fn three_way_drift_report() {
    insta::assert_snapshot!(text(&three_way_plan(), Mode::Drift));
}

/// What `plan` prints (streamed in pieces, each trimmed, the last one
/// finished) is what the renderer makes whole, for every format and mode,
/// on a plan of several pieces and on a plan of one.
#[test]
fn printing_streams_the_same_text_as_rendering() {
    for plan in [many_changes(3_000), full_plan(), Plan::empty()] {
        for (format, mode) in all_formats() {
            let opts = opts(mode);
            let mut printed = Vec::new();
            evalctl::render::write_plan(&plan, &enrichment(), format, &opts, &mut printed).unwrap();
            let printed = String::from_utf8(printed).unwrap();
            assert_eq!(printed, render(&plan, format, &opts), "{format:?} {mode:?}");
        }
    }
    let big = many_changes(3_000);
    assert!(
        text(&big, Mode::Plan).len() > 4 * 64 * 1024,
        "several pieces"
    );
}
