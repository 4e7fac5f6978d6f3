//! Notes said once: a note that the planner makes per project with the same words
//! (e.g. that a project's feedback templates were read with the service's
//! deprecated listing) becomes one note with a count, so a CI log or a pull-request
//! comment of 250 projects says it in one line, not 250.

use std::collections::BTreeMap;

use super::{Note, NoteKind};

/// Projects named in a grouped note before "… and N more".
const GROUP_NAMES_SHOWN: usize = 3;

/// Notes that say the same of several projects (`project `X`: the same
/// words`, about no one object) as one note with a count, so a CI log or a PR
/// comment says it once: `250 projects (`a`, `b`, `c` and 247 more): the
/// same words`. Other notes are kept; the order stays sorted.
pub fn group_per_project(notes: Vec<Note>) -> Vec<Note> {
    let per_project = |note: &Note| -> Option<(String, String)> {
        if note.address.is_some() || note.created_by.is_some() {
            return None;
        }
        let rest = note.message.strip_prefix("project `")?;
        let (project, words) = rest.split_once("`: ")?;
        Some((project.to_owned(), words.to_owned()))
    };
    let mut groups: BTreeMap<(NoteKind, String), Vec<String>> = BTreeMap::new();
    for note in &notes {
        if let Some((project, words)) = per_project(note) {
            groups.entry((note.kind, words)).or_default().push(project);
        }
    }
    let mut out: Vec<Note> = notes
        .into_iter()
        .filter(|note| {
            per_project(note).is_none_or(|(_, words)| {
                groups.get(&(note.kind, words)).is_none_or(|p| p.len() == 1)
            })
        })
        .collect();
    for ((kind, words), projects) in groups {
        if projects.len() < 2 {
            continue;
        }
        let mut names: Vec<String> = projects
            .iter()
            .take(GROUP_NAMES_SHOWN)
            .map(|p| format!("`{p}`"))
            .collect();
        let more = projects.len().saturating_sub(GROUP_NAMES_SHOWN);
        let list = if more > 0 {
            format!("{} and {more} more", names.join(", "))
        } else {
            let last = names.pop().unwrap_or_default();
            format!("{} and {last}", names.join(", "))
        };
        out.push(Note {
            address: None,
            kind,
            message: format!("{} projects ({list}): {words}", projects.len()),
            created_by: None,
        });
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Address;
    use crate::plan::address::IntegrationAddress;

    fn note(kind: NoteKind, message: &str) -> Note {
        Note {
            address: None,
            kind,
            message: message.to_owned(),
            created_by: None,
        }
    }

    const DEPRECATED: &str = "feedback templates were read with the deprecated listing";

    #[test]
    fn the_same_words_for_many_projects_are_one_note_with_a_count() {
        let mut notes: Vec<Note> = (0..250)
            .map(|i| note(NoteKind::Info, &format!("project `p{i:03}`: {DEPRECATED}")))
            .collect();
        notes.push(note(NoteKind::Info, "project `solo`: something else"));
        let about_one = Note {
            address: Some(Address::Integration(IntegrationAddress {
                provider: "openai".into(),
            })),
            ..note(NoteKind::Info, "project `x`: with an address")
        };
        notes.push(about_one.clone());
        notes.sort();
        let grouped = group_per_project(notes);
        let messages: Vec<&str> = grouped.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "250 projects (`p000`, `p001`, `p002` and 247 more): feedback templates were read with the deprecated listing",
                "project `solo`: something else",
                "project `x`: with an address",
            ]
        );
        assert_eq!(grouped[2], about_one);
    }

    #[test]
    fn two_or_three_projects_are_all_named_and_kinds_stay_apart() {
        let grouped = group_per_project(vec![
            note(NoteKind::Info, &format!("project `a`: {DEPRECATED}")),
            note(NoteKind::Info, &format!("project `b`: {DEPRECATED}")),
            note(
                NoteKind::Unverifiable,
                &format!("project `c`: {DEPRECATED}"),
            ),
        ]);
        let messages: Vec<&str> = grouped.iter().map(|n| n.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "project `c`: feedback templates were read with the deprecated listing",
                "2 projects (`a` and `b`): feedback templates were read with the deprecated listing",
            ]
        );
        let three = group_per_project(
            ["a", "b", "c"]
                .iter()
                .map(|p| note(NoteKind::Info, &format!("project `{p}`: {DEPRECATED}")))
                .collect(),
        );
        assert_eq!(
            three[0].message,
            "3 projects (`a`, `b` and `c`): feedback templates were read with the deprecated listing"
        );
    }
}
