//! A plan's changes, in plan order: held in memory while they are few,
//! spilled to an unnamed temporary file once they are many.
//!
//! A change of a large plan takes about a kilobyte in memory (its field
//! differences, its calls and their bodies), and a plan of 10,000 log
//! streams has 25,000 of them. Past [`SPILL_AFTER`] changes, each change is
//! written to a temporary file as compact JSON as it is added; memory keeps,
//! per change, only what orders it and where it is (its address encoded
//! so that bytes compare as addresses do ([`sort_key`]), its action, about
//! 100 bytes in all). Readers get the changes back one at a time
//! ([`Changes::get`], [`Changes::iter`]), so a command holds the changes it
//! is working on, not the plan: memory no longer grows with the plan.
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
use std::fs::File;
use std::io::Write as _;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::address::{Address, RunKind, TemplateKind};
use super::attribution::Attribution;
use super::types::{Action, ResourceChange, Summary};

/// How many changes are held in memory before the rest are spilled: below
/// it a plan is small enough to hold (about a megabyte), above it memory
/// would grow with the plan.
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
}

enum Store {
    /// Every change, in memory.
    Held(Vec<ResourceChange>),
    /// Past the threshold: each change's key and place.
    Spilled(Spilled),
}

struct Spilled {
    /// `None` once a write failed: the changes added after it are held.
    file: Option<File>,
    /// Bytes written to the file.
    written: u64,
    entries: Vec<Entry>,
}

/// A spilled change: what orders it, and where it is.
struct Entry {
    /// [`sort_key`] of its address.
    key: Box<[u8]>,
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
        if let Store::Held(held) = &mut self.store {
            if held.len() < self.spill_after {
                held.push(change);
                return;
            }
            match tempfile::tempfile() {
                Ok(file) => {
                    let held = std::mem::take(held);
                    let mut spilled = Spilled {
                        file: Some(file),
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
            Store::Spilled(spilled) => AddressKind::from_key(&spilled.entries[index].key),
        }
    }

    /// The address of the change at `index` (nothing is read back).
    pub fn address(&self, index: usize) -> Cow<'_, Address> {
        match &self.store {
            Store::Held(changes) => Cow::Borrowed(&changes[index].address),
            Store::Spilled(spilled) => Cow::Owned(address_of_key(&spilled.entries[index].key)),
        }
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

    /// Keeps the changes `keep` says to keep (each is read back to ask).
    pub fn retain(
        &mut self,
        mut keep: impl FnMut(&ResourceChange) -> bool,
    ) -> Result<(), ChangesError> {
        match &mut self.store {
            Store::Held(changes) => {
                changes.retain(|c| keep(c));
                Ok(())
            }
            Store::Spilled(spilled) => {
                let mut kept = Vec::with_capacity(spilled.entries.len());
                for entry in std::mem::take(&mut spilled.entries) {
                    if keep(&spilled.read(&entry)?) {
                        kept.push(entry);
                    }
                }
                spilled.entries = kept;
                Ok(())
            }
        }
    }

    /// Changes every change with `change` (a spilled plan is written anew).
    pub fn map(
        self,
        mut change: impl FnMut(ResourceChange) -> ResourceChange,
    ) -> Result<Changes, ChangesError> {
        match self.store {
            Store::Held(changes) => Ok(Changes {
                store: Store::Held(changes.into_iter().map(change).collect()),
                spill_after: self.spill_after,
            }),
            Store::Spilled(_) => {
                let mut out = Changes::spilling_after(self.spill_after);
                for c in self.iter() {
                    out.push(change(c?.into_owned()));
                }
                Ok(out)
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
        let key = sort_key(&change.address).into_boxed_slice();
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
    /// it must be held (no file, or the write failed: the file is then
    /// given up, since what is in it past `written` is unknown).
    fn write(&mut self, change: &ResourceChange) -> Option<(u64, u32)> {
        let file = self.file.as_mut()?;
        // Changes serialize: their values are JSON already.
        let text = serde_json::to_vec(change).ok()?;
        let len = u32::try_from(text.len()).ok()?;
        match file.write_all(&text) {
            Ok(()) => {
                let at = self.written;
                self.written += u64::from(len);
                Some((at, len))
            }
            Err(error) => {
                tracing::debug!(%error, "the plan's temporary file cannot be written: the rest of the plan stays in memory");
                self.file = None;
                None
            }
        }
    }

    fn read(&self, entry: &Entry) -> Result<ResourceChange, ChangesError> {
        match &entry.place {
            Place::Held(change) => Ok((**change).clone()),
            Place::File { at, len } => {
                let file = self.file_for_reading()?;
                let mut text = vec![0; *len as usize];
                read_exact_at(file, &mut text, *at).map_err(ChangesError::Read)?;
                serde_json::from_slice(&text).map_err(ChangesError::Decode)
            }
        }
    }

    fn file_for_reading(&self) -> Result<&File, ChangesError> {
        self.file.as_ref().ok_or_else(|| {
            ChangesError::Read(std::io::Error::other(
                "the file was given up after a failed write",
            ))
        })
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

/// The kind of object a change is to, as [`Address`]'s variants (what a
/// spilled change says of itself without being read back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AddressKind {
    /// [`Address::Integration`].
    Integration,
    /// [`Address::CustomIntegration`].
    CustomIntegration,
    /// [`Address::Template`].
    Template,
    /// [`Address::MetricSettings`].
    MetricSettings,
    /// [`Address::Dashboard`].
    Dashboard,
    /// [`Address::Section`].
    Section,
    /// [`Address::Favorite`].
    Favorite,
    /// [`Address::Widget`].
    Widget,
    /// [`Address::Settings`].
    Settings,
}

impl AddressKind {
    /// In the order of [`Address`]'s variants, which is the order addresses sort in.
    const ALL: [AddressKind; 9] = [
        AddressKind::Integration,
        AddressKind::CustomIntegration,
        AddressKind::Template,
        AddressKind::MetricSettings,
        AddressKind::Dashboard,
        AddressKind::Section,
        AddressKind::Favorite,
        AddressKind::Widget,
        AddressKind::Settings,
    ];

    /// The kind of `address`.
    pub fn of(address: &Address) -> Self {
        match address {
            Address::Integration { .. } => AddressKind::Integration,
            Address::CustomIntegration { .. } => AddressKind::CustomIntegration,
            Address::Template { .. } => AddressKind::Template,
            Address::MetricSettings { .. } => AddressKind::MetricSettings,
            Address::Dashboard { .. } => AddressKind::Dashboard,
            Address::Section { .. } => AddressKind::Section,
            Address::Favorite { .. } => AddressKind::Favorite,
            Address::Widget { .. } => AddressKind::Widget,
            Address::Settings { .. } => AddressKind::Settings,
        }
    }

    fn from_key(key: &[u8]) -> Self {
        AddressKind::ALL[usize::from(key[0])]
    }
}

/// `address` as bytes that compare as addresses do (`Address`'s derived
/// order: the variant, then each field in turn): the variant's index,
/// then each field. A string is written with its zero bytes escaped
/// (`00` as `00 FF`) and ends with `00 00`, so that a string that is a
/// prefix of another sorts first and no field runs into the next; an
/// optional string is `00` when absent, `01` then the string when present;
/// a kind is its index.
pub fn sort_key(address: &Address) -> Vec<u8> {
    let mut key = Vec::with_capacity(64);
    let kind = AddressKind::of(address);
    key.push(kind as u8);
    let string = |key: &mut Vec<u8>, s: &str| {
        for &b in s.as_bytes() {
            key.push(b);
            if b == 0 {
                key.push(0xFF);
            }
        }
        key.extend_from_slice(&[0, 0]);
    };
    let optional = |key: &mut Vec<u8>, s: Option<&str>| match s {
        None => key.push(0),
        Some(s) => {
            key.push(1);
            string(key, s);
        }
    };
    match address {
        Address::Integration { provider } => string(&mut key, provider),
        Address::CustomIntegration { name } => string(&mut key, name),
        Address::Template {
            project,
            kind,
            name,
        } => {
            string(&mut key, project);
            key.push(match kind {
                TemplateKind::Annotation => 0,
                TemplateKind::Feedback => 1,
            });
            string(&mut key, name);
        }
        Address::MetricSettings {
            project,
            run_kind,
            run,
        } => {
            string(&mut key, project);
            key.push(match run_kind {
                RunKind::LogStream => 0,
                RunKind::Experiment => 1,
            });
            string(&mut key, run);
        }
        Address::Dashboard {
            project,
            log_stream,
            name,
        } => {
            string(&mut key, project);
            string(&mut key, log_stream);
            string(&mut key, name);
        }
        Address::Section {
            project,
            log_stream,
            dashboard,
            name,
        } => {
            string(&mut key, project);
            string(&mut key, log_stream);
            optional(&mut key, dashboard.as_deref());
            string(&mut key, name);
        }
        Address::Favorite {
            project,
            log_stream,
        } => {
            string(&mut key, project);
            string(&mut key, log_stream);
        }
        Address::Widget {
            project,
            log_stream,
            dashboard,
            section,
            name,
        } => {
            string(&mut key, project);
            string(&mut key, log_stream);
            optional(&mut key, dashboard.as_deref());
            optional(&mut key, section.as_deref());
            string(&mut key, name);
        }
        Address::Settings {
            project,
            log_stream,
            dashboard,
        } => {
            string(&mut key, project);
            string(&mut key, log_stream);
            optional(&mut key, dashboard.as_deref());
        }
    }
    key
}

/// The address [`sort_key`] encoded (the key is made here, so it reads back).
fn address_of_key(key: &[u8]) -> Address {
    let mut r = KeyReader(&key[1..]);
    match AddressKind::from_key(key) {
        AddressKind::Integration => Address::Integration {
            provider: r.string(),
        },
        AddressKind::CustomIntegration => Address::CustomIntegration { name: r.string() },
        AddressKind::Template => Address::Template {
            project: r.string(),
            kind: if r.byte() == 0 {
                TemplateKind::Annotation
            } else {
                TemplateKind::Feedback
            },
            name: r.string(),
        },
        AddressKind::MetricSettings => Address::MetricSettings {
            project: r.string(),
            run_kind: if r.byte() == 0 {
                RunKind::LogStream
            } else {
                RunKind::Experiment
            },
            run: r.string(),
        },
        AddressKind::Dashboard => Address::Dashboard {
            project: r.string(),
            log_stream: r.string(),
            name: r.string(),
        },
        AddressKind::Section => Address::Section {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
            name: r.string(),
        },
        AddressKind::Favorite => Address::Favorite {
            project: r.string(),
            log_stream: r.string(),
        },
        AddressKind::Widget => Address::Widget {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
            section: r.optional(),
            name: r.string(),
        },
        AddressKind::Settings => Address::Settings {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
        },
    }
}

/// Reads the fields of a [`sort_key`] in turn (struct fields are evaluated
/// in the order they are written).
struct KeyReader<'k>(&'k [u8]);

impl KeyReader<'_> {
    fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        *first
    }

    fn string(&mut self) -> String {
        let mut bytes = Vec::new();
        loop {
            match self.byte() {
                0 if self.0.first() == Some(&0xFF) => {
                    self.byte();
                    bytes.push(0);
                }
                0 => {
                    self.byte();
                    break;
                }
                b => bytes.push(b),
            }
        }
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    fn optional(&mut self) -> Option<String> {
        (self.byte() == 1).then(|| self.string())
    }
}

impl From<Vec<ResourceChange>> for Changes {
    /// Held in memory, as given (a test's or a small plan's changes).
    fn from(changes: Vec<ResourceChange>) -> Self {
        Changes {
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
    use crate::plan::types::FieldChange;
    use proptest::prelude::*;
    use serde_json::json;

    fn change(address: Address, action: Action, fingerprint: &str) -> ResourceChange {
        ResourceChange {
            address,
            action,
            reason: "why".into(),
            fields: vec![FieldChange::new(
                "scorers[x].num_judges",
                Some(json!(3)),
                Some(json!({"a": [1, 2.5, "\u{0}"]})),
            )],
            live_fingerprint: fingerprint.into(),
            operations: Vec::new(),
            warnings: vec!["careful".into()],
            created_by: Some("user-1".into()),
            attribution: None,
        }
    }

    fn section(project: &str, dashboard: Option<&str>, name: &str) -> Address {
        Address::Section {
            project: project.into(),
            log_stream: "ls".into(),
            dashboard: dashboard.map(Into::into),
            name: name.into(),
        }
    }

    fn some_changes(n: usize) -> Vec<ResourceChange> {
        (0..n)
            .map(|i| {
                let address = match i % 3 {
                    0 => section(&format!("p{}", n - i), None, "s"),
                    1 => Address::MetricSettings {
                        project: format!("p{}", i % 7),
                        run_kind: RunKind::LogStream,
                        run: format!("r{i}"),
                    },
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
    fn retain_and_map_keep_the_order_wherever_the_changes_are() {
        for spill_after in [usize::MAX, 0, 7] {
            let mut changes = Changes::spilling_after(spill_after);
            for c in some_changes(30) {
                changes.push(c);
            }
            changes.sort();
            let before = changes.to_vec().unwrap();
            changes
                .retain(|c| matches!(c.address, Address::MetricSettings { .. }))
                .unwrap();
            let kept: Vec<_> = before
                .iter()
                .filter(|c| matches!(c.address, Address::MetricSettings { .. }))
                .cloned()
                .collect();
            assert_eq!(changes.to_vec().unwrap(), kept);
            let mapped = changes
                .map(|mut c| {
                    c.reason = "mapped".into();
                    c
                })
                .unwrap();
            assert!(mapped.iter().all(|c| c.unwrap().reason == "mapped"));
            assert_eq!(mapped.len(), kept.len());
        }
    }

    #[test]
    fn a_list_of_changes_reads_back_spilled_past_the_threshold() {
        let all = some_changes(SPILL_AFTER + 5);
        let text = serde_json::to_string(&all).unwrap();
        let changes: Changes = serde_json::from_str(&text).unwrap();
        assert!(changes.is_spilled());
        assert_eq!(changes.to_vec().unwrap(), all);
        assert_eq!(serde_json::to_string(&changes).unwrap(), text);
    }

    fn any_name() -> impl Strategy<Value = String> {
        // Few letters, the zero byte and a high byte: prefixes and escapes.
        proptest::collection::vec(
            prop_oneof![Just('a'), Just('b'), Just('\u{0}'), Just('ÿ')],
            0..4,
        )
        .prop_map(|c| c.into_iter().collect())
    }

    fn any_address() -> impl Strategy<Value = Address> {
        let name = any_name;
        let optional = || proptest::option::of(any_name());
        prop_oneof![
            name().prop_map(|provider| Address::Integration { provider }),
            name().prop_map(|name| Address::CustomIntegration { name }),
            (name(), any::<bool>(), name()).prop_map(|(project, a, name)| Address::Template {
                project,
                kind: if a {
                    TemplateKind::Annotation
                } else {
                    TemplateKind::Feedback
                },
                name
            }),
            (name(), any::<bool>(), name()).prop_map(|(project, l, run)| {
                Address::MetricSettings {
                    project,
                    run_kind: if l {
                        RunKind::LogStream
                    } else {
                        RunKind::Experiment
                    },
                    run,
                }
            }),
            (name(), name(), name()).prop_map(|(project, log_stream, name)| Address::Dashboard {
                project,
                log_stream,
                name
            }),
            (name(), name(), optional(), name()).prop_map(
                |(project, log_stream, dashboard, name)| {
                    Address::Section {
                        project,
                        log_stream,
                        dashboard,
                        name,
                    }
                }
            ),
            (name(), name()).prop_map(|(project, log_stream)| Address::Favorite {
                project,
                log_stream
            }),
            (name(), name(), optional(), optional(), name()).prop_map(
                |(project, log_stream, dashboard, section, name)| Address::Widget {
                    project,
                    log_stream,
                    dashboard,
                    section,
                    name,
                }
            ),
            (name(), name(), optional()).prop_map(|(project, log_stream, dashboard)| {
                Address::Settings {
                    project,
                    log_stream,
                    dashboard,
                }
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 2000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(9),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn sort_keys_compare_as_addresses_do(a in any_address(), b in any_address()) {
            prop_assert_eq!(sort_key(&a).cmp(&sort_key(&b)), a.cmp(&b));
            prop_assert_eq!(AddressKind::from_key(&sort_key(&a)), AddressKind::of(&a));
            prop_assert_eq!(address_of_key(&sort_key(&a)), a);
        }
    }
}
