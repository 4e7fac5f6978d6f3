//! [`Records`]: the collection type of the sandbox's state, a `Vec` whose
//! elements are rows of a table of the state database.
//!
//! Each element carries the row id it has in its table (ascending in the
//! collection's order: a push takes the next id, a removal leaves a gap).
//! During a write (between `begin` and `finish`, driven by `persist`) the
//! collection notes which rows it handed out to change, pushed or removed:
//! committing the write saves those rows, and only those, in one SQL
//! transaction; a write that fails has those rows read back from the
//! database. Nothing is undone by hand: the database is the record of what
//! was committed. A mutator that may touch everything (`iter_mut`, sorting,
//! an insertion in the middle) marks the whole table, which the commit
//! writes whole.
//!
//! Outside a write it is a plain `Vec` (reads through `Deref<Target = [T]>`,
//! the usual mutators). Prefer `position` then `records[i]` to
//! `iter_mut().find(..)`: the first notes one row, the second the table.

use std::collections::BTreeSet;
use std::fmt;
use std::ops::{Deref, Index, IndexMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A collection of the sandbox's state (see the module docs).
pub struct Records<T> {
    items: Vec<T>,
    /// The row id of each element, ascending.
    rows: Vec<i64>,
    /// The id the next pushed element gets.
    next_row: i64,
    /// What the write under way touched (`None` outside a write).
    touched: Option<Box<Touched>>,
}

/// What a write touched in one collection.
#[derive(Debug, Default)]
pub(super) struct Touched {
    /// Rows handed out to change, pushed or removed.
    pub rows: BTreeSet<i64>,
    /// Every row may have changed (or moved): write the table whole.
    pub whole: bool,
}

/// What a write must save of one collection.
#[derive(Debug)]
pub(super) enum Pending<'a> {
    /// These rows (those no longer in the collection are deleted).
    Rows(&'a BTreeSet<i64>),
    /// The whole table (also for a collection replaced during the write,
    /// which knows nothing of the rows it replaced).
    Whole,
}

impl<T> Records<T> {
    /// An empty collection.
    pub fn new() -> Self {
        Records {
            items: Vec::new(),
            rows: Vec::new(),
            next_row: 1,
            touched: None,
        }
    }

    /// An empty collection with room for `n` elements.
    pub fn with_capacity(n: usize) -> Self {
        Records {
            items: Vec::with_capacity(n),
            rows: Vec::with_capacity(n),
            next_row: 1,
            touched: None,
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

    fn note(&mut self, row: i64) {
        if let Some(t) = self.touched.as_deref_mut()
            && !t.whole
        {
            t.rows.insert(row);
        }
    }

    /// Marks every row as changed and numbers the rows again from 1 (the
    /// table is written whole, so the old ids do not matter).
    fn touch_all(&mut self) {
        if let Some(t) = self.touched.as_deref_mut() {
            t.whole = true;
            t.rows.clear();
        }
        self.renumber();
    }

    fn renumber(&mut self) {
        self.rows = (1..).take(self.items.len()).collect();
        self.next_row = i64::try_from(self.items.len()).unwrap_or(i64::MAX - 1) + 1;
    }

    /// Appends an element.
    pub fn push(&mut self, item: T) {
        let row = self.next_row;
        self.next_row += 1;
        self.items.push(item);
        self.rows.push(row);
        self.note(row);
    }

    /// Inserts an element at `i`, shifting the rest (at the end: a push;
    /// elsewhere the table is written whole).
    pub fn insert(&mut self, i: usize, item: T) {
        if i == self.items.len() {
            return self.push(item);
        }
        self.items.insert(i, item);
        self.touch_all();
    }

    /// Removes and returns the element at `i`.
    pub fn remove(&mut self, i: usize) -> T {
        let item = self.items.remove(i);
        let row = self.rows.remove(i);
        self.note(row);
        item
    }

    /// Removes and returns the last element.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.items.len().checked_sub(1)?;
        Some(self.remove(last))
    }

    /// Keeps the elements for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let flags: Vec<bool> = self.items.iter().map(&mut keep).collect();
        if flags.iter().all(|k| *k) {
            return;
        }
        let items = std::mem::take(&mut self.items);
        let rows = std::mem::take(&mut self.rows);
        for ((item, row), k) in items.into_iter().zip(rows).zip(flags) {
            if k {
                self.items.push(item);
                self.rows.push(row);
            } else {
                self.note(row);
            }
        }
    }

    /// Shortens the collection to `len` elements.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.items.len() {
            return;
        }
        self.items.truncate(len);
        for row in self.rows.split_off(len) {
            self.note(row);
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
        let row = *self.rows.get(i)?;
        self.note(row);
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

    /// Every element, to change (notes the whole table: prefer `position`
    /// and an index).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, T> {
        self.touch_all();
        self.items.iter_mut()
    }

    /// Sorts the collection (notes the whole table).
    pub fn sort_by(&mut self, compare: impl FnMut(&T, &T) -> std::cmp::Ordering) {
        self.items.sort_by(compare);
        self.touch_all();
    }

    /// Sorts the collection by a key (notes the whole table).
    pub fn sort_by_key<K: Ord>(&mut self, key: impl FnMut(&T) -> K) {
        self.items.sort_by_key(key);
        self.touch_all();
    }

    /// A collection read from its table: `(row id, element)` in ascending
    /// row order.
    pub(super) fn from_rows(rows: Vec<(i64, T)>) -> Self {
        let mut r = Records::with_capacity(rows.len());
        for (row, item) in rows {
            r.next_row = r.next_row.max(row + 1);
            r.rows.push(row);
            r.items.push(item);
        }
        r
    }

    /// The elements with their row ids.
    pub(super) fn rows(&self) -> impl Iterator<Item = (i64, &T)> {
        self.rows.iter().copied().zip(&self.items)
    }

    /// The element of row `row`, if the collection holds it.
    pub(super) fn by_row(&self, row: i64) -> Option<&T> {
        let i = self.rows.binary_search(&row).ok()?;
        self.items.get(i)
    }

    /// Puts row `row` back as the database holds it (`None`: it has no
    /// such row), at its place in row order.
    pub(super) fn restore_row(&mut self, row: i64, item: Option<T>) {
        match (self.rows.binary_search(&row), item) {
            (Ok(i), Some(item)) => self.items[i] = item,
            (Ok(i), None) => {
                self.items.remove(i);
                self.rows.remove(i);
            }
            (Err(i), Some(item)) => {
                self.items.insert(i, item);
                self.rows.insert(i, row);
            }
            (Err(_), None) => {}
        }
    }

    /// Starts noting what a write touches.
    pub(super) fn begin(&mut self) {
        self.touched = Some(Box::default());
    }

    /// What the write under way must save.
    pub(super) fn pending(&self) -> Pending<'_> {
        match self.touched.as_deref() {
            Some(t) if !t.whole => Pending::Rows(&t.rows),
            _ => Pending::Whole,
        }
    }

    /// Stops noting (the write was saved or restored).
    pub(super) fn finish(&mut self) {
        self.touched = None;
    }
}

impl<T> Default for Records<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> Clone for Records<T> {
    /// A copy of the elements and their row ids (not of a write in progress).
    fn clone(&self) -> Self {
        Records {
            items: self.items.clone(),
            rows: self.rows.clone(),
            next_row: self.next_row,
            touched: None,
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

impl<T> IndexMut<usize> for Records<T> {
    /// The element at `i`, to change (noted).
    fn index_mut(&mut self, i: usize) -> &mut T {
        let row = self.rows[i];
        self.note(row);
        &mut self.items[i]
    }
}

impl<T> From<Vec<T>> for Records<T> {
    fn from(items: Vec<T>) -> Self {
        let mut r = Records {
            items,
            rows: Vec::new(),
            next_row: 1,
            touched: None,
        };
        r.renumber();
        r
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

impl<'a, T> IntoIterator for &'a mut Records<T> {
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

    fn noted(r: &Records<String>) -> Vec<i64> {
        match r.pending() {
            Pending::Rows(rows) => rows.iter().copied().collect(),
            Pending::Whole => panic!("whole"),
        }
    }

    #[test]
    fn a_write_notes_the_rows_it_touched_and_row_ids_stay_ascending() {
        let mut r = tracked(&["a", "b", "c", "d", "e"]);
        let _ = &r[0];
        r[1].push('1');
        r.push("f".into());
        r.retain(|s| s != "c" && s != "e");
        r.remove(0);
        assert_eq!(r.as_slice(), ["b1", "d", "f"]);
        assert_eq!(noted(&r), vec![1, 2, 3, 5, 6], "a read is not a change");
        assert_eq!(r.rows().map(|(row, _)| row).collect::<Vec<_>>(), [2, 4, 6]);
        assert_eq!(r.by_row(4).map(String::as_str), Some("d"));
        assert_eq!(r.by_row(3), None);
        // Put back as a database would hold them before the write.
        r.restore_row(1, Some("a".into()));
        r.restore_row(2, Some("b".into()));
        r.restore_row(3, Some("c".into()));
        r.restore_row(5, Some("e".into()));
        r.restore_row(6, None);
        assert_eq!(r.as_slice(), ["a", "b", "c", "d", "e"]);
        r.finish();
        r.push("g".into());
        assert_eq!(
            r.rows().last().map(|(row, _)| row),
            Some(7),
            "ids are not reused"
        );
    }

    #[test]
    fn a_mutator_that_can_touch_everything_marks_the_table_whole() {
        for f in [
            (|r: &mut Records<String>| r.sort_by(|a, b| a.cmp(b))) as fn(&mut Records<String>),
            |r| r.iter_mut().for_each(|s| s.push('!')),
            |r| r.insert(0, "z".into()),
        ] {
            let mut r = tracked(&["b", "a"]);
            r.push("c".into());
            f(&mut r);
            assert!(matches!(r.pending(), Pending::Whole));
            let rows: Vec<i64> = r.rows().map(|(row, _)| row).collect();
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
        }
        // A collection made during a write knows nothing of the old rows.
        let replaced: Records<String> = vec!["q".to_owned()].into();
        assert!(matches!(replaced.pending(), Pending::Whole));
    }
}
