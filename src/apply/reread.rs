//! Reading one planned object again, normalized exactly as the plan
//! normalized it: before applying a saved plan (has it moved since the plan
//! was made?) and after applying (did every field stick?).
//!
//! The object is located by the ids the plan's operations carry, so a saved
//! plan can be checked without the manifests.

use serde_json::Value;

use crate::api::{Section, Template};
use crate::client::{ApiError, Client};
use crate::live::Catalog;
use crate::plan::integrations::NormIntegration;
use crate::plan::normalize::{
    NormSection, NormTemplate, align_constraints, integration_live_fields,
    metric_settings_from_wire,
};
use crate::plan::trends::FavoriteState;
use crate::plan::{Address, Operation, ResourceChange, RunKind, TemplateKind};

/// Which identity of the object to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// The object as the plan saw it (by id when it existed, else by name).
    Before,
    /// The object as the plan wants it (by the address's name; a deleted
    /// object by its old id).
    After,
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Reads the object `change` is about, normalized; `None` when it does not exist.
pub async fn read_object(
    client: &Client,
    catalog: &Catalog,
    change: &ResourceChange,
    moment: Moment,
) -> Result<Option<Value>, ApiError> {
    let Some(first) = change.operations.first() else {
        return Ok(None);
    };
    match (&change.address, first) {
        (
            Address::MetricSettings { .. },
            Operation::PatchMetricSettings {
                project_id, run, ..
            },
        ) => {
            let settings = match run.kind {
                RunKind::LogStream => {
                    client
                        .get_log_stream_metric_settings(project_id, &run.id)
                        .await?
                }
                RunKind::Experiment => {
                    client
                        .get_experiment_metric_settings(project_id, &run.id)
                        .await?
                }
            };
            Ok(settings.map(|s| to_json(&metric_settings_from_wire(catalog, &s))))
        }
        (Address::Section { name, .. }, op) => read_section(client, change, op, name, moment).await,
        (Address::Favorite { .. }, op) => {
            let (project_id, log_stream_id, dashboard_id) = match op {
                Operation::Favorite {
                    project_id,
                    log_stream_id,
                    dashboard_id,
                    ..
                } => (project_id, log_stream_id, Some(dashboard_id.as_str())),
                Operation::Unfavorite {
                    project_id,
                    log_stream_id,
                    ..
                } => (project_id, log_stream_id, None),
                _ => return Ok(None),
            };
            let dashboard = client
                .get_dashboard(project_id, log_stream_id, dashboard_id)
                .await?;
            Ok(dashboard.map(|d| {
                to_json(&FavoriteState {
                    favorited: d.is_favorited,
                })
            }))
        }
        (Address::Template { kind, name, .. }, op) => {
            read_template(client, change, op, *kind, name, moment).await
        }
        (Address::Integration { provider }, Operation::PutIntegration { body }) => {
            let Some(live) = client.get_integration(provider).await? else {
                return Ok(None);
            };
            let fields = integration_live_fields(&live, &body.public_fields());
            Ok(Some(to_json(&NormIntegration {
                provider: provider.clone(),
                fields,
            })))
        }
        _ => Ok(None),
    }
}

fn section_ids(op: &Operation) -> Option<(&str, &str, &str, Option<&str>)> {
    match op {
        Operation::CreateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        } => Some((project_id, log_stream_id, dashboard_id, None)),
        Operation::UpdateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
            ..
        }
        | Operation::DeleteSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
        } => Some((project_id, log_stream_id, dashboard_id, Some(section_id))),
        _ => None,
    }
}

async fn read_section(
    client: &Client,
    change: &ResourceChange,
    op: &Operation,
    name: &str,
    moment: Moment,
) -> Result<Option<Value>, ApiError> {
    let Some((project_id, log_stream_id, dashboard_id, section_id)) = section_ids(op) else {
        return Ok(None);
    };
    let Some(dashboard) = client
        .get_dashboard(project_id, log_stream_id, Some(dashboard_id))
        .await?
    else {
        return Ok(None);
    };
    let by_id = |id: &str| dashboard.sections.iter().find(|s| s.id == id);
    let by_name = |n: &str| dashboard.sections.iter().find(|s| s.name == n);
    let found: Option<&Section> = match (moment, section_id) {
        (Moment::Before, Some(id)) => by_id(id),
        (Moment::Before, None) => by_name(name),
        (Moment::After, Some(id)) if change.after.is_none() => by_id(id),
        (Moment::After, _) => by_name(name),
    };
    Ok(found.map(|s| {
        to_json(&NormSection::new(
            &s.name,
            s.description.as_deref(),
            s.color.as_deref(),
        ))
    }))
}

async fn read_template(
    client: &Client,
    change: &ResourceChange,
    op: &Operation,
    kind: TemplateKind,
    name: &str,
    moment: Moment,
) -> Result<Option<Value>, ApiError> {
    let (project_id, template_id) = match op {
        Operation::CreateTemplate { project_id, .. } => (project_id, None),
        Operation::PatchTemplate {
            project_id,
            template_id,
            ..
        }
        | Operation::DeleteTemplate {
            project_id,
            template_id,
            ..
        } => (project_id, Some(template_id.as_str())),
        _ => return Ok(None),
    };
    let pick = |id: Option<&str>, n: &str, items: Vec<(String, String, NormTemplate)>| {
        let use_id = match moment {
            Moment::Before => id,
            Moment::After if change.after.is_none() => id,
            Moment::After => None,
        };
        items
            .into_iter()
            .find(|(tid, tname, _)| match use_id {
                Some(i) => tid == i,
                None => tname == n,
            })
            .map(|(_, _, mut t)| {
                if let Some(declared) = change.after.as_ref().and_then(|a| a.get("constraints")) {
                    align_constraints(&mut t.constraints, declared);
                }
                to_json(&t)
            })
    };
    let items = match kind {
        TemplateKind::Annotation => keyed(client.list_annotation_templates(project_id).await?),
        TemplateKind::Feedback => keyed(client.list_feedback_templates(project_id).await?),
    };
    Ok(pick(template_id, name, items))
}

/// Templates as (id, name, normalized), for finding one by id or name.
fn keyed<C: serde::Serialize>(templates: Vec<Template<C>>) -> Vec<(String, String, NormTemplate)> {
    templates
        .into_iter()
        .map(|t| {
            let norm = NormTemplate::from_live(&t);
            (t.id, t.name, norm)
        })
        .collect()
}
