//! `evalctl plan`: show what apply would change, optionally save it.

use crate::cli::PlanArgs;
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::render::{Mode, RenderOptions, render_plan};

use super::reconcile::plan_from_manifests;
use super::saved_plan::{SavedPlanRef, save};

/// Runs `evalctl plan`.
pub async fn run(args: &PlanArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let options = args.shape.options();
    let planned = plan_from_manifests(&args.manifests, &args.live, &options, printer).await?;
    let saved_plan = args.out.as_ref().map(|path| path.to_string_lossy());
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Plan,
        saved_plan: saved_plan.as_deref(),
        artifact: args.artifact.as_deref(),
    };
    printer.out(&render_plan(
        &planned.plan,
        &planned.enrichment,
        args.output,
        &render_options,
    ));
    if let Some(path) = &args.out {
        let service = planned.connection.service_label();
        let saved = SavedPlanRef {
            service: &service,
            plan: &planned.plan,
        };
        save(path, &saved)?;
        printer.info(&format!(
            "Saved the plan to {}; apply it with `evalctl apply --plan {}`.",
            path.display(),
            path.display()
        ));
    }
    Ok(if args.detailed_exitcode && !planned.plan.is_empty() {
        ExitStatus::Changes
    } else {
        ExitStatus::Success
    })
}
