//! A plan's changes, in plan order: held in memory while they are few,
//! spilled to an unnamed temporary file once they are many.
//!
//! A change of a large plan holds its field differences, its calls and
//! their bodies, and a plan has a few changes per log stream, so holding
//! them all would make memory grow with the organization. Past
//! [`SPILL_AFTER`] changes, each change is written to a temporary file as
//! compact JSON as it is added; memory keeps, per change, only what orders
//! it and where it is (its address as an [`AddressKey`], its action and
//! attribution: small and of a fixed shape; measured: docs/performance.md,
//! Memory and time from 2,000 to 20,000 log streams). Readers
//! get the changes back one at a time ([`Changes::get`], [`Changes::iter`]),
//! so a command holds the changes it is working on, not the plan.
//!
//! The file is created unlinked (`tempfile::tempfile`): nothing is left
//! behind when the process ends, however it ends, and no other process can
//! open it by name. It holds what a plan document holds, so no secret (a
//! plan has only `${ENV}` references). Where no temporary file can be
//! created, or a write to it fails, the changes from then on stay in memory:
//! the plan is the same, only larger.
//!
//! Reading a change back can fail only when the file cannot be read
//! ([`ChangesError`]); a plan held in memory never fails.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write as _;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::address::Address;
use super::address_key::{AddressKey, AddressKind};
use super::attribution::Attribution;
use super::json_text::JsonText;
use super::types::{Action, ResourceChange, Summary};
use crate::api::compact::verbatim;

/// How many changes are held in memory before the rest are spilled: below
/// it a plan is small enough to hold, above it memory would grow with the
/// plan.
pub const SPILL_AFTER: usize = 1024;

/// Why a spilled change could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    /// The temporary file could not be read.
    #[error("cannot read the plan's changes back from its temporary file: {0}")]
    Read(#[source] std::io::Error),
    /// What was read is not the change that was written.
    #[error("the plan's temporary file holds a change that does not read back: {0}")]
    Decode(#[source] serde_json::Error),
}

impl From<ChangesError> for std::io::Error {
    /// An I/O error that holds the [`ChangesError`] (for a renderer writing
    /// to an `io::Write`; `downcast` gets it back).
    fn from(error: ChangesError) -> Self {
        std::io::Error::other(error)
    }
}

/// The changes of a plan, in the order [`Changes::sort`] gives them.
pub struct Changes {
    store: Store,
    spill_after: usize,
    /// The user ids the changes' `created_by` name (the people a plan
    /// shows), noted as they are added: a few, however many changes.
    creators: BTreeSet<String>,
}

enum Store {
    /// Every change, in memory.
    Held(Vec<ResourceChange>),
    /// Past the threshold: each change's key and place.
    Spilled(Spilled),
}

struct Spilled {
    file: File,
    /// Cleared once a write failed: the changes added after it are held
    /// (those before it are read from the file as usual).
    writable: bool,
    /// Bytes written to the file.
    written: u64,
    entries: Vec<Entry>,
}

/// A spilled change: what orders it, and where it is.
struct Entry {
    /// Its address, compactly.
    key: AddressKey,
    action: Action,
    attribution: Option<Attribution>,
    place: Place,
}

enum Place {
    /// `len` bytes of compact JSON at `at`.
    File { at: u64, len: u32 },
    /// In memory: the file could not take it.
    Held(Box<ResourceChange>),
}

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

impl Changes {
    /// No changes; spilled past [`SPILL_AFTER`].
    pub fn new() -> Self {
        Changes::spilling_after(SPILL_AFTER)
    }

    /// No changes; spilled past `count` of them (tests spill small plans).
    pub fn spilling_after(count: usize) -> Self {
        Changes {
            store: Store::Held(Vec::new()),
            spill_after: count,
            creators: BTreeSet::new(),
        }
    }

    /// How many changes.
    pub fn len(&self) -> usize {
        match &self.store {
            Store::Held(changes) => changes.len(),
            Store::Spilled(spilled) => spilled.entries.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the changes are in a temporary file rather than in memory.
    pub fn is_spilled(&self) -> bool {
        matches!(self.store, Store::Spilled(_))
    }

    /// Adds `change` at the end (the order is made by [`Changes::sort`]).
    pub fn push(&mut self, change: ResourceChange) {
        self.push_spilling_to(change, tempfile::tempfile);
    }

    /// [`Changes::push`], spilling to the file `open` gives when it is time.
    fn push_spilling_to(
        &mut self,
        change: ResourceChange,
        open: impl FnOnce() -> std::io::Result<File>,
    ) {
        if let Some(id) = &change.created_by
            && !self.creators.contains(id)
        {
            self.creators.insert(id.clone());
        }
        if let Store::Held(held) = &mut self.store {
            if held.len() < self.spill_after {
                held.push(change);
                return;
            }
            match open() {
                Ok(file) => {
                    let held = std::mem::take(held);
                    let mut spilled = Spilled {
                        file,
                        writable: true,
                        written: 0,
                        entries: Vec::with_capacity(held.len().saturating_mul(2)),
                    };
                    for change in held {
                        spilled.push(change);
                    }
                    self.store = Store::Spilled(spilled);
                }
                Err(error) => {
                    tracing::debug!(%error, "no temporary file for the plan's changes: they stay in memory");
                    // Not tried again for this plan.
                    self.spill_after = usize::MAX;
                    held.push(change);
                    return;
                }
            }
        }
        if let Store::Spilled(spilled) = &mut self.store {
            spilled.push(change);
        }
    }

    /// The change at `index`: borrowed when held, read back when spilled.
    ///
    /// # Panics
    /// When `index` is out of bounds, as a slice would.
    pub fn get(&self, index: usize) -> Result<Cow<'_, ResourceChange>, ChangesError> {
        match &self.store {
            Store::Held(changes) => Ok(Cow::Borrowed(&changes[index])),
            Store::Spilled(spilled) => spilled.read(&spilled.entries[index]).map(Cow::Owned),
        }
    }

    /// The action of the change at `index` (nothing is read back).
    pub fn action(&self, index: usize) -> Action {
        match &self.store {
            Store::Held(changes) => changes[index].action,
            Store::Spilled(spilled) => spilled.entries[index].action,
        }
    }

    /// Whose change the change at `index` is, in a three-way plan (nothing
    /// is read back).
    pub fn attribution(&self, index: usize) -> Option<Attribution> {
        match &self.store {
            Store::Held(changes) => changes[index].attribution,
            Store::Spilled(spilled) => spilled.entries[index].attribution,
        }
    }

    /// What kind of object the change at `index` changes (nothing is read back).
    pub fn kind(&self, index: usize) -> AddressKind {
        match &self.store {
            Store::Held(changes) => AddressKind::of(&changes[index].address),
            Store::Spilled(spilled) => spilled.entries[index].key.kind(),
        }
    }

    /// The address of the change at `index` (nothing is read back).
    pub fn address(&self, index: usize) -> Cow<'_, Address> {
        match &self.store {
            Store::Held(changes) => Cow::Borrowed(&changes[index].address),
            Store::Spilled(spilled) => Cow::Owned(spilled.entries[index].key.address()),
        }
    }

    /// The user ids the changes' `created_by` name, each once, in order
    /// (nothing is read back).
    pub fn creators(&self) -> impl Iterator<Item = &str> {
        self.creators.iter().map(String::as_str)
    }

    /// Every change in order, each read back as it is reached.
    pub fn iter(&self) -> impl Iterator<Item = Result<Cow<'_, ResourceChange>, ChangesError>> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Every change, in memory (for a plan known to be small, or a test).
    pub fn to_vec(&self) -> Result<Vec<ResourceChange>, ChangesError> {
        self.iter().map(|c| c.map(Cow::into_owned)).collect()
    }

    /// Every change, in memory, moved out when held.
    pub fn into_vec(self) -> Result<Vec<ResourceChange>, ChangesError> {
        match self.store {
            Store::Held(changes) => Ok(changes),
            Store::Spilled(_) => self.to_vec(),
        }
    }

    /// The action of each change, in order (nothing is read back).
    pub fn actions(&self) -> impl Iterator<Item = Action> + '_ {
        (0..self.len()).map(|i| self.action(i))
    }

    /// How many changes of each action (nothing is read back).
    pub fn summary(&self) -> Summary {
        let mut s = Summary::default();
        for action in self.actions() {
            match action {
                Action::Create => s.create += 1,
                Action::Update => s.update += 1,
                Action::Replace => s.replace += 1,
                Action::Delete => s.delete += 1,
            }
        }
        s
    }

    /// Puts the changes in plan order: by address, then action; ties
    /// (copies of one declared object to delete) by what they do, so that
    /// the order does not depend on the order they were added in.
    pub fn sort(&mut self) {
        match &mut self.store {
            Store::Held(changes) => {
                // In place: a stable sort would borrow a buffer of half the plan.
                changes.sort_unstable_by(compare);
                changes.shrink_to_fit();
            }
            Store::Spilled(spilled) => {
                let mut entries = std::mem::take(&mut spilled.entries);
                entries.sort_unstable_by(|a, b| {
                    a.key
                        .cmp(&b.key)
                        .then(a.action.cmp(&b.action))
                        .then_with(|| {
                            // Rare: read both back to order them as held ones are.
                            match (spilled.read(a), spilled.read(b)) {
                                (Ok(a), Ok(b)) => compare(&a, &b),
                                _ => std::cmp::Ordering::Equal,
                            }
                        })
                });
                entries.shrink_to_fit();
                spilled.entries = entries;
            }
        }
    }

    /// Drops what only the printed plan shows of each held change (its
    /// field differences, reason, live fingerprint, warnings and creator),
    /// once it is printed; a spilled change holds no memory to free.
    pub fn release_printed(&mut self) {
        if let Store::Held(changes) = &mut self.store {
            for change in changes {
                change.fields = Vec::new();
                change.reason = String::new();
                change.live_fingerprint = String::new();
                change.warnings = Vec::new();
                change.created_by = None;
            }
        }
    }
}

/// The order of a plan's changes: address, action, then what they do.
fn compare(a: &ResourceChange, b: &ResourceChange) -> std::cmp::Ordering {
    a.address
        .cmp(&b.address)
        .then(a.action.cmp(&b.action))
        .then_with(|| a.live_fingerprint.cmp(&b.live_fingerprint))
        .then_with(|| operations_text(a).cmp(&operations_text(b)))
}

/// The operations of `change` as JSON, to order two changes that tie on
/// everything else (rare: only then is it computed).
fn operations_text(change: &ResourceChange) -> String {
    serde_json::to_string(&change.operations).unwrap_or_default()
}

impl Spilled {
    fn push(&mut self, change: ResourceChange) {
        let key = AddressKey::of(&change.address);
        let (action, attribution) = (change.action, change.attribution);
        let place = match self.write(&change) {
            Some((at, len)) => Place::File { at, len },
            None => Place::Held(Box::new(change)),
        };
        self.entries.push(Entry {
            key,
            action,
            attribution,
            place,
        });
    }

    /// Writes `change` at the end of the file: where it is, or `None` when
    /// it must be held (a write failed, now or before: nothing more is
    /// written, since what the file holds past `written` is unknown).
    fn write(&mut self, change: &ResourceChange) -> Option<(u64, u32)> {
        if !self.writable {
            return None;
        }
        // Changes serialize: their values are JSON already.
        let text = verbatim(|| serde_json::to_vec(&Record::of(change))).ok()?;
        let len = u32::try_from(text.len()).ok()?;
        match self.file.write_all(&text) {
            Ok(()) => {
                let at = self.written;
                self.written += u64::from(len);
                Some((at, len))
            }
            Err(error) => {
                tracing::debug!(%error, "the plan's temporary file cannot be written: the rest of the plan stays in memory");
                self.writable = false;
                None
            }
        }
    }

    fn read(&self, entry: &Entry) -> Result<ResourceChange, ChangesError> {
        match &entry.place {
            Place::Held(change) => Ok((**change).clone()),
            Place::File { at, len } => {
                let mut text = vec![0; *len as usize];
                read_exact_at(&self.file, &mut text, *at).map_err(ChangesError::Read)?;
                let record: Record<'static> =
                    verbatim(|| serde_json::from_slice(&text)).map_err(ChangesError::Decode)?;
                Ok(record.into_change())
            }
        }
    }
}

/// A change as the file holds it. JSON has one `null` where a change can
/// hold two things: no value (`None`) and the value `null` (`Some(null)`,
/// a field that is `null` on one side); both read back as `None`. The
/// fields that held `Some(null)` are listed beside the change, so that a
/// change reads back exactly as it was written.
#[derive(Serialize, Deserialize)]
struct Record<'c> {
    change: Cow<'c, ResourceChange>,
    /// `(field index, side)`: 0 its `before`, 1 its `after`, 2 its `base`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    nulls: Vec<(u32, u8)>,
}

impl<'c> Record<'c> {
    fn of(change: &'c ResourceChange) -> Self {
        let mut nulls = Vec::new();
        for (i, field) in change.fields.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            let sides = [
                field.before.as_ref().is_some_and(JsonText::is_null),
                field.after.as_ref().is_some_and(JsonText::is_null),
                field.base.as_ref().is_some_and(serde_json::Value::is_null),
            ];
            for (side, null) in (0u8..).zip(sides) {
                if null {
                    nulls.push((i, side));
                }
            }
        }
        Record {
            change: Cow::Borrowed(change),
            nulls,
        }
    }

    fn into_change(self) -> ResourceChange {
        let mut change = self.change.into_owned();
        for (i, side) in self.nulls {
            let Some(field) = change.fields.get_mut(i as usize) else {
                continue;
            };
            let null = serde_json::Value::Null;
            match side {
                0 => field.before = Some(JsonText::new(&null)),
                1 => field.after = Some(JsonText::new(&null)),
                _ => field.base = Some(null),
            }
        }
        change
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, at) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl From<Vec<ResourceChange>> for Changes {
    /// Held in memory, as given (a test's or a small plan's changes).
    fn from(changes: Vec<ResourceChange>) -> Self {
        Changes {
            creators: changes
                .iter()
                .filter_map(|c| c.created_by.clone())
                .collect(),
            store: Store::Held(changes),
            spill_after: usize::MAX,
        }
    }
}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut list = f.debug_list();
        for change in self.iter() {
            match change {
                Ok(change) => list.entry(&change),
                Err(error) => list.entry(&error),
            };
        }
        list.finish()
    }
}

impl PartialEq for Changes {
    /// The same changes in the same order, wherever they are held (a change
    /// that cannot be read back is equal to nothing).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| matches!((a, b), (Ok(a), Ok(b)) if a == b))
    }
}

impl Serialize for Changes {
    /// As a list of changes, each read back as it is written.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for change in self.iter() {
            seq.serialize_element(&*change.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Changes {
    /// From a list of changes, spilled past [`SPILL_AFTER`] as they are read.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Changes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of changes")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Changes, A::Error> {
                let mut changes = Changes::new();
                while let Some(change) = seq.next_element::<ResourceChange>()? {
                    changes.push(change);
                }
                Ok(changes)
            }
        }
        deserializer.deserialize_seq(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::address::RunKind;
    use crate::plan::address::{MetricSettingsAddress, SectionAddress};
    use crate::plan::types::FieldChange;
    use serde_json::json;

    fn change(address: Address, action: Action, fingerprint: &str) -> ResourceChange {
        ResourceChange {
            address,
            action,
            reason: "why".into(),
            fields: vec![
                FieldChange::new(
                    "scorers[x].num_judges",
                    Some(json!(3)),
                    Some(json!({"a": [1, 2.5, "\u{0}"]})),
                ),
                // `null` on one side, absent on the other: JSON alone
                // would read both back as absent.
                FieldChange {
                    base: Some(serde_json::Value::Null),
                    ..FieldChange::new("description", Some(serde_json::Value::Null), None)
                },
                FieldChange::new("", None, Some(serde_json::Value::Null)),
            ],
            live_fingerprint: fingerprint.into(),
            operations: Vec::new(),
            warnings: vec!["careful".into()],
            created_by: Some("user-1".into()),
            attribution: None,
        }
    }

    fn section(project: &str, dashboard: Option<&str>, name: &str) -> Address {
        Address::Section(SectionAddress {
            project: project.into(),
            log_stream: "ls".into(),
            dashboard: dashboard.map(Into::into),
            name: name.into(),
        })
    }

    fn some_changes(n: usize) -> Vec<ResourceChange> {
        (0..n)
            .map(|i| {
                let address = match i % 3 {
                    0 => section(&format!("p{}", n - i), None, "s"),
                    1 => Address::MetricSettings(MetricSettingsAddress {
                        project: format!("p{}", i % 7),
                        run_kind: RunKind::LogStream,
                        run: format!("r{i}"),
                    }),
                    _ => section("p", Some("d"), &format!("n{}", i % 5)),
                };
                change(address, Action::Update, &format!("f{}", i % 4))
            })
            .collect()
    }

    #[test]
    fn spilled_changes_read_back_as_held_ones_in_the_same_order() {
        let all = some_changes(50);
        let mut held = Changes::spilling_after(usize::MAX);
        let mut spilled = Changes::spilling_after(10);
        for c in &all {
            held.push(c.clone());
            spilled.push(c.clone());
        }
        assert!(!held.is_spilled());
        assert!(spilled.is_spilled());
        held.sort();
        spilled.sort();
        assert_eq!(held.len(), 50);
        assert_eq!(held, spilled);
        assert_eq!(held.to_vec().unwrap(), spilled.to_vec().unwrap());
        assert_eq!(held.summary(), spilled.summary());
        for i in 0..held.len() {
            assert_eq!(held.kind(i), spilled.kind(i));
            assert_eq!(held.action(i), spilled.action(i));
        }
        // Ties of address and action (every third change names one
        // section of five) are ordered by what they do, in both.
        let mut sorted = all.clone();
        sorted.sort_by(compare);
        assert_eq!(spilled.to_vec().unwrap(), sorted);
    }

    #[test]
    fn a_file_that_refuses_writes_leaves_the_changes_in_memory() {
        let all = some_changes(20);
        let full = || std::fs::OpenOptions::new().write(true).open("/dev/full");
        let refusing = || {
            // Readable, not writable: every write fails.
            let file = tempfile::NamedTempFile::new()?;
            std::fs::File::open(file.path())
        };
        let mut checked = 0;
        for open in [&full as &dyn Fn() -> std::io::Result<File>, &refusing] {
            let Ok(file) = open() else { continue };
            let mut changes = Changes::spilling_after(5);
            let mut file = Some(file);
            for c in &all {
                changes.push_spilling_to(c.clone(), || {
                    file.take()
                        .ok_or_else(|| std::io::Error::other("opened once"))
                });
            }
            assert!(changes.is_spilled());
            changes.sort();
            let mut sorted = all.clone();
            sorted.sort_by(compare);
            assert_eq!(changes.to_vec().unwrap(), sorted);
            checked += 1;
        }
        assert!(checked > 0);
    }

    #[test]
    fn a_list_of_changes_reads_back_spilled_past_the_threshold() {
        let all = some_changes(SPILL_AFTER + 5);
        let text = serde_json::to_string(&all).unwrap();
        let changes: Changes = serde_json::from_str(&text).unwrap();
        assert!(changes.is_spilled());
        // As a list held in memory reads back (a saved plan's `null` sides
        // read back absent, spilled or not).
        let held: Vec<ResourceChange> = serde_json::from_str(&text).unwrap();
        assert_eq!(changes.to_vec().unwrap(), held);
        assert_eq!(
            serde_json::to_string(&changes).unwrap(),
            serde_json::to_string(&held).unwrap()
        );
    }
}
