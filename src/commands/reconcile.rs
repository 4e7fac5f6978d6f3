//! The shared first half of plan, apply and drift: load the manifests,
//! connect, fetch live state, compute the plan.

use crate::cli::{LiveArgs, ManifestArgs};
use crate::exit::ExitStatus;
use crate::live::{Live, blast_radius::blast_radius, fetch::fetch, people};
use crate::manifest::{self, set::ManifestSet};
use crate::output::Printer;
use crate::plan::{Plan, PlanError, PlanOptions, plan};
use crate::progress::Progress;

use super::connect::{Connection, connect_or_fail};

/// Everything a reconciling command has after planning.
pub struct Planned {
    /// The manifests.
    pub desired: ManifestSet,
    /// The connection.
    pub connection: Connection,
    /// Live state.
    pub live: Live,
    /// The plan, narrowed to the targets.
    pub plan: Plan,
}

/// Reads environment variables for the manifests.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Loads the manifests, printing their diagnostics; `Err` carries the exit status.
pub fn load_manifests(args: &ManifestArgs, printer: &Printer) -> Result<ManifestSet, ExitStatus> {
    let outcome = manifest::load(&args.paths, &process_env);
    let rendered = outcome.render_diagnostics(printer.color_stderr());
    if !rendered.is_empty() {
        printer.diagnostics(&rendered);
    }
    if outcome.has_errors() {
        printer.error(&format!(
            "the manifests are invalid ({} error(s)); `evalctl validate` checks them offline",
            outcome.error_count()
        ));
        return Err(ExitStatus::InvalidManifests);
    }
    Ok(outcome.set)
}

/// Loads, connects, fetches and plans.
pub async fn plan_from_manifests(
    manifests: &ManifestArgs,
    live_args: &LiveArgs,
    options: &PlanOptions,
    targets: &[String],
    printer: &Printer,
) -> Result<Planned, ExitStatus> {
    let desired = load_manifests(manifests, printer)?;
    let connection = connect_or_fail(live_args, printer)?;
    let (live, plan) = plan_with(&connection, &desired, options, targets, printer).await?;
    Ok(Planned {
        desired,
        connection,
        live,
        plan,
    })
}

/// Fetches live state for `desired` over `connection` and plans, narrowed to
/// `targets`, with blast radius and people.
pub async fn plan_with(
    connection: &Connection,
    desired: &ManifestSet,
    options: &PlanOptions,
    targets: &[String],
    printer: &Printer,
) -> Result<(Live, Plan), ExitStatus> {
    let (live, plan) =
        fetch_and_plan(connection, desired, options, "Loading live state", printer).await?;
    let mut plan = plan.map_err(|e| {
        printer.error(&e.to_string());
        ExitStatus::Failure
    })?;
    plan.retain_targets(targets);
    enrich(connection, &live, &mut plan, printer).await;
    Ok((live, plan))
}

/// Fetches live state for `desired` over `connection`, showing `progress`,
/// and plans. A fetch error is printed (`Err` carries the exit status); a
/// planning error is returned for the caller to word.
pub async fn fetch_and_plan(
    connection: &Connection,
    desired: &ManifestSet,
    options: &PlanOptions,
    progress: &str,
    printer: &Printer,
) -> Result<(Live, Result<Plan, PlanError>), ExitStatus> {
    let shown = Progress::start(printer, &connection.client, progress);
    let live = fetch(&connection.client, desired).await;
    drop(shown);
    let live = live.map_err(|e| {
        printer.error(&e.to_string());
        ExitStatus::Failure
    })?;
    let plan = plan(desired, &live, options);
    Ok((live, plan))
}

/// Adds what reviewers want next to the changes: who else uses the scorer
/// versions a change touches, and who created the objects it names. Both
/// lookups run at once; neither can fail the plan.
pub async fn enrich(connection: &Connection, live: &Live, plan: &mut Plan, printer: &Printer) {
    let (radius, found) = tokio::join!(
        blast_radius(&connection.client, live, plan),
        people::lookup_people(&connection.client, plan),
    );
    match radius {
        Ok(radius) => {
            for (change, radius) in plan.changes.iter_mut().zip(radius) {
                change.blast_radius = radius;
            }
        }
        Err(e) => printer.warn(&format!(
            "could not list the other projects using the affected scorer versions: {e}"
        )),
    }
    people::name_people(plan, &found);
}
