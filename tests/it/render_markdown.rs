//! The markdown renderer: pull-request comments that fit GitHub's limit.

use crate::render_support;

use evalctl::plan::{Action, Address, Plan};
use evalctl::render::{Format, MARKDOWN_BUDGET, Mode};
use render_support::*;

fn md(plan: &Plan, mode: Mode) -> String {
    render(plan, Format::Markdown, &opts(mode))
}

#[test]
fn empty_plan() {
    insta::assert_snapshot!(md(&Plan::empty(), Mode::Plan));
}

#[test]
fn plan_with_every_kind_of_change() {
    insta::assert_snapshot!(md(&full_plan(), Mode::Plan));
}

#[test]
fn long_text_is_a_unified_diff() {
    insta::assert_snapshot!(md(&long_text_plan(), Mode::Plan));
}

#[test]
fn drift_report() {
    insta::assert_snapshot!(md(&full_plan(), Mode::Drift));
}

#[test]
fn apply_report() {
    insta::assert_snapshot!(render_report(
        &render_support::apply_report(),
        Format::Markdown,
        &opts(Mode::Plan)
    ));
}

#[test]
fn two_thousand_changes_fold_under_the_limit_and_keep_the_summary() {
    let out = md(&many_changes(2_000), Mode::Plan);
    assert!(out.len() < MARKDOWN_BUDGET, "{} bytes", out.len());
    assert!(out.chars().count() < 60_000);
    assert!(out.contains("**Plan: 2000 to create, 0 to update, 0 to replace, 0 to delete.**"));
    assert!(out.contains("| `+` create | 2000 |"), "the summary table");
    // The table of changes is folded too: first rows, then a count.
    assert!(out.contains("| `+` | `project[demo].log_stream[production].trends.section[Section 0000 of the big dashboard]` |"));
    let listed = out.matches("\n| `+` | `project[demo]").count();
    assert!(listed > 100 && listed < 2_000, "{listed} rows");
    assert!(
        out.contains(&format!(
            "… {} more changes not listed (the comment is limited to 60,000 characters); run `evalctl plan` locally for the full plan.",
            2_000 - listed
        )),
        "{}",
        &out[out.len().saturating_sub(2_000)..]
    );
    assert!(out.contains(
        "… 2000 more changes not shown in detail (the comment is limited to 60,000 characters); run `evalctl plan` locally for the full plan."
    ));
    assert!(out.ends_with('\n'));
}

#[test]
fn details_fold_when_the_table_fits() {
    // Each change carries a long diff: the table fits, the details do not.
    let long = long_text_plan();
    let mut changes = Vec::new();
    for i in 0..120 {
        let mut c = long.changes[0].clone();
        if let Address::Template { name, .. } = &mut c.address {
            *name = format!("Tone {i:03}");
        }
        changes.push(c);
    }
    let out = md(&plan_of(changes, Vec::new()), Mode::Plan);
    assert!(out.len() < MARKDOWN_BUDGET, "{} bytes", out.len());
    assert!(!out.contains("not listed"));
    let shown = out.matches("<details>").count();
    assert!(shown > 10 && shown < 120, "{shown} shown");
    assert!(out.contains(&format!(
        "… {} more changes not shown in detail (the comment is limited to 60,000 characters); run `evalctl plan` locally for the full plan.",
        120 - shown
    )));
    // Folded sections are whole: every opened fence and <details> is closed.
    assert_eq!(
        out.matches("<details>").count(),
        out.matches("</details>").count()
    );
}

#[test]
fn user_controlled_names_are_escaped() {
    let mut c = section_create("a|b <img src=x onerror=alert(1)> `tick` *bold*");
    c.reason = "renamed from `x|y` <script>".into();
    c.action = Action::Create;
    let out = md(&plan_of(vec![c], Vec::new()), Mode::Plan);
    insta::assert_snapshot!(out);
    // Raw HTML only inside code: a code span in the table (its fence longer
    // than the name's backticks), entities in the summary, a diff block.
    assert!(out.contains(
        "| ``project[demo].log_stream[production].trends.section[a\\|b <img src=x onerror=alert(1)> `tick` *bold*]`` | renamed from `x\\|y` \\<script\\> |"
    ), "{out}");
    let summary = out
        .lines()
        .find(|l| l.starts_with("<details>"))
        .unwrap_or_default();
    assert!(
        summary.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{summary}"
    );
    assert!(
        !summary.contains("<img") && !summary.contains("<script"),
        "{summary}"
    );
    // Table rows keep their three cells: every unescaped pipe is a separator.
    for row in out.lines().filter(|l| l.starts_with("| `+` | ")) {
        let separators = row.matches('|').count() - row.matches("\\|").count();
        assert_eq!(separators, 4, "{row}");
    }
}

#[test]
fn large_apply_reports_fold_too() {
    let mut report = render_support::apply_report();
    let template = report.outcomes.clone();
    for _ in 0..800 {
        report.outcomes.extend(template.iter().cloned());
    }
    let out = render_report(&report, Format::Markdown, &opts(Mode::Plan));
    assert!(out.len() < MARKDOWN_BUDGET, "{} bytes", out.len());
    assert!(out.contains("| ✓ succeeded | 2403 |"), "the summary table");
    assert!(out.contains("more changes not listed (the comment is limited to 60,000 characters); run with `-o text` or `-o json` for the full report."));
    assert!(out.contains("### Did not converge") || out.contains("more objects not shown"));
}
