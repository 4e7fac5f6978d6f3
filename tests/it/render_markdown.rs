//! The markdown renderer: pull-request comments that fit GitHub's limit.

use crate::render_support;
use evalctl::kinds::templates::TemplateAddress;

use evalctl::plan::{Address, Plan};
use evalctl::render::{Format, MARKDOWN_BUDGET, Mode, RenderOptions};
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
    assert!(
        out.contains("| `demo` | 2000 | 0 | 0 | 0 | `section` 2000 |"),
        "the counts by project"
    );
    let shown = out.matches("<details>").count();
    assert!(shown > 50 && shown < 2_000, "{shown} shown");
    // Without a saved plan, the fold line says how to see every change.
    assert!(
        out.contains(&format!(
            "… {} more changes not shown in detail (the comment is limited to 60,000 characters); `evalctl plan` shows every change (`--out FILE` saves them).",
            2_000 - shown
        )),
        "{}",
        &out[out.len().saturating_sub(2_000)..]
    );
    assert!(out.ends_with('\n'));
}

/// A comment as GitHub reads it (GFM: tables, strikethrough, autolinks, task
/// lists), parsed by comrak, a GFM implementation that follows cmark-gfm.
struct Gfm {
    /// Rows of the first table, header first: each cell's text.
    table: Vec<Vec<String>>,
    /// `<details>` blocks.
    details: usize,
    /// Fenced blocks by info string, with their text.
    code_blocks: Vec<(String, String)>,
    /// Paragraphs' text (code spans included, in backticks).
    paragraphs: Vec<String>,
    /// Headings' text.
    headings: Vec<String>,
}

fn gfm_options() -> comrak::Options<'static> {
    let mut options = comrak::Options::default();
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    // GitHub keeps <details> and <summary>.
    options.render.r#unsafe = true;
    options
}

/// The text of a node: its text and code spans (in backticks), in order.
fn text_of<'a>(node: comrak::Node<'a>) -> String {
    use comrak::nodes::NodeValue;
    let mut out = String::new();
    for d in node.descendants() {
        match &d.data.borrow().value {
            NodeValue::Text(t) => out.push_str(t),
            NodeValue::Code(c) => {
                out.push('`');
                out.push_str(&c.literal);
                out.push('`');
            }
            NodeValue::SoftBreak | NodeValue::LineBreak => out.push(' '),
            _ => {}
        }
    }
    out
}

fn parse_gfm(markdown: &str) -> Gfm {
    use comrak::nodes::NodeValue;
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, markdown, &gfm_options());
    let mut gfm = Gfm {
        table: Vec::new(),
        details: 0,
        code_blocks: Vec::new(),
        paragraphs: Vec::new(),
        headings: Vec::new(),
    };
    let mut tables = 0;
    for node in root.descendants() {
        let value = node.data.borrow().value.clone();
        match value {
            NodeValue::Table(_) => {
                tables += 1;
                if tables == 1 {
                    gfm.table = node
                        .children()
                        .map(|row| row.children().map(text_of).collect())
                        .collect();
                }
            }
            NodeValue::HtmlBlock(block) if block.literal.starts_with("<details>") => {
                gfm.details += 1;
            }
            NodeValue::CodeBlock(block) => gfm.code_blocks.push((block.info, block.literal)),
            NodeValue::Paragraph => gfm.paragraphs.push(text_of(node)),
            NodeValue::Heading(_) => gfm.headings.push(text_of(node)),
            _ => {}
        }
    }
    gfm
}

/// The number in `… N more {what}`, in the paragraph that says it.
fn left_out(gfm: &Gfm, what: &str) -> Option<(usize, String)> {
    gfm.paragraphs.iter().find_map(|p| {
        let rest = p.strip_prefix("… ")?;
        let (n, tail) = rest.split_once(' ')?;
        tail.starts_with(&format!("more {what}"))
            .then(|| n.parse().ok().map(|n| (n, p.clone())))?
    })
}

#[test]
fn a_1300_change_plan_fits_a_comment_as_github_renders_it_with_every_change_counted() {
    let plan = rollout_plan(260);
    assert_eq!(plan.changes.len(), 1_300);
    let options = RenderOptions {
        saved_plan: Some("plan.json"),
        artifact: Some("evalctl-plan"),
        ..opts(Mode::Plan)
    };
    let out = render(&plan, Format::Markdown, &options);
    let chars = out.chars().count();
    // GitHub refuses a comment over 65,536 characters; evalctl keeps to less.
    assert!(chars < 65_536, "{chars} characters");
    assert!(chars <= MARKDOWN_BUDGET, "{chars} characters");
    let gfm = parse_gfm(&out);
    assert_eq!(
        gfm.headings,
        ["evalctl plan", "Needs attention", "Details", "Notes"]
    );

    // The counts by project and action: a row per project that fits, one row
    // summing the rest, and the total; every change is counted.
    let header = &gfm.table[0];
    assert_eq!(
        header,
        &[
            "Project",
            "`+` create",
            "`~` update",
            "`-/+` replace",
            "`-` delete",
            "Objects"
        ]
    );
    let (total, rows) = gfm.table[1..].split_last().expect("rows");
    assert_eq!(total[0], "Total");
    let summary = plan.summary();
    let expected = [
        summary.create,
        summary.update,
        summary.replace,
        summary.delete,
    ];
    assert_eq!(expected, [260, 754, 260, 26]);
    let cell = |row: &Vec<String>, i: usize| -> usize {
        row[i].parse().unwrap_or_else(|e| panic!("{row:?}: {e}"))
    };
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(cell(total, i + 1), *want, "total of column {i}");
        let sum: usize = rows.iter().map(|r| cell(r, i + 1)).sum();
        assert_eq!(sum, *want, "column {i} adds up");
    }
    let (folded, listed) = rows.split_last().expect("rows");
    let projects_folded: usize = folded[0]
        .strip_prefix("… ")
        .and_then(|r| r.strip_suffix(" more projects"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a row sums the projects that do not fit: {folded:?}"));
    assert_eq!(listed.len() + projects_folded, 260);
    assert!(listed.len() > 50, "{} projects listed", listed.len());
    assert_eq!(listed[0][0], "`team-000`");
    assert_eq!(
        total[5],
        "`annotation_template` 260, `favorite` 234, `metric_settings` 260, `section` 546"
    );

    // Details: one collapsed section with a diff block per change shown, the
    // rest counted, and the saved plan and its artifact named.
    let diffs: Vec<&String> = gfm
        .code_blocks
        .iter()
        .filter(|(info, _)| info == "diff")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(diffs.len(), gfm.details);
    assert_eq!(gfm.code_blocks.len(), gfm.details, "only diff blocks");
    let (more, line) = left_out(&gfm, "changes not shown in detail").expect("a fold line");
    assert_eq!(gfm.details + more, 1_300);
    assert!(gfm.details >= 30, "{} shown in detail", gfm.details);
    assert!(
        line.contains("every change is in the saved plan `plan.json`, uploaded as the artifact `evalctl-plan` of this CI run"),
        "{line}"
    );
    // GitHub colours a diff block line by line: each starts with its sign.
    for text in &diffs {
        for l in text.lines() {
            assert!(
                l.starts_with(['+', '-', ' ', '!', '@']),
                "an uncoloured line: {l:?}"
            );
        }
    }
    // Field names as the manifests write them, in the plan's order.
    assert!(
        diffs[0].starts_with("- constraints.max: 5\n+ constraints.max: 10\n"),
        "{}",
        diffs[0]
    );

    // What needs attention is listed or counted: 260 replaced templates and
    // 26 deleted sections, all with warnings.
    let attention = out
        .split("### Needs attention")
        .nth(1)
        .and_then(|s| s.split("### Notes").next())
        .unwrap_or_default();
    let listed = attention.matches("\n- `").count();
    let more = left_out(&gfm, "changes that need attention").map_or(0, |(n, _)| n);
    assert!(listed > 20, "{listed} listed");
    assert_eq!(listed + more, 260 + 26);

    // The HTML GitHub would show: one table, every <details> closed.
    let html = comrak::markdown_to_html(&out, &gfm_options());
    assert_eq!(html.matches("<table>").count(), 1);
    assert_eq!(
        html.matches("<details>").count(),
        html.matches("</details>").count()
    );

    // The summary as a reviewer sees it, where the details stop, then the
    // end (the notes come after the details).
    let head = out.split("### Details").next().unwrap_or_default();
    let fold = out
        .lines()
        .find(|l| l.contains("changes not shown in detail"))
        .unwrap_or_default();
    let tail = out
        .lines()
        .rev()
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    insta::assert_snapshot!(format!(
        "{head}### Details\n\n[{} sections]\n\n{fold}\n\n[notes]\n\n{tail}",
        gfm.details
    ));
}

#[test]
fn details_fold_when_the_table_fits() {
    // Each change carries a long diff: the table fits, the details do not.
    let long = long_text_plan();
    let mut changes = Vec::new();
    for i in 0..120 {
        let mut c = long.changes.to_vec().expect("changes read back")[0].clone();
        if let Address::Template(TemplateAddress { name, .. }) = &mut c.address {
            *name = format!("Tone {i:03}");
        }
        changes.push(c);
    }
    let out = md(&plan_of(changes, Vec::new()), Mode::Plan);
    assert!(out.len() < MARKDOWN_BUDGET, "{} bytes", out.len());
    let shown = out.matches("<details>").count();
    assert!(shown > 10 && shown < 120, "{shown} shown");
    assert!(out.contains(&format!(
        "… {} more changes not shown in detail (the comment is limited to 60,000 characters); `evalctl plan` shows every change (`--out FILE` saves them).",
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
    let mut c = in_project(
        section_create("a|b <img src=x onerror=alert(1)> `tick` *bold*"),
        "ops|`team`",
    );
    c.reason = "renamed from `x|y` <script>".into();
    c.warnings.push("holds <b>3</b> widgets | *now*".into());
    let out = md(&plan_of(vec![c], Vec::new()), Mode::Plan);
    insta::assert_snapshot!(out);
    // As GitHub reads it: the table keeps its six cells, the project's name
    // verbatim in a code span (its fence longer than the name's backticks).
    let gfm = parse_gfm(&out);
    assert!(
        gfm.table.iter().all(|row| row.len() == 6),
        "{:?}",
        gfm.table
    );
    assert_eq!(gfm.table[1][0], "`ops|`team``");
    // Raw HTML only inside code: code spans in the list of what needs
    // attention, entities in the summary, a diff block.
    assert!(
        out.contains(
            "- `+` ``project[ops|`team`].log_stream[production].trends.section[a|b <img src=x onerror=alert(1)> `tick` *bold*]``: renamed from `x|y` \\<script\\>\n  - ⚠️ holds \\<b\\>3\\</b\\> widgets \\| \\*now\\*\n"
        ),
        "{out}"
    );
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
    let html = comrak::markdown_to_html(&out, &gfm_options());
    assert!(!html.contains("<img") && !html.contains("<script") && !html.contains("<b>"));
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

#[test]
fn three_way_plan_has_a_section_per_attribution_with_counts() {
    insta::assert_snapshot!(md(&three_way_plan(), Mode::Plan));
}

#[test]
fn three_way_drift_report() {
    insta::assert_snapshot!(md(&three_way_plan(), Mode::Drift));
}
