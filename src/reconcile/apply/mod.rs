//! Executing a plan: stage by stage in dependency order (integrations, then
//! templates, metric settings, dashboards created or renamed, sections,
//! widgets, sections deleted, dashboard settings, favorites, dashboards
//! replaced or deleted), changes within a stage concurrently under a bound,
//! the operations of one change in order.
//!
//! A failure does not stop the run: every change that can still be made is
//! made, the report says what succeeded, failed and was skipped, and a second
//! apply completes the rest. The exception is a write the service refuses for
//! the caller (401: credentials refused, 403: the role may not write): every
//! later write would be refused alike, so the changes not yet started are
//! skipped instead of sent. A create whose answer was lost (the service may
//! or may not have made it) is settled by reading its scope through the same
//! readers as a plan, never by sending it blindly again.
//!
//! - [`secrets`]: resolves `${ENV}` references of integration secrets at the last moment.
//! - [`resolve`]: finds, when an operation runs, the objects the same apply
//!   created that a plan could only name.

pub mod resolve;
pub mod secrets;

use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;

use secrets::{MissingSecret, resolve_secrets};

use super::read::ReadError;
use super::read::templates::{read_annotation_templates, read_feedback_templates};
use super::read::trends::{find_dashboard_ids, read_dashboard};
use crate::api::{WidgetCreateRequest, WidgetUpdateRequest};
use crate::client::{ApiError, Client, Deleted};
use crate::plan::{
    Action, Address, ChangeOutcome, DashboardRef, Operation, OutcomeStatus, Plan, ResourceChange,
    RunKind, TemplateBody, TemplateKind,
};
use crate::state::TrendsParts;
use resolve::Scope;

/// Options of an apply run.
pub struct ApplyOptions<'a> {
    /// Changes applied at once within a stage.
    pub concurrency: usize,
    /// Reads environment variables (integration secrets).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// Told each change's outcome as soon as it is known (for streaming output).
    pub on_outcome: &'a (dyn Fn(&ChangeOutcome) + Sync),
}

/// Why one operation of a change failed.
#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    /// The service answered with an error.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// An integration secret's variable is not set.
    #[error(transparent)]
    MissingSecret(#[from] MissingSecret),
    /// A create's answer was lost and a read shows it was not made.
    #[error(
        "the service's answer was lost and a re-read did not find the {noun}, so it was most likely not created (a request the service processes late could still land); the next apply re-reads before creating it"
    )]
    LostCreate {
        /// `section`, `widget`, `dashboard` or `template`.
        noun: &'static str,
    },
    /// An object the plan names by name (the same apply created it) is not
    /// there, or is not the only one of that name.
    #[error("could not find what the plan names: {what}")]
    Unresolved {
        /// What was looked for, and what was found.
        what: String,
    },
    /// A create's answer was lost and the read that would settle it failed too.
    #[error(
        "the service's answer was lost and the re-read failed too ({source}); the next apply will re-read and create it only if missing"
    )]
    Unsettled {
        /// `section`, `widget`, `dashboard` or `template`.
        noun: &'static str,
        /// Why the read failed.
        #[source]
        source: ReadError,
    },
}

/// The stage a change belongs to; lower stages run first. A dashboard is
/// created before its contents change; sections are created or renamed
/// before widgets go into them, widgets deleted before others are created
/// (a full section has room), moved out of a section before it is deleted;
/// a dashboard is replaced by its copy (or deleted) once its contents
/// changed, so the copy carries them.
fn stage(change: &ResourceChange) -> u8 {
    let delete = change.action == Action::Delete;
    match &change.address {
        Address::Integration { .. } | Address::CustomIntegration { .. } => 0,
        Address::Template { .. } => 1,
        Address::MetricSettings { .. } => 2,
        Address::Dashboard { .. } if matches!(change.action, Action::Create | Action::Update) => 3,
        Address::Section { .. } if !delete => 4,
        Address::Widget { .. } if delete => 5,
        Address::Widget { .. } if change.action == Action::Update => 6,
        Address::Widget { .. } => 7,
        Address::Section { .. } => 8,
        Address::Settings { .. } => 9,
        Address::Favorite { .. } => 10,
        Address::Dashboard { .. } => 11,
    }
}

/// Applies every change of `plan`; one outcome per change, in plan order.
pub async fn apply(plan: &Plan, client: &Client, options: &ApplyOptions<'_>) -> Vec<ChangeOutcome> {
    // Every change belongs to one stage, and every stage runs to the end:
    // each change gets exactly one outcome (skipped once the caller is refused).
    let refused = AtomicBool::new(false);
    let refused = &refused;
    let mut outcomes: Vec<(usize, ChangeOutcome)> = Vec::with_capacity(plan.changes.len());
    let mut stages: Vec<u8> = plan.changes.iter().map(stage).collect();
    stages.sort_unstable();
    stages.dedup();
    for current in stages {
        let work = plan
            .changes
            .iter()
            .enumerate()
            .filter(|(_, c)| stage(c) == current)
            .map(|(i, change)| async move {
                let outcome = apply_change(client, change, options, refused).await;
                (options.on_outcome)(&outcome);
                (i, outcome)
            });
        let results = futures::stream::iter(work).buffer_unordered(options.concurrency.max(1));
        outcomes.extend(results.collect::<Vec<_>>().await);
    }
    outcomes.sort_unstable_by_key(|(i, _)| *i);
    outcomes.into_iter().map(|(_, o)| o).collect()
}

/// Applies one change's operations in order. `refused` is set when the service
/// refuses the caller (401, 403); a change not started by then is skipped.
async fn apply_change(
    client: &Client,
    change: &ResourceChange,
    options: &ApplyOptions<'_>,
    refused: &AtomicBool,
) -> ChangeOutcome {
    let outcome = |status, detail| ChangeOutcome {
        address: change.address.clone(),
        action: change.action,
        status,
        detail,
    };
    if refused.load(Ordering::SeqCst) {
        return outcome(
            OutcomeStatus::Skipped,
            Some(
                "not attempted: the service refused an earlier write for these credentials"
                    .to_owned(),
            ),
        );
    }
    let mut notes = Vec::new();
    for (index, op) in change.operations.iter().enumerate() {
        match run_operation(client, change, op, options).await {
            Ok(note) => notes.extend(note),
            Err(error) => {
                if matches!(
                    error,
                    OperationError::Api(ApiError::Unauthorized { .. } | ApiError::Forbidden { .. })
                ) {
                    refused.store(true, Ordering::SeqCst);
                }
                let done = if index > 0 {
                    format!(
                        " (after {index} of {} steps succeeded)",
                        change.operations.len()
                    )
                } else {
                    String::new()
                };
                return outcome(OutcomeStatus::Failed, Some(format!("{error}{done}")));
            }
        }
    }
    outcome(
        OutcomeStatus::Succeeded,
        (!notes.is_empty()).then(|| notes.join("; ")),
    )
}

fn already_deleted(d: Deleted) -> Option<String> {
    (d == Deleted::AlreadyGone).then(|| "already deleted".to_owned())
}

/// Runs one operation. `Ok(Some(note))` when it succeeded in a way worth saying.
async fn run_operation(
    client: &Client,
    change: &ResourceChange,
    op: &Operation,
    options: &ApplyOptions<'_>,
) -> Result<Option<String>, OperationError> {
    let note = match op {
        Operation::PatchMetricSettings {
            project_id,
            run,
            body,
        } => {
            match run.kind {
                RunKind::LogStream => client
                    .update_log_stream_metric_settings(project_id, &run.id, body)
                    .await
                    .map(drop)?,
                RunKind::Experiment => client
                    .update_experiment_metric_settings(project_id, &run.id, body)
                    .await
                    .map(drop)?,
            };
            None
        }
        Operation::CreateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            body,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            match client
                .create_section(project_id, log_stream_id, Some(&dashboard_id), body)
                .await
            {
                Err(ApiError::Ambiguous { .. }) => {
                    let found = read_dashboard(
                        client,
                        project_id,
                        log_stream_id,
                        Some(&dashboard_id),
                        TrendsParts::default(),
                    )
                    .await
                    .map(|d| d.is_some_and(|d| d.sections.iter().any(|s| s.name == body.name)));
                    return settle_lost_create(found, change, "section");
                }
                other => other.map(|_| None)?,
            }
        }
        Operation::UpdateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
            body,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let section_id = scope.section(client, &dashboard_id, section_id).await?;
            client
                .update_section(
                    project_id,
                    log_stream_id,
                    &section_id,
                    Some(&dashboard_id),
                    body,
                )
                .await?;
            None
        }
        Operation::DeleteSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let section_id = scope.section(client, &dashboard_id, section_id).await?;
            already_deleted(
                client
                    .delete_section(
                        project_id,
                        log_stream_id,
                        &section_id,
                        Some(&dashboard_id),
                        false,
                    )
                    .await?,
            )
        }
        Operation::CreateWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            placement,
            body,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let section_id = scope.placement(client, &dashboard_id, placement).await?;
            let body = WidgetCreateRequest {
                section_id: section_id.clone(),
                ..body.clone()
            };
            match client
                .create_widget(project_id, log_stream_id, Some(&dashboard_id), &body)
                .await
            {
                Err(ApiError::Ambiguous { .. }) => {
                    let found = client
                        .get_dashboard(project_id, log_stream_id, Some(&dashboard_id))
                        .await
                        .map(|d| {
                            d.is_some_and(|d| match &section_id {
                                None => d.widgets.iter().any(|w| w.name == body.name),
                                Some(id) => d
                                    .sections
                                    .iter()
                                    .filter(|s| &s.id == id)
                                    .flat_map(|s| &s.widgets)
                                    .any(|w| w.name == body.name),
                            })
                        });
                    return settle_lost_create(found, change, "widget");
                }
                other => other.map(|_| None)?,
            }
        }
        Operation::UpdateWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            widget,
            move_to,
            body,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let widget_id = scope.widget(client, &dashboard_id, widget).await?;
            let section_id = match move_to {
                Some(to) => Some(scope.placement(client, &dashboard_id, to).await?),
                None => None,
            };
            let body = WidgetUpdateRequest {
                section_id,
                ..body.clone()
            };
            client
                .update_widget(
                    project_id,
                    log_stream_id,
                    &widget_id,
                    Some(&dashboard_id),
                    &body,
                )
                .await?;
            None
        }
        Operation::DeleteWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            widget,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let widget_id = scope.widget(client, &dashboard_id, widget).await?;
            already_deleted(
                client
                    .delete_widget(project_id, log_stream_id, &widget_id, Some(&dashboard_id))
                    .await?,
            )
        }
        Operation::UpdateDashboard {
            project_id,
            log_stream_id,
            dashboard_id,
            body,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            client
                .update_dashboard(project_id, log_stream_id, Some(&dashboard_id), body)
                .await?;
            None
        }
        Operation::DuplicateDashboard {
            project_id,
            log_stream_id,
            source,
            body,
        } => {
            let scope = Scope {
                project_id,
                log_stream_id,
            };
            let source_id = scope.dashboard(client, source).await?;
            match client
                .duplicate_dashboard(project_id, log_stream_id, &source_id, body)
                .await
            {
                Err(ApiError::Ambiguous { .. }) => {
                    // Made when a dashboard of that name other than the source exists.
                    let found = find_dashboard_ids(client, project_id, log_stream_id, &body.name)
                        .await
                        .map(|ids| ids.iter().any(|id| id != &source_id));
                    return settle_lost_create(found, change, "dashboard");
                }
                other => other.map(|_| None)?,
            }
        }
        Operation::DeleteDashboard {
            project_id,
            log_stream_id,
            dashboard_id,
        } => {
            let dashboard_id = match dashboard_id {
                DashboardRef::Id(id) => id.clone(),
                named => {
                    Scope {
                        project_id,
                        log_stream_id,
                    }
                    .dashboard(client, named)
                    .await?
                }
            };
            already_deleted(
                client
                    .delete_dashboard(project_id, log_stream_id, &dashboard_id)
                    .await?,
            )
        }
        Operation::Favorite {
            project_id,
            log_stream_id,
            dashboard_id,
            visibility,
        } => {
            client
                .favorite_dashboard(project_id, log_stream_id, dashboard_id, visibility)
                .await?;
            None
        }
        Operation::Unfavorite {
            project_id,
            log_stream_id,
            visibility,
        } => {
            client
                .unfavorite_dashboard(project_id, log_stream_id, visibility)
                .await?;
            None
        }
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
                    let name = body.name();
                    let found = match body.kind() {
                        TemplateKind::Annotation => read_annotation_templates(client, project_id)
                            .await
                            .map(|ts| ts.iter().any(|t| t.name == name)),
                        TemplateKind::Feedback => read_feedback_templates(client, project_id)
                            .await
                            .map(|ts| ts.iter().any(|t| t.name == name)),
                    };
                    return settle_lost_create(found, change, "template");
                }
                other => other?,
            }
        }
        Operation::PatchTemplate {
            project_id,
            kind,
            template_id,
            body,
        } => {
            match kind {
                TemplateKind::Annotation => client
                    .update_annotation_template(project_id, template_id, body)
                    .await
                    .map(drop)?,
                TemplateKind::Feedback => client
                    .update_feedback_template(project_id, template_id, body)
                    .await
                    .map(drop)?,
            };
            None
        }
        Operation::DeleteTemplate {
            project_id,
            kind,
            template_id,
        } => already_deleted(match kind {
            TemplateKind::Annotation => {
                client
                    .delete_annotation_template(project_id, template_id)
                    .await?
            }
            TemplateKind::Feedback => {
                client
                    .delete_feedback_template(project_id, template_id)
                    .await?
            }
        }),
        Operation::PutIntegration { body } => {
            let body = resolve_secrets(body, options.env)?;
            client.put_integration(&body).await?;
            None
        }
        Operation::PutCustomIntegration { name, body } => {
            let body = resolve_secrets(body, options.env)?;
            client.put_named_custom_integration(name, &body).await?;
            None
        }
    };
    Ok(note)
}

/// After a create whose answer was lost, a read of its scope says whether it
/// was made: present means it was made (once), absent that it was not.
fn settle_lost_create(
    found: Result<bool, ApiError>,
    change: &ResourceChange,
    noun: &'static str,
) -> Result<Option<String>, OperationError> {
    match found {
        Ok(true) => Ok(Some(format!(
            "the service's answer was lost; a re-read found the {noun}, so it was created once"
        ))),
        Ok(false) => Err(OperationError::LostCreate { noun }),
        Err(e) => Err(OperationError::Unsettled {
            noun,
            source: ReadError::new(change.address.to_string(), e),
        }),
    }
}
