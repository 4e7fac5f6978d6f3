//! The JSON format: one pretty-printed document per run, versioned, for
//! machines.
//!
//! A plan renders as the [`Plan`]'s own serde form with two fields added,
//! `mode` and `summary`; `Plan` ignores unknown fields, so the document reads
//! back with `serde_json::from_str::<Plan>` (what `apply --plan` relies on).
//! An apply report renders as the [`ApplyReport`] with `counts` and
//! `complete` added, and reads back the same way.

use serde::Serialize;

use super::Mode;
use crate::apply::{ApplyReport, ChangeOutcome, OutcomeCounts, Unconverged};
use crate::plan::{Note, Plan, ResourceChange, Summary};

/// Version of the `-o json` form of an apply report. Bumped on any
/// incompatible change.
pub const APPLY_FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct PlanDocument<'a> {
    format_version: u32,
    mode: &'static str,
    summary: Summary,
    changes: &'a [ResourceChange],
    notes: &'a [Note],
}

#[derive(Serialize)]
struct ApplyDocument<'a> {
    format_version: u32,
    counts: OutcomeCounts,
    complete: bool,
    outcomes: &'a [ChangeOutcome],
    unconverged: &'a [Unconverged],
}

/// Renders a plan as JSON.
pub(crate) fn plan(plan: &Plan, mode: Mode) -> String {
    to_json(&PlanDocument {
        format_version: plan.format_version,
        mode: mode.as_str(),
        summary: plan.summary(),
        changes: &plan.changes,
        notes: &plan.notes,
    })
}

/// Renders an apply report as JSON.
pub(crate) fn apply(report: &ApplyReport) -> String {
    to_json(&ApplyDocument {
        format_version: APPLY_FORMAT_VERSION,
        counts: report.counts(),
        complete: report.is_complete(),
        outcomes: &report.outcomes,
        unconverged: &report.unconverged,
    })
}

fn to_json<T: Serialize>(doc: &T) -> String {
    // These types hold only strings, numbers and string-keyed maps, which
    // always serialize; should that ever change, the output still parses.
    serde_json::to_string_pretty(doc).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot render as JSON: {e}") }).to_string()
    })
}
