//! Reading a state file of an earlier version, to migrate it: the journal
//! (a snapshot line, then one line per acknowledged write) or, before it,
//! one JSON document.
//!
//! The journal's format, as earlier versions wrote it:
//!
//! ```text
//! {"evalctl_sandbox_state":1,"seq":0,"state":{...}}  the snapshot, after write 0
//! {"seq":1,"ops":[{"c":"log_streams","op":"set","i":12,"v":{...}}]}
//! {"seq":2,"ops":[{"c":"favorites","op":"remove","at":[3]},{"c":"favorites","op":"push","v":{...}}]}
//! ```
//!
//! Each later line is one write's positional changes to the state's
//! collections, numbered on from the snapshot's. They are replayed on the
//! state as JSON (no record type is needed for that), then the result is
//! read as a [`State`]. A line counts only when it ends with a newline: a
//! write cut short by a crash (never acknowledged) leaves at most one
//! incomplete last line, which is dropped. An integration's `fields` were
//! sealed under `FILE.key` (`"sealed:v1:..."`) or, before that, in the clear.

use serde_json::{Map, Value};

use super::Damage;
use super::seal::Sealer;
use crate::sandbox::store::State;

/// Why a legacy file could not be read.
#[derive(Debug)]
pub enum NotRead {
    /// Line `line` (1-based) is damaged, with more after it.
    Damaged {
        /// The line.
        line: usize,
        /// What is wrong.
        reason: Damage,
    },
    /// The file is neither a journal nor a state document.
    NotState(serde_json::Error),
    /// Sealed integration settings that `FILE.key` does not open (or there
    /// is no key): how many.
    Unopened(usize),
}

/// The state a legacy file holds (credentials still to be sealed by the
/// caller, as for a fixture).
pub fn read(bytes: &[u8], sealer: Option<&Sealer>) -> Result<State, NotRead> {
    let mut state = match journal(bytes)? {
        Some(state) => state,
        // The format before the journal: the state as one JSON document.
        None => serde_json::from_slice::<Value>(bytes).map_err(NotRead::NotState)?,
    };
    open_integrations(&mut state, sealer)?;
    serde_json::from_value(state).map_err(NotRead::NotState)
}

/// The state of a journal, replayed; `None` when the first line is not a
/// journal's snapshot.
fn journal(bytes: &[u8]) -> Result<Option<Value>, NotRead> {
    let mut lines = bytes.split_inclusive(|b| *b == b'\n');
    let Some(first) = lines.next().filter(|l| l.ends_with(b"\n")) else {
        return Ok(None);
    };
    let Ok(Value::Object(mut snapshot)) = serde_json::from_slice::<Value>(first) else {
        return Ok(None);
    };
    if snapshot.get("evalctl_sandbox_state") != Some(&Value::from(1)) {
        return Ok(None);
    }
    let snapshot_seq = snapshot.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let mut state = snapshot.remove("state").unwrap_or_default();
    let rest: Vec<&[u8]> = lines.collect();
    // Write `seq` is on line `k + 2`.
    for (seq, (k, line)) in (snapshot_seq + 1..).zip(rest.iter().enumerate()) {
        let last = k + 1 == rest.len();
        let damaged = |reason| NotRead::Damaged {
            line: k + 2,
            reason,
        };
        let ops = match entry(line, seq) {
            Ok(ops) => ops,
            // A write cut short: never acknowledged.
            Err(_) if last => break,
            Err(reason) => return Err(damaged(reason)),
        };
        for op in ops {
            apply(&mut state, op).map_err(damaged)?;
        }
    }
    Ok(Some(state))
}

/// The ops of a journal line that must be write `expected`.
fn entry(line: &[u8], expected: u64) -> Result<Vec<Value>, Damage> {
    if !line.ends_with(b"\n") {
        return Err(Damage::Incomplete);
    }
    let mut entry: Map<String, Value> = serde_json::from_slice(line).map_err(Damage::NotAnEntry)?;
    let found = entry.get("seq").and_then(Value::as_u64).unwrap_or(0);
    if found != expected {
        return Err(Damage::OutOfOrder { found, expected });
    }
    match entry.remove("ops") {
        Some(Value::Array(ops)) => Ok(ops),
        _ => Err(Damage::Malformed("a write without ops".into())),
    }
}

/// Replays one op (`{"c": part, "op": kind, ...}`) on the state's JSON.
fn apply(state: &mut Value, op: Value) -> Result<(), Damage> {
    let bad = |what: &str| Damage::Malformed(what.to_owned());
    let Value::Object(mut op) = op else {
        return Err(bad("an op that is not an object"));
    };
    let part = op
        .get("c")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let kind = op
        .get("op")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let index = |op: &Map<String, Value>, key: &str| {
        op.get(key)
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| bad(&format!("{kind} without {key}")))
    };
    let Some(target) = state.get_mut(&part) else {
        return Err(Damage::UnknownPart { name: part });
    };
    if kind == "field" {
        *target = op.remove("v").unwrap_or_default();
        return Ok(());
    }
    let Value::Array(items) = target else {
        return Err(Damage::UnknownPart { name: part });
    };
    let out_of_range = |index: usize, len: usize| Damage::OutOfRange {
        part: part.clone(),
        index,
        len,
    };
    match kind.as_str() {
        "set" => {
            let i = index(&op, "i")?;
            let len = items.len();
            let slot = items.get_mut(i).ok_or_else(|| out_of_range(i, len))?;
            *slot = op.remove("v").unwrap_or_default();
        }
        "push" => items.push(op.remove("v").unwrap_or_default()),
        "insert" => {
            let i = index(&op, "i")?;
            if i > items.len() {
                return Err(out_of_range(i, items.len()));
            }
            items.insert(i, op.remove("v").unwrap_or_default());
        }
        "remove" => {
            let at: Vec<usize> = op
                .get("at")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|i| i.as_u64().and_then(|i| usize::try_from(i).ok()))
                        .collect()
                })
                .unwrap_or_default();
            for i in at.into_iter().rev() {
                if i >= items.len() {
                    return Err(out_of_range(i, items.len()));
                }
                items.remove(i);
            }
        }
        "truncate" => items.truncate(index(&op, "len")?),
        "all" => match op.remove("v") {
            Some(Value::Array(all)) => *items = all,
            _ => return Err(bad("all without a list")),
        },
        other => return Err(bad(&format!("unknown op {other:?}"))),
    }
    Ok(())
}

/// Opens every integration's sealed `fields` in place.
fn open_integrations(state: &mut Value, sealer: Option<&Sealer>) -> Result<(), NotRead> {
    let mut unopened = 0;
    if let Some(Value::Array(records)) = state.get_mut("integrations") {
        for record in records {
            if let Some(slot) = record.get_mut("fields")
                && let Value::String(sealed) = slot
            {
                match sealer.and_then(|s| s.open_v1(sealed)) {
                    Some(map) => *slot = Value::Object(map),
                    None => unopened += 1,
                }
            }
        }
    }
    if unopened > 0 {
        return Err(NotRead::Unopened(unopened));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(values: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in values {
            out.extend(serde_json::to_vec(v).unwrap());
            out.push(b'\n');
        }
        out
    }

    #[test]
    fn every_op_replays_and_a_cut_last_line_is_dropped() {
        let snapshot = json!({"evalctl_sandbox_state": 1, "seq": 4, "state": {"salt": "s", "xs": [1, 2, 3, 4, 5]}});
        let mut bytes = lines(&[
            snapshot.clone(),
            json!({"seq": 5, "ops": [{"c": "xs", "op": "set", "i": 0, "v": 10}, {"c": "xs", "op": "push", "v": 6}]}),
            json!({"seq": 6, "ops": [{"c": "xs", "op": "insert", "i": 1, "v": 11}, {"c": "xs", "op": "remove", "at": [0, 2]}]}),
            json!({"seq": 7, "ops": [{"c": "xs", "op": "truncate", "len": 4}, {"c": "salt", "op": "field", "v": "t"}]}),
        ]);
        bytes.extend(b"{\"seq\":8,\"ops\":[{\"c\":\"xs\",\"op\":\"all\",\"v\":[]}");
        let state = journal(&bytes).unwrap().unwrap();
        assert_eq!(state, json!({"salt": "t", "xs": [11, 3, 4, 5]}));
        // Damage before the last line is an error, not a silent loss.
        let damaged = lines(&[
            snapshot,
            json!({"seq": 9, "ops": []}),
            json!({"seq": 6, "ops": []}),
        ]);
        assert!(matches!(
            journal(&damaged),
            Err(NotRead::Damaged {
                line: 2,
                reason: Damage::OutOfOrder {
                    found: 9,
                    expected: 5
                }
            })
        ));
        // The format before the journal is not a journal.
        assert_eq!(journal(b"{\"salt\": \"s\"}").unwrap(), None);
    }
}
