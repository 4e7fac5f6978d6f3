//! Planning a project and its log streams themselves (their existence; the
//! rest of what they hold is planned by the other kinds, against them as
//! read):
//!
//! - A declared project that does not exist is created
//!   (`+ project[new-team]`), as is a declared log stream
//!   (`+ project[new-team].log_stream[production]`); the reader found them
//!   pending (`super::read`), so everything planned inside them names them by
//!   a pending id that apply resolves once they are created.

use serde::Serialize;

use super::address::{LogStreamAddress, ProjectAddress};
use super::ops::ProjectOp;
use super::pending::is_pending;
use super::wire::ProjectCreate;
use crate::plan::address::Address;
use crate::plan::types::{Action, Operation};
use crate::plan::{Draft, Planner, fingerprint};
use crate::state::ProjectState;

/// A project or log stream as a plan shows it.
#[derive(Debug, Serialize)]
struct Named<'a> {
    name: &'a str,
}

/// Plans the project `project` (as the manifest names it) and its log
/// streams, against `live`.
pub(crate) fn plan_project(planner: &mut Planner<'_>, project: &str, live: &ProjectState) {
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
}
