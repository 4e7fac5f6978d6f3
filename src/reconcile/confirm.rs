//! Confirming an apply, and checking a saved plan before one.
//!
//! - A plan made from manifests is confirmed by planning again: the objects
//!   it touched are read again through the same readers, planned again
//!   against the same manifests (the touched addresses as targets), and an
//!   object has converged when that plan has nothing to do for it. A change
//!   someone else made meanwhile to a field the manifests do not manage is
//!   not a failure. Neither is a second copy of a touched object that this
//!   apply did not make nor name (another run's create an instant ago,
//!   which that run resolves; the next plan shows any that is left).
//! - A saved plan carries no manifests: its objects are read by id and each
//!   planned field must read back as planned ([`crate::plan::confirm`]).
//! - Before a saved plan is applied, each object it touches is read by id and
//!   its fingerprint compared with the one the plan recorded. An object that
//!   moved to exactly what the plan sets (another apply of the same plan got
//!   there first) has not moved away from it: applying is a no-op for it.

use crate::plan::address::{CustomIntegrationAddress, IntegrationAddress};
use std::borrow::Cow;
use std::collections::BTreeSet;

use super::read::Selection;
use super::read::touched::{Moment, Observation, read_touched};
use super::read_and_plan_knowing;
use crate::manifest::set::ManifestSet;
use crate::plan::confirm::unconfirmed;
use crate::plan::diff::path_label;
use crate::plan::{
    Action, Address, AddressKey, FieldChange, Operation, PlanOptions, ResourceChange, SectionRef,
    Target, Unconverged, WidgetRef, diff,
};
use crate::state::{Catalog, State};

use super::read::ReadError;

fn could_not_reread(address: &Address, why: &str) -> Unconverged {
    Unconverged {
        address: address.clone(),
        fields: vec![FieldChange::new(
            format!("(could not re-read: {why})"),
            None,
            None,
        )],
    }
}

/// What an apply changed, as its confirmation needs it: the address of
/// each change that succeeded, and the ids of the existing objects their
/// calls named. Small beside the changes themselves, which a text report no
/// longer needs once they are made.
#[derive(Debug, Default)]
pub struct Touched<'a> {
    /// Sorted, each once.
    addresses: Vec<Cow<'a, AddressKey>>,
    named: BTreeSet<String>,
}

impl<'a> Touched<'a> {
    /// What `applied`, the changes that succeeded, touched.
    pub fn of(applied: &[&'a ResourceChange]) -> Self {
        Touched {
            addresses: keys(
                applied
                    .iter()
                    .map(|c| Cow::Owned(AddressKey::of(&c.address))),
            ),
            named: named_ids(applied.iter().copied()),
        }
    }

    /// The changes that succeeded at `addresses`, whose calls named `named`
    /// ([`named_ids`], taken before the changes were let go).
    pub fn at(
        addresses: impl IntoIterator<Item = &'a AddressKey>,
        named: BTreeSet<String>,
    ) -> Self {
        Touched {
            addresses: keys(addresses.into_iter().map(Cow::Borrowed)),
            named,
        }
    }
}

/// `keys`, sorted, each once.
fn keys<'a>(keys: impl Iterator<Item = Cow<'a, AddressKey>>) -> Vec<Cow<'a, AddressKey>> {
    let mut keys: Vec<_> = keys.collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The ids of the existing sections, widgets and templates the calls of
/// `changes` name.
pub fn named_ids<'c>(changes: impl IntoIterator<Item = &'c ResourceChange>) -> BTreeSet<String> {
    changes
        .into_iter()
        .flat_map(|c| c.operations.iter().filter_map(object_id))
        .map(str::to_owned)
        .collect()
}

/// Each object `touched` as not confirmed, for `why`: what was read or
/// planned to confirm them failed.
pub fn not_confirmed(touched: &Touched<'_>, why: &str) -> Vec<Unconverged> {
    touched
        .addresses
        .iter()
        .map(|key| could_not_reread(&key.address(), why))
        .collect()
}

/// Plans what `touched` names again against `desired` (with the same `prune`): the
/// objects that still have something to do. `known` is the state the plan
/// was made from: its projects and runs are not searched for again.
pub async fn replan_touched(
    client: &crate::client::Client,
    desired: Cow<'_, ManifestSet>,
    prune: bool,
    touched: &Touched<'_>,
    known: Option<&State>,
) -> Vec<Unconverged> {
    if touched.addresses.is_empty() {
        return Vec::new();
    }
    let options = PlanOptions {
        prune,
        rotate_secrets: false,
        targets: touched
            .addresses
            .iter()
            .map(|key| Target::of(&key.address()))
            .collect(),
        guard: crate::plan::GuardLimits::default(),
        // Only touched objects are planned again: a destroy the plan made is
        // confirmed gone, one it did not make is not touched.
        allow_destroy: prune,
    };
    let selection = Selection::of_manifests(&desired, &options);
    let read = read_and_plan_knowing(client, desired, &selection, known, &options).await;
    let replanned = match read
        .map_err(|e| e.to_string())
        .and_then(|read| read.plan.map_err(|e| e.to_string()))
    {
        Ok(plan) => plan,
        Err(why) => return not_confirmed(touched, &why),
    };
    // A copy this apply did not make nor name: another run's, made an
    // instant ago and resolved by that run.
    let foreign_copy = |c: &ResourceChange| {
        c.action == Action::Delete
            && c.operations
                .iter()
                .filter_map(object_id)
                .all(|id| !touched.named.contains(id))
    };
    let mut out: Vec<Unconverged> = Vec::new();
    for c in replanned.changes.iter() {
        let c = match c {
            Ok(c) => c.into_owned(),
            Err(error) => return not_confirmed(touched, &error.to_string()),
        };
        // A change with no field to change (a secret rotation) has nothing to converge.
        let touched_here = touched
            .addresses
            .binary_search_by(|key| (**key).cmp(&AddressKey::of(&c.address)))
            .is_ok();
        if !touched_here || c.fields.is_empty() || foreign_copy(&c) {
            continue;
        }
        out.push(Unconverged {
            address: c.address,
            // Unconverged fields say what the plan wanted, then what live holds.
            fields: c
                .fields
                .into_iter()
                .map(|f| FieldChange {
                    path: f.path,
                    before: f.after,
                    after: f.before,
                    attribution: None,
                    base: None,
                })
                .collect(),
        });
    }
    out.sort_by(|a, b| a.address.cmp(&b.address));
    out
}

/// The id of the existing section or widget an operation names, or of an
/// object of a kind whose objects may carry one name twice
/// (`kinds::copy_object_id`).
fn object_id(op: &Operation) -> Option<&str> {
    match op {
        Operation::UpdateSection {
            section_id: SectionRef::Id(id),
            ..
        }
        | Operation::DeleteSection {
            section_id: SectionRef::Id(id),
            ..
        }
        | Operation::UpdateWidget {
            widget: WidgetRef::Id(id),
            ..
        }
        | Operation::DeleteWidget {
            widget: WidgetRef::Id(id),
            ..
        } => Some(id),
        op => crate::kinds::copy_object_id(op),
    }
}

/// Reads `applied` (changes of a saved plan) again by id: the objects whose
/// planned fields do not read back as planned.
pub async fn check_fields(
    client: &crate::client::Client,
    catalog: &Catalog,
    applied: &[&ResourceChange],
) -> Vec<Unconverged> {
    let observed = read_touched(client, catalog, applied, Moment::After).await;
    let mut out = Vec::new();
    for (change, now) in applied.iter().zip(observed) {
        match now {
            Ok(now) => {
                let fields = unconfirmed(change, now.comparable.as_ref());
                if !fields.is_empty() {
                    out.push(Unconverged {
                        address: change.address.clone(),
                        fields,
                    });
                }
            }
            Err(e) => out.push(could_not_reread(&change.address, &e.to_string())),
        }
    }
    out.sort_by(|a, b| a.address.cmp(&b.address));
    out
}

/// A change of a saved plan whose object moved since the plan was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The object.
    pub address: Address,
    /// What is different now.
    pub detail: String,
}

/// What checking a saved plan against live state found
/// ([`check_unchanged`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SavedPlanCheck {
    /// The objects that moved since the plan was made: empty means the plan
    /// is safe to apply.
    pub moved: Vec<Moved>,
    /// The indexes (in the changes checked) of the changes that live already
    /// holds as planned: the plan was applied (by this apply of it, or
    /// another), so they are not sent again.
    pub applied: BTreeSet<usize>,
}

/// Checks, object by object, that live state is still what `changes` were
/// computed from, or already what they set. Fails when an object cannot be
/// read (nothing is applied then).
pub async fn check_unchanged(
    client: &crate::client::Client,
    catalog: &Catalog,
    changes: &[&ResourceChange],
) -> Result<SavedPlanCheck, ReadError> {
    let observed = read_touched(client, catalog, changes, Moment::Before).await;
    let mut differ: Vec<(usize, &ResourceChange, Observation)> = Vec::new();
    for (index, (change, now)) in changes.iter().zip(observed).enumerate() {
        let now = now?;
        if now.fingerprint != change.live_fingerprint {
            differ.push((index, change, now));
        }
    }
    let mut check = SavedPlanCheck::default();
    if differ.is_empty() {
        return Ok(check);
    }
    // Moved to exactly what the plan sets (this plan was applied before: by
    // name, as after an apply)? Then the change is done, and not sent again.
    // An integration's secrets cannot be read back to tell: it is sent again
    // (a PUT of the same body).
    let moved_changes: Vec<&ResourceChange> = differ.iter().map(|(_, c, _)| *c).collect();
    let as_applied = read_touched(client, catalog, &moved_changes, Moment::After).await;
    let mut moved = Vec::new();
    for ((index, change, now), after) in differ.into_iter().zip(as_applied) {
        let already_as_planned = !change.fields.is_empty()
            && after.is_ok_and(|a| unconfirmed(change, a.comparable.as_ref()).is_empty());
        if already_as_planned {
            let integration = matches!(
                change.address,
                Address::Integration(IntegrationAddress { .. })
                    | Address::CustomIntegration(CustomIntegrationAddress { .. })
            );
            if !integration {
                check.applied.insert(index);
            }
            continue;
        }
        // What moved, as far as the planned fields tell: those whose `before`
        // is no longer what live holds.
        let values = now
            .comparable
            .as_ref()
            .map(|v| diff::values_by_path(v, change.address.keyed_sets()));
        let paths: Vec<&str> = change
            .fields
            .iter()
            .filter(|f| {
                values
                    .as_ref()
                    .and_then(|v| v.get(&f.path).copied().cloned())
                    != f.before_value()
            })
            .map(|f| path_label(&f.path))
            .collect();
        let detail = if paths.is_empty() {
            "changed".to_owned()
        } else {
            format!("changed: {}", paths.join(", "))
        };
        moved.push(Moved {
            address: change.address.clone(),
            detail,
        });
    }
    moved.sort_by(|a, b| a.address.cmp(&b.address));
    check.moved = moved;
    Ok(check)
}
