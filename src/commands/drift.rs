//! `evalctl drift`: the scheduled check. Exit 0 when live matches the
//! manifests, 2 when it drifted, 1 on error.

use crate::cli::DriftArgs;
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::plan::PlanOptions;
use crate::render::{Mode, RenderOptions, render_plan};

use super::reconcile::plan_from_manifests;

/// Runs `evalctl drift`.
pub async fn run(args: &DriftArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    // Drift compares what is declared; it never proposes deletions or secret rotation.
    let options = PlanOptions {
        targets: args.target.clone(),
        ..PlanOptions::default()
    };
    let planned = plan_from_manifests(&args.manifests, &args.live, &options, printer).await?;
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Drift,
        saved_plan: None,
        artifact: None,
    };
    printer.out(&render_plan(
        &planned.plan,
        &planned.enrichment,
        args.output,
        &render_options,
    ));
    Ok(if planned.plan.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Changes
    })
}
