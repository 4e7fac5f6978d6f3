//! The mass-change guard: a plan that deletes or replaces more than a safe
//! share of a collection (the sections of a dashboard, the widgets of a
//! dashboard, the dashboards of a log stream, a project's templates of one
//! kind) is marked, so that `apply` refuses it before any write unless
//! `--allow-mass-changes` is given, and `plan` warns about it. An emptied
//! manifest directory applied with `--prune` is the accident this stops
//! (octoDNS refuses such plans the same way).
//!
//! Pure: the planner counts, for each collection a project's changes delete
//! or replace in, how many objects it holds live ([`churn_of`]), and keeps
//! those past the [`GuardLimits`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Action, Address, ResourceChange};
use crate::state::ProjectState;

/// When a collection's churn is too much: more than `max_share_percent` of
/// its objects deleted or replaced, in a collection of at least
/// `min_objects` objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardLimits {
    /// The largest share, in percent, of a collection that may be deleted or
    /// replaced without `--allow-mass-changes`.
    pub max_share_percent: u32,
    /// Collections smaller than this are never guarded.
    pub min_objects: usize,
}

impl GuardLimits {
    /// Whether deleting or replacing `touched` of a collection of `live`
    /// objects is more than these limits allow.
    pub fn exceeded_by(&self, live: usize, touched: usize) -> bool {
        live >= self.min_objects
            && touched.saturating_mul(100) > live.saturating_mul(self.max_share_percent as usize)
    }
}

impl Default for GuardLimits {
    fn default() -> Self {
        GuardLimits {
            max_share_percent: 25,
            min_objects: 8,
        }
    }
}

/// A collection that a plan deletes or replaces too much of.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct MassChange {
    /// The address of what holds the collection (`project[a]`,
    /// `project[a].log_stream[b].trends`).
    pub container: String,
    /// What the collection holds, plural (`sections`, `annotation templates`).
    pub objects: String,
    /// How many objects it holds live.
    pub live: usize,
    /// How many of them the plan deletes.
    pub deleted: usize,
    /// How many of them the plan deletes and creates again.
    pub replaced: usize,
}

impl MassChange {
    /// The share of the collection deleted or replaced, in whole percent
    /// (rounded down).
    pub fn percent(&self) -> usize {
        ((self.deleted + self.replaced) * 100)
            .checked_div(self.live)
            .unwrap_or(100)
    }
}

impl std::fmt::Display for MassChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (self.deleted, self.replaced) {
            (d, 0) => format!("{d} deleted"),
            (0, r) => format!("{r} replaced"),
            (d, r) => format!("{d} deleted and {r} replaced"),
        };
        write!(
            f,
            "{}: {what} of its {} {} ({}%)",
            self.container,
            self.live,
            self.objects,
            self.percent()
        )
    }
}

/// The sentence that introduces a plan's mass changes, in every format.
pub fn headline(changes: &[MassChange]) -> String {
    let n = changes.len();
    format!(
        "this plan deletes or replaces a large share of {n} collection{}; apply refuses it \
         unless given --allow-mass-changes",
        if n == 1 { "" } else { "s" }
    )
}

/// The collections that `changes` (one project's, planned against `live`)
/// delete or replace in past `limits`, ordered.
pub fn churn_of(
    changes: &[ResourceChange],
    live: &ProjectState,
    limits: GuardLimits,
) -> Vec<MassChange> {
    let mut counted: BTreeMap<(String, &'static str), (usize, usize, &Address)> = BTreeMap::new();
    for change in changes {
        if !matches!(change.action, Action::Delete | Action::Replace) {
            continue;
        }
        let Some(collection) = change.address.collection() else {
            continue;
        };
        let entry = counted.entry(collection).or_insert((0, 0, &change.address));
        match change.action {
            Action::Delete => entry.0 += 1,
            _ => entry.1 += 1,
        }
    }
    counted
        .into_iter()
        .filter_map(|((container, objects), (deleted, replaced, address))| {
            let live = address.collection_size(live).max(deleted + replaced);
            limits
                .exceeded_by(live, deleted + replaced)
                .then(|| MassChange {
                    container,
                    objects: objects.to_owned(),
                    live,
                    deleted,
                    replaced,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_limits_guard_more_than_a_quarter_of_eight_or_more() {
        let limits = GuardLimits::default();
        // Below eight objects, nothing is guarded, even all of them.
        assert!(!limits.exceeded_by(7, 7));
        // A quarter exactly is allowed; one more is not.
        assert!(!limits.exceeded_by(8, 2));
        assert!(limits.exceeded_by(8, 3));
        assert!(!limits.exceeded_by(100, 25));
        assert!(limits.exceeded_by(100, 26));
        assert!(limits.exceeded_by(10, 10));
        let strict = GuardLimits {
            max_share_percent: 0,
            min_objects: 1,
        };
        assert!(strict.exceeded_by(1, 1));
        assert!(!strict.exceeded_by(1, 0));
    }

    #[test]
    fn a_mass_change_says_what_and_how_much() {
        let change = MassChange {
            container: "project[a].log_stream[b].trends".into(),
            objects: "sections".into(),
            live: 12,
            deleted: 4,
            replaced: 1,
        };
        assert_eq!(
            change.to_string(),
            "project[a].log_stream[b].trends: 4 deleted and 1 replaced of its 12 sections (41%)"
        );
        assert_eq!(
            headline(&[change.clone(), change]),
            "this plan deletes or replaces a large share of 2 collections; apply refuses it \
             unless given --allow-mass-changes"
        );
    }
}
