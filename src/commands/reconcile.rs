//! The shared first half of plan, apply and drift: load the manifests, check
//! the targets against them, connect, read live state, compute the plan, and
//! read what reviewers want beside it.

use crate::cli::{LiveArgs, ManifestArgs};
use crate::error::Error;
use crate::manifest::{self, set::ManifestSet};
use crate::output::Printer;
use crate::plan::{Enrichment, Plan, PlanOptions, target};
use crate::progress::Progress;
use crate::reconcile::{enrich::enrich, read_and_plan};
use crate::state::State;

use super::connect::{Connection, connect};

/// Everything a reconciling command has after planning.
pub struct Planned {
    /// The manifests.
    pub desired: ManifestSet,
    /// The connection.
    pub connection: Connection,
    /// Live state, as read for the plan.
    pub state: State,
    /// The plan.
    pub plan: Plan,
    /// Blast radius and people.
    pub enrichment: Enrichment,
}

/// Reads environment variables for the manifests.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Loads the manifests, printing their diagnostics.
pub fn load_manifests(args: &ManifestArgs, printer: &Printer) -> Result<ManifestSet, Error> {
    let outcome = manifest::load(&args.paths, &process_env);
    let rendered = outcome.render_diagnostics(printer.color_stderr());
    if !rendered.is_empty() {
        printer.diagnostics(&rendered);
    }
    if outcome.has_errors() {
        return Err(Error::InvalidManifests {
            count: outcome.error_count(),
        });
    }
    Ok(outcome.set)
}

/// Loads, checks the targets, connects, reads and plans.
pub async fn plan_from_manifests(
    manifests: &ManifestArgs,
    live_args: &LiveArgs,
    options: &PlanOptions,
    printer: &Printer,
) -> Result<Planned, Error> {
    let desired = load_manifests(manifests, printer)?;
    target::unmatched(&desired, &options.targets)?;
    let connection = connect(live_args).map_err(Error::Connect)?;
    let (state, plan, enrichment) = plan_with(&connection, &desired, options, printer).await?;
    Ok(Planned {
        desired,
        connection,
        state,
        plan,
        enrichment,
    })
}

/// Reads live state for `desired` over `connection` and plans, with blast
/// radius and people.
pub async fn plan_with(
    connection: &Connection,
    desired: &ManifestSet,
    options: &PlanOptions,
    printer: &Printer,
) -> Result<(State, Plan, Enrichment), Error> {
    let shown = Progress::start(printer, &connection.client, "Loading live state");
    let read = read_and_plan(&connection.client, desired, options).await;
    drop(shown);
    let (state, plan) = read?;
    let plan = plan?;
    let (enrichment, warning) = enrich(&connection.client, &state, &plan).await;
    if let Some(warning) = warning {
        printer.warn(&warning);
    }
    Ok((state, plan, enrichment))
}
