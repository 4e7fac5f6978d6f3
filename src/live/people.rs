//! People, not ids: where a plan says who created an object, replace the
//! user id the service reports with the person's name and email, looked up
//! with spec operation 9, once per person per run.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::join_all;

use crate::client::Client;
use crate::plan::Plan;

/// Looks up every person a `created_by` field of `plan` names: user id to
/// `Name <email>`. A user that cannot be looked up is left out (the lookup is
/// informational).
pub async fn lookup_people(client: &Client, plan: &Plan) -> BTreeMap<String, String> {
    let ids: BTreeSet<String> = plan
        .changes
        .iter()
        .filter_map(|c| c.created_by.clone())
        .chain(plan.notes.iter().filter_map(|n| n.created_by.clone()))
        .collect();
    let lookups = join_all(ids.into_iter().map(|id| async move {
        let person = match client.get_user(&id).await {
            Ok(Some(user)) => Some(user.display()),
            Ok(None) | Err(_) => None,
        };
        (id, person)
    }))
    .await;
    lookups
        .into_iter()
        .filter_map(|(id, person)| person.map(|p| (id, p)))
        .collect()
}

/// Replaces the user ids in `created_by` fields of `plan` with the people found.
pub fn name_people(plan: &mut Plan, people: &BTreeMap<String, String>) {
    let name = |field: &mut Option<String>| {
        if let Some(person) = field.as_ref().and_then(|id| people.get(id)) {
            *field = Some(person.clone());
        }
    };
    for change in &mut plan.changes {
        name(&mut change.created_by);
    }
    for note in &mut plan.notes {
        name(&mut note.created_by);
    }
}
