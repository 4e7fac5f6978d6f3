//! `evalctl apply`: make live state match the manifests, or execute a saved
//! plan after checking, object by object, that nothing it touches moved.

use std::io::{BufRead, IsTerminal};

use crate::cli::ApplyArgs;
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::manifest::set::ManifestSet;
use crate::output::Printer;
use crate::plan::{
    ApplyReport, ChangeOutcome, Enrichment, Operation, OutcomeStatus, Plan, PlanOptions,
    ResourceChange,
};
use crate::progress::Progress;
use crate::reconcile::apply::secrets::referenced_variables;
use crate::reconcile::apply::{ApplyOptions, apply};
use crate::reconcile::confirm::{check_fields, check_unchanged, replan_touched};
use crate::reconcile::read::catalog::read_catalog;
use crate::render::{
    Applied, Format, Mode, RenderOptions, render_apply, render_apply_summary, render_outcome,
    render_plan,
};
use crate::state::State;

use super::connect::{Connection, connect};
use super::reconcile::{plan_from_manifests, plan_with, process_env};
use super::saved_plan;

/// What apply works from: the plan, the connection, the state the plan was
/// made from (for a saved plan, the scorer catalog only), and the manifests
/// the plan came from (`None` for a saved plan).
struct Prepared {
    plan: Plan,
    enrichment: Enrichment,
    connection: Connection,
    state: State,
    desired: Option<ManifestSet>,
}

/// Runs `evalctl apply`.
pub async fn run(args: &ApplyArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let prepared = match &args.plan {
        Some(path) => from_saved_plan(args, path).await?,
        None => from_manifests(args, printer).await?,
    };
    let Prepared {
        plan,
        enrichment,
        connection,
        state,
        desired,
    } = prepared;
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Plan,
    };
    if plan.is_empty() {
        // Nothing to apply: the plan says so, in JSON as an apply report.
        let report = ApplyReport::default();
        let applied = Applied {
            plan: &plan,
            enrichment: &enrichment,
            report: &report,
            plan_after_apply: None,
        };
        printer.out(&match args.output {
            Format::Json => render_apply(&applied, args.output, &render_options),
            _ => render_plan(&plan, &enrichment, args.output, &render_options),
        });
        return Ok(ExitStatus::Success);
    }
    if args.output != Format::Json {
        printer.out(&render_plan(
            &plan,
            &enrichment,
            args.output,
            &render_options,
        ));
    }
    check_secrets_available(&plan)?;
    confirm(args)?;
    if args.output == Format::Text {
        // The outcomes follow the plan, a blank line apart.
        printer.out("\n");
    }
    let env = |name: &str| process_env(name);
    let progress = Progress::counted(printer, &connection.client, "Applying", plan.changes.len());
    let stream = |outcome: &ChangeOutcome| stream_outcome(outcome, args.output, printer, &progress);
    let options = ApplyOptions {
        concurrency: usize::from(args.live.concurrency),
        env: &env,
        on_outcome: &stream,
    };
    let outcomes = apply(&plan, &connection.client, &options).await;
    drop(progress);
    let progress = Progress::start(printer, &connection.client, "Confirming");
    let applied: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| o.status == OutcomeStatus::Succeeded)
        .map(|(c, _)| c)
        .collect();
    let unconverged = match &desired {
        Some(desired) => {
            let prune = args.shape.prune;
            replan_touched(&connection.client, desired, prune, &applied, Some(&state)).await
        }
        None => check_fields(&connection.client, &state.catalog, &applied).await,
    };
    drop(progress);
    let report = ApplyReport {
        outcomes,
        unconverged,
    };
    // The in-process sandbox is discarded at exit: the plan against it now.
    let after = match &desired {
        Some(desired) if connection.sandbox.is_some() && args.live.sandbox_state.is_none() => {
            let options = PlanOptions {
                rotate_secrets: false,
                ..args.shape.options()
            };
            plan_with(&connection, desired, &options, printer)
                .await
                .ok()
                .map(|(_, replanned, enrichment)| (replanned, enrichment))
        }
        _ => None,
    };
    let applied = Applied {
        plan: &plan,
        enrichment: &enrichment,
        report: &report,
        plan_after_apply: after.as_ref().map(|(p, e)| (p, e)),
    };
    printer.out(&match args.output {
        // The outcomes were printed as they came: what follows them.
        Format::Text => render_apply_summary(&applied, &render_options),
        _ => render_apply(&applied, args.output, &render_options),
    });
    Ok(if report.is_complete() {
        ExitStatus::Success
    } else {
        ExitStatus::Incomplete
    })
}

async fn from_manifests(args: &ApplyArgs, printer: &Printer) -> Result<Prepared, Error> {
    let options = args.shape.options();
    let planned = plan_from_manifests(&args.manifests, &args.live, &options, printer).await?;
    Ok(Prepared {
        plan: planned.plan,
        enrichment: planned.enrichment,
        connection: planned.connection,
        state: planned.state,
        desired: Some(planned.desired),
    })
}

async fn from_saved_plan(args: &ApplyArgs, path: &std::path::Path) -> Result<Prepared, Error> {
    if !args.shape.target.is_empty() || args.shape.prune || args.shape.rotate_secrets {
        return Err(Error::Usage(
            "--target, --prune and --rotate-secrets shape a new plan; a saved plan is applied as it was saved",
        ));
    }
    if args.manifests.paths.iter().any(|p| p.as_os_str() != ".") {
        return Err(Error::Usage(
            "give either manifest paths or --plan FILE, not both",
        ));
    }
    let saved = saved_plan::load(path)?;
    let connection = connect(&args.live).map_err(Error::Connect)?;
    if saved.service != connection.service_label() {
        return Err(Error::ServiceMismatch {
            planned: saved.service,
            current: connection.service_label(),
        });
    }
    let catalog = read_catalog(&connection.client, &Default::default()).await?;
    let changes: Vec<&ResourceChange> = saved.plan.changes.iter().collect();
    let moved = check_unchanged(&connection.client, &catalog, &changes)
        .await
        .map_err(Error::Unchecked)?;
    if !moved.is_empty() {
        return Err(Error::PlanMoved {
            path: path.to_owned(),
            moved,
        });
    }
    Ok(Prepared {
        plan: saved.plan,
        enrichment: Enrichment::default(),
        connection,
        state: State {
            catalog,
            ..State::default()
        },
        desired: None,
    })
}

/// Prints one change's outcome as soon as it is known, on a terminal and off
/// it: on stdout as part of a text report; on stderr beside a JSON or
/// markdown document, which stays whole on stdout (and is quieted by `-q`).
fn stream_outcome(outcome: &ChangeOutcome, format: Format, printer: &Printer, progress: &Progress) {
    progress.suspend(|| {
        if format == Format::Text {
            let options = RenderOptions {
                color: printer.color_stdout(),
                mode: Mode::Plan,
            };
            printer.out(&render_outcome(outcome, &options));
        } else {
            let options = RenderOptions {
                color: printer.color_stderr(),
                mode: Mode::Plan,
            };
            printer.info(&render_outcome(outcome, &options));
        }
    });
    progress.advance();
}

/// Refuses before any write when an integration's secret variable is not set.
fn check_secrets_available(plan: &Plan) -> Result<(), Error> {
    let mut missing = Vec::new();
    for change in &plan.changes {
        for body in change
            .operations
            .iter()
            .filter_map(Operation::integration_body)
        {
            {
                for name in referenced_variables(body) {
                    if process_env(&name).is_none_or(|v| v.is_empty()) {
                        missing.push(format!("{name} (for {})", change.address));
                    }
                }
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::MissingSecrets { missing })
    }
}

/// Asks for confirmation on a terminal; without one, requires --auto-approve.
fn confirm(args: &ApplyArgs) -> Result<(), Error> {
    if args.auto_approve {
        return Ok(());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::NeedsApproval);
    }
    eprint_prompt("Apply these changes? Only 'yes' will be accepted: ");
    let mut answer = String::new();
    if stdin.lock().read_line(&mut answer).is_err() || answer.trim() != "yes" {
        return Err(Error::Cancelled);
    }
    Ok(())
}

fn eprint_prompt(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
