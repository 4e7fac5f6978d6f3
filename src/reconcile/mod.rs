//! The effects of reconciling: reading live state, applying a plan,
//! confirming it, and reading what reviewers want beside a plan. Everything
//! that talks to the service on the reconciler's behalf is here; what it
//! reads is plain data (`crate::state`) and what it decides with is pure
//! (`crate::plan`).
//!
//! - [`read`]: the one read path (one reader per resource kind, selectors).
//! - [`apply`]: executes a plan.
//! - [`confirm`]: plans again after an apply; checks a saved plan's objects.
//! - [`enrich`]: blast radius and people.

pub mod apply;
pub mod confirm;
pub mod enrich;
pub mod read;

use crate::client::Client;
use crate::manifest::set::ManifestSet;
use crate::plan::{Plan, PlanError, PlanOptions, plan};
use crate::state::State;

pub use read::ReadError;

/// Reads what `desired` names (narrowed to the targets of `options`) and plans.
/// A read error is the `Err`; a planning error (references that do not
/// exist) is returned with the state, for the caller to word.
pub async fn read_and_plan(
    client: &Client,
    desired: &ManifestSet,
    options: &PlanOptions,
) -> Result<(State, Result<Plan, PlanError>), ReadError> {
    let selection = read::Selection::of_manifests(desired, options);
    let state = read::read_state(client, &selection).await?;
    let planned = plan(desired, &state, options);
    Ok((state, planned))
}
