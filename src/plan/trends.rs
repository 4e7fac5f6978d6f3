//! Planning a log stream's trends dashboard (its default dashboard): sections,
//! a set keyed by name, and whether the dashboard is favorited.
//!
//! Widgets belong to the service and are never touched. The service reports
//! whether a dashboard is favorited, not for whom; so `favorite: user` and
//! `favorite: project` both compare as "favorited", and apply favorites with
//! the declared visibility.

use super::address::Address;
use super::fingerprint::{self, FavoriteState};
use super::normalize::NormSection;
use super::types::{Action, NoteKind, Operation};
use super::{Draft, Planner, find_by_name};
use crate::api::{SectionCreateRequest, SectionUpdateRequest, Visibility};
use crate::manifest::set::Origin;
use crate::manifest::types::{FavoriteSpec, SectionSpec, TrendsSpec};
use crate::state::{DashboardState, ObjectKey, ProjectState, RunState, SectionState};

/// Plans one log stream's trends.
pub(crate) fn plan_trends(
    planner: &mut Planner<'_>,
    origin: &Origin,
    project: &str,
    live_project: &ProjectState,
    run_key: &ObjectKey,
    run: &RunState,
    spec: &TrendsSpec,
) {
    let Some(dashboard) = &run.dashboard else {
        planner.problem(
            origin,
            format!(
                "log stream `{run_key}` of project `{project}` has no default trends dashboard"
            ),
        );
        return;
    };
    let ids = Ids {
        project_id: &live_project.id,
        log_stream_id: &run.id,
        dashboard_id: &dashboard.id,
        project,
        log_stream: run_key.to_string(),
    };
    if let Some(sections) = &spec.sections {
        plan_sections(planner, &ids, dashboard, sections);
    }
    if let Some(favorite) = spec.favorite {
        plan_favorite(planner, &ids, dashboard, favorite);
    }
}

struct Ids<'a> {
    project_id: &'a str,
    log_stream_id: &'a str,
    dashboard_id: &'a str,
    project: &'a str,
    log_stream: String,
}

impl Ids<'_> {
    fn section_address(&self, name: &str) -> Address {
        Address::Section {
            project: self.project.to_owned(),
            log_stream: self.log_stream.clone(),
            name: name.to_owned(),
        }
    }
}

fn plan_sections(
    planner: &mut Planner<'_>,
    ids: &Ids<'_>,
    dashboard: &DashboardState,
    wanted: &[SectionSpec],
) {
    let mut used = vec![false; dashboard.sections.len()];
    for spec in wanted {
        let found = find_by_name(
            &dashboard.sections,
            &used,
            |s| &s.name,
            &spec.name,
            &spec.renamed_from,
        );
        match found {
            Some(index) => {
                used[index] = true;
                update_section(planner, ids, &dashboard.sections[index], spec);
            }
            None => {
                let after = NormSection::new(
                    &spec.name,
                    spec.description.as_deref(),
                    spec.color.as_deref(),
                );
                let body = SectionCreateRequest {
                    name: spec.name.clone(),
                    description: spec.description.clone(),
                    color: spec.color.clone(),
                };
                let draft = Draft {
                    address: ids.section_address(&spec.name),
                    action: Action::Create,
                    reason: "declared, not on the dashboard".to_owned(),
                    live_fingerprint: fingerprint::section(None),
                    operations: vec![Operation::CreateSection {
                        project_id: ids.project_id.to_owned(),
                        log_stream_id: ids.log_stream_id.to_owned(),
                        dashboard_id: ids.dashboard_id.to_owned(),
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
        if used[index] {
            continue;
        }
        let address = ids.section_address(&section.name);
        let duplicate = wanted.iter().any(|w| w.name == section.name);
        if planner.options.prune {
            let before = NormSection::from_state(section);
            let reason = if duplicate {
                "a second section with this name"
            } else {
                "not declared (--prune)"
            };
            let draft = Draft {
                address,
                action: Action::Delete,
                reason: reason.to_owned(),
                live_fingerprint: fingerprint::section(Some(section)),
                operations: vec![Operation::DeleteSection {
                    project_id: ids.project_id.to_owned(),
                    log_stream_id: ids.log_stream_id.to_owned(),
                    dashboard_id: ids.dashboard_id.to_owned(),
                    section_id: section.id.clone(),
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
            let message = if duplicate {
                format!(
                    "a second section named `{}` exists (delete it with --prune)",
                    section.name
                )
            } else {
                format!(
                    "section `{}` exists but is not declared (delete it with --prune)",
                    section.name
                )
            };
            planner.note(Some(address), NoteKind::Unmanaged, message);
        }
    }
}

fn update_section(
    planner: &mut Planner<'_>,
    ids: &Ids<'_>,
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
        address: ids.section_address(&spec.name),
        action: Action::Update,
        reason,
        live_fingerprint: fingerprint::section(Some(live)),
        operations: vec![Operation::UpdateSection {
            project_id: ids.project_id.to_owned(),
            log_stream_id: ids.log_stream_id.to_owned(),
            dashboard_id: ids.dashboard_id.to_owned(),
            section_id: live.id.clone(),
            body,
        }],
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&after)));
}

fn plan_favorite(
    planner: &mut Planner<'_>,
    ids: &Ids<'_>,
    dashboard: &DashboardState,
    wanted: FavoriteSpec,
) {
    let before = FavoriteState::of(dashboard);
    let (after, operations, reason) = match wanted {
        FavoriteSpec::User | FavoriteSpec::Project if !dashboard.is_favorited => {
            let visibility = if wanted == FavoriteSpec::User {
                Visibility::User
            } else {
                Visibility::Project
            };
            let reason = format!("favorite for the {visibility}");
            let op = Operation::Favorite {
                project_id: ids.project_id.to_owned(),
                log_stream_id: ids.log_stream_id.to_owned(),
                dashboard_id: ids.dashboard_id.to_owned(),
                visibility,
            };
            (FavoriteState { favorited: true }, vec![op], reason)
        }
        FavoriteSpec::None if dashboard.is_favorited => {
            let ops = [Visibility::User, Visibility::Project]
                .into_iter()
                .map(|visibility| Operation::Unfavorite {
                    project_id: ids.project_id.to_owned(),
                    log_stream_id: ids.log_stream_id.to_owned(),
                    visibility,
                })
                .collect();
            (
                FavoriteState { favorited: false },
                ops,
                "declared `favorite: none`".to_owned(),
            )
        }
        _ => return,
    };
    let draft = Draft {
        address: Address::Favorite {
            project: ids.project.to_owned(),
            log_stream: ids.log_stream.clone(),
        },
        action: Action::Update,
        reason,
        live_fingerprint: fingerprint::favorite(dashboard),
        operations,
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&after)));
}
