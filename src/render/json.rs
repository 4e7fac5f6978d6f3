//! The JSON format: one pretty-printed document per run, versioned, for
//! machines.
//!
//! A plan renders as the [`Plan`]'s own serde form with fields added:
//! `mode`, `summary`, each change's `blast_radius` and the `people` its
//! `created_by` ids name; `Plan` ignores unknown fields, so the document
//! reads back with `serde_json::from_str::<Plan>`.
//! An apply report renders as the [`ApplyReport`] with `counts` and
//! `complete` added, and reads back the same way.

use serde::Serialize;

use super::Mode;
use std::collections::BTreeMap;

use crate::plan::{
    ApplyReport, BlastRadius, ChangeOutcome, Enrichment, Note, OutcomeCounts, Plan, ResourceChange,
    Summary, Unconverged,
};

/// Version of the `-o json` form of an apply report. Bumped on any
/// incompatible change.
pub const APPLY_FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
struct PlanDocument<'a> {
    format_version: u32,
    mode: &'static str,
    summary: Summary,
    changes: Vec<ChangeView<'a>>,
    notes: &'a [Note],
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    people: BTreeMap<&'a str, &'a str>,
}

/// A change with its blast radius beside it.
#[derive(Serialize)]
struct ChangeView<'a> {
    #[serde(flatten)]
    change: &'a ResourceChange,
    #[serde(skip_serializing_if = "<[BlastRadius]>::is_empty")]
    blast_radius: &'a [BlastRadius],
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
pub(crate) fn plan(plan: &Plan, enrichment: &Enrichment, mode: Mode) -> String {
    to_json(&PlanDocument {
        format_version: plan.format_version,
        mode: mode.as_str(),
        summary: plan.summary(),
        changes: plan
            .changes
            .iter()
            .map(|change| ChangeView {
                change,
                blast_radius: enrichment.blast_radius_of(&change.address),
            })
            .collect(),
        notes: &plan.notes,
        // Only the people the plan names.
        people: plan
            .changes
            .iter()
            .filter_map(|c| c.created_by.as_deref())
            .chain(plan.notes.iter().filter_map(|n| n.created_by.as_deref()))
            .filter_map(|id| {
                enrichment
                    .people
                    .get_key_value(id)
                    .map(|(k, v)| (k.as_str(), v.as_str()))
            })
            .collect(),
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
