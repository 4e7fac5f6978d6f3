//! `evalctl apply`: make live state match the manifests, or execute a saved
//! plan after checking, object by object, that nothing it touches moved.
//!
//! Interrupts: the first SIGINT or SIGTERM stops the run. Before any write
//! (planning, the confirmation prompt) it ends at once with nothing printed
//! half-done; during the apply no new change starts, the changes in flight
//! get the request timeout to finish, and the report says what succeeded,
//! failed and was not started. Either way the exit status is 130. A second
//! signal exits at once.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal};
use std::sync::Arc;

use crate::cli::ApplyArgs;
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::plan::{
    AddressKind, ApplyReport, ChangeOutcome, ChangesError, Enrichment, OutcomeStatus, Plan,
    PlanOptions, ResourceChange, Unconverged,
};
use crate::progress::Progress;
use crate::reconcile::apply::secrets::referenced_variables;
use crate::reconcile::apply::{ApplyOptions, Stop, apply};
use crate::reconcile::confirm::{
    Touched, check_fields, check_unchanged, named_ids, not_confirmed, replan_touched,
};
use crate::reconcile::read::catalog::read_catalog;
use crate::render::{
    Applied, Format, Mode, RenderOptions, render_apply_summary, render_outcome, write_apply,
    write_plan,
};
use crate::state::State;

use super::connect::{Connection, connect};
use super::reconcile::{ManifestSource, Secrets, plan_from_manifests, plan_with, process_env};
use super::saved_plan;

/// What apply works from: the plan, the connection, the state the plan was
/// made from (for a saved plan, the scorer catalog only), and where the
/// manifests the plan came from are (`None` for a saved plan): they are
/// loaded again to confirm, not held through the apply.
struct Prepared {
    plan: Plan,
    enrichment: Enrichment,
    connection: Connection,
    state: State,
    source: Option<ManifestSource>,
}

/// Runs `evalctl apply`.
pub async fn run(args: &ApplyArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let stop = Arc::new(Stop::new(args.live.connection.timeout));
    let _signals = watch_signals(Arc::clone(&stop), *printer);
    let prepared = interruptible(&stop, async {
        match &args.plan {
            Some(path) => from_saved_plan(args, path, printer).await,
            None => from_manifests(args, printer).await,
        }
    })
    .await??;
    let Prepared {
        mut plan,
        enrichment,
        connection,
        state,
        source,
    } = prepared;
    let render_options = RenderOptions {
        color: printer.color_stdout(),
        mode: Mode::Plan,
        saved_plan: None,
        artifact: None,
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
        printer
            .out_streamed(|out| match args.output {
                Format::Json => write_apply(&applied, args.output, &render_options, out),
                _ => write_plan(&plan, &enrichment, args.output, &render_options, out),
            })
            .map_err(Error::output)?;
        return Ok(ExitStatus::Success);
    }
    if args.output != Format::Json {
        // Written as rendered: a large plan is megabytes of text.
        // A plan that cannot be shown is not applied.
        printer
            .out_streamed(|out| write_plan(&plan, &enrichment, args.output, &render_options, out))
            .map_err(Error::output)?;
    }
    if args.output == Format::Text && source.is_some() {
        // Printed, and confirmed by planning the manifests again: the text
        // report shows outcomes, not what the plan printed (the field
        // differences alone grow with every change; measured:
        // docs/performance.md, Figures behind choices in the code). A saved
        // plan keeps them: its field differences are how it is confirmed.
        plan.release_printed();
    }
    check_secrets_available(&plan, source.as_ref(), printer)?;
    if !plan.mass_changes.is_empty() && !args.allow_mass_changes {
        return Err(Error::MassChanges {
            changes: plan.mass_changes.clone(),
            // A saved plan's were the defaults or the repo's when it was planned.
            limits: source
                .as_ref()
                .map_or_else(crate::plan::GuardLimits::default, ManifestSource::guard),
        });
    }
    interruptible(&stop, confirm(args)).await??;
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
        catalog: &state.catalog,
        stop: &stop,
    };
    let outcomes = apply(&plan, &connection.client, &options).await;
    drop(progress);
    if let Some(signal) = stop.cause() {
        // Interrupted: what was done is reported, nothing more is read.
        let report = ApplyReport {
            outcomes,
            unconverged: Vec::new(),
        };
        let applied = Applied {
            plan: &plan,
            enrichment: &enrichment,
            report: &report,
            plan_after_apply: None,
        };
        write_report(printer, &applied, args.output, &render_options);
        let c = report.counts();
        printer.warn(&format!(
            "interrupted ({signal}): {} change(s) succeeded, {} failed, {} not started; the next apply completes the rest",
            c.succeeded, c.failed, c.skipped
        ));
        return Ok(ExitStatus::Interrupted);
    }
    let progress = Progress::start(printer, &connection.client, "Confirming");
    let unconverged = confirm_applied(
        &mut plan,
        &outcomes,
        &connection,
        &state,
        source.as_ref(),
        args,
    )
    .await;
    drop(progress);
    let report = ApplyReport {
        outcomes,
        unconverged,
    };
    // The in-process sandbox is discarded at exit: the plan against it now.
    let in_process = connection.sandbox.is_some() && args.live.sandbox_state.is_none();
    let after = match source
        .as_ref()
        .filter(|_| in_process)
        .map(ManifestSource::reload)
    {
        Some(Ok(desired)) => {
            let options = PlanOptions {
                rotate_secrets: false,
                ..args.shape.options()
            };
            plan_with(&connection, &desired, &options, printer)
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
    write_report(printer, &applied, args.output, &render_options);
    Ok(if report.is_complete() {
        ExitStatus::Success
    } else if report.has_invalid_input() {
        // The manifests must change (a code scorer's file the service's
        // validation fails): an error of the input, not an unfinished apply.
        ExitStatus::Failure
    } else {
        ExitStatus::Incomplete
    })
}

/// What did not converge of what the changes that succeeded touched: from
/// manifests (`source`), those objects planned again against the manifests
/// loaded again; from a saved plan, each read again and its planned fields
/// checked. A text report shows outcomes only, so the plan's changes are
/// let go before the manifests are loaded again.
async fn confirm_applied(
    plan: &mut Plan,
    outcomes: &[ChangeOutcome],
    connection: &Connection,
    state: &State,
    source: Option<&ManifestSource>,
    args: &ApplyArgs,
) -> Vec<Unconverged> {
    let succeeded = || {
        outcomes
            .iter()
            .filter(|o| o.status == OutcomeStatus::Succeeded)
            .map(|o| &o.address)
    };
    let unread = |error: ChangesError| {
        not_confirmed(
            &Touched::at(succeeded(), BTreeSet::new()),
            &error.to_string(),
        )
    };
    let Some(source) = source else {
        return match succeeded_changes(plan, outcomes) {
            Ok(applied) => {
                let applied: Vec<&ResourceChange> = applied.iter().map(|c| &**c).collect();
                check_fields(&connection.client, &state.catalog, &applied).await
            }
            Err(error) => unread(error),
        };
    };
    let named = match named_by_succeeded(plan, outcomes) {
        Ok(named) => named,
        Err(error) => return unread(error),
    };
    if args.output == Format::Text {
        plan.release_changes();
    }
    let touched = Touched::at(succeeded(), named);
    // Loaded again, and released as they are planned.
    match source.reload() {
        Ok(desired) => {
            let (client, prune) = (&connection.client, args.shape.prune);
            replan_touched(client, Cow::Owned(desired), prune, &touched, Some(state)).await
        }
        Err(changed) => not_confirmed(&touched, &changed.to_string()),
    }
}

/// Writes what the apply did (after the outcomes, printed as they came, in
/// a text report). The changes are made by then: a report that cannot be
/// written is an error on stderr, and the exit status still says whether
/// the apply completed.
fn write_report(printer: &Printer, applied: &Applied<'_>, format: Format, options: &RenderOptions) {
    let written = printer.out_streamed(|out| match format {
        Format::Text => out.write_all(render_apply_summary(applied, options)?.as_bytes()),
        _ => write_apply(applied, format, options, out),
    });
    if let Err(error) = written {
        printer.error(&format!(
            "{} (the changes above were made; the exit status says whether the apply completed)",
            Error::output(error)
        ));
    }
}

async fn from_manifests(args: &ApplyArgs, printer: &Printer) -> Result<Prepared, Error> {
    let options = args.shape.options();
    let planned = plan_from_manifests(
        &args.manifests,
        Secrets::Sent,
        &args.live,
        &options,
        printer,
    )
    .await?;
    Ok(Prepared {
        plan: planned.plan,
        enrichment: planned.enrichment,
        connection: planned.connection,
        state: planned.state,
        source: Some(planned.source),
    })
}

/// The note for `applied` of the `total` changes of the saved plan at
/// `path` found already applied.
fn already_applied(path: &std::path::Path, applied: usize, total: usize) -> String {
    let path = path.display();
    if applied == total {
        format!(
            "{path} was already applied: live holds what its {total} change(s) set, so nothing is sent"
        )
    } else {
        format!(
            "{applied} of the {total} changes of {path} were already applied (live holds what they set): they are not sent again"
        )
    }
}

async fn from_saved_plan(
    args: &ApplyArgs,
    path: &std::path::Path,
    printer: &Printer,
) -> Result<Prepared, Error> {
    if !args.shape.target.is_empty()
        || args.shape.prune
        || args.shape.allow_destroy
        || args.shape.rotate_secrets
    {
        return Err(Error::Usage(
            "--target, --prune, --allow-destroy and --rotate-secrets shape a new plan; a saved plan is applied as it was saved",
        ));
    }
    if args.manifests.paths.iter().any(|p| p.as_os_str() != ".") {
        return Err(Error::Usage(
            "give either manifest paths or --plan FILE, not both",
        ));
    }
    let saved = saved_plan::load(path)?;
    let connection = connect(&args.live)?;
    if saved.service != connection.service_label() {
        return Err(Error::ServiceMismatch {
            planned: saved.service,
            current: connection.service_label(),
        });
    }
    let catalog = read_catalog(&connection.client, &Default::default()).await?;
    let changes = saved.plan.changes.to_vec().map_err(Error::Changes)?;
    let destroys: Vec<String> = changes
        .iter()
        .filter(|c| c.operations.iter().any(crate::kinds::destroys))
        .map(|c| c.address.to_string())
        .collect();
    if !destroys.is_empty() && !saved.allow_destroy {
        return Err(Error::DestroyNotAllowed {
            path: path.to_owned(),
            addresses: destroys,
        });
    }
    let checked = {
        let changes: Vec<&ResourceChange> = changes.iter().collect();
        check_unchanged(&connection.client, &catalog, &changes)
            .await
            .map_err(Error::Unchecked)?
    };
    if !checked.moved.is_empty() {
        return Err(Error::PlanMoved {
            path: path.to_owned(),
            moved: checked.moved,
        });
    }
    let mut plan = saved.plan;
    if !checked.applied.is_empty() {
        // Applied before: live holds what they set. Sent again they would be
        // reported "updated", attributed as when the plan was made.
        let total = changes.len();
        let mut left = crate::plan::Changes::new();
        for (index, change) in changes.into_iter().enumerate() {
            if !checked.applied.contains(&index) {
                left.push(change);
            }
        }
        plan.changes = left;
        printer.info(&already_applied(path, checked.applied.len(), total));
    }
    // The file keeps user ids: the people they are, as the plan named them.
    let enrichment = crate::reconcile::enrich::people_of(&connection.client, &plan).await;
    Ok(Prepared {
        plan,
        enrichment,
        connection,
        state: State {
            catalog,
            ..State::default()
        },
        source: None,
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
                saved_plan: None,
                artifact: None,
            };
            printer.out(&render_outcome(outcome, &options));
        } else {
            let options = RenderOptions {
                color: printer.color_stderr(),
                mode: Mode::Plan,
                saved_plan: None,
                artifact: None,
            };
            printer.info(&render_outcome(outcome, &options));
        }
    });
    progress.advance();
}

/// Refuses before any write when a secret variable that the plan sends (an
/// integration's, or a Protect stage's webhook URL's) is not set, showing each at the field that takes it (from
/// manifests). A variable the plan does not send is not mentioned.
fn check_secrets_available(
    plan: &Plan,
    source: Option<&ManifestSource>,
    printer: &Printer,
) -> Result<(), Error> {
    let changes = &plan.changes;
    let mut missing = Vec::new();
    let mut names = Vec::new();
    for i in 0..changes.len() {
        if !changes.kind(i).reads_environment() {
            continue;
        }
        let change = changes.get(i).map_err(Error::Changes)?;
        for name in change.operations.iter().flat_map(|op| {
            let mut names = op
                .integration_body()
                .map(referenced_variables)
                .unwrap_or_default();
            names.extend(op.webhook_variables());
            names
        }) {
            if process_env(&name).is_none_or(|v| v.is_empty()) {
                missing.push(format!("{name} (for {})", change.address));
                names.push(name);
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    if let Some(source) = source {
        let shown = source.unset_secrets(&names, printer.color_stderr());
        if !shown.is_empty() {
            printer.diagnostics(&shown);
        }
    }
    Err(Error::MissingSecrets { missing })
}

/// The ids of existing objects that the changes that succeeded named
/// ([`named_ids`]): only sections, widgets and templates are named by id,
/// so only their changes are read back.
fn named_by_succeeded(
    plan: &Plan,
    outcomes: &[ChangeOutcome],
) -> Result<BTreeSet<String>, ChangesError> {
    let changes = &plan.changes;
    let mut named = BTreeSet::new();
    for (i, outcome) in outcomes.iter().enumerate() {
        let names_ids = matches!(
            changes.kind(i),
            AddressKind::Section | AddressKind::Widget | AddressKind::Template
        );
        if names_ids && outcome.status == OutcomeStatus::Succeeded {
            named.extend(named_ids([&*changes.get(i)?]));
        }
    }
    Ok(named)
}

/// The changes that succeeded, read back (a saved plan's, to check their fields).
fn succeeded_changes<'p>(
    plan: &'p Plan,
    outcomes: &[ChangeOutcome],
) -> Result<Vec<Cow<'p, ResourceChange>>, ChangesError> {
    outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.status == OutcomeStatus::Succeeded)
        .map(|(i, _)| plan.changes.get(i))
        .collect()
}

/// Asks for confirmation on a terminal; without one, requires --auto-approve.
/// The answer is read on a thread of its own, so that an interrupt while
/// waiting for it ends the run (the thread ends with the process).
async fn confirm(args: &ApplyArgs) -> Result<(), Error> {
    if args.auto_approve {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(Error::NeedsApproval);
    }
    eprint_prompt("Apply these changes? Only 'yes' will be accepted: ");
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut answer = String::new();
        let read = std::io::stdin().lock().read_line(&mut answer);
        let _ = tx.send(read.is_ok() && answer.trim() == "yes");
    });
    if rx.await.unwrap_or(false) {
        Ok(())
    } else {
        Err(Error::Cancelled)
    }
}

/// Runs `work` unless `stop` is asked for first: then the run ends with
/// nothing applied (nothing of `work` is printed: it prints nothing).
async fn interruptible<T>(stop: &Stop, work: impl Future<Output = T>) -> Result<T, Error> {
    tokio::select! {
        out = work => Ok(out),
        () = stop.requested() => Err(Error::Interrupted {
            signal: stop.cause().unwrap_or("signal").to_owned(),
        }),
    }
}

/// Watches SIGINT and SIGTERM until dropped: the first asks `stop` to stop,
/// the second exits the process at once (130).
fn watch_signals(stop: Arc<Stop>, printer: Printer) -> Option<AbortOnDrop> {
    let signals = Signals::new()
        .map_err(|e| printer.warn(&format!("cannot watch for interrupts: {e}")))
        .ok()?;
    Some(AbortOnDrop(tokio::spawn(async move {
        let mut signals = signals;
        let first = signals.next().await;
        stop.request(first);
        printer.warn(&format!(
            "{first}: stopping; changes in flight may take up to {:.0}s to finish (send it again to exit at once)",
            stop.grace().as_secs_f64()
        ));
        let second = signals.next().await;
        printer.warn(&format!("{second} again: exiting at once"));
        std::process::exit(i32::from(ExitStatus::Interrupted.code()));
    })))
}

/// A task that ends with its owner.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// SIGINT and SIGTERM (Ctrl-C where there are no Unix signals).
struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening (from now on, these signals no longer end the process).
    fn new() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Signals {})
        }
    }

    /// The name of the next signal.
    async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

fn eprint_prompt(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}
