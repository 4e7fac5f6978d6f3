//! What one write changed in the whole [`State`]: every collection's noted
//! changes (see `records`) and the fields that are not collections
//! (compared with their value before the write; they are small), as the
//! journal's [`Op`]s; and replaying those ops at load.
//!
//! The fields are listed once, in [`fields`], by destructuring `State`
//! without `..`: a field added to `State` does not compile until it is
//! listed here, so nothing the sandbox holds can be left out of the file.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Damage;
use super::journal::{Change, Op};
use super::records::{ChangeError, Records};
use crate::sandbox::store::{Organization, State};

/// A collection, whatever its element type.
trait Collection {
    fn begin(&mut self);
    fn collect(&mut self) -> Result<Vec<Change>, serde_json::Error>;
    fn finish(&mut self);
    fn rollback(&mut self) -> bool;
    fn apply(&mut self, change: Change) -> Result<(), ChangeError>;
    fn whole(&self) -> Result<Change, serde_json::Error>;
}

impl<T: Clone + Serialize + DeserializeOwned> Collection for Records<T> {
    fn begin(&mut self) {
        Records::begin(self);
    }
    fn collect(&mut self) -> Result<Vec<Change>, serde_json::Error> {
        match Records::collect(self)? {
            Some(changes) => Ok(changes),
            // Replaced during the write: written whole.
            None => Ok(vec![self.whole()?]),
        }
    }
    fn finish(&mut self) {
        Records::finish(self);
    }
    fn rollback(&mut self) -> bool {
        Records::rollback(self)
    }
    fn apply(&mut self, change: Change) -> Result<(), ChangeError> {
        Records::apply(self, change)
    }
    fn whole(&self) -> Result<Change, serde_json::Error> {
        Records::whole(self)
    }
}

/// Every part of the state, by its name in the file.
struct Fields<'a> {
    salt: &'a mut String,
    organization: &'a mut Organization,
    collections: [(&'static str, &'a mut dyn Collection); 13],
}

fn fields(state: &mut State) -> Fields<'_> {
    // No `..`: see the module docs.
    let State {
        salt,
        organization,
        users,
        projects,
        log_streams,
        experiments,
        scorers,
        dashboards,
        annotation_templates,
        feedback_templates,
        integrations,
        favorites,
        code_validations,
        prompt_templates,
        stages,
    } = state;
    Fields {
        salt,
        organization,
        collections: [
            ("users", users),
            ("projects", projects),
            ("log_streams", log_streams),
            ("experiments", experiments),
            ("scorers", scorers),
            ("dashboards", dashboards),
            ("annotation_templates", annotation_templates),
            ("feedback_templates", feedback_templates),
            ("integrations", integrations),
            ("favorites", favorites),
            ("code_validations", code_validations),
            ("prompt_templates", prompt_templates),
            ("stages", stages),
        ],
    }
}

/// A write being recorded: the small fields as they were before it.
#[derive(Debug)]
pub struct Recording {
    salt: String,
    organization: Organization,
}

/// Starts recording a write's changes to `state`.
pub fn begin(state: &mut State) -> Recording {
    let f = fields(state);
    for (_, c) in f.collections {
        c.begin();
    }
    Recording {
        salt: f.salt.clone(),
        organization: f.organization.clone(),
    }
}

/// The ops of the write so far (changes stay recorded until [`finish`] or
/// [`rollback`]).
pub fn collect(state: &mut State, before: &Recording) -> Result<Vec<Op>, serde_json::Error> {
    let f = fields(state);
    let mut ops = Vec::new();
    if *f.salt != before.salt {
        ops.push(Op {
            c: "salt".into(),
            change: Change::Field {
                v: f.salt.clone().into(),
            },
        });
    }
    if *f.organization != before.organization {
        ops.push(Op {
            c: "organization".into(),
            change: Change::Field {
                v: serde_json::to_value(&*f.organization)?,
            },
        });
    }
    for (name, c) in f.collections {
        ops.extend(c.collect()?.into_iter().map(|change| Op {
            c: name.to_owned(),
            change,
        }));
    }
    Ok(ops)
}

/// Every part of the state as ops (for a write whose changes could not be
/// recorded or undone).
pub fn whole(state: &mut State) -> Result<Vec<Op>, serde_json::Error> {
    let f = fields(state);
    let mut ops = vec![
        Op {
            c: "salt".into(),
            change: Change::Field {
                v: f.salt.clone().into(),
            },
        },
        Op {
            c: "organization".into(),
            change: Change::Field {
                v: serde_json::to_value(&*f.organization)?,
            },
        },
    ];
    for (name, c) in f.collections {
        ops.push(Op {
            c: name.to_owned(),
            change: c.whole()?,
        });
    }
    Ok(ops)
}

/// Ends the recording, keeping the changes.
pub fn finish(state: &mut State) {
    for (_, c) in fields(state).collections {
        c.finish();
    }
}

/// Undoes the recorded write; false when part of it could not be undone (a
/// collection was replaced wholesale during it).
pub fn rollback(state: &mut State, before: Recording) -> bool {
    let f = fields(state);
    *f.salt = before.salt;
    *f.organization = before.organization;
    let mut complete = true;
    for (_, c) in f.collections {
        complete &= c.rollback();
    }
    complete
}

/// Replays one op read from the file.
pub fn apply(state: &mut State, op: Op) -> Result<(), Damage> {
    let f = fields(state);
    let field = |part: &'static str| move |source| Damage::Field { part, source };
    match (op.c.as_str(), op.change) {
        ("salt", Change::Field { v }) => {
            *f.salt = serde_json::from_value(v).map_err(field("salt"))?;
        }
        ("organization", Change::Field { v }) => {
            *f.organization = serde_json::from_value(v).map_err(field("organization"))?;
        }
        (name, change) => {
            let (part, c) = f
                .collections
                .into_iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| Damage::UnknownPart {
                    name: name.to_owned(),
                })?;
            c.apply(change)
                .map_err(|source| Damage::Collection { part, source })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Fixture;

    #[test]
    fn every_field_of_the_state_is_in_the_file() {
        let mut state = Fixture::demo().into_state();
        let names: Vec<&str> = fields(&mut state)
            .collections
            .iter()
            .map(|(n, _)| *n)
            .chain(["salt", "organization"])
            .collect();
        let json = serde_json::to_value(&state).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut names_sorted = names.clone();
        keys.sort_unstable();
        names_sorted.sort_unstable();
        assert_eq!(keys, names_sorted);
    }

    #[test]
    fn a_write_replays_to_the_same_state_and_rolls_back_to_the_old_one() {
        let start = Fixture::demo().into_state();
        let mut state = start.clone();
        let recording = begin(&mut state);
        state.projects[0].name = "renamed".into();
        state.favorites.clear();
        state.organization.name = "Other org".into();
        let lid = state.log_streams[1].id.clone();
        state.log_streams.retain(|l| l.id != lid);
        let ops = collect(&mut state, &recording).unwrap();
        let after = serde_json::to_value(&state).unwrap();
        let mut replayed = start.clone();
        for op in ops {
            // Through the file's text, as at load.
            let op: Op = serde_json::from_str(&serde_json::to_string(&op).unwrap()).unwrap();
            apply(&mut replayed, op).unwrap();
        }
        assert_eq!(serde_json::to_value(&replayed).unwrap(), after);
        assert!(rollback(&mut state, recording));
        assert_eq!(
            serde_json::to_value(&state).unwrap(),
            serde_json::to_value(&start).unwrap()
        );
    }

    #[test]
    fn a_state_replaced_during_a_write_is_written_whole() {
        let mut state = Fixture::demo().into_state();
        let recording = begin(&mut state);
        state = Fixture::demo().into_state();
        state.projects[0].name = "fresh".into();
        let ops = collect(&mut state, &recording).unwrap();
        assert_eq!(ops.len(), 13, "every collection, whole");
        assert!(ops.iter().all(|o| matches!(o.change, Change::All { .. })));
        finish(&mut state);
    }
}
