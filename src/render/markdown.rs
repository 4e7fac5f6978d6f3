//! The markdown format: a pull-request comment (GitHub-flavoured).
//!
//! Summary first (a sentence and a table of counts), then a table of the
//! changes, notes, and per change a collapsed `<details>` with a ```diff
//! block GitHub colours. The whole comment stays under [`MARKDOWN_BUDGET`]
//! characters: what does not fit is folded into a line saying how much was
//! left out and how to see it; the summary always appears. Text from the
//! manifests or the service is escaped for where it lands (table cell, code
//! span, HTML), so a name holding `|`, `<` or a backtick cannot break the
//! comment.

use std::fmt::Write as _;

use super::Mode;
use super::entries::{self, Entry, Wording, blast_radius_line, display_path, plural, secret_sent};
use super::text::incomplete_line;
use super::values::{DiffLine, Shown, sanitize, sanitize_lines, show, text_diff};
use crate::plan::{Action, Note, NoteKind, Plan, ResourceChange};
use crate::plan::{ApplyReport, Enrichment, Unconverged};

/// Most characters a rendered comment may have (GitHub refuses comments over
/// 65,536; the rest is headroom for what CI wraps around it).
pub const MARKDOWN_BUDGET: usize = 60_000;

/// Room kept free for the fold lines and the footer while filling the budget.
const RESERVE: usize = 1_500;

/// `60,000`.
fn budget_text() -> String {
    let s = MARKDOWN_BUDGET.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The comment being built, measured in bytes (never fewer than characters,
/// so a comment within the budget in bytes is within it in characters).
struct Doc {
    out: String,
}

impl Doc {
    fn new() -> Self {
        Doc { out: String::new() }
    }

    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn fits(&self, extra: &str) -> bool {
        self.out.len() + extra.len() + RESERVE <= MARKDOWN_BUDGET
    }

    /// Pushes `render(item)` for `items` in order while they fit; returns
    /// how many did not (those after the first that did not are not rendered).
    fn push_while_fits<T>(&mut self, items: &[T], render: impl Fn(&T) -> String) -> usize {
        for (i, item) in items.iter().enumerate() {
            let text = render(item);
            if !self.fits(&text) {
                return items.len() - i;
            }
            self.push(&text);
        }
        0
    }

    fn fold_line(&mut self, left_out: usize, what: &str, how: &str) {
        if left_out > 0 {
            let _ = writeln!(
                self.out,
                "\n… {left_out} more {what} (the comment is limited to {} characters); {how}.\n",
                budget_text()
            );
        }
    }
}

// ---------------------------------------------------------------- escaping

/// Text on one line: lines of `s`, made safe and trimmed, joined by spaces.
fn one_line(s: &str) -> String {
    let lines: Vec<String> = sanitize_lines(s)
        .iter()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

/// Text for a table cell or a list item: control characters escaped,
/// markdown and HTML specials backslash-escaped, on one line.
fn escape(s: &str) -> String {
    escape_line(&one_line(s))
}

fn escape_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '#' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Messages quote names in backticks (`` section `Latency` exists ``): such
/// pairs become code spans, the rest is escaped. Unpaired backticks are
/// escaped like any other character.
fn prose(s: &str, in_table: bool) -> String {
    let flat = one_line(s);
    let parts: Vec<&str> = flat.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escape_line(&flat);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                code(p, in_table)
            } else {
                escape_line(p)
            }
        })
        .collect()
}

/// Like [`prose`], inside an HTML element: pairs of backticks become `<code>`.
fn html_prose(s: &str) -> String {
    let flat = one_line(s);
    let parts: Vec<&str> = flat.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return html(&flat);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", html(p))
            } else {
                html(p)
            }
        })
        .collect()
}

/// A code span that holds `s` verbatim, whatever backticks it contains; in a
/// table, its pipes are escaped (GitHub splits cells before code spans).
fn code(s: &str, in_table: bool) -> String {
    let mut s = sanitize(s);
    if in_table {
        s = s.replace('|', "\\|");
    }
    let fence = "`".repeat(longest_run(&s, '`') + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Text inside an HTML element, on one line.
fn html(s: &str) -> String {
    sanitize(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A fenced block of `lang` that `lines` cannot close early.
fn fenced(lang: &str, lines: &[String]) -> String {
    let run = lines.iter().map(|l| longest_run(l, '`')).max().unwrap_or(0);
    let fence = "`".repeat(run.max(2) + 1);
    let mut out = format!("{fence}{lang}\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

// ---------------------------------------------------------------- plan

/// Renders a plan or drift report.
pub(crate) fn plan(plan: &Plan, enrichment: &Enrichment, mode: Mode) -> String {
    let mut doc = Doc::new();
    let n = plan.changes.len();
    let summary = plan.summary();
    let (title, sentence, labels, rerun) = match mode {
        Mode::Plan => (
            "evalctl plan",
            if n == 0 {
                "No changes. Live state matches the manifests.".to_owned()
            } else {
                format!("**Plan: {summary}.**")
            },
            ["create", "update", "replace", "delete"],
            "run `evalctl plan` locally for the full plan",
        ),
        Mode::Drift => (
            "evalctl drift",
            if n == 0 {
                "No drift.".to_owned()
            } else {
                format!("**Drift detected in {n} object{}.**", plural(n))
            },
            [
                "missing live",
                "differs",
                "differs, needs replacement",
                "live, not configured",
            ],
            "run `evalctl drift` locally for the full report",
        ),
    };
    let _ = write!(
        doc.out,
        "## {title}\n\n{sentence}\n\n| {} | Count |\n|:--|--:|\n",
        if mode == Mode::Plan {
            "Action"
        } else {
            "Drift"
        }
    );
    let counts = [
        (Action::Create, summary.create),
        (Action::Update, summary.update),
        (Action::Replace, summary.replace),
        (Action::Delete, summary.delete),
    ];
    for ((action, count), label) in counts.into_iter().zip(labels) {
        let _ = writeln!(doc.out, "| `{}` {label} | {count} |", action.symbol());
    }
    doc.push("\n");

    if n > 0 {
        doc.push("### Changes\n\n| | Address | Reason |\n|:-:|:--|:--|\n");
        let left_out = doc.push_while_fits(&plan.changes, |c| change_row(c, enrichment));
        doc.fold_line(left_out, "changes not listed", rerun);
        doc.push("\n");
    }

    notes(&mut doc, &plan.notes, enrichment, rerun);

    if n > 0 {
        doc.push("### Details\n\n");
        let left_out = doc.push_while_fits(&plan.changes, |c| details(c, enrichment, mode));
        doc.fold_line(left_out, "changes not shown in detail", rerun);
    }
    doc.out
}

fn change_row(c: &ResourceChange, enrichment: &Enrichment) -> String {
    let mut reason = prose(&c.reason, true);
    let flagged = c.warnings.len() + enrichment.blast_radius_of(&c.address).len();
    if flagged > 0 {
        let _ = write!(reason, " ⚠️ {flagged} warning{}", plural(flagged));
    }
    format!(
        "| `{}` | {} | {} |\n",
        c.action.symbol(),
        code(&c.address.to_string(), true),
        reason.trim()
    )
}

fn notes(doc: &mut Doc, notes: &[Note], enrichment: &Enrichment, rerun: &str) {
    if notes.is_empty() {
        return;
    }
    doc.push("### Notes\n\n");
    let mut items = Vec::new();
    for (kind, heading) in [
        (
            NoteKind::Unmanaged,
            "Unmanaged (live, not declared; deleted only with --prune)",
        ),
        (NoteKind::Unverifiable, "Not verifiable"),
        (NoteKind::Info, "Other notes"),
    ] {
        let of_kind: Vec<&Note> = notes.iter().filter(|n| n.kind == kind).collect();
        for (i, note) in of_kind.iter().enumerate() {
            let mut item = String::new();
            if i == 0 {
                let _ = write!(item, "**{heading}**\n\n");
            }
            match (&note.address, kind) {
                // The heading says what these are: the address alone.
                (Some(a), NoteKind::Unmanaged) => {
                    let _ = write!(item, "- {}", code(&a.to_string(), false));
                }
                (Some(a), _) => {
                    let _ = write!(item, "- {}: ", code(&a.to_string(), false));
                    item.push_str(&prose(&note.message, false));
                }
                (None, _) => {
                    item.push_str("- ");
                    item.push_str(&prose(&note.message, false));
                }
            }
            if let Some(who) = &note.created_by {
                let _ = write!(item, " (created by {})", escape(enrichment.person(who)));
            }
            item.push('\n');
            if i + 1 == of_kind.len() {
                item.push('\n');
            }
            items.push(item);
        }
    }
    let left_out = doc.push_while_fits(&items, String::clone);
    doc.fold_line(left_out, "notes not shown", rerun);
}

/// A change's collapsed section: its entries as a diff, then its warnings.
fn details(c: &ResourceChange, enrichment: &Enrichment, mode: Mode) -> String {
    let wording = Wording::of_change(mode, c.action);
    let mut lines = Vec::new();
    for entry in entries::shown(c, mode) {
        entry_lines(&mut lines, &entry, wording, c.action);
    }
    for w in &c.warnings {
        lines.push(format!("! {}", sanitize_lines(w).join(" ")));
    }
    for b in enrichment.blast_radius_of(&c.address) {
        lines.push(format!("! {}", sanitize(&blast_radius_line(b))));
    }
    let mut summary = format!(
        "{} <code>{}</code>",
        html(c.action.symbol()),
        html(&c.address.to_string())
    );
    if !c.reason.is_empty() {
        let _ = write!(summary, ": {}", html_prose(&c.reason));
    }
    let intro = c
        .created_by
        .as_deref()
        .map(|who| format!("Created by {}.\n\n", escape(enrichment.person(who))));
    section(&summary, intro.as_deref().unwrap_or_default(), &lines)
}

fn section(summary: &str, intro: &str, lines: &[String]) -> String {
    let body = if lines.is_empty() {
        "No field-level differences.\n".to_owned()
    } else {
        fenced("diff", lines)
    };
    format!("<details><summary>{summary}</summary>\n\n{intro}{body}\n</details>\n\n")
}

/// `sign head: value`, a block under it, or a literal, each line signed.
fn signed(lines: &mut Vec<String>, sign: char, head: &str, shown: &Shown) {
    match shown {
        Shown::Inline(s) => lines.push(format!("{sign} {head}: {s}")),
        Shown::Block(block) | Shown::Literal(block) => {
            let bar = if matches!(shown, Shown::Literal(_)) {
                " |"
            } else {
                ""
            };
            lines.push(format!("{sign} {head}:{bar}"));
            lines.extend(block.iter().map(|l| format!("{sign}     {l}")));
        }
    }
}

fn entry_lines(lines: &mut Vec<String>, entry: &Entry, wording: Wording, action: Action) {
    let (old_label, new_label) = wording.labels();
    let head = |path: &str, label: &str| {
        let path = display_path(path);
        match wording {
            Wording::Plan => path,
            _ => format!("{path} ({label})"),
        }
    };
    match entry {
        Entry::Changed {
            path,
            before,
            after,
        } => {
            signed(lines, '-', &head(path, old_label), &show(before));
            signed(lines, '+', &head(path, new_label), &show(after));
        }
        Entry::Added { path, value } => signed(lines, '+', &head(path, new_label), &show(value)),
        Entry::Removed { path, value } => {
            signed(lines, '-', &head(path, old_label), &show(value));
        }
        Entry::Text {
            path,
            before,
            after,
        } => {
            let path = display_path(path);
            match wording {
                Wording::Plan => lines.push(format!("  {path}:")),
                _ => lines.push(format!("  {path} (- {old_label}, + {new_label}):")),
            }
            for line in text_diff(before, after) {
                lines.push(match line {
                    DiffLine::Hunk(h) => h,
                    DiffLine::Same(s) => format!("     {s}"),
                    DiffLine::Old(s) => format!("-    {s}"),
                    DiffLine::New(s) => format!("+    {s}"),
                });
            }
        }
        Entry::Secret { path, reference } => {
            if wording != Wording::Apply {
                lines.push(format!(
                    "+ {}: {} (write-only secret, {} from the environment at apply)",
                    display_path(path),
                    sanitize(reference),
                    secret_sent(action)
                ));
            }
        }
    }
}

// ---------------------------------------------------------------- apply

/// Renders what an apply did.
pub(crate) fn apply(report: &ApplyReport) -> String {
    let mut doc = Doc::new();
    let c = report.counts();
    let how = "run with `-o text` or `-o json` for the full report";
    let _ = write!(
        doc.out,
        "## evalctl apply\n\n**Apply: {} succeeded, {} failed, {} skipped.**\n\n",
        c.succeeded, c.failed, c.skipped
    );
    if !report.is_complete() {
        let _ = write!(doc.out, "{}\n\n", incomplete_line());
    }
    let _ = write!(
        doc.out,
        "| Result | Count |\n|:--|--:|\n| ✓ succeeded | {} |\n| ✗ failed | {} |\n| - skipped | {} |\n\n",
        c.succeeded, c.failed, c.skipped
    );
    if !report.outcomes.is_empty() {
        doc.push("### Changes\n\n| | Address | Result | Detail |\n|:-:|:--|:--|:--|\n");
        let left_out = doc.push_while_fits(&report.outcomes, |o| {
            let (symbol, what) = entries::outcome(o);
            let detail = o
                .detail
                .as_deref()
                .map(|d| prose(d, true))
                .unwrap_or_default();
            format!(
                "| {symbol} | {} | {what} | {detail} |\n",
                code(&o.address.to_string(), true)
            )
        });
        doc.fold_line(left_out, "changes not listed", how);
        doc.push("\n");
    }
    if !report.unconverged.is_empty() {
        doc.push("### Did not converge\n\nRe-read after applying, live state still differs:\n\n");
        let left_out = doc.push_while_fits(&report.unconverged, unconverged);
        doc.fold_line(left_out, "objects not shown", how);
    }
    doc.out
}

fn unconverged(u: &Unconverged) -> String {
    let mut lines = Vec::new();
    for entry in entries::of_fields(&u.fields) {
        entry_lines(&mut lines, &entry, Wording::Apply, Action::Update);
    }
    let summary = format!(
        "<code>{}</code>: {} field{} did not stick",
        html(&u.address.to_string()),
        u.fields.len(),
        plural(u.fields.len())
    );
    section(&summary, "", &lines).replacen("<details>", "<details open>", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_break_tables_code_or_html() {
        assert_eq!(escape("a|b <x> `c` *d*"), r"a\|b \<x\> \`c\` \*d\*");
        assert_eq!(prose("see `a|b` *now*", true), r"see `a\|b` \*now\*");
        assert_eq!(prose("odd ` tick", false), r"odd \` tick");
        assert_eq!(html_prose("from `<x>`"), "from <code>&lt;x&gt;</code>");
        assert_eq!(escape("line one\n   line two\n"), "line one line two");
        assert_eq!(code("a|b", true), r"`a\|b`");
        assert_eq!(code("a`b", false), "``a`b``");
        assert_eq!(code("`a", false), "`` `a ``");
        assert_eq!(html("<b>&\"x\""), "&lt;b&gt;&amp;&quot;x&quot;");
        assert_eq!(fenced("diff", &["```".into()]), "````diff\n```\n````\n");
        assert_eq!(budget_text(), "60,000");
    }

    #[test]
    fn a_text_diff_of_the_whole_object_names_it() {
        let entry = Entry::Text {
            path: String::new(),
            before: "one\n".into(),
            after: "two\n".into(),
        };
        let mut lines = Vec::new();
        entry_lines(&mut lines, &entry, Wording::Plan, Action::Update);
        assert_eq!(lines.first().map(String::as_str), Some("  (the object):"));
    }
}
