//! `evalctl plan`: show what apply would change, optionally save it.

use crate::cli::{FailOn, PlanArgs};
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::plan::{Attribution, ChangesError, Plan};
use crate::render::{Format, Mode, RenderOptions, write_plan};

use super::reconcile::{Printable, plan_three_way};
use super::saved_plan::{SavedPlanRef, save};

/// Runs `evalctl plan`.
pub async fn run(args: &PlanArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let options = args.shape.options();
    let Printable {
        plan,
        enrichment,
        connection,
    } = plan_three_way(
        &args.manifests,
        &args.three_way,
        &args.live,
        &options,
        printer,
    )
    .await?;
    let saved_plan = args.out.as_ref().map(|path| path.to_string_lossy());
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Plan,
        saved_plan: saved_plan.as_deref(),
        artifact: args.artifact.as_deref(),
    };
    printer
        .out_streamed(|out| write_plan(&plan, &enrichment, args.output, &render_options, out))
        .map_err(Error::output)?;
    if args.output != Format::Text && !plan.mass_changes.is_empty() {
        // Text plans end with this warning; a JSON or markdown plan on
        // stdout is read by a program, so the CI log gets it here.
        let mut warning = crate::plan::guard::headline(&plan.mass_changes);
        for change in &plan.mass_changes {
            warning.push_str(&format!("\n  - {change}"));
        }
        printer.warn(&warning);
    }
    if let Some(path) = &args.out {
        let service = connection.service_label();
        let saved = SavedPlanRef {
            service: &service,
            allow_destroy: args.shape.allow_destroy,
            plan: &plan,
        };
        save(path, &saved)?;
        printer.info(&format!(
            "Saved the plan to {}; apply it with `evalctl apply --plan {}`.",
            path.display(),
            path.display()
        ));
    }
    if fails(&plan, &args.three_way.fail_on, printer)? {
        return Ok(ExitStatus::NeedsReview);
    }
    Ok(if args.detailed_exitcode && !plan.is_empty() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    })
}

/// Whether `plan` has a change (or a field of one) of an attribution
/// `fail_on` names; says which on stderr.
pub fn fails(plan: &Plan, fail_on: &[FailOn], printer: &Printer) -> Result<bool, ChangesError> {
    let mut failed = false;
    for wanted in [FailOn::Conflict, FailOn::Drift] {
        if !fail_on.contains(&wanted) {
            continue;
        }
        let (attribution, flag) = match wanted {
            FailOn::Conflict => (Attribution::Conflict, "conflict"),
            FailOn::Drift => (Attribution::Drift, "drift"),
        };
        let count = count_with(plan, attribution)?;
        if count > 0 {
            failed = true;
            let (noun, what) = match (wanted, count) {
                (FailOn::Conflict, 1) => ("change is", "a conflict"),
                (FailOn::Conflict, _) => ("changes are", "conflicts"),
                (FailOn::Drift, 1) => ("change reverts", "an out-of-band change"),
                (FailOn::Drift, _) => ("changes revert", "out-of-band changes"),
            };
            printer.error(&format!(
                "{count} {noun} {what} (--fail-on {flag}): a human should look before this is applied"
            ));
        }
    }
    Ok(failed)
}

/// How many changes have `attribution`, themselves or in a field (an
/// attributed plan is held in memory: [`crate::plan::attribution::attribute`]).
pub fn count_with(plan: &Plan, attribution: Attribution) -> Result<usize, ChangesError> {
    let mut count = 0;
    for change in plan.changes.iter() {
        let change = change?;
        if change.attribution == Some(attribution)
            || change
                .fields
                .iter()
                .any(|f| f.attribution == Some(attribution))
        {
            count += 1;
        }
    }
    Ok(count)
}
