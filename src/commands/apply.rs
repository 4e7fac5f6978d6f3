//! `evalctl apply`: make live state match the manifests, or execute a saved
//! plan after checking, object by object, that nothing it touches moved.

use std::io::{BufRead, IsTerminal};

use crate::api::ListScorersRequest;
use crate::apply::secrets::referenced_variables;
use crate::apply::{ApplyOptions, apply, check_unchanged};
use crate::cli::ApplyArgs;
use crate::exit::ExitStatus;
use crate::live::Catalog;
use crate::manifest::set::ManifestSet;
use crate::output::Printer;
use crate::plan::{Operation, Plan, PlanOptions};
use crate::progress::Progress;
use crate::render::{Format, Mode, RenderOptions, render_apply, render_plan};

use super::connect::{Connection, connect_or_fail};
use super::reconcile::{plan_from_manifests, plan_with, process_env};
use super::saved_plan;

/// Runs `evalctl apply`.
pub async fn run(args: &ApplyArgs, printer: &Printer) -> ExitStatus {
    let prepared = match &args.plan {
        Some(path) => from_saved_plan(args, path, printer).await,
        None => from_manifests(args, printer).await,
    };
    let (plan, connection, catalog, desired) = match prepared {
        Ok(p) => p,
        Err(status) => return status,
    };
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Plan,
    };
    if args.output != Format::Json || plan.is_empty() {
        printer.out(&render_plan(&plan, args.output, &render_options));
    }
    if plan.is_empty() {
        return ExitStatus::Success;
    }
    if let Err(status) = check_secrets_available(&plan, printer) {
        return status;
    }
    if let Err(status) = confirm(args, printer) {
        return status;
    }
    let env = |name: &str| process_env(name);
    let options = ApplyOptions {
        concurrency: usize::from(args.live.concurrency),
        env: &env,
    };
    let progress = Progress::start(
        printer,
        &connection.client,
        &format!("Applying {} change(s)", plan.changes.len()),
    );
    let report = apply(&plan, &connection.client, &catalog, &options).await;
    drop(progress);
    printer.out(&render_apply(&report, args.output, &render_options));
    // `desired` is `None` for a saved plan.
    if connection.sandbox.is_some()
        && args.live.sandbox_state.is_none()
        && let Some(desired) = &desired
    {
        // The in-process sandbox is discarded at exit: show the plan against it now.
        if let Ok(replanned) = replan(args, desired, &connection, printer).await {
            printer.out("\nPlan after apply, against the same sandbox:\n");
            printer.out(&render_plan(&replanned, args.output, &render_options));
        }
    }
    if report.is_complete() {
        ExitStatus::Success
    } else {
        ExitStatus::Incomplete
    }
}

/// The plan to apply, the connection, the scorer catalog, and the manifests
/// the plan came from (`None` for a saved plan).
type Prepared = (Plan, Connection, Catalog, Option<ManifestSet>);

async fn from_manifests(args: &ApplyArgs, printer: &Printer) -> Result<Prepared, ExitStatus> {
    let options = args.shape.options();
    let planned = plan_from_manifests(
        &args.manifests,
        &args.live,
        &options,
        &args.shape.target,
        printer,
    )
    .await?;
    Ok((
        planned.plan,
        planned.connection,
        planned.live.catalog,
        Some(planned.desired),
    ))
}

/// Plans `desired` again after apply; the manifests are not loaded (nor
/// their warnings printed) a second time.
async fn replan(
    args: &ApplyArgs,
    desired: &ManifestSet,
    connection: &Connection,
    printer: &Printer,
) -> Result<Plan, ExitStatus> {
    let options = PlanOptions {
        prune: args.shape.prune,
        rotate_secrets: false,
    };
    let (_, plan) = plan_with(connection, desired, &options, &args.shape.target, printer).await?;
    Ok(plan)
}

async fn from_saved_plan(
    args: &ApplyArgs,
    path: &std::path::Path,
    printer: &Printer,
) -> Result<Prepared, ExitStatus> {
    let usage = |message: &str| {
        printer.error(message);
        ExitStatus::Usage
    };
    if !args.shape.target.is_empty() || args.shape.prune || args.shape.rotate_secrets {
        return Err(usage(
            "--target, --prune and --rotate-secrets shape a new plan; a saved plan is applied as it was saved",
        ));
    }
    if args.manifests.paths.iter().any(|p| p.as_os_str() != ".") {
        return Err(usage("give either manifest paths or --plan FILE, not both"));
    }
    let saved = saved_plan::load(path).map_err(|e| {
        printer.error(&e);
        ExitStatus::Failure
    })?;
    let connection = connect_or_fail(&args.live, printer)?;
    if saved.service != connection.service_label() {
        printer.error(&format!(
            "the plan was made against {}, but this run targets {}; plan again against this service",
            saved.service,
            connection.service_label()
        ));
        return Err(ExitStatus::Failure);
    }
    let fail = |e: crate::client::ApiError| {
        printer.error(&e.to_string());
        ExitStatus::Failure
    };
    let scorers = connection
        .client
        .list_scorers(ListScorersRequest::default())
        .await
        .map_err(fail)?;
    let catalog = Catalog {
        scorers,
        ..Catalog::default()
    };
    let concurrency = usize::from(args.live.concurrency);
    let moved = check_unchanged(&saved.plan, &connection.client, &catalog, concurrency)
        .await
        .map_err(|e| {
            printer.error(&format!("nothing was applied: {e}"));
            ExitStatus::Failure
        })?;
    if !moved.is_empty() {
        let lines: Vec<String> = moved
            .iter()
            .map(|m| format!("  - {}: {}", m.address, m.detail))
            .collect();
        printer.error(&format!(
            "refusing to apply {}: {} object(s) changed since the plan was made:\n{}\nRun `evalctl plan` again and review the new plan.",
            path.display(),
            moved.len(),
            lines.join("\n")
        ));
        return Err(ExitStatus::Failure);
    }
    Ok((saved.plan, connection, catalog, None))
}

/// Refuses before any write when an integration's secret variable is not set.
fn check_secrets_available(plan: &Plan, printer: &Printer) -> Result<(), ExitStatus> {
    let mut missing = Vec::new();
    for change in &plan.changes {
        for op in &change.operations {
            if let Operation::PutIntegration { body } = op {
                for name in referenced_variables(body) {
                    if process_env(&name).is_none_or(|v| v.is_empty()) {
                        missing.push(format!("{name} (for {})", change.address));
                    }
                }
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    printer.error(&format!(
        "nothing was applied: these environment variables hold integration secrets and are not set: {}",
        missing.join(", ")
    ));
    Err(ExitStatus::Failure)
}

/// Asks for confirmation on a terminal; without one, requires --auto-approve.
fn confirm(args: &ApplyArgs, printer: &Printer) -> Result<(), ExitStatus> {
    if args.auto_approve {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        printer.error("stdin is not a terminal, so apply cannot ask for confirmation; pass --auto-approve to apply");
        return Err(ExitStatus::Usage);
    }
    eprint_prompt("Apply these changes? Only 'yes' will be accepted: ");
    let mut answer = String::new();
    if stdin.lock().read_line(&mut answer).is_err() || answer.trim() != "yes" {
        printer.info("Apply cancelled; nothing was changed.");
        return Err(ExitStatus::Failure);
    }
    Ok(())
}

fn eprint_prompt(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
