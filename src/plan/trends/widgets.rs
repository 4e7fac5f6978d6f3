//! A dashboard's widgets: per place (the top level, each section), a set
//! keyed by name, managed where the manifests write the place's widget list.
//!
//! Pairing, in two passes so that a widget that stays is never taken for a
//! move: first each declared widget looks in its own place (by name, then
//! by the names of `renamed_from`); then the ones still unpaired look in the
//! other managed places, the first live widget in the service's order that
//! no declaration claimed. A widget paired in another place is moved (an
//! update of its `section_id`: it keeps its id and layout). Widgets in places
//! whose list is not written are never paired, moved or deleted (absent
//! means unmanaged); the unpaired ones of managed places are deleted with
//! `--prune`, else noted.
//!
//! Compared: name, type, metric, aggregation, the section (by the name it is
//! declared under, so a section's rename is not a move), and `description`
//! and `dataset` where declared (`""` and `[]` are none).

use serde::Serialize;

use super::super::types::{Action, NoteKind, Operation, Placement, SectionRef};
use super::super::{Draft, Planner, fingerprint};
use super::{Board, DashboardContents};
use crate::api::{
    Dataset, MetricAggregation, WidgetCreateRequest, WidgetType, WidgetUpdateRequest,
};
use crate::manifest::set::Origin;
use crate::manifest::types::WidgetSpec;
use crate::state::{DashboardState, WidgetState};

/// A widget's comparable form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NormWidget {
    /// Name.
    pub name: String,
    /// The section it is in, by the name it is declared under (`None`: the
    /// top level).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Chart type.
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    /// The metric charted.
    pub metric: String,
    /// Aggregation.
    pub aggregation: MetricAggregation,
    /// Description (`None`: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Data sets (`None`: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<Dataset>,
}

impl NormWidget {
    /// The comparable form of a live widget in the section named `section`.
    pub fn from_state(w: &WidgetState, section: Option<&str>) -> Self {
        NormWidget {
            name: w.name.clone(),
            section: section.map(str::to_owned),
            widget_type: w.widget_type.clone(),
            metric: w.metric.clone(),
            aggregation: w.aggregation.clone(),
            description: w.description.clone(),
            dataset: w.dataset.clone(),
        }
    }
}

/// A place widgets are declared in.
struct Place<'s> {
    /// The section's declared name (`None`: the top level).
    section: Option<&'s str>,
    /// The live section it is paired with (`None`: the top level, or a
    /// section this plan creates).
    live_section: Option<usize>,
    /// Whether the place is a section (else the top level).
    in_section: bool,
    /// The declared widgets.
    widgets: &'s [WidgetSpec],
}

/// Where a live widget is: the top level, or a live section's index.
fn live_place(dashboard: &DashboardState, w: &WidgetState) -> Option<Option<usize>> {
    match &w.section_id {
        None => Some(None),
        Some(id) => dashboard
            .sections
            .iter()
            .position(|s| &s.id == id)
            .map(Some),
    }
}

fn same_place(place: &Place<'_>, live: Option<Option<usize>>) -> bool {
    match live {
        Some(None) => !place.in_section,
        Some(Some(index)) => place.in_section && place.live_section == Some(index),
        None => false,
    }
}

pub(super) fn plan_widgets(
    planner: &mut Planner<'_>,
    origin: &Origin,
    board: &Board<'_>,
    dashboard: &DashboardState,
    contents: &DashboardContents<'_>,
    pairing: &[Option<usize>],
) {
    let Some(live) = dashboard.widgets.as_deref() else {
        planner.problem(
            origin,
            format!(
                "the widgets of the dashboard of log stream `{}` were not read",
                board.log_stream
            ),
        );
        return;
    };
    let sections = contents.sections.unwrap_or_default();
    let mut places: Vec<Place<'_>> = Vec::new();
    if let Some(widgets) = contents.widgets {
        places.push(Place {
            section: None,
            live_section: None,
            in_section: false,
            widgets,
        });
    }
    for (spec, paired) in sections.iter().zip(pairing) {
        if let Some(widgets) = &spec.widgets {
            places.push(Place {
                section: Some(&spec.name),
                live_section: *paired,
                in_section: true,
                widgets,
            });
        }
    }
    // The declared name of each live section (paired ones).
    let declared_name = |index: usize| -> Option<&str> {
        pairing
            .iter()
            .position(|p| *p == Some(index))
            .map(|i| sections[i].name.as_str())
    };
    // A live widget's section, by the name it has once sections changed.
    let section_name = |w: &WidgetState| -> Option<String> {
        match live_place(dashboard, w) {
            Some(Some(index)) => Some(
                declared_name(index)
                    .unwrap_or(&dashboard.sections[index].name)
                    .to_owned(),
            ),
            _ => w
                .section_id
                .as_ref()
                .map(|id| format!("(unknown section {id})")),
        }
    };
    let managed = |w: &WidgetState| {
        let at = live_place(dashboard, w);
        places.iter().any(|p| same_place(p, at))
    };

    let mut used = vec![false; live.len()];
    // Pass 1: each declared widget in its own place.
    let mut paired: Vec<Vec<Option<usize>>> = Vec::with_capacity(places.len());
    for place in &places {
        let mut found = Vec::with_capacity(place.widgets.len());
        for spec in place.widgets {
            let candidate = |wanted: &str, used: &[bool]| {
                live.iter().enumerate().position(|(i, w)| {
                    !used[i] && w.name == wanted && same_place(place, live_place(dashboard, w))
                })
            };
            let hit = candidate(&spec.name, &used).or_else(|| {
                spec.renamed_from
                    .iter()
                    .find_map(|old| candidate(old, &used))
            });
            if let Some(i) = hit {
                used[i] = true;
            }
            found.push(hit);
        }
        paired.push(found);
    }
    // Pass 2: the unpaired ones in the other managed places.
    for (place, found) in places.iter().zip(paired.iter_mut()) {
        for (spec, hit) in place.widgets.iter().zip(found.iter_mut()) {
            if hit.is_some() {
                continue;
            }
            let candidate = |wanted: &str, used: &[bool]| {
                live.iter()
                    .enumerate()
                    .position(|(i, w)| !used[i] && w.name == wanted && managed(w))
            };
            *hit = candidate(&spec.name, &used).or_else(|| {
                spec.renamed_from
                    .iter()
                    .find_map(|old| candidate(old, &used))
            });
            if let Some(i) = *hit {
                used[i] = true;
            }
        }
    }

    for (place, found) in places.iter().zip(&paired) {
        let target = match (place.in_section, place.live_section) {
            (false, _) => Placement::Top,
            (true, Some(index)) => {
                Placement::Section(board.section_after(&dashboard.sections[index], place.section))
            }
            (true, None) => Placement::Section(SectionRef::Named {
                named: place.section.unwrap_or_default().to_owned(),
            }),
        };
        for (spec, hit) in place.widgets.iter().zip(found) {
            match hit {
                Some(i) => {
                    let w = &live[*i];
                    update_widget(
                        planner,
                        board,
                        w,
                        section_name(w).as_deref(),
                        place.section,
                        &target,
                        spec,
                    );
                }
                None => create_widget(planner, board, place.section, &target, spec),
            }
        }
    }

    // The unpaired widgets of managed places.
    for (i, w) in live.iter().enumerate() {
        if used[i] || !managed(w) {
            continue;
        }
        let section = section_name(w);
        let address = board.widget_address(section.as_deref(), &w.name);
        let duplicate = places
            .iter()
            .find(|p| same_place(p, live_place(dashboard, w)))
            .is_some_and(|p| p.widgets.iter().any(|s| s.name == w.name));
        // A second widget of a declared name in its place is drift, with or
        // without --prune: the first in the service's order is the one kept
        // (paired above), the others are deleted.
        if duplicate || planner.options.prune {
            let before = NormWidget::from_state(w, section.as_deref());
            let reason = if duplicate {
                "a second widget with this name here (the first in the dashboard's order is kept)"
            } else {
                "not declared (--prune)"
            };
            let draft = Draft {
                address,
                action: Action::Delete,
                reason: reason.to_owned(),
                live_fingerprint: board.fingerprint(|| fingerprint::widget(Some(w))),
                operations: vec![Operation::DeleteWidget {
                    project_id: board.project_id.to_owned(),
                    log_stream_id: board.log_stream_id.to_owned(),
                    dashboard_id: board.reference.clone(),
                    widget: board.widget_ref(w, section.as_deref()),
                }],
            };
            planner
                .changes
                .push(draft.change::<_, NormWidget>(Some(&before), None));
        } else {
            let message = format!(
                "widget `{}` exists but is not declared (delete it with --prune)",
                w.name
            );
            planner.note(Some(address), NoteKind::Unmanaged, message);
        }
    }
}

fn declared_description(spec: &WidgetSpec) -> Option<Option<String>> {
    spec.description
        .as_ref()
        .map(|d| Some(d.clone()).filter(|d| !d.is_empty()))
}

fn declared_dataset(spec: &WidgetSpec) -> Option<Option<Dataset>> {
    spec.dataset
        .as_ref()
        .map(|d| Some(d.clone()).filter(|d| !d.is_empty()))
}

fn create_widget(
    planner: &mut Planner<'_>,
    board: &Board<'_>,
    section: Option<&str>,
    target: &Placement,
    spec: &WidgetSpec,
) {
    let after = NormWidget {
        name: spec.name.clone(),
        section: section.map(str::to_owned),
        widget_type: spec.widget_type.clone(),
        metric: spec.metric.clone(),
        aggregation: spec.aggregation.clone(),
        description: declared_description(spec).flatten(),
        dataset: declared_dataset(spec).flatten(),
    };
    let body = WidgetCreateRequest {
        name: after.name.clone(),
        description: after.description.clone(),
        widget_type: after.widget_type.clone(),
        dataset: after.dataset.clone(),
        metric: after.metric.clone(),
        aggregation: after.aggregation.clone(),
        section_id: None,
    };
    let draft = Draft {
        address: board.widget_address(section, &spec.name),
        action: Action::Create,
        reason: "declared, not on the dashboard".to_owned(),
        live_fingerprint: fingerprint::widget(None),
        operations: vec![Operation::CreateWidget {
            project_id: board.project_id.to_owned(),
            log_stream_id: board.log_stream_id.to_owned(),
            dashboard_id: board.reference.clone(),
            placement: target.clone(),
            body: Box::new(body),
        }],
    };
    planner
        .changes
        .push(draft.change::<NormWidget, _>(None, Some(&after)));
}

fn update_widget(
    planner: &mut Planner<'_>,
    board: &Board<'_>,
    live: &WidgetState,
    live_section: Option<&str>,
    section: Option<&str>,
    target: &Placement,
    spec: &WidgetSpec,
) {
    let before = NormWidget::from_state(live, live_section);
    let after = NormWidget {
        name: spec.name.clone(),
        section: section.map(str::to_owned),
        widget_type: spec.widget_type.clone(),
        metric: spec.metric.clone(),
        aggregation: spec.aggregation.clone(),
        description: declared_description(spec).unwrap_or_else(|| before.description.clone()),
        dataset: declared_dataset(spec).unwrap_or_else(|| before.dataset.clone()),
    };
    if before == after {
        return;
    }
    let body = WidgetUpdateRequest {
        name: (before.name != after.name).then(|| after.name.clone()),
        description: (before.description != after.description).then(|| after.description.clone()),
        widget_type: (before.widget_type != after.widget_type).then(|| after.widget_type.clone()),
        dataset: (before.dataset != after.dataset).then(|| after.dataset.clone()),
        metric: (before.metric != after.metric).then(|| after.metric.clone()),
        aggregation: (before.aggregation != after.aggregation).then(|| after.aggregation.clone()),
        section_id: None,
    };
    let moved = before.section != after.section;
    let mut reasons = Vec::new();
    if moved {
        reasons.push(match &before.section {
            Some(from) => format!("moved from section `{from}`"),
            None => "moved from the top level".to_owned(),
        });
    }
    if before.name != after.name {
        reasons.push(format!("renamed from `{}`", before.name));
    }
    let others = NormWidget {
        name: before.name.clone(),
        section: before.section.clone(),
        ..after.clone()
    };
    if others != before {
        reasons.push("fields differ".to_owned());
    }
    let draft = Draft {
        address: board.widget_address(section, &spec.name),
        action: Action::Update,
        reason: reasons.join("; "),
        live_fingerprint: board.fingerprint(|| fingerprint::widget(Some(live))),
        operations: vec![Operation::UpdateWidget {
            project_id: board.project_id.to_owned(),
            log_stream_id: board.log_stream_id.to_owned(),
            dashboard_id: board.reference.clone(),
            widget: board.widget_ref(live, live_section),
            move_to: moved.then(|| target.clone()),
            body: Box::new(body),
        }],
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&after)));
}
