//! The text renderer: what people read in a terminal and in CI logs.

mod render_support;

use evalctl::apply::ApplyReport;
use evalctl::plan::Plan;
use evalctl::render::{Format, Mode, RenderOptions, render_apply, render_plan};
use render_support::*;

fn text(plan: &Plan, mode: Mode) -> String {
    render_plan(plan, Format::Text, &opts(mode))
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
    insta::assert_snapshot!(render_apply(
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
    let out = render_apply(&report, Format::Text, &opts(Mode::Plan));
    assert!(
        out.ends_with("Apply: 2 succeeded, 0 failed, 0 skipped.\n"),
        "{out}"
    );
    let empty = render_apply(&ApplyReport::default(), Format::Text, &opts(Mode::Plan));
    assert_eq!(empty, "Apply: 0 succeeded, 0 failed, 0 skipped.\n");
}

#[test]
fn colour_only_when_asked_for() {
    let colored = RenderOptions {
        color: true,
        mode: Mode::Plan,
    };
    let plan = full_plan();
    let on = render_plan(&plan, Format::Text, &colored);
    assert!(on.contains("\u{1b}[32m+\u{1b}[0m"), "{on}");
    assert!(on.contains("\u{1b}[33m~"), "{on}");
    assert!(on.contains("\u{1b}[35m-/+"), "{on}");
    assert!(on.contains("\u{1b}[31m-"), "{on}");
    assert!(render_apply(&apply_report(), Format::Text, &colored).contains('\u{1b}'));
    assert!(
        render_plan(&long_text_plan(), Format::Text, &colored).contains("\u{1b}[36m@@"),
        "hunk headers are coloured"
    );
    // Without colour, and in machine formats even with it, no escape codes.
    for (format, mode) in all_formats() {
        let off = render_plan(&plan, format, &opts(mode));
        assert!(!off.contains('\u{1b}'), "{format:?} {mode:?}");
        if format != Format::Text {
            let on = render_plan(&plan, format, &RenderOptions { color: true, mode });
            assert!(!on.contains('\u{1b}'), "{format:?} {mode:?}");
        }
    }
    assert!(!render_apply(&apply_report(), Format::Text, &opts(Mode::Plan)).contains('\u{1b}'));
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
            outputs.push(render_plan(plan, format, &opts(mode)));
        }
    }
    for format in [Format::Text, Format::Json, Format::Markdown] {
        outputs.push(render_apply(&apply_report(), format, &opts(Mode::Plan)));
        outputs.push(render_apply(
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
            render_plan(&full_plan(), format, &opts(mode)),
            render_plan(&full_plan(), format, &opts(mode))
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
