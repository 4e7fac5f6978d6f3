//! Executing a plan: stage by stage in dependency order (integrations, then
//! templates, metric settings, sections, favorites), changes within a stage
//! concurrently under a bound, the operations of one change in order.
//!
//! A failure does not stop the run: every change that can still be made is
//! made, the report says what succeeded, failed and was skipped, and a second
//! apply completes the rest. The exception is a write the service refuses for
//! the caller (401: credentials refused, 403: the role may not write): every
//! later write would be refused alike, so the changes not yet started are
//! skipped instead of sent. A create whose answer was lost (the service may
//! or may not have made it) is settled by re-reading, never by sending it again.

use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;

use super::report::{ApplyReport, ChangeOutcome, OutcomeStatus, Unconverged};
use super::reread::{Moment, read_object, read_objects};
use super::secrets::resolve_secrets;
use crate::client::{ApiError, Client, Deleted};
use crate::live::Catalog;
use crate::plan::diff::{fingerprint, object_changes, path_label};
use crate::plan::{Address, Operation, Plan, ResourceChange, RunKind, TemplateBody, TemplateKind};

/// Options of an apply run.
pub struct ApplyOptions<'a> {
    /// Changes applied at once within a stage.
    pub concurrency: usize,
    /// Reads environment variables (integration secrets).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
}

/// The stage a change belongs to; lower stages run first.
fn stage(address: &Address) -> u8 {
    match address {
        Address::Integration { .. } => 0,
        Address::Template { .. } => 1,
        Address::MetricSettings { .. } => 2,
        Address::Section { .. } => 3,
        Address::Favorite { .. } => 4,
    }
}

/// Applies every change of `plan`, then re-reads each applied object and
/// reports any field that did not stick.
pub async fn apply(
    plan: &Plan,
    client: &Client,
    catalog: &Catalog,
    options: &ApplyOptions<'_>,
) -> ApplyReport {
    // Every change belongs to one stage, and every stage runs to the end:
    // each change gets exactly one outcome (skipped once the caller is refused).
    let refused = AtomicBool::new(false);
    let refused = &refused;
    let mut outcomes: Vec<(usize, ChangeOutcome)> = Vec::with_capacity(plan.changes.len());
    let mut stages: Vec<u8> = plan.changes.iter().map(|c| stage(&c.address)).collect();
    stages.sort_unstable();
    stages.dedup();
    for current in stages {
        let work =
            plan.changes
                .iter()
                .enumerate()
                .filter(|(_, c)| stage(&c.address) == current)
                .map(|(i, change)| async move {
                    (i, apply_change(client, change, options, refused).await)
                });
        let results = futures::stream::iter(work).buffer_unordered(options.concurrency.max(1));
        outcomes.extend(results.collect::<Vec<_>>().await);
    }
    outcomes.sort_unstable_by_key(|(i, _)| *i);
    let outcomes: Vec<ChangeOutcome> = outcomes.into_iter().map(|(_, o)| o).collect();
    let unconverged = confirm(plan, &outcomes, client, catalog, options.concurrency).await;
    ApplyReport {
        outcomes,
        unconverged,
    }
}

/// Applies one change's operations in order. `refused` is set when the service
/// refuses the caller (401, 403); a change not started by then is skipped.
async fn apply_change(
    client: &Client,
    change: &ResourceChange,
    options: &ApplyOptions<'_>,
    refused: &AtomicBool,
) -> ChangeOutcome {
    if refused.load(Ordering::SeqCst) {
        return ChangeOutcome {
            address: change.address.clone(),
            action: change.action,
            status: OutcomeStatus::Skipped,
            detail: Some(
                "not attempted: the service refused an earlier write for these credentials"
                    .to_owned(),
            ),
        };
    }
    let mut notes = Vec::new();
    for (index, op) in change.operations.iter().enumerate() {
        match run_operation(client, change, op, options, refused).await {
            Ok(note) => notes.extend(note),
            Err(message) => {
                let done = if index > 0 {
                    format!(
                        " (after {index} of {} steps succeeded)",
                        change.operations.len()
                    )
                } else {
                    String::new()
                };
                return ChangeOutcome {
                    address: change.address.clone(),
                    action: change.action,
                    status: OutcomeStatus::Failed,
                    detail: Some(format!("{message}{done}")),
                };
            }
        }
    }
    ChangeOutcome {
        address: change.address.clone(),
        action: change.action,
        status: OutcomeStatus::Succeeded,
        detail: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// Runs one operation. `Ok(Some(note))` when it succeeded in a way worth saying.
async fn run_operation(
    client: &Client,
    change: &ResourceChange,
    op: &Operation,
    options: &ApplyOptions<'_>,
    refused: &AtomicBool,
) -> Result<Option<String>, String> {
    let result: Result<Option<String>, ApiError> = match op {
        Operation::PatchMetricSettings {
            project_id,
            run,
            body,
        } => match run.kind {
            RunKind::LogStream => client
                .update_log_stream_metric_settings(project_id, &run.id, body)
                .await
                .map(|_| None),
            RunKind::Experiment => client
                .update_experiment_metric_settings(project_id, &run.id, body)
                .await
                .map(|_| None),
        },
        Operation::CreateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            body,
        } => {
            match client
                .create_section(project_id, log_stream_id, Some(dashboard_id), body)
                .await
            {
                Err(ApiError::Ambiguous { .. }) => {
                    return settle_ambiguous_create(client, change, "section").await;
                }
                other => other.map(|_| None),
            }
        }
        Operation::UpdateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
            body,
        } => client
            .update_section(
                project_id,
                log_stream_id,
                section_id,
                Some(dashboard_id),
                body,
            )
            .await
            .map(|_| None),
        Operation::DeleteSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
        } => client
            .delete_section(
                project_id,
                log_stream_id,
                section_id,
                Some(dashboard_id),
                false,
            )
            .await
            .map(|d| (d == Deleted::AlreadyGone).then(|| "already deleted".to_owned())),
        Operation::Favorite {
            project_id,
            log_stream_id,
            dashboard_id,
            visibility,
        } => client
            .favorite_dashboard(project_id, log_stream_id, dashboard_id, visibility)
            .await
            .map(|()| None),
        Operation::Unfavorite {
            project_id,
            log_stream_id,
            visibility,
        } => client
            .unfavorite_dashboard(project_id, log_stream_id, visibility)
            .await
            .map(|_| None),
        Operation::CreateTemplate { project_id, body } => {
            let created = match body {
                TemplateBody::Annotation(b) => client
                    .create_annotation_template(project_id, b)
                    .await
                    .map(|_| None),
                TemplateBody::Feedback(b) => client
                    .create_feedback_template(project_id, b)
                    .await
                    .map(|_| None),
            };
            match created {
                Err(ApiError::Ambiguous { .. }) => {
                    return settle_ambiguous_create(client, change, "template").await;
                }
                other => other,
            }
        }
        Operation::PatchTemplate {
            project_id,
            kind,
            template_id,
            body,
        } => match kind {
            TemplateKind::Annotation => client
                .update_annotation_template(project_id, template_id, body)
                .await
                .map(|_| None),
            TemplateKind::Feedback => client
                .update_feedback_template(project_id, template_id, body)
                .await
                .map(|_| None),
        },
        Operation::DeleteTemplate {
            project_id,
            kind,
            template_id,
        } => match kind {
            TemplateKind::Annotation => {
                client
                    .delete_annotation_template(project_id, template_id)
                    .await
            }
            TemplateKind::Feedback => {
                client
                    .delete_feedback_template(project_id, template_id)
                    .await
            }
        }
        .map(|d| (d == Deleted::AlreadyGone).then(|| "already deleted".to_owned())),
        Operation::PutIntegration { body } => {
            let body = resolve_secrets(body, options.env).map_err(|e| e.to_string())?;
            client.put_integration(&body).await.map(|_| None)
        }
    };
    result.map_err(|e| {
        if matches!(
            e,
            ApiError::Unauthorized { .. } | ApiError::Forbidden { .. }
        ) {
            refused.store(true, Ordering::SeqCst);
        }
        e.to_string()
    })
}

/// After a create whose answer was lost: re-read; present means it was made
/// (once), absent means it was not, and the next apply will create it.
async fn settle_ambiguous_create(
    client: &Client,
    change: &ResourceChange,
    noun: &str,
) -> Result<Option<String>, String> {
    match read_object(client, &Catalog::default(), change, Moment::After).await {
        Ok(Some(_)) => Ok(Some(format!(
            "the service's answer was lost; a re-read found the {noun}, so it was created once"
        ))),
        Ok(None) => Err(format!(
            "the service's answer was lost and a re-read did not find the {noun}, so it was most likely not created (a request the service processes late could still land); the next apply re-reads before creating it"
        )),
        Err(e) => Err(format!(
            "the service's answer was lost and the re-read failed too ({e}); the next apply will re-read and create it only if missing"
        )),
    }
}

/// Re-reads every object whose change succeeded and compares it with what
/// the plan wanted.
async fn confirm(
    plan: &Plan,
    outcomes: &[ChangeOutcome],
    client: &Client,
    catalog: &Catalog,
    concurrency: usize,
) -> Vec<Unconverged> {
    let applied: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .zip(outcomes)
        .filter(|(_, o)| o.status == OutcomeStatus::Succeeded)
        .map(|(change, _)| change)
        .collect();
    let current = read_objects(client, catalog, &applied, Moment::After, concurrency).await;
    let mut unconverged = Vec::new();
    for (change, current) in applied.into_iter().zip(current) {
        match current {
            Ok(current) => {
                let wanted = comparable_after(change, current.as_ref());
                // Value equality (objects compare key by key, in any order,
                // also with serde_json's preserve_order).
                if wanted != current {
                    let fields = object_changes(wanted.as_ref(), current.as_ref(), &["scorers"]);
                    unconverged.push(Unconverged {
                        address: change.address.clone(),
                        fields,
                    });
                }
            }
            Err(e) => unconverged.push(Unconverged {
                address: change.address.clone(),
                fields: vec![crate::plan::FieldChange {
                    path: format!("(could not re-read: {e})"),
                    before: change.after.clone(),
                    after: None,
                }],
            }),
        }
    }
    unconverged.sort_by(|a, b| a.address.cmp(&b.address));
    unconverged
}

/// What the re-read object should equal. An integration's fields that the
/// service does not return cannot be checked, so they are left out.
fn comparable_after(
    change: &ResourceChange,
    current: Option<&serde_json::Value>,
) -> Option<serde_json::Value> {
    let after = change.after.clone()?;
    if let (Address::Integration { .. }, Some(current), serde_json::Value::Object(mut wanted)) =
        (&change.address, current, after.clone())
    {
        wanted.retain(|k, _| k == "provider" || current.get(k).is_some());
        return Some(serde_json::Value::Object(wanted));
    }
    Some(after)
}

/// A change of a saved plan whose object moved since the plan was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The object.
    pub address: Address,
    /// What is different now.
    pub detail: String,
}

/// Checks, object by object, that live state is still what `plan` was computed
/// from. Returns the objects that moved; empty means the plan is safe to
/// apply. Fails when an object cannot be read (nothing is applied then).
pub async fn check_unchanged(
    plan: &Plan,
    client: &Client,
    catalog: &Catalog,
    concurrency: usize,
) -> Result<Vec<Moved>, String> {
    let changes: Vec<&ResourceChange> = plan.changes.iter().collect();
    let current = read_objects(client, catalog, &changes, Moment::Before, concurrency).await;
    let mut moved = Vec::new();
    for (change, current) in changes.into_iter().zip(current) {
        let current = current.map_err(|e| format!("could not re-read {}: {e}", change.address))?;
        if fingerprint(current.as_ref()) == change.live_fingerprint {
            continue;
        }
        let diffs = object_changes(change.before.as_ref(), current.as_ref(), &["scorers"]);
        let paths: Vec<String> = diffs
            .iter()
            .map(|d| path_label(&d.path).to_owned())
            .collect();
        let detail = if paths.is_empty() {
            "changed".to_owned()
        } else {
            format!("changed: {}", paths.join(", "))
        };
        moved.push(Moved {
            address: change.address.clone(),
            detail,
        });
    }
    moved.sort_by(|a, b| a.address.cmp(&b.address));
    Ok(moved)
}
