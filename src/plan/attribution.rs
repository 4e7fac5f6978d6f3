//! Three-way plans: whose change each change is, and each field within it.
//!
//! A pull request's plan mixes what the pull request changes with what
//! someone changed in the service since the last apply. With the base
//! branch's manifests beside the pull request's, both planned against the
//! same live state, every field a change sets has three values: the pull
//! request's (`desired`), the base's and live's. [`classify`] attributes it:
//!
//! | desired vs base | live vs base        | attribution                    |
//! |-----------------|---------------------|--------------------------------|
//! | differs         | equal               | [`Attribution::Proposed`]      |
//! | equal           | differs             | [`Attribution::Drift`]         |
//! | differs         | differs             | [`Attribution::Conflict`]      |
//! | equal           | differs, = applied  | [`Attribution::Pending`]       |
//!
//! From three states alone, "live moved away from the base" (drift) and
//! "the base never reached live" (pending) are the same cell: both are
//! desired = base ≠ live. What tells them apart is history: the manifests
//! as last applied (`--applied`). When live still holds the value last
//! applied, live did not move: the base changed the field and was never
//! applied (pending), and a change of the pull request there is only its
//! own (proposed). Without them, the cell is drift: applying sets the field
//! to the base's value either way, and a reviewer should look.
//!
//! The base's value of a field comes from the base plan's change at the
//! same address (a renamed section or template: the change acting on the
//! same live object) and path; no change there means the base equals live
//! there. The two plans may cut a value differently (one changes a whole
//! list, the other an element of it): the value is found inside the other
//! plan's coarser change, or live's value is patched with its finer ones.
//!
//! [`attribute`] is pure: it takes the pull request's plan and the others,
//! and returns the pull request's plan with every change and field
//! attributed, and notes for what the base would change that the pull
//! request does not ([`only_at_base`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::address::Address;
use super::changes::{Changes, ChangesError};
use super::diff::path_label;
use super::target::Target;
use super::types::{FieldChange, Note, NoteKind, Plan, ResourceChange};

/// Whose change a change (or one field of it) is, in a three-way plan.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Attribution {
    /// The pull request changes it (desired ≠ base) and live still equals
    /// the base (or what was last applied).
    Proposed,
    /// Live moved away from the base out of band and the pull request does
    /// not touch it (desired = base ≠ live): applying reverts that change.
    Drift,
    /// The pull request changes it and live moved away from the base too
    /// (desired ≠ base ≠ live, desired ≠ live).
    Conflict,
    /// The pull request and the base agree, and live still holds what was
    /// last applied: the base's change was never applied (only known with
    /// the manifests as last applied; otherwise this is [`Attribution::Drift`]).
    Pending,
}

impl Attribution {
    /// Every attribution, in the order reports show them.
    pub const ALL: [Attribution; 4] = [
        Attribution::Proposed,
        Attribution::Drift,
        Attribution::Conflict,
        Attribution::Pending,
    ];

    /// `proposed`, `drift`, `conflict` or `pending`, as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Attribution::Proposed => "proposed",
            Attribution::Drift => "drift",
            Attribution::Conflict => "conflict",
            Attribution::Pending => "pending",
        }
    }

    /// How much a reviewer needs to look: a change takes the attribution of
    /// its field that needs it most.
    fn urgency(self) -> u8 {
        match self {
            Attribution::Proposed => 0,
            Attribution::Pending => 1,
            Attribution::Drift => 2,
            Attribution::Conflict => 3,
        }
    }
}

impl std::fmt::Display for Attribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many changes of each attribution a three-way plan has.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct AttributionCounts {
    /// Changes this PR makes.
    pub proposed: usize,
    /// Changes that revert out-of-band changes.
    pub drift: usize,
    /// Changes where this PR and an out-of-band change disagree.
    pub conflict: usize,
    /// Changes the base made and never applied.
    pub pending: usize,
}

impl AttributionCounts {
    /// The counts of `plan`'s changes, by each change's attribution; `None`
    /// when no change is attributed (a two-way plan, or no changes).
    pub fn of(plan: &Plan) -> Option<AttributionCounts> {
        let mut counts = AttributionCounts::default();
        let mut any = false;
        for attribution in (0..plan.changes.len()).filter_map(|i| plan.changes.attribution(i)) {
            any = true;
            *counts.get_mut(attribution) += 1;
        }
        any.then_some(counts)
    }

    /// The count of `attribution`.
    pub fn get(&self, attribution: Attribution) -> usize {
        match attribution {
            Attribution::Proposed => self.proposed,
            Attribution::Drift => self.drift,
            Attribution::Conflict => self.conflict,
            Attribution::Pending => self.pending,
        }
    }

    fn get_mut(&mut self, attribution: Attribution) -> &mut usize {
        match attribution {
            Attribution::Proposed => &mut self.proposed,
            Attribution::Drift => &mut self.drift,
            Attribution::Conflict => &mut self.conflict,
            Attribution::Pending => &mut self.pending,
        }
    }
}

/// Attributes one field from its values: what the pull request wants
/// (`desired`), what the base wants (`base`), what live holds (`live`) and,
/// when the manifests as last applied are known, what they want
/// (`applied`). `None` is absent.
///
/// Live "moved" when it equals neither the base nor what was last applied.
/// The pull request "changes" the field when it wants other than the base.
pub fn classify(
    desired: Option<&Value>,
    base: Option<&Value>,
    live: Option<&Value>,
    applied: Option<Option<&Value>>,
) -> Attribution {
    classify_sides(
        desired,
        &Side::Known(base.cloned()),
        live,
        applied.map(|a| Side::Known(a.cloned())).as_ref(),
    )
}

/// A side's value at a path: known (`None`: absent there), or not found
/// (treated as different from every other value).
#[derive(Debug, Clone, PartialEq)]
enum Side {
    Known(Option<Value>),
    Unknown,
}

impl Side {
    fn is(&self, value: Option<&Value>) -> bool {
        matches!(self, Side::Known(v) if v.as_ref() == value)
    }
}

fn classify_sides(
    desired: Option<&Value>,
    base: &Side,
    live: Option<&Value>,
    applied: Option<&Side>,
) -> Attribution {
    let changes = !base.is(desired);
    let moved = !base.is(live) && applied.is_none_or(|a| !a.is(live));
    match (changes, moved) {
        (true, false) => Attribution::Proposed,
        (false, true) => Attribution::Drift,
        (true, true) => Attribution::Conflict,
        // desired = base ≠ live = applied.
        (false, false) if applied.is_some() => Attribution::Pending,
        // desired = base = live: no field change has these values.
        (false, false) => Attribution::Proposed,
    }
}

/// The other plans a pull request's plan is attributed against, all made
/// from the same live state with the same options.
#[derive(Debug, Clone, Copy)]
pub struct Sides<'a> {
    /// The base branch's plan.
    pub base: &'a Plan,
    /// The plan of the manifests as last applied, when known.
    pub applied: Option<&'a Plan>,
    /// What the pull request's manifests declare
    /// ([`super::target::declared`]), to word what only the base changes.
    pub declared: &'a [Target],
}

/// The pull request's plan with every change and field attributed, and a
/// note for each change the base would make that the pull request does not.
/// The three plans are compared in memory: the attributed plan is held
/// there too.
pub fn attribute(mut plan: Plan, sides: Sides<'_>) -> Result<Plan, ChangesError> {
    let base = sides.base.changes.to_vec()?;
    let applied = sides.applied.map(|a| a.changes.to_vec()).transpose()?;
    let mut changes = std::mem::take(&mut plan.changes).into_vec()?;
    let mut matched = vec![false; base.len()];
    for change in &mut changes {
        let base_index = counterpart(&base, change);
        if let Some(i) = base_index {
            matched[i] = true;
        }
        let base_change = base_index.map(|i| &base[i]);
        let applied = applied
            .as_deref()
            .map(|a| counterpart(a, change).map(|i| &a[i]));
        attribute_change(change, base_change, applied);
    }
    plan.changes = Changes::from(changes);
    for (change, _) in base.iter().zip(&matched).filter(|(_, m)| !**m) {
        plan.notes.push(only_at_base(change, sides.declared));
    }
    plan.notes.sort();
    plan.notes.dedup();
    Ok(plan)
}

/// A plan that could not be attributed, with a note saying why (and that it
/// is the usual two-way plan).
pub fn unattributed(mut plan: Plan, why: &str) -> Plan {
    plan.notes.push(Note {
        address: None,
        kind: NoteKind::Info,
        message: format!(
            "{why}: changes are not attributed (this PR, drift, conflict); this is a two-way plan of the manifests against live state"
        ),
        created_by: None,
    });
    plan.notes.sort();
    plan
}

/// The note when the manifests as last applied (`--applied`) cannot be
/// used: what would be pending is shown as drift.
pub fn applied_unknown(why: &str) -> Note {
    Note {
        address: None,
        kind: NoteKind::Info,
        message: format!(
            "{why}: a change the base made and never applied is shown as drift, not pending"
        ),
        created_by: None,
    }
}

/// The note for a change the base would make that the pull request's plan
/// does not: the pull request declares the object and matches live there
/// (it adopts live's value), or no longer declares it.
pub fn only_at_base(change: &ResourceChange, declared: &[Target]) -> Note {
    // A whole object's field (create, delete) says nothing the verb does not.
    let fields: Vec<String> = change
        .fields
        .iter()
        .filter(|f| !f.path.is_empty())
        .map(|f| format!("`{}`", path_label(&f.path)))
        .collect();
    let fields = if fields.is_empty() {
        String::new()
    } else {
        format!(" ({})", fields.join(", "))
    };
    let target = Target::of(&change.address);
    let message = if declared.contains(&target) {
        format!(
            "the base would {} it{fields}; this PR's manifests match live there, so this apply leaves it as it is (the PR adopts the live value)",
            change.action.verb()
        )
    } else {
        format!(
            "declared at the base, not by this PR: evalctl stops managing it and this apply leaves it as it is live (the base would {} it{fields})",
            change.action.verb()
        )
    };
    Note {
        address: Some(change.address.clone()),
        kind: NoteKind::Info,
        message,
        created_by: None,
    }
}

/// The index of the change of `other` acting on the object `change` acts
/// on: the same address (and action, when there are several), else the
/// change to the same live object (a renamed section, template, dashboard
/// or widget, a widget moved to another section).
fn counterpart(other: &[ResourceChange], change: &ResourceChange) -> Option<usize> {
    let at = |i: &usize| other[*i].address == change.address;
    let same: Vec<usize> = (0..other.len()).filter(at).collect();
    if let Some(i) = same
        .iter()
        .find(|i| other[**i].action == change.action)
        .or(same.first())
    {
        return Some(*i);
    }
    let live = live_identity(change)?;
    other
        .iter()
        .position(|c| live_identity(c).as_ref() == Some(&live))
}

/// The live object a change acts on, for objects that can be renamed or
/// moved: its address with the live name (and, for a widget, the live
/// section) in place of the declared ones. A change renaming or moving an
/// object has a `name` (`section`) field whose `before` is live's.
fn live_identity(change: &ResourceChange) -> Option<Address> {
    let before = |path: &str| {
        change
            .fields
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.before_value().and_then(|v| v.as_str().map(str::to_owned)))
    };
    change.address.live_identity(&before)
}

fn attribute_change(
    change: &mut ResourceChange,
    base: Option<&ResourceChange>,
    applied: Option<Option<&ResourceChange>>,
) {
    let keyed = change.address.keyed_sets();
    let mut most = Attribution::Proposed;
    for field in &mut change.fields {
        let live = field.before_value();
        let live = live.as_ref();
        let after = field.after_value();
        let base_value = side_at(base, &field.path, live, keyed);
        let applied_value = applied.map(|a| side_at(a, &field.path, live, keyed));
        let attribution = classify_sides(after.as_ref(), &base_value, live, applied_value.as_ref());
        if attribution.urgency() > most.urgency() {
            most = attribution;
        }
        field.attribution = Some(attribution);
        field.base = match (attribution, base_value) {
            (Attribution::Conflict, Side::Known(v)) => Some(v.unwrap_or(Value::Null)),
            _ => None,
        };
    }
    change.attribution = Some(most);
}

/// The value `side`'s change gives the field at `path`, whose live value is
/// `live`: no change means live's value.
fn side_at(
    side: Option<&ResourceChange>,
    path: &str,
    live: Option<&Value>,
    keyed: &[&str],
) -> Side {
    let Some(side) = side else {
        return Side::Known(live.cloned());
    };
    // Field paths of one change never nest: at most one is at or above `path`.
    if let Some(f) = side
        .fields
        .iter()
        .find(|f| f.path == path || is_under(path, &f.path))
    {
        return Side::Known(
            f.after_value()
                .as_ref()
                .and_then(|v| lookup(&f.path, v, path, keyed))
                .cloned(),
        );
    }
    let finer: Vec<&FieldChange> = side
        .fields
        .iter()
        .filter(|f| is_under(&f.path, path))
        .collect();
    if finer.is_empty() {
        return Side::Known(live.cloned());
    }
    let Some(mut value) = live.cloned() else {
        return Side::Unknown;
    };
    for f in finer {
        if !patch(path, &mut value, &f.path, f.after_value().as_ref(), keyed) {
            return Side::Unknown;
        }
    }
    Side::Known(Some(value))
}

/// Whether `path` is strictly under `prefix`.
fn is_under(path: &str, prefix: &str) -> bool {
    if prefix.is_empty() {
        return !path.is_empty();
    }
    path.len() > prefix.len()
        && path.starts_with(prefix)
        && matches!(path.as_bytes()[prefix.len()], b'.' | b'[')
}

/// Whether the entries of the node at `at` are a keyed set (its last key
/// is one of `keyed`), shown as `at[key]`.
fn entries_keyed(at: &str, keyed: &[&str]) -> bool {
    keyed
        .iter()
        .any(|k| at == *k || at.ends_with(&format!(".{k}")) || at.ends_with(&format!("[{k}]")))
}

/// How the path of the child `key` of the object at `at` continues `at`
/// (as `diff` writes it).
fn key_segment(at: &str, key: &str, keyed: &[&str]) -> String {
    if entries_keyed(at, keyed) {
        format!("[{key}]")
    } else if at.is_empty() {
        key.to_owned()
    } else {
        format!(".{key}")
    }
}

/// The children of `value` (at `at`) whose paths are `path` or lead to it:
/// each child's path, and how to reach it.
fn children_towards<'v>(
    at: &str,
    value: &'v Value,
    path: &str,
    keyed: &[&str],
) -> Vec<(String, Child<'v>)> {
    let leads = |child: &str| child == path || is_under(path, child);
    match value {
        Value::Object(map) => map
            .keys()
            .map(|k| (format!("{at}{}", key_segment(at, k, keyed)), Child::Key(k)))
            .filter(|(p, _)| leads(p))
            .collect(),
        Value::Array(items) => (0..items.len())
            .map(|i| (format!("{at}[{i}]"), Child::Index(i)))
            .filter(|(p, _)| leads(p))
            .collect(),
        _ => Vec::new(),
    }
}

/// One step into a JSON value.
#[derive(Debug, Clone, Copy)]
enum Child<'k> {
    Key(&'k str),
    Index(usize),
}

/// The value at `path` within `value`, which sits at `at` (`None`: absent).
fn lookup<'v>(at: &str, value: &'v Value, path: &str, keyed: &[&str]) -> Option<&'v Value> {
    if at == path {
        return Some(value);
    }
    for (child_at, child) in children_towards(at, value, path, keyed) {
        let inner = match child {
            Child::Key(k) => value.get(k),
            Child::Index(i) => value.get(i),
        };
        if let Some(found) = inner.and_then(|v| lookup(&child_at, v, path, keyed)) {
            return Some(found);
        }
    }
    None
}

/// Sets the node at `path` (strictly under `at`, where `value` sits) to
/// `new`, removing it when `None`. A node `value` does not have can only
/// be a new key of an object at the end of the path (a field difference
/// stops where one side lacks the node). `false`: the path does not fit
/// `value`.
fn patch(at: &str, value: &mut Value, path: &str, new: Option<&Value>, keyed: &[&str]) -> bool {
    let towards: Vec<(String, Option<String>, Option<usize>)> =
        children_towards(at, value, path, keyed)
            .into_iter()
            .map(|(p, c)| match c {
                Child::Key(k) => (p, Some(k.to_owned()), None),
                Child::Index(i) => (p, None, Some(i)),
            })
            .collect();
    for (child_at, key, index) in towards {
        if child_at == path {
            return set(value, key, index, new);
        }
        let inner = match (&key, index) {
            (Some(k), _) => value.get_mut(k.as_str()),
            (None, Some(i)) => value.get_mut(i),
            (None, None) => None,
        };
        if inner.is_some_and(|v| patch(&child_at, v, path, new, keyed)) {
            return true;
        }
    }
    // A key the object does not have: the rest of the path is one segment.
    let Value::Object(map) = value else {
        return false;
    };
    let rest = &path[at.len()..];
    let key = if entries_keyed(at, keyed) {
        rest.strip_prefix('[').and_then(|r| r.strip_suffix(']'))
    } else if at.is_empty() {
        Some(rest).filter(|k| !k.contains(['.', '[']))
    } else {
        rest.strip_prefix('.').filter(|k| !k.contains(['.', '[']))
    };
    match (key, new) {
        (Some(k), Some(v)) => {
            map.insert(k.to_owned(), v.clone());
            true
        }
        (Some(_), None) => true,
        (None, _) => false,
    }
}

fn set(value: &mut Value, key: Option<String>, index: Option<usize>, new: Option<&Value>) -> bool {
    match (value, key, index, new) {
        (Value::Object(map), Some(k), _, Some(v)) => {
            map.insert(k, v.clone());
            true
        }
        (Value::Object(map), Some(k), _, None) => {
            map.remove(&k);
            true
        }
        (Value::Array(items), None, Some(i), Some(v)) if i < items.len() => {
            items[i] = v.clone();
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
