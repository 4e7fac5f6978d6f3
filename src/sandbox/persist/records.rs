//! [`Records`]: the collection type of the sandbox's state, a `Vec` that
//! knows what a write changed.
//!
//! Outside a write it is a plain `Vec` (reads through `Deref<Target = [T]>`,
//! the usual mutators). During a write with a state file (between
//! `begin` and `finish`/`rollback`, driven by `persist::tracked`) every
//! mutation is noted as a positional [`Change`] (an element set, pushed,
//! inserted, removed; the whole collection for the few mutators that can
//! touch everything, such as `iter_mut`), with what undoes it. So a write
//! costs the serialization of the records it touched, not of the state,
//! and a failed write is undone exactly.
//!
//! Prefer `position` then `records[i]` to `iter_mut().find(..)`: the first
//! notes one record, the second the whole collection.

use std::fmt;
use std::ops::{Deref, Index, IndexMut};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::journal::Change;

/// A collection of the sandbox's state (see the module docs).
pub struct Records<T> {
    items: Vec<T>,
    log: Option<Box<Log<T>>>,
}

/// What a write did to one collection so far.
struct Log<T> {
    /// Elements changed in place since the last structural change.
    dirty: Vec<usize>,
    /// Changes noted so far, in order.
    changes: Vec<Change>,
    /// How to undo them, in order.
    undo: Vec<Undo<T>>,
    /// The whole collection is written at the end (a mutator that can
    /// touch every element was used).
    whole: bool,
    /// The first element that could not be serialized.
    error: Option<serde_json::Error>,
}

enum Undo<T> {
    Slot(usize, T),
    Pushed,
    Inserted(usize),
    Removed(Vec<(usize, T)>),
    Truncated(Vec<T>),
    All(Vec<T>),
}

impl<T> Log<T> {
    fn new() -> Self {
        Log {
            dirty: Vec::new(),
            changes: Vec::new(),
            undo: Vec::new(),
            whole: false,
            error: None,
        }
    }
}

fn to_value<T: Serialize>(item: &T, error: &mut Option<serde_json::Error>) -> Value {
    serde_json::to_value(item).unwrap_or_else(|e| {
        error.get_or_insert(e);
        Value::Null
    })
}

/// Why a change read from the state file cannot be replayed on a
/// collection.
#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    /// An element is not of the collection's type.
    #[error("{0}")]
    Element(#[source] serde_json::Error),
    /// The change names a position the collection does not have.
    #[error("{op} at {index} of a collection of {len}")]
    OutOfRange {
        /// The change: `set`, `insert` or `remove`.
        op: &'static str,
        /// The position it names.
        index: usize,
        /// The collection's length then.
        len: usize,
    },
    /// A change of a single field, not of a collection.
    #[error("a field change for a collection")]
    FieldChange,
}

impl<T> Records<T> {
    /// An empty collection.
    pub fn new() -> Self {
        Records {
            items: Vec::new(),
            log: None,
        }
    }

    /// An empty collection with room for `n` elements.
    pub fn with_capacity(n: usize) -> Self {
        Records {
            items: Vec::with_capacity(n),
            log: None,
        }
    }

    /// The elements, as a slice.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// The elements, by value.
    pub fn into_vec(self) -> Vec<T> {
        self.items
    }
}

impl<T: Clone + Serialize> Records<T> {
    /// The noted log, when a write is being recorded and the collection is
    /// not already to be written whole.
    fn logging(&mut self) -> Option<&mut Log<T>> {
        self.log.as_deref_mut().filter(|l| !l.whole)
    }

    /// Notes the elements changed in place as `Set`s (before a structural
    /// change moves them).
    fn flush(&mut self) {
        let Some(log) = self.log.as_deref_mut() else {
            return;
        };
        for i in std::mem::take(&mut log.dirty) {
            if let Some(item) = self.items.get(i) {
                let v = to_value(item, &mut log.error);
                log.changes.push(Change::Set { i, v });
            }
        }
    }

    /// Notes that element `i` may change.
    fn touch(&mut self, i: usize) {
        let Some(item) = self.items.get(i) else {
            return;
        };
        if let Some(log) = self.log.as_deref_mut().filter(|l| !l.whole)
            && !log.dirty.contains(&i)
        {
            log.dirty.push(i);
            log.undo.push(Undo::Slot(i, item.clone()));
        }
    }

    /// Notes that anything may change: the collection is written whole.
    fn touch_all(&mut self) {
        if let Some(log) = self.log.as_deref_mut()
            && !log.whole
        {
            log.whole = true;
            log.dirty.clear();
            log.changes.clear();
            log.undo.push(Undo::All(self.items.clone()));
        }
    }

    /// Appends an element.
    pub fn push(&mut self, item: T) {
        self.flush();
        if let Some(log) = self.logging() {
            let v = to_value(&item, &mut log.error);
            log.changes.push(Change::Push { v });
            log.undo.push(Undo::Pushed);
        }
        self.items.push(item);
    }

    /// Inserts an element at `i`, shifting the rest.
    pub fn insert(&mut self, i: usize, item: T) {
        self.flush();
        if let Some(log) = self.logging() {
            let v = to_value(&item, &mut log.error);
            log.changes.push(Change::Insert { i, v });
            log.undo.push(Undo::Inserted(i));
        }
        self.items.insert(i, item);
    }

    /// Removes and returns the element at `i`.
    pub fn remove(&mut self, i: usize) -> T {
        self.flush();
        let item = self.items.remove(i);
        if let Some(log) = self.logging() {
            log.changes.push(Change::Remove { at: vec![i] });
            log.undo.push(Undo::Removed(vec![(i, item.clone())]));
        }
        item
    }

    /// Removes and returns the last element.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.items.len().checked_sub(1)?;
        Some(self.remove(last))
    }

    /// Keeps the elements for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.flush();
        let flags: Vec<bool> = self.items.iter().map(&mut keep).collect();
        if flags.iter().all(|k| *k) {
            return;
        }
        let mut removed = Vec::new();
        let mut kept = Vec::with_capacity(self.items.len());
        for (i, (item, k)) in std::mem::take(&mut self.items)
            .into_iter()
            .zip(flags)
            .enumerate()
        {
            if k {
                kept.push(item);
            } else {
                removed.push((i, item));
            }
        }
        self.items = kept;
        if let Some(log) = self.logging() {
            log.changes.push(Change::Remove {
                at: removed.iter().map(|(i, _)| *i).collect(),
            });
            log.undo.push(Undo::Removed(removed));
        }
    }

    /// Shortens the collection to `len` elements.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.items.len() {
            return;
        }
        self.flush();
        let tail = self.items.split_off(len);
        if let Some(log) = self.logging() {
            log.changes.push(Change::Truncate { len });
            log.undo.push(Undo::Truncated(tail));
        }
    }

    /// Removes every element.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Appends every element of `items`.
    pub fn extend(&mut self, items: impl IntoIterator<Item = T>) {
        for item in items {
            self.push(item);
        }
    }

    /// The element at `i`, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.touch(i);
        self.items.get_mut(i)
    }

    /// The first element, to change.
    pub fn first_mut(&mut self) -> Option<&mut T> {
        self.get_mut(0)
    }

    /// The last element, to change.
    pub fn last_mut(&mut self) -> Option<&mut T> {
        let last = self.items.len().checked_sub(1)?;
        self.get_mut(last)
    }

    /// Every element, to change (notes the whole collection: prefer
    /// `position` and an index).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.touch_all();
        self.items.iter_mut()
    }

    /// Sorts the collection (notes the whole collection).
    pub fn sort_by(&mut self, compare: impl FnMut(&T, &T) -> std::cmp::Ordering) {
        self.touch_all();
        self.items.sort_by(compare);
    }

    /// Sorts the collection by a key (notes the whole collection).
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&T) -> K) {
        self.touch_all();
        self.items.sort_by_key(key);
    }

    /// Starts noting changes (a write begins).
    pub(super) fn begin(&mut self) {
        self.log = Some(Box::new(Log::new()));
    }

    /// The changes of the write so far, `None` when the collection was
    /// replaced by another during it (then it is written whole).
    pub(super) fn collect(&mut self) -> Result<Option<Vec<Change>>, serde_json::Error> {
        self.flush();
        let Some(log) = self.log.as_deref_mut() else {
            return Ok(None);
        };
        if let Some(e) = log.error.take() {
            return Err(e);
        }
        if log.whole {
            let mut error = None;
            let v = self.items.iter().map(|i| to_value(i, &mut error)).collect();
            return match error {
                Some(e) => Err(e),
                None => Ok(Some(vec![Change::All { v }])),
            };
        }
        Ok(Some(std::mem::take(&mut log.changes)))
    }

    /// The whole collection as one change.
    pub(super) fn whole(&self) -> Result<Change, serde_json::Error> {
        let mut error = None;
        let v = self.items.iter().map(|i| to_value(i, &mut error)).collect();
        match error {
            Some(e) => Err(e),
            None => Ok(Change::All { v }),
        }
    }

    /// Stops noting changes, keeping them (the write is done).
    pub(super) fn finish(&mut self) {
        self.log = None;
    }

    /// Undoes the write's changes; false when they cannot be (the
    /// collection was replaced during the write).
    pub(super) fn rollback(&mut self) -> bool {
        let Some(log) = self.log.take() else {
            return false;
        };
        for undo in log.undo.into_iter().rev() {
            match undo {
                Undo::Slot(i, item) => {
                    if let Some(slot) = self.items.get_mut(i) {
                        *slot = item;
                    }
                }
                Undo::Pushed => {
                    self.items.pop();
                }
                Undo::Inserted(i) => {
                    if i < self.items.len() {
                        self.items.remove(i);
                    }
                }
                Undo::Removed(removed) => {
                    for (i, item) in removed {
                        let at = i.min(self.items.len());
                        self.items.insert(at, item);
                    }
                }
                Undo::Truncated(tail) => self.items.extend(tail),
                Undo::All(items) => self.items = items,
            }
        }
        true
    }
}

impl<T: DeserializeOwned> Records<T> {
    /// Replays a change read from the journal.
    pub(super) fn apply(&mut self, change: Change) -> Result<(), ChangeError> {
        let item = |v: Value| serde_json::from_value::<T>(v).map_err(ChangeError::Element);
        let out_of_range = |op: &'static str, index: usize, len: usize| {
            Err(ChangeError::OutOfRange { op, index, len })
        };
        match change {
            Change::Set { i, v } => {
                let len = self.items.len();
                match self.items.get_mut(i) {
                    Some(slot) => *slot = item(v)?,
                    None => return out_of_range("set", i, len),
                }
            }
            Change::Push { v } => self.items.push(item(v)?),
            Change::Insert { i, v } => {
                if i > self.items.len() {
                    return out_of_range("insert", i, self.items.len());
                }
                self.items.insert(i, item(v)?);
            }
            Change::Remove { at } => {
                for i in at.into_iter().rev() {
                    if i >= self.items.len() {
                        return out_of_range("remove", i, self.items.len());
                    }
                    self.items.remove(i);
                }
            }
            Change::Truncate { len } => self.items.truncate(len),
            Change::All { v } => {
                self.items = v.into_iter().map(item).collect::<Result<_, _>>()?;
            }
            Change::Field { .. } => return Err(ChangeError::FieldChange),
        }
        Ok(())
    }
}

impl<T> Default for Records<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> Clone for Records<T> {
    /// A copy of the elements (not of a write in progress).
    fn clone(&self) -> Self {
        Records {
            items: self.items.clone(),
            log: None,
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Records<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)
    }
}

impl<T: PartialEq> PartialEq for Records<T> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for Records<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        &self.items == other
    }
}

impl<T> Deref for Records<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<T> Index<usize> for Records<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.items[i]
    }
}

impl<T: Clone + Serialize> IndexMut<usize> for Records<T> {
    /// The element at `i`, to change (noted).
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.touch(i);
        &mut self.items[i]
    }
}

impl<T> From<Vec<T>> for Records<T> {
    fn from(items: Vec<T>) -> Self {
        Records { items, log: None }
    }
}

impl<T> FromIterator<T> for Records<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        Records::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T> IntoIterator for Records<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Records<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, T: Clone + Serialize> IntoIterator for &'a mut Records<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T: Serialize> Serialize for Records<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.items.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Records<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(deserializer).map(Records::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked(items: &[&str]) -> Records<String> {
        let mut r: Records<String> = items.iter().map(|s| (*s).to_owned()).collect();
        r.begin();
        r
    }

    fn replay(start: &[&str], changes: Vec<Change>) -> Vec<String> {
        let mut r: Records<String> = start.iter().map(|s| (*s).to_owned()).collect();
        for c in changes {
            r.apply(c).unwrap();
        }
        r.into_vec()
    }

    #[test]
    fn replaying_the_noted_changes_gives_the_same_collection() {
        let start = ["a", "b", "c", "d", "e"];
        let mut r = tracked(&start);
        r[1].push('1');
        r.push("f".into());
        r[1].push('2');
        r.retain(|s| s != "c" && s != "e");
        r.insert(0, "z".into());
        r.remove(2);
        r[3].push('3');
        r.truncate(4);
        let changes = r.collect().unwrap().unwrap();
        let after = r.clone().into_vec();
        assert_eq!(after, vec!["z", "a", "d", "f3"]);
        assert_eq!(replay(&start, changes), after);
        // Undone exactly.
        assert!(r.rollback());
        assert_eq!(r.into_vec(), start);
    }

    #[test]
    fn a_mutator_that_can_touch_everything_writes_the_whole_collection() {
        let start = ["b", "a"];
        let mut r = tracked(&start);
        r.push("c".into());
        r.sort_by(|a, b| a.cmp(b));
        for s in r.iter_mut() {
            s.push('!');
        }
        let changes = r.collect().unwrap().unwrap();
        assert!(matches!(changes.as_slice(), [Change::All { .. }]));
        assert_eq!(replay(&start, changes), vec!["a!", "b!", "c!"]);
        assert!(r.rollback());
        assert_eq!(r.into_vec(), start);
    }

    #[test]
    fn outside_a_write_nothing_is_noted_and_a_replaced_collection_says_so() {
        let mut r: Records<String> = Records::new();
        r.push("x".into());
        r[0].push('y');
        assert!(r.log.is_none());
        r.begin();
        let mut replaced: Records<String> = vec!["q".to_owned()].into();
        std::mem::swap(&mut r, &mut replaced);
        assert_eq!(r.collect().unwrap(), None);
        assert!(!r.rollback());
        let untouched = tracked(&["a"]).collect().unwrap().unwrap();
        assert!(untouched.is_empty());
    }
}
