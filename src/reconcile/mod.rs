//! The effects of reconciling: reading live state, applying a plan,
//! confirming it, and reading what reviewers want beside a plan. Everything
//! that talks to the service on the reconciler's behalf is here; what it
//! reads is plain data (`crate::state`) and what it decides with is pure
//! (`crate::plan`).
//!
//! - [`read`]: the one read path (one reader per resource kind, selectors).
//! - [`apply`]: executes a plan.
//! - [`collect`]: everything an export writes, read through the same readers.
//! - [`confirm`]: plans again after an apply; checks a saved plan's objects.
//! - [`enrich`]: blast radius and people.
//! - [`pending`]: the ids of what a plan creates, resolved when apply runs.

pub mod apply;
pub mod collect;
pub mod confirm;
pub mod enrich;
pub mod pending;
pub mod read;

use std::borrow::Cow;

use crate::client::Client;
use crate::manifest::set::ManifestSet;
use crate::plan::{Plan, PlanError, PlanOptions, Planning, plan};
use crate::state::State;

pub use enrich::TouchedVersions;
pub use read::ReadError;

/// A plan and what was read for it.
#[derive(Debug)]
pub struct ReadAndPlanned {
    /// Live state as left after planning: ids and names of projects and
    /// runs, the catalog and integrations (each project's compared contents
    /// are released once it is planned).
    pub state: State,
    /// The plan, or the references that do not exist.
    pub plan: Result<Plan, PlanError>,
    /// The scorer versions each metric-settings change touches, for blast
    /// radius.
    pub touched: TouchedVersions,
}

/// Reads what `desired` names (narrowed to the targets of `options`) and
/// plans. A read error is the `Err`; a planning error (references that do
/// not exist) is in the result, for the caller to word.
pub async fn read_and_plan(
    client: &Client,
    desired: &ManifestSet,
    options: &PlanOptions,
) -> Result<ReadAndPlanned, ReadError> {
    let selection = read::Selection::of_manifests(desired, options);
    read_and_plan_knowing(client, Cow::Borrowed(desired), &selection, None, options).await
}

/// Like [`read_and_plan`], taking the manifests: each desired project's
/// compared parts are dropped once it is planned ([`Planning::releasing`]),
/// for a command that does not plan them again (`plan`, `drift`).
pub async fn read_and_plan_once(
    client: &Client,
    desired: ManifestSet,
    options: &PlanOptions,
) -> Result<ReadAndPlanned, ReadError> {
    let selection = read::Selection::of_manifests(&desired, options);
    read_and_plan_knowing(client, Cow::Owned(desired), &selection, None, options).await
}

/// Reads what `selection` names (finding projects and runs by the ids
/// `known` holds, as [`read::find`] does) and plans `desired`
/// against it, each project as it arrives ([`Planning`]): once a project is
/// planned, the scorer versions its changes touch are noted and its
/// compared contents released, so memory holds the projects being read and
/// the plan, not all of live state. Manifests borrowed are left whole;
/// owned, each project's compared parts are released once planned too
/// ([`Planning::releasing`]).
pub async fn read_and_plan_knowing(
    client: &Client,
    desired: Cow<'_, ManifestSet>,
    selection: &read::Selection,
    known: Option<&State>,
    options: &PlanOptions,
) -> Result<ReadAndPlanned, ReadError> {
    let read::Found {
        mut state,
        projects,
    } = read::find(client, selection, known).await?;
    let mut planning = match desired {
        Cow::Borrowed(desired) => Planning::new(desired, &state, options),
        Cow::Owned(desired) => Planning::releasing(desired, &state, options),
    };
    let mut touched = TouchedVersions::default();
    let catalog = &state.catalog;
    let projects = read::read_projects(client, catalog, projects, |key, project| {
        let added = planning.project(key, project);
        touched.add(catalog, project, added);
        project.release_compared();
    })
    .await?;
    let plan = planning.finish(&projects);
    state.projects = projects;
    Ok(ReadAndPlanned {
        state,
        plan,
        touched,
    })
}

/// The plans of a three-way plan, all against one read of live state.
#[derive(Debug)]
pub struct ThreeWay {
    /// Live state: what any of the manifests name.
    pub state: State,
    /// The pull request's plan.
    pub plan: Result<Plan, PlanError>,
    /// The base's plan, with the same options.
    pub base: Result<Plan, PlanError>,
    /// The plan of the manifests as last applied, when given.
    pub applied: Option<Result<Plan, PlanError>>,
}

/// Reads what `desired`, `base` and `applied` name, once, and plans each
/// against it. Each plan sees only the objects its own manifests look for
/// as missing: an object only the base names, gone live, does not fail the
/// pull request's plan.
pub async fn read_and_plan_three_way(
    client: &Client,
    desired: &ManifestSet,
    base: &ManifestSet,
    applied: Option<&ManifestSet>,
    options: &PlanOptions,
) -> Result<ThreeWay, ReadError> {
    let mine = read::Selection::of_manifests(desired, options);
    let theirs = read::Selection::of_manifests(base, options);
    let last = applied.map(|a| read::Selection::of_manifests(a, options));
    let mut union = mine.clone().union(theirs.clone());
    if let Some(last) = &last {
        union = union.union(last.clone());
    }
    let mut state = read::read_state(client, &union).await?;
    let missing = std::mem::take(&mut state.missing);
    let mut plan_for = |set: &ManifestSet, selection: &read::Selection| {
        state.missing = missing
            .iter()
            .filter(|m| selection.looks_for(m, &state))
            .cloned()
            .collect();
        plan(set, &state, options)
    };
    let planned = plan_for(desired, &mine);
    let base_plan = plan_for(base, &theirs);
    let applied_plan = applied.zip(last.as_ref()).map(|(a, s)| plan_for(a, s));
    state.missing = missing;
    Ok(ThreeWay {
        state,
        plan: planned,
        base: base_plan,
        applied: applied_plan,
    })
}
