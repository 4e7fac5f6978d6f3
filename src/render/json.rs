//! The JSON format: one pretty-printed document per run, versioned, for
//! machines.
//!
//! A plan renders as the [`Plan`]'s own serde form with fields added:
//! `mode`, `summary` (and `attribution`, the counts of a three-way plan),
//! each change's `blast_radius` and the `people` its
//! `created_by` ids name; `Plan` ignores unknown fields, so the document
//! reads back with `serde_json::from_str::<Plan>`.
//! An apply renders as one document whatever happened (nothing to do, some
//! changes failed, an in-process sandbox): the
//! [`ApplyReport`](crate::plan::ApplyReport) with `counts`, `complete` and the
//! plan it executed; it reads back as an `ApplyReport` the same way. The JSON
//! Schemas of both documents are generated from these types
//! ([`super::schema`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Applied, Mode};
use crate::plan::attribution::AttributionCounts;
use crate::plan::{
    BlastRadius, ChangeOutcome, Enrichment, Note, OutcomeCounts, Plan, ResourceChange, Summary,
    Unconverged,
};

/// Version of the `-o json` form of an apply report. Bumped on any
/// incompatible change. 2: the report embeds the plan it executed, and is
/// printed also when there is nothing to apply.
pub const APPLY_FORMAT_VERSION: u32 = 2;

/// What `evalctl plan -o json` and `evalctl drift -o json` print: the plan,
/// with what was read beside it (blast radius, people). Reads back as a plan
/// (`evalctl apply --plan` takes the saved form, `plan --out`).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "PlanDocument")]
pub(crate) struct PlanDocument<'a> {
    /// Version of the plan format; bumped on any incompatible change.
    format_version: u32,
    /// `plan` (what apply would change) or `drift` (what differs from the manifests).
    mode: Mode,
    /// How many changes of each action.
    summary: Summary,
    /// A three-way plan (`--base`): how many changes of each attribution
    /// (absent from a two-way plan and when nothing changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    attribution: Option<AttributionCounts>,
    /// The changes, ordered by address.
    changes: Vec<ChangeView<'a>>,
    /// Things worth knowing that are not changes (unmanaged objects, ...), ordered.
    notes: &'a [Note],
    /// The people that `created_by` fields of changes and notes name: user
    /// id to `Name <email>` (only when the service told who they are).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    people: BTreeMap<&'a str, &'a str>,
}

/// A change with its blast radius beside it.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Change")]
struct ChangeView<'a> {
    #[serde(flatten)]
    change: &'a ResourceChange,
    /// Other projects using a scorer version the change enables, disables or
    /// re-pins (absent when none).
    #[serde(skip_serializing_if = "<[BlastRadius]>::is_empty")]
    blast_radius: &'a [BlastRadius],
}

/// What `evalctl apply -o json` prints, once, whatever happened: the plan
/// it executed and how each change ended. Reads back as an apply report.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "ApplyDocument")]
pub(crate) struct ApplyDocument<'a> {
    /// Version of the apply report format; bumped on any incompatible change.
    format_version: u32,
    /// The plan that was executed (empty when there was nothing to do).
    plan: PlanDocument<'a>,
    /// How many changes ended in each status.
    counts: OutcomeCounts,
    /// Whether every change succeeded and live state converged (exit status 0).
    complete: bool,
    /// One outcome per planned change, in plan order.
    outcomes: &'a [ChangeOutcome],
    /// Objects that, read again after applying, still differ from the plan.
    unconverged: &'a [Unconverged],
    /// With an in-process sandbox (`--sandbox`), which is discarded at exit:
    /// the plan against it after the apply (empty when it converged).
    #[serde(skip_serializing_if = "Option::is_none")]
    plan_after_apply: Option<PlanDocument<'a>>,
}

fn plan_document<'a>(plan: &'a Plan, enrichment: &'a Enrichment, mode: Mode) -> PlanDocument<'a> {
    PlanDocument {
        format_version: plan.format_version,
        mode,
        summary: plan.summary(),
        attribution: AttributionCounts::of(plan),
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
    }
}

/// Renders a plan as JSON.
pub(crate) fn plan(plan: &Plan, enrichment: &Enrichment, mode: Mode) -> String {
    to_json(&plan_document(plan, enrichment, mode))
}

/// Renders an apply, with its plan, as JSON.
pub(crate) fn apply(applied: &Applied<'_>) -> String {
    to_json(&apply_document(applied))
}

fn apply_document<'a>(applied: &Applied<'a>) -> ApplyDocument<'a> {
    let report = applied.report;
    ApplyDocument {
        format_version: APPLY_FORMAT_VERSION,
        plan: plan_document(applied.plan, applied.enrichment, Mode::Plan),
        counts: report.counts(),
        complete: report.is_complete(),
        outcomes: &report.outcomes,
        unconverged: &report.unconverged,
        plan_after_apply: applied
            .plan_after_apply
            .map(|(plan, enrichment)| plan_document(plan, enrichment, Mode::Plan)),
    }
}

/// Writes a plan document to `out` as [`plan`] renders it, without holding
/// the text.
pub(crate) fn write_plan(
    plan: &Plan,
    enrichment: &Enrichment,
    mode: Mode,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    write_json(&plan_document(plan, enrichment, mode), out)
}

/// Writes an apply document to `out` as [`apply`] renders it, without
/// holding the text.
pub(crate) fn write_apply(
    applied: &Applied<'_>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    write_json(&apply_document(applied), out)
}

fn write_json<T: Serialize>(doc: &T, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc)?;
    out.write_all(b"\n")
}

fn to_json<T: Serialize>(doc: &T) -> String {
    // These types hold only strings, numbers and string-keyed maps, which
    // always serialize; should that ever change, the output still parses.
    serde_json::to_string_pretty(doc).unwrap_or_else(|e| {
        serde_json::json!({ "error": format!("cannot render as JSON: {e}") }).to_string()
    })
}
