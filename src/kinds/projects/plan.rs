//! Planning a project and its log streams themselves (their existence; the
//! rest of what they hold is planned by the other kinds, against them as
//! read):
//!
//! - A declared project that does not exist is created
//!   (`+ project[new-team]`), as is a declared log stream
//!   (`+ project[new-team].log_stream[production]`); the reader found them
//!   pending (`super::read`), so everything planned inside them names them by
//!   a pending id that apply resolves once they are created.
//! - A project or log stream found by a name of its `renamed_from` is
//!   renamed (`~ project[new-name]`, a PUT of its name): it keeps its id,
//!   log streams and traces.
//! - A project's description and labels are managed where the manifest
//!   writes them (absent: left as they are): one that differs is an update
//!   (`~ project[P]`, the PUT a rename makes, one for both), compared as
//!   the service holds them (no description is `""`; labels as a set); a
//!   project created with them is created, then given them.
//! - A project that manages its log streams (`prune_log_streams: true`) has
//!   the live ones the manifests do not declare listed (with `--prune`):
//!   deleting one destroys its traces, so it is planned
//!   (`- project[P].log_stream[L]`, its traces counted in a warning the plan
//!   shows in bold) only with `--allow-destroy` too; without it, a note says
//!   what would be deleted and that the flag is needed. These deletes count
//!   towards the mass-change guard (the project's log streams).

use crate::kinds::KindOp;
use serde::Serialize;

use super::address::{LogStreamAddress, ProjectAddress};
use super::ops::ProjectOp;
use super::read::ProjectMeta;
use super::wire::{LogStreamUpdate, ProjectCreate, ProjectUpdate};
use crate::manifest::types::ProjectSpec;
use crate::plan::address::Address;
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, PlanOptions, Planner, fingerprint};
use crate::reconcile::pending::is_pending;
use crate::state::{ObjectKey, ProjectState};

/// A log stream (or a project deleted) as a plan shows it.
#[derive(Debug, Serialize)]
pub(super) struct Named<'a> {
    pub(super) name: &'a str,
}

/// A project as a plan shows it: its name, and its description and labels
/// where they change (or are set by its create). Without them, it is
/// [`Named`] (the same fingerprint).
#[derive(Debug, Serialize)]
pub(crate) struct ProjectView<'a> {
    pub(crate) name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) labels: Option<Vec<&'a str>>,
}

/// Whether the project `spec` (addressed `project`) has its description or
/// labels managed, and the targets reach them: they are read.
pub(crate) fn manages_meta(spec: &ProjectSpec, project: &str, options: &PlanOptions) -> bool {
    (spec.description.is_some() || spec.labels.is_some())
        && options.selects(&Address::Project(ProjectAddress {
            project: project.to_owned(),
        }))
}

/// Labels compared as a set, in order.
fn label_set<'a>(labels: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = labels.collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// What `spec` changes of `live`'s description and labels (what it writes
/// and differs; an absent description is `""`).
fn meta_update(spec: &ProjectSpec, live: &ProjectMeta) -> ProjectUpdate {
    let live_description = live.description.as_deref().unwrap_or_default();
    let description = spec.description.clone().filter(|d| d != live_description);
    let labels = spec.labels.as_ref().and_then(|declared| {
        let declared = label_set(declared.iter().map(|l| l.as_str()));
        (declared != label_set(live.labels.iter().map(String::as_str)))
            .then(|| declared.iter().map(|&l| l.to_owned()).collect())
    });
    ProjectUpdate {
        name: None,
        labels,
        description,
    }
}

/// Plans the project `project` (as the manifest names it, declared as
/// `spec`) and its log streams, against `live`.
pub(crate) fn plan_project(
    planner: &mut Planner<'_>,
    project: &str,
    spec: &ProjectSpec,
    live: &ProjectState,
) {
    let managed = manages_meta(spec, project, planner.options);
    if is_pending(&live.id) {
        let then = if managed {
            meta_update(spec, &ProjectMeta::default())
        } else {
            ProjectUpdate::default()
        };
        let after = ProjectView {
            name: &live.name,
            description: then.description.as_deref(),
            labels: then
                .labels
                .as_ref()
                .map(|l| l.iter().map(String::as_str).collect()),
        };
        let draft = Draft {
            address: Address::Project(ProjectAddress {
                project: project.to_owned(),
            }),
            action: Action::Create,
            reason: "declared, does not exist".to_owned(),
            live_fingerprint: fingerprint::of::<Named<'_>>(None),
            operations: vec![Operation::Kind(KindOp::Project(ProjectOp::CreateProject {
                body: ProjectCreate {
                    name: live.name.clone(),
                },
                then: (!then.is_empty()).then(|| then.clone()),
            }))],
        };
        planner
            .changes
            .push(draft.change::<ProjectView<'_>, _>(None, Some(&after)));
    }
    if !is_pending(&live.id) {
        // Found by a name of its `renamed_from`: renamed.
        let key = ObjectKey::from_parts(spec.name.as_deref(), spec.id.as_deref());
        let rename = match &key {
            Some(ObjectKey::Name(declared)) if &live.name != declared => Some(declared),
            _ => None,
        };
        let mut update = match (&live.parts.project.meta, managed) {
            (Some(meta), true) => meta_update(spec, meta),
            _ => ProjectUpdate::default(),
        };
        update.name = rename.cloned();
        if !update.is_empty() {
            let live_meta = live.parts.project.meta.clone().unwrap_or_default();
            let before = ProjectView {
                name: &live.name,
                description: update
                    .description
                    .as_ref()
                    .map(|_| live_meta.description.as_deref().unwrap_or_default()),
                labels: update
                    .labels
                    .as_ref()
                    .map(|_| label_set(live_meta.labels.iter().map(String::as_str))),
            };
            let after = ProjectView {
                name: rename.map_or(&live.name, |n| n),
                description: update.description.as_deref(),
                labels: update
                    .labels
                    .as_ref()
                    .map(|l| l.iter().map(String::as_str).collect()),
            };
            let reason = match (rename, &update.description, &update.labels) {
                (Some(_), _, _) => format!("renamed from `{}`", live.name),
                (None, Some(_), Some(_)) => "its description and labels differ".to_owned(),
                (None, Some(_), None) => "its description differs".to_owned(),
                (None, None, _) => "its labels differ".to_owned(),
            };
            let draft = Draft {
                address: Address::Project(ProjectAddress {
                    project: project.to_owned(),
                }),
                action: Action::Update,
                reason,
                live_fingerprint: fingerprint::of(Some(&before)),
                operations: vec![Operation::Kind(KindOp::Project(ProjectOp::UpdateProject {
                    project_id: live.id.clone(),
                    body: update.clone(),
                }))],
            };
            planner
                .changes
                .push(draft.change(Some(&before), Some(&after)));
        }
    }
    for (run_key, run) in &live.log_streams {
        if let ObjectKey::Name(declared) = run_key
            && !is_pending(&run.id)
            && &run.name != declared
        {
            let draft = Draft {
                address: Address::LogStream(LogStreamAddress {
                    project: project.to_owned(),
                    log_stream: declared.clone(),
                }),
                action: Action::Update,
                reason: format!("renamed from `{}`", run.name),
                live_fingerprint: fingerprint::of(Some(&Named { name: &run.name })),
                operations: vec![Operation::Kind(KindOp::Project(
                    ProjectOp::RenameLogStream {
                        project_id: live.id.clone(),
                        log_stream_id: run.id.clone(),
                        body: LogStreamUpdate {
                            name: declared.clone(),
                        },
                    },
                ))],
            };
            planner.changes.push(draft.change(
                Some(&Named { name: &run.name }),
                Some(&Named { name: declared }),
            ));
        }
    }
    for (key, run) in &live.log_streams {
        if !is_pending(&run.id) {
            continue;
        }
        let draft = Draft {
            address: Address::LogStream(LogStreamAddress {
                project: project.to_owned(),
                log_stream: key.to_string(),
            }),
            action: Action::Create,
            reason: "declared, does not exist".to_owned(),
            live_fingerprint: fingerprint::of::<Named<'_>>(None),
            operations: vec![Operation::Kind(KindOp::Project(
                ProjectOp::CreateLogStream {
                    project_id: live.id.clone(),
                    name: run.name.clone(),
                },
            ))],
        };
        let after = Named { name: &run.name };
        planner
            .changes
            .push(draft.change::<Named<'_>, _>(None, Some(&after)));
    }
    for undeclared in live.parts.project.undeclared_log_streams.iter().flatten() {
        let address = Address::LogStream(LogStreamAddress {
            project: project.to_owned(),
            log_stream: undeclared.name.clone(),
        });
        let traces = traces(undeclared.num_traces);
        if !planner.options.allow_destroy {
            planner.note(
                Some(address),
                NoteKind::Info,
                format!(
                    "log stream `{}` is not declared in a project that manages its log streams; deleting it would destroy {traces}: give --allow-destroy with --prune to delete it",
                    undeclared.name
                ),
            );
            continue;
        }
        let draft = Draft {
            address,
            action: Action::Delete,
            reason: "not declared, in a project that manages its log streams (prune_log_streams)"
                .to_owned(),
            live_fingerprint: fingerprint::of(Some(&Named {
                name: &undeclared.name,
            })),
            operations: vec![Operation::Kind(KindOp::Project(
                ProjectOp::DeleteLogStream {
                    project_id: live.id.clone(),
                    log_stream_id: undeclared.id.clone(),
                },
            ))],
        };
        let before = Named {
            name: &undeclared.name,
        };
        let mut change = draft.change::<_, Named<'_>>(Some(&before), None);
        change.warnings.push(format!(
            "DESTROYS log stream `{}` and its {traces}, which cannot be recovered",
            undeclared.name
        ));
        planner.changes.push(change);
    }
}

/// `N traces`, as counted (`its traces` when the service did not count them).
pub(super) fn traces(num_traces: Option<u64>) -> String {
    match num_traces {
        Some(1) => "1 trace".to_owned(),
        Some(n) => format!("{} traces", thousands(n)),
        None => "traces (not counted)".to_owned(),
    }
}

/// `n` with thousands separated by commas.
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_are_counted_in_words() {
        assert_eq!(traces(Some(0)), "0 traces");
        assert_eq!(traces(Some(1)), "1 trace");
        assert_eq!(traces(Some(1234567)), "1,234,567 traces");
        assert_eq!(traces(None), "traces (not counted)");
    }
}
