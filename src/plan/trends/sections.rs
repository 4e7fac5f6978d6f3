//! A dashboard's sections: a set keyed by name (`renamed_from` names earlier
//! names). Deleting a section deletes its widgets, so the plan warns how
//! many it holds.

use super::super::fingerprint;
use super::super::normalize::NormSection;
use super::super::types::{Action, NoteKind, Operation};
use super::super::{Draft, Planner, find_by_name};
use super::Board;
use crate::api::{SectionCreateRequest, SectionUpdateRequest};
use crate::manifest::types::SectionSpec;
use crate::state::{DashboardState, SectionState};

/// The live section each declared one is paired with (by index), in
/// declaration order: the first live section of its name not yet paired,
/// else of a name of its `renamed_from`.
pub fn pair(live: &[SectionState], wanted: &[SectionSpec]) -> Vec<Option<usize>> {
    let mut used = vec![false; live.len()];
    wanted
        .iter()
        .map(|spec| {
            let found = find_by_name(live, &used, |s| &s.name, &spec.name, &spec.renamed_from);
            if let Some(index) = found {
                used[index] = true;
            }
            found
        })
        .collect()
}

pub(super) fn plan_sections(
    planner: &mut Planner<'_>,
    board: &Board<'_>,
    dashboard: &DashboardState,
    wanted: &[SectionSpec],
    pairing: &[Option<usize>],
) {
    for (spec, paired) in wanted.iter().zip(pairing) {
        match paired {
            Some(index) => update_section(planner, board, &dashboard.sections[*index], spec),
            None => {
                let after = NormSection::new(
                    &spec.name,
                    spec.description.as_deref(),
                    spec.color.as_deref(),
                );
                let body = SectionCreateRequest {
                    name: spec.name.clone(),
                    description: spec.description.clone().filter(|d| !d.is_empty()),
                    color: spec.color.clone(),
                };
                let draft = Draft {
                    address: board.section_address(&spec.name),
                    action: Action::Create,
                    reason: "declared, not on the dashboard".to_owned(),
                    live_fingerprint: fingerprint::section(None),
                    operations: vec![Operation::CreateSection {
                        project_id: board.project_id.to_owned(),
                        log_stream_id: board.log_stream_id.to_owned(),
                        dashboard_id: board.reference.clone(),
                        body,
                    }],
                };
                planner
                    .changes
                    .push(draft.change::<NormSection, _>(None, Some(&after)));
            }
        }
    }
    for (index, section) in dashboard.sections.iter().enumerate() {
        if pairing.contains(&Some(index)) {
            continue;
        }
        let address = board.section_address(&section.name);
        // A second section of a declared name is drift, with or without
        // --prune: the first in the dashboard's order is the one kept
        // (`DashboardState::keeper`), the others are deleted.
        let duplicate = wanted.iter().any(|w| w.name == section.name);
        if duplicate || planner.options.prune {
            let before = NormSection::from_state(section);
            let reason = if duplicate {
                "a second section with this name (the first in the dashboard's order is kept)"
            } else {
                "not declared (--prune)"
            };
            let draft = Draft {
                address,
                action: Action::Delete,
                reason: reason.to_owned(),
                live_fingerprint: board.fingerprint(|| fingerprint::section(Some(section))),
                operations: vec![Operation::DeleteSection {
                    project_id: board.project_id.to_owned(),
                    log_stream_id: board.log_stream_id.to_owned(),
                    dashboard_id: board.reference.clone(),
                    section_id: board.section_now(section),
                }],
            };
            let mut c = draft.change::<_, NormSection>(Some(&before), None);
            if section.widget_count > 0 {
                c.warnings.push(format!(
                    "the section holds {} widget(s), which are deleted with it",
                    section.widget_count
                ));
            }
            planner.changes.push(c);
        } else {
            let message = format!(
                "section `{}` exists but is not declared (delete it with --prune)",
                section.name
            );
            planner.note(Some(address), NoteKind::Unmanaged, message);
        }
    }
}

fn update_section(
    planner: &mut Planner<'_>,
    board: &Board<'_>,
    live: &SectionState,
    spec: &SectionSpec,
) {
    let before = NormSection::from_state(live);
    let after = NormSection::new(
        &spec.name,
        spec.description.as_deref().or(live.description.as_deref()),
        spec.color.as_deref().or(live.color.as_deref()),
    );
    if before == after {
        return;
    }
    let body = SectionUpdateRequest {
        name: (before.name != after.name).then(|| after.name.clone()),
        description: (before.description != after.description)
            .then(|| after.description.clone().unwrap_or_default()),
        color: (before.color != after.color)
            .then(|| spec.color.clone())
            .flatten(),
    };
    let reason = if before.name != after.name {
        format!("renamed from `{}`", before.name)
    } else {
        "fields differ".to_owned()
    };
    let draft = Draft {
        address: board.section_address(&spec.name),
        action: Action::Update,
        reason,
        live_fingerprint: board.fingerprint(|| fingerprint::section(Some(live))),
        operations: vec![Operation::UpdateSection {
            project_id: board.project_id.to_owned(),
            log_stream_id: board.log_stream_id.to_owned(),
            dashboard_id: board.reference.clone(),
            section_id: board.section_now(live),
            body,
        }],
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&after)));
}
