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
//! - A project that manages its log streams (`prune_log_streams: true`) has
//!   the live ones the manifests do not declare listed (with `--prune`):
//!   deleting one destroys its traces, so it is planned
//!   (`- project[P].log_stream[L]`, its traces counted in a warning the plan
//!   shows in bold) only with `--allow-destroy` too; without it, a note says
//!   what would be deleted and that the flag is needed. These deletes count
//!   towards the mass-change guard (the project's log streams).

use serde::Serialize;

use super::address::{LogStreamAddress, ProjectAddress};
use super::ops::ProjectOp;
use super::pending::is_pending;
use super::wire::{LogStreamUpdate, ProjectCreate, ProjectUpdate};
use crate::plan::address::Address;
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, Planner, fingerprint};
use crate::state::{ObjectKey, ProjectState};

/// A project or log stream as a plan shows it.
#[derive(Debug, Serialize)]
pub(super) struct Named<'a> {
    pub(super) name: &'a str,
}

/// Plans the project `project` (as the manifest names it) and its log
/// streams, against `live`.
pub(crate) fn plan_project(
    planner: &mut Planner<'_>,
    key: &ObjectKey,
    project: &str,
    live: &ProjectState,
) {
    if is_pending(&live.id) {
        let draft = Draft {
            address: Address::Project(ProjectAddress {
                project: project.to_owned(),
            }),
            action: Action::Create,
            reason: "declared, does not exist".to_owned(),
            live_fingerprint: fingerprint::of::<Named<'_>>(None),
            operations: vec![Operation::Project(ProjectOp::CreateProject {
                body: ProjectCreate {
                    name: live.name.clone(),
                },
            })],
        };
        let after = Named { name: &live.name };
        planner
            .changes
            .push(draft.change::<Named<'_>, _>(None, Some(&after)));
    }
    if let ObjectKey::Name(declared) = key
        && !is_pending(&live.id)
        && &live.name != declared
    {
        // Found by a name of its `renamed_from`.
        let draft = Draft {
            address: Address::Project(ProjectAddress {
                project: project.to_owned(),
            }),
            action: Action::Update,
            reason: format!("renamed from `{}`", live.name),
            live_fingerprint: fingerprint::of(Some(&Named { name: &live.name })),
            operations: vec![Operation::Project(ProjectOp::UpdateProject {
                project_id: live.id.clone(),
                body: ProjectUpdate {
                    name: Some(declared.clone()),
                    ..ProjectUpdate::default()
                },
            })],
        };
        planner.changes.push(draft.change(
            Some(&Named { name: &live.name }),
            Some(&Named { name: declared }),
        ));
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
                operations: vec![Operation::Project(ProjectOp::RenameLogStream {
                    project_id: live.id.clone(),
                    log_stream_id: run.id.clone(),
                    body: LogStreamUpdate {
                        name: declared.clone(),
                    },
                })],
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
            operations: vec![Operation::Project(ProjectOp::CreateLogStream {
                project_id: live.id.clone(),
                name: run.name.clone(),
            })],
        };
        let after = Named { name: &run.name };
        planner
            .changes
            .push(draft.change::<Named<'_>, _>(None, Some(&after)));
    }
    for undeclared in live.undeclared_log_streams.iter().flatten() {
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
            operations: vec![Operation::Project(ProjectOp::DeleteLogStream {
                project_id: live.id.clone(),
                log_stream_id: undeclared.id.clone(),
            })],
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
