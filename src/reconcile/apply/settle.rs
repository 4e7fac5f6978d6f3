//! Settling an idempotent write (PUT, PATCH, DELETE, favorite) whose answer
//! leaves open whether the service applied it: a 5xx (500 as well as 502,
//! 503 and 504), a timeout, a dropped connection, after the client's own
//! retries.
//!
//! The object is read again through the same readers as a plan
//! (`crate::reconcile::read::touched`) and compared in the plan's comparable
//! form ([`crate::plan::confirm::unconfirmed`]): when it holds what the
//! change planned, the write is done; otherwise (or when that cannot be
//! told) the write is sent again, which is safe because it is idempotent:
//! in at most [`MAX_SENDS`] rounds, and at most `--max-retries` + 1 sends in
//! all, the client's retries included (one budget: `client::with_attempts`).
//!
//! What a read cannot tell: an integration's secrets are never returned, so
//! a PUT of an integration is only ever sent again; a step that is not the
//! last of its change (the first of two unfavorites) leaves the object in
//! between, so it too is sent again.

use super::create::{Scope, read_members};
use super::resolve::LogStream;
use crate::client::{ApiError, Client};
use crate::plan::confirm::unconfirmed;
use crate::plan::{Operation, ResourceChange, SectionRef, WidgetRef};
use crate::reconcile::read::touched::{Moment, read_touched};
use crate::state::Catalog;

/// The most rounds in which the engine sends one idempotent write (each
/// retried by the client within what is left of `--max-retries`).
pub const MAX_SENDS: u32 = 3;

/// Whether the service may have applied a write that answered `error`.
pub fn maybe_applied(error: &ApiError) -> bool {
    matches!(
        error,
        ApiError::Server { .. }
            | ApiError::Timeout { .. }
            | ApiError::Transport { .. }
            | ApiError::Ambiguous { .. }
    )
}

/// A short cause for notes: `status 500`, `timed out`, `no answer`.
pub fn short_cause(error: &ApiError) -> String {
    match error {
        ApiError::Timeout { .. } => "timed out".to_owned(),
        ApiError::Transport { .. } => "connection failed or closed".to_owned(),
        ApiError::Ambiguous { cause, .. } => cause.clone(),
        other => other
            .status()
            .map_or_else(|| "no answer".to_owned(), |s| format!("status {s}")),
    }
}

/// Whether step `index` of `change` shows in live state: `Some(true)`
/// applied, `Some(false)` not applied, `None` when a read cannot tell.
pub async fn applied(
    client: &Client,
    catalog: &Catalog,
    change: &ResourceChange,
    index: usize,
) -> Option<bool> {
    let op = change.operations.get(index)?;
    // A kind's own delete: gone from its scope is applied.
    if let Some((scope, id)) = crate::kinds::OwnScope::of_delete(op) {
        return gone(client, &Scope::Own(scope), id).await;
    }
    match op {
        // Secrets are never returned, and named custom integrations cannot
        // be read back: only ever sent again.
        Operation::PutIntegration { .. } | Operation::PutCustomIntegration { .. } => None,
        Operation::DeleteSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id: SectionRef::Id(section_id),
        } => {
            let stream = LogStream {
                project_id,
                log_stream_id,
            };
            let scope = Scope::Sections {
                project_id: project_id.clone(),
                log_stream_id: log_stream_id.clone(),
                dashboard_id: stream.dashboard(client, dashboard_id).await.ok()?,
            };
            gone(client, &scope, section_id).await
        }
        Operation::DeleteWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            widget: WidgetRef::Id(widget_id),
        } => {
            let stream = LogStream {
                project_id,
                log_stream_id,
            };
            let dashboard_id = stream.dashboard(client, dashboard_id).await.ok()?;
            let dashboard = client
                .get_dashboard(project_id, log_stream_id, Some(&dashboard_id))
                .await
                .ok()?;
            Some(dashboard.is_none_or(|d| {
                !d.widgets
                    .iter()
                    .chain(d.sections.iter().flat_map(|s| &s.widgets))
                    .any(|w| &w.id == widget_id)
            }))
        }
        // By name: what a re-read shows cannot tell one copy from another.
        Operation::DeleteSection { .. } | Operation::DeleteWidget { .. } => None,
        _ if index + 1 == change.operations.len() => {
            let observed = read_touched(client, catalog, &[change], Moment::After).await;
            let now = observed.into_iter().next()?.ok()?;
            Some(unconfirmed(change, now.comparable.as_ref()).is_empty())
        }
        _ => None,
    }
}

async fn gone(client: &Client, scope: &Scope, id: &str) -> Option<bool> {
    read_members(client, scope)
        .await
        .ok()
        .map(|members| !members.has_id(id))
}
