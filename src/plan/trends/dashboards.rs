//! A log stream's dashboards other than the default one
//! (`trends.dashboards`): a set keyed by name.
//!
//! The service has no operation that creates a dashboard: a missing one is
//! created as a copy of `copy_from` (the default dashboard when left out),
//! and its contents are planned against that copy, with operations naming
//! the new dashboard and its parts by name (their ids are not known before
//! the copy is made). Nor can it change a dashboard's visibility: a change
//! replaces the dashboard with a copy of itself of the new visibility (its
//! contents planned first, on the old one, so the copy carries them), then
//! deletes the old one. Names are not unique: the first dashboard of a name
//! in the service's listing is the one paired; a second one of a declared
//! name is deleted (drift, with or without `--prune`); other dashboards the
//! caller sees that no declaration pairs are deleted with `--prune` (their
//! creator named), else noted.

use crate::plan::address::DashboardAddress;
use serde::Serialize;

use super::super::types::{Action, DashboardRef, NoteKind, Operation};
use super::super::{Draft, Planner, Target, find_by_name, fingerprint};
use super::{Board, DashboardContents, plan_contents};
use crate::api::{TrendsDashboardDuplicateRequest, TrendsDashboardUpdateRequest};
use crate::manifest::FieldPath;
use crate::manifest::set::Origin;
use crate::manifest::types::DashboardSpec;
use crate::plan::Address;
use crate::state::DashboardState;

/// A dashboard's comparable identity: name, visibility, description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NormDashboard {
    /// Name.
    pub name: String,
    /// `user` or `project` (`None`: not compared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<String>,
    /// Description (`None`: none, or not compared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl NormDashboard {
    /// Every compared field of a live dashboard.
    pub fn from_state(d: &DashboardState) -> Self {
        NormDashboard {
            name: d.name.clone(),
            visibility: Some(d.visibility.clone()),
            description: d.settings.as_ref().and_then(|s| s.description.clone()),
        }
    }
}

fn declared_description(spec: &DashboardSpec) -> Option<Option<String>> {
    spec.description
        .as_ref()
        .map(|d| Some(d.clone()).filter(|d| !d.is_empty()))
}

/// `field`: where the document lists `wanted` (`log_streams[i].trends.dashboards`).
pub(super) fn plan_dashboards(
    planner: &mut Planner<'_>,
    origin: &Origin,
    field: &FieldPath,
    default_board: &Board<'_>,
    default: &DashboardState,
    others: &[DashboardState],
    wanted: &[DashboardSpec],
) {
    let project = default_board.project;
    let log_stream = default_board.log_stream.as_str();
    let address = |name: &str| {
        Address::Dashboard(DashboardAddress {
            project: project.to_owned(),
            log_stream: log_stream.to_owned(),
            name: name.to_owned(),
        })
    };
    let board = |name: &str, reference: DashboardRef, exists: bool| Board {
        project_id: default_board.project_id,
        log_stream_id: default_board.log_stream_id,
        project,
        log_stream: log_stream.to_owned(),
        dashboard: Some(name.to_owned()),
        reference,
        exists,
    };
    let mut used = vec![false; others.len()];
    let mut pairing = Vec::with_capacity(wanted.len());
    for spec in wanted {
        let found = find_by_name(others, &used, |d| &d.name, &spec.name, &spec.renamed_from);
        if let Some(index) = found {
            used[index] = true;
        }
        pairing.push(found);
    }
    for (index, (spec, found)) in wanted.iter().zip(&pairing).enumerate() {
        let reaches = |name: &str| {
            planner
                .options
                .reaches(&Target::dashboard(project, log_stream, Some(name)))
        };
        if !reaches(&spec.name) {
            continue;
        }
        let contents = DashboardContents::of_dashboard(spec);
        match found {
            Some(index) => {
                let live = &others[*index];
                update_dashboard(planner, default_board, address(&spec.name), live, spec);
                let b = board(&spec.name, DashboardRef::Id(live.id.clone()), true);
                plan_contents(planner, origin, &b, live, &contents);
            }
            None => {
                let source = match &spec.copy_from {
                    None => Some(default),
                    Some(name) => others.iter().find(|d| &d.name == name),
                };
                let Some(source) = source else {
                    planner.problem_at(
                        origin,
                        field.clone().index(index).key("copy_from"),
                        format!(
                            "dashboard `{}` of log stream `{log_stream}` is copied from `{}`, which does not exist (or is declared but not created yet: apply it first)",
                            spec.name,
                            spec.copy_from.as_deref().unwrap_or_default()
                        ),
                    );
                    continue;
                };
                let copy =
                    create_dashboard(planner, default_board, address(&spec.name), source, spec);
                let b = board(
                    &spec.name,
                    DashboardRef::Named {
                        named: spec.name.clone(),
                    },
                    false,
                );
                plan_contents(planner, origin, &b, &copy, &contents);
            }
        }
    }
    for (index, live) in others.iter().enumerate() {
        if used[index] {
            continue;
        }
        let at = address(&live.name);
        if !planner.options.selects(&at) {
            continue;
        }
        // A second dashboard of a declared name is drift, with or without
        // --prune: the first listed is the one paired and kept.
        let duplicate = wanted.iter().any(|w| w.name == live.name);
        if duplicate || planner.options.prune {
            delete_dashboard(planner, default_board, at, live, duplicate);
        } else {
            let message = format!(
                "dashboard `{}` exists but is not declared (delete it with --prune)",
                live.name
            );
            planner.note_by(
                live.created_by.clone(),
                Some(at),
                NoteKind::Unmanaged,
                message,
            );
        }
    }
}

/// What a dashboard's deletion takes with it, for the warning.
fn contents_warning(live: &DashboardState) -> String {
    let audience = if live.visibility == "project" {
        "; the whole project sees it"
    } else {
        ""
    };
    format!(
        "the dashboard holds {} section(s) and {} widget(s), which go with it{audience}",
        live.sections.len(),
        live.widget_count()
    )
}

fn create_dashboard(
    planner: &mut Planner<'_>,
    ids: &Board<'_>,
    address: Address,
    source: &DashboardState,
    spec: &DashboardSpec,
) -> DashboardState {
    let description = declared_description(spec)
        .unwrap_or_else(|| source.settings.as_ref().and_then(|s| s.description.clone()));
    let visibility = spec
        .visibility
        .as_ref()
        .map_or_else(|| source.visibility.clone(), |v| v.as_str().to_owned());
    let after = NormDashboard {
        name: spec.name.clone(),
        visibility: Some(visibility.clone()),
        description: description.clone(),
    };
    let body = TrendsDashboardDuplicateRequest {
        name: spec.name.clone(),
        description: description.clone(),
        visibility: spec.visibility.clone(),
    };
    let draft = Draft {
        address,
        action: Action::Create,
        reason: format!(
            "declared, not on the log stream: a copy of `{}`",
            source.name
        ),
        live_fingerprint: fingerprint::dashboard(None),
        operations: vec![Operation::DuplicateDashboard {
            project_id: ids.project_id.to_owned(),
            log_stream_id: ids.log_stream_id.to_owned(),
            source: DashboardRef::Id(source.id.clone()),
            body,
        }],
    };
    let mut change = draft.change::<NormDashboard, _>(None, Some(&after));
    if source.widget_count() > 0 || !source.sections.is_empty() {
        change.warnings.push(format!(
            "it starts with the {} section(s) and {} widget(s) of `{}`; the lists it declares are then made to match",
            source.sections.len(),
            source.widget_count(),
            source.name
        ));
    }
    planner.changes.push(change);
    // The copy, as the service will make it.
    let mut copy = source.clone();
    copy.name = spec.name.clone();
    copy.is_default = false;
    copy.visibility = visibility;
    copy.is_favorited = false;
    if let Some(settings) = &mut copy.settings {
        settings.description = description;
    }
    copy
}

fn update_dashboard(
    planner: &mut Planner<'_>,
    ids: &Board<'_>,
    address: Address,
    live: &DashboardState,
    spec: &DashboardSpec,
) {
    let live_description = live.settings.as_ref().and_then(|s| s.description.clone());
    let before = NormDashboard {
        name: live.name.clone(),
        visibility: spec.visibility.as_ref().map(|_| live.visibility.clone()),
        description: spec
            .description
            .as_ref()
            .and_then(|_| live_description.clone()),
    };
    let after = NormDashboard {
        name: spec.name.clone(),
        visibility: spec.visibility.as_ref().map(|v| v.as_str().to_owned()),
        description: declared_description(spec).flatten(),
    };
    if before == after {
        return;
    }
    let mut draft = Draft {
        address,
        action: Action::Update,
        reason: String::new(),
        live_fingerprint: fingerprint::dashboard(Some(live)),
        operations: Vec::new(),
    };
    let mut warnings = Vec::new();
    if before.visibility != after.visibility {
        // The service cannot change a visibility: a copy of the new one
        // replaces the dashboard.
        draft.action = Action::Replace;
        draft.reason = format!(
            "visibility `{}` → `{}`: the service cannot change it in place",
            live.visibility,
            after.visibility.as_deref().unwrap_or_default()
        );
        draft.operations = vec![
            Operation::DuplicateDashboard {
                project_id: ids.project_id.to_owned(),
                log_stream_id: ids.log_stream_id.to_owned(),
                source: DashboardRef::Id(live.id.clone()),
                body: TrendsDashboardDuplicateRequest {
                    name: spec.name.clone(),
                    description: if spec.description.is_some() {
                        after.description.clone()
                    } else {
                        live_description.clone()
                    },
                    visibility: spec.visibility.clone(),
                },
            },
            Operation::DeleteDashboard {
                project_id: ids.project_id.to_owned(),
                log_stream_id: ids.log_stream_id.to_owned(),
                dashboard_id: DashboardRef::Id(live.id.clone()),
            },
        ];
        warnings.push(
            "the copy that replaces it has a new id: links to the dashboard break, and favorites of it are lost"
                .to_owned(),
        );
    } else {
        draft.reason = if before.name != after.name {
            format!("renamed from `{}`", before.name)
        } else {
            "fields differ".to_owned()
        };
        draft.operations = vec![Operation::UpdateDashboard {
            project_id: ids.project_id.to_owned(),
            log_stream_id: ids.log_stream_id.to_owned(),
            dashboard_id: DashboardRef::Id(live.id.clone()),
            body: Box::new(TrendsDashboardUpdateRequest {
                name: (before.name != after.name).then(|| after.name.clone()),
                description: (before.description != after.description)
                    .then(|| after.description.clone()),
                ..TrendsDashboardUpdateRequest::default()
            }),
        }];
    }
    let mut change = draft.change(Some(&before), Some(&after));
    change.warnings = warnings;
    change.created_by = live.created_by.clone();
    planner.changes.push(change);
}

fn delete_dashboard(
    planner: &mut Planner<'_>,
    ids: &Board<'_>,
    address: Address,
    live: &DashboardState,
    duplicate: bool,
) {
    let before = NormDashboard::from_state(live);
    let draft = Draft {
        address,
        action: Action::Delete,
        reason: if duplicate {
            "a second dashboard with this name (the first listed is kept)".to_owned()
        } else {
            "not declared (--prune)".to_owned()
        },
        live_fingerprint: fingerprint::dashboard(Some(live)),
        operations: vec![Operation::DeleteDashboard {
            project_id: ids.project_id.to_owned(),
            log_stream_id: ids.log_stream_id.to_owned(),
            dashboard_id: DashboardRef::Id(live.id.clone()),
        }],
    };
    let mut change = draft.change::<_, NormDashboard>(Some(&before), None);
    change.warnings.push(contents_warning(live));
    change.created_by = live.created_by.clone();
    planner.changes.push(change);
}
