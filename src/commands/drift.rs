//! `evalctl drift`: the scheduled check. Exit 0 when live matches the
//! manifests, 2 when it drifted, 1 on error; with `--base` (the main
//! branch's previous commit), each difference is attributed, and
//! `--fail-on` exits 4 for the attributions it names.

use crate::cli::DriftArgs;
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::plan::PlanOptions;
use crate::render::{Mode, RenderOptions, write_plan};

use super::plan::fails;
use super::reconcile::{Printable, plan_three_way};

/// Runs `evalctl drift`.
pub async fn run(args: &DriftArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    // Drift compares what is declared; it never proposes deletions or secret rotation.
    let options = PlanOptions {
        targets: args.target.clone().into(),
        ..PlanOptions::default()
    };
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
    drop(connection);
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Drift,
        saved_plan: None,
        artifact: None,
    };
    printer
        .out_streamed(|out| write_plan(&plan, &enrichment, args.output, &render_options, out))
        .map_err(Error::output)?;
    if fails(&plan, &args.three_way.fail_on, printer)? {
        return Ok(ExitStatus::NeedsReview);
    }
    Ok(if plan.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Changes
    })
}
