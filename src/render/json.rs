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

use std::cell::RefCell;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Applied, Mode};
use crate::plan::attribution::AttributionCounts;
use crate::plan::{
    BlastRadius, ChangeOutcome, Changes, ChangesError, Enrichment, Forecast, MassChange, Note,
    OutcomeCounts, Plan, ResourceChange, Summary, Unconverged,
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
    #[schemars(with = "Vec<ChangeView<'a>>")]
    changes: ChangeList<'a>,
    /// Things worth knowing that are not changes (unmanaged objects, ...), ordered.
    notes: &'a [Note],
    /// The collections the plan deletes or replaces more of than the guard
    /// allows: `apply` refuses the plan unless given `--allow-mass-changes`
    /// (absent when none, and from drift reports).
    #[serde(skip_serializing_if = "<[MassChange]>::is_empty")]
    mass_changes: &'a [MassChange],
    /// The judge-call forecast of the runs whose metric settings change
    /// (versioned on its own; absent when none do). In a drift report,
    /// `before` is live and `after` declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    forecast: Option<&'a Forecast>,
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

/// A plan's changes with their blast radius, serialized as a list of
/// [`ChangeView`]s, each change read as it is written (a large plan's are
/// in a temporary file).
/// A change that cannot be read back ends the document with a serializer
/// error, which holds only a message: the error itself is kept in
/// `unread` for the caller ([`ChangeList::unread`]).
struct ChangeList<'a> {
    changes: &'a Changes,
    enrichment: &'a Enrichment,
    unread: RefCell<Option<ChangesError>>,
}

impl ChangeList<'_> {
    /// The error that ended the document, if a change could not be read back.
    fn unread(&self) -> Option<ChangesError> {
        self.unread.borrow_mut().take()
    }
}

impl Serialize for ChangeList<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let mut seq = serializer.serialize_seq(Some(self.changes.len()))?;
        for change in self.changes.iter() {
            let change = change.map_err(|error| {
                let message = S::Error::custom(&error);
                *self.unread.borrow_mut() = Some(error);
                message
            })?;
            seq.serialize_element(&ChangeView {
                change: &change,
                blast_radius: self.enrichment.blast_radius_of(&change.address),
            })?;
        }
        seq.end()
    }
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

fn plan_document<'a>(
    plan: &'a Plan,
    enrichment: &'a Enrichment,
    mode: Mode,
) -> Result<PlanDocument<'a>, ChangesError> {
    // Only the people the plan names.
    let people = plan
        .changes
        .creators()
        .chain(plan.notes.iter().filter_map(|n| n.created_by.as_deref()))
        .filter_map(|id| {
            enrichment
                .people
                .get_key_value(id)
                .map(|(k, v)| (k.as_str(), v.as_str()))
        })
        .collect();
    Ok(PlanDocument {
        format_version: plan.format_version,
        mode,
        summary: plan.summary(),
        attribution: AttributionCounts::of(plan),
        changes: ChangeList {
            changes: &plan.changes,
            enrichment,
            unread: RefCell::new(None),
        },
        notes: &plan.notes,
        mass_changes: match mode {
            Mode::Plan => &plan.mass_changes,
            Mode::Drift => &[],
        },
        forecast: plan.forecast.as_ref(),
        people,
    })
}

/// Renders a plan as JSON.
pub(crate) fn plan(
    plan: &Plan,
    enrichment: &Enrichment,
    mode: Mode,
) -> Result<String, ChangesError> {
    let mut out = Vec::new();
    write_plan(plan, enrichment, mode, &mut out).map_err(unread)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Renders an apply, with its plan, as JSON.
pub(crate) fn apply(applied: &Applied<'_>) -> Result<String, ChangesError> {
    let mut out = Vec::new();
    write_apply(applied, &mut out).map_err(unread)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The error of a document written to memory: only reading a change back
/// can fail there.
fn unread(error: std::io::Error) -> ChangesError {
    match error.downcast::<ChangesError>() {
        Ok(error) => error,
        Err(other) => ChangesError::Read(other),
    }
}

fn apply_document<'a>(applied: &Applied<'a>) -> Result<ApplyDocument<'a>, ChangesError> {
    let report = applied.report;
    Ok(ApplyDocument {
        format_version: APPLY_FORMAT_VERSION,
        plan: plan_document(applied.plan, applied.enrichment, Mode::Plan)?,
        counts: report.counts(),
        complete: report.is_complete(),
        outcomes: &report.outcomes,
        unconverged: &report.unconverged,
        plan_after_apply: applied
            .plan_after_apply
            .map(|(plan, enrichment)| plan_document(plan, enrichment, Mode::Plan))
            .transpose()?,
    })
}

/// Writes a plan document to `out` as [`plan`] renders it, without holding
/// the text. A change that cannot be read back is the error (an
/// [`std::io::Error`] holding the [`ChangesError`]).
pub(crate) fn write_plan(
    plan: &Plan,
    enrichment: &Enrichment,
    mode: Mode,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let doc = plan_document(plan, enrichment, mode)?;
    let written = write_json(&doc, out);
    match doc.changes.unread() {
        Some(error) => Err(std::io::Error::other(error)),
        None => written,
    }
}

/// Writes an apply document to `out` as [`apply`] renders it, without
/// holding the text.
pub(crate) fn write_apply(
    applied: &Applied<'_>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let doc = apply_document(applied)?;
    let written = write_json(&doc, out);
    let unread = doc.plan.changes.unread().or_else(|| {
        doc.plan_after_apply
            .as_ref()
            .and_then(|after| after.changes.unread())
    });
    match unread {
        Some(error) => Err(std::io::Error::other(error)),
        None => written,
    }
}

fn write_json<T: Serialize>(doc: &T, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc)?;
    out.write_all(b"\n")
}
