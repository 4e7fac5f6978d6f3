//! The format of the state file: one JSON document per line.
//!
//! ```text
//! {"evalctl_sandbox_state":1,"seq":0,"state":{...}}  the snapshot, after write 0
//! {"seq":1,"ops":[{"c":"log_streams","op":"set","i":12,"v":{...}}]}
//! {"seq":2,"ops":[{"c":"favorites","op":"remove","at":[3]},{"c":"favorites","op":"push","v":{...}}]}
//! ```
//!
//! The first line is the whole state after write `seq`; each later line is
//! one acknowledged write, the positional changes it made to the state's
//! collections ([`Change`]), numbered on from the snapshot's without gaps
//! (numbers keep counting across compactions). A line counts only when it
//! ends with a newline: a write cut short by a crash (never acknowledged,
//! since the answer waits for its `fsync`) leaves at most one incomplete
//! last line, which loading drops.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Damage;
use crate::sandbox::store::State;

/// The format version written in the snapshot line.
pub const FORMAT: u32 = 1;

/// The first line: the whole state.
#[derive(Debug, Serialize)]
pub struct Snapshot<'a> {
    /// [`FORMAT`].
    pub evalctl_sandbox_state: u32,
    /// The last write the state includes.
    pub seq: u64,
    /// The state.
    pub state: &'a State,
}

/// The first line, read back.
#[derive(Debug, Deserialize)]
pub struct SnapshotOwned {
    /// The format version.
    pub evalctl_sandbox_state: u32,
    /// The last write the state includes.
    pub seq: u64,
    /// The state.
    pub state: State,
}

/// One change to one collection (positions as they were when it was made).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Change {
    /// The element at `i` became `v`.
    Set {
        /// Position.
        i: usize,
        /// The element.
        v: Value,
    },
    /// `v` was appended.
    Push {
        /// The element.
        v: Value,
    },
    /// `v` was inserted at `i`.
    Insert {
        /// Position.
        i: usize,
        /// The element.
        v: Value,
    },
    /// The elements at these positions (ascending) were removed at once.
    Remove {
        /// Positions.
        at: Vec<usize>,
    },
    /// The collection was cut to `len` elements.
    Truncate {
        /// The new length.
        len: usize,
    },
    /// The collection became `v`.
    All {
        /// The elements.
        v: Vec<Value>,
    },
    /// A field that is not a collection (`salt`, `organization`) became `v`.
    Field {
        /// The value.
        v: Value,
    },
}

/// A change and the part of the state it applies to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Op {
    /// The field of the state (`log_streams`, `organization`, ...).
    pub c: String,
    /// The change.
    #[serde(flatten)]
    pub change: Change,
}

/// One write: a journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its number (the first write after the snapshot is 1).
    pub seq: u64,
    /// What it changed.
    pub ops: Vec<Op>,
}

/// The snapshot line of `state` after write `seq`, newline included.
pub fn snapshot_line(state: &State, seq: u64) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = serde_json::to_vec(&Snapshot {
        evalctl_sandbox_state: FORMAT,
        seq,
        state,
    })?;
    line.push(b'\n');
    Ok(line)
}

/// The journal line of a write, newline included.
pub fn entry_line(seq: u64, ops: &[Op]) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct EntryRef<'a> {
        seq: u64,
        ops: &'a [Op],
    }
    let mut line = serde_json::to_vec(&EntryRef { seq, ops })?;
    line.push(b'\n');
    Ok(line)
}

/// A state file's text, split: the snapshot, the complete entries after it
/// and the byte length of what was read as complete.
#[derive(Debug)]
pub struct Parsed {
    /// The snapshot's state.
    pub state: State,
    /// The last write the snapshot includes.
    pub snapshot_seq: u64,
    /// The writes after it, in order.
    pub entries: Vec<Entry>,
    /// Bytes up to the end of the last complete line (an incomplete last
    /// line starts there).
    pub complete_len: usize,
    /// Bytes of the snapshot line.
    pub snapshot_len: usize,
}

/// Why a state file's text is not a journal.
#[derive(Debug)]
pub enum NotJournal {
    /// The first line is not a snapshot of this format: maybe a state file
    /// of an earlier version (one JSON document).
    NoSnapshot,
    /// The snapshot is followed by a line that is not the next write, with
    /// more after it (not a write cut short): the file was damaged.
    Damaged {
        /// The line number (1-based).
        line: usize,
        /// What is wrong.
        reason: Damage,
    },
}

/// Reads a state file's bytes (see the module docs).
pub fn parse(bytes: &[u8]) -> Result<Parsed, NotJournal> {
    let mut lines = bytes.split_inclusive(|b| *b == b'\n');
    let first = lines.next().ok_or(NotJournal::NoSnapshot)?;
    if !first.ends_with(b"\n") {
        return Err(NotJournal::NoSnapshot);
    }
    let snapshot: SnapshotOwned =
        serde_json::from_slice(first).map_err(|_| NotJournal::NoSnapshot)?;
    if snapshot.evalctl_sandbox_state != FORMAT {
        return Err(NotJournal::NoSnapshot);
    }
    let mut parsed = Parsed {
        state: snapshot.state,
        snapshot_seq: snapshot.seq,
        entries: Vec::new(),
        complete_len: first.len(),
        snapshot_len: first.len(),
    };
    let rest: Vec<&[u8]> = lines.collect();
    for (k, line) in rest.iter().enumerate() {
        let last = k + 1 == rest.len();
        let expected = parsed.snapshot_seq + parsed.entries.len() as u64 + 1;
        let entry = if line.ends_with(b"\n") {
            serde_json::from_slice::<Entry>(line)
                .map_err(Damage::NotAnEntry)
                .and_then(|e| {
                    if e.seq == expected {
                        Ok(e)
                    } else {
                        Err(Damage::OutOfOrder {
                            found: e.seq,
                            expected,
                        })
                    }
                })
        } else {
            Err(Damage::Incomplete)
        };
        match entry {
            Ok(e) => {
                parsed.entries.push(e);
                parsed.complete_len += line.len();
            }
            // A write cut short: never acknowledged.
            Err(_) if last => break,
            Err(reason) => {
                return Err(NotJournal::Damaged {
                    line: k + 2,
                    reason,
                });
            }
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Fixture;

    #[test]
    fn a_journal_reads_back_and_a_cut_last_line_is_dropped() {
        let state = Fixture::demo().into_state();
        let mut bytes = snapshot_line(&state, 0).unwrap();
        let snapshot_len = bytes.len();
        let op = Op {
            c: "favorites".into(),
            change: Change::Remove { at: vec![0] },
        };
        bytes.extend(entry_line(1, std::slice::from_ref(&op)).unwrap());
        bytes.extend(entry_line(2, &[]).unwrap());
        let whole = bytes.len();
        let third = entry_line(3, std::slice::from_ref(&op)).unwrap();
        bytes.extend(&third[..third.len() / 2]);
        let parsed = parse(&bytes).unwrap();
        assert_eq!(parsed.entries.len(), 2);
        assert_eq!(parsed.entries[0].ops, vec![op.clone()]);
        assert_eq!(parsed.complete_len, whole);
        assert_eq!(parsed.snapshot_len, snapshot_len);
        // Damage before the last line is an error, not a silent loss.
        let mut damaged = bytes[..snapshot_len].to_vec();
        damaged.extend(b"{\"seq\":7,\"ops\":[]}\n");
        damaged.extend(entry_line(2, &[]).unwrap());
        assert!(matches!(
            parse(&damaged),
            Err(NotJournal::Damaged { line: 2, .. })
        ));
        // A state file of the previous version (one JSON document).
        let old = serde_json::to_vec(&state).unwrap();
        assert!(matches!(parse(&old), Err(NotJournal::NoSnapshot)));
    }
}
