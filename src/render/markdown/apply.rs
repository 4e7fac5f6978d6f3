//! What an apply did, as markdown (a step summary): the counts, then each
//! change's outcome and what did not converge, folded to the budget.

use std::fmt::Write as _;

use super::{Doc, code, entry_lines, html, prose, section};
use crate::plan::{Action, ApplyReport, Unconverged};
use crate::render::entries::{self, Wording, plural};
use crate::render::text::incomplete_line;

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
        let _ = write!(doc.out, "{}\n\n", incomplete_line(report));
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
