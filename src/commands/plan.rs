//! `evalctl plan`: show what apply would change, optionally save it.

use crate::cli::PlanArgs;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::render::{Mode, RenderOptions, render_plan};

use super::reconcile::plan_from_manifests;
use super::saved_plan::{SavedPlanRef, save};

/// Runs `evalctl plan`.
pub async fn run(args: &PlanArgs, printer: &Printer) -> ExitStatus {
    let options = args.shape.options();
    let planned = match plan_from_manifests(
        &args.manifests,
        &args.live,
        &options,
        &args.shape.target,
        printer,
    )
    .await
    {
        Ok(p) => p,
        Err(status) => return status,
    };
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Plan,
    };
    printer.out(&render_plan(&planned.plan, args.output, &render_options));
    if let Some(path) = &args.out {
        let service = planned.connection.service_label();
        let saved = SavedPlanRef {
            service: &service,
            plan: &planned.plan,
        };
        if let Err(e) = save(path, &saved) {
            printer.error(&e);
            return ExitStatus::Failure;
        }
        printer.info(&format!(
            "Saved the plan to {}; apply it with `evalctl apply --plan {}`.",
            path.display(),
            path.display()
        ));
    }
    if args.detailed_exitcode && !planned.plan.is_empty() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    }
}
