//! Reading planned objects again, normalized exactly as the plan normalized
//! them: before applying a saved plan (has anything moved since the plan was
//! made?) and after applying (did every field stick?).
//!
//! Objects are located by the ids the plan's operations carry, so a saved
//! plan can be checked without the manifests. Objects that live in the same
//! read (the sections and favorite of one dashboard, the templates of one
//! project) share it: each read is sent once. Reads are held 256 at a time,
//! so a large apply's memory stays bounded.

use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::Value;

use crate::api::{
    AnnotationTemplate, FeedbackTemplate, IntegrationConfig, MetricSettingsResponse, Section,
    Template, TrendsDashboard,
};
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

/// One read of the service that holds one or more planned objects.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum ReadKey {
    MetricSettings {
        project_id: String,
        kind: RunKind,
        run_id: String,
    },
    Dashboard {
        project_id: String,
        log_stream_id: String,
        dashboard_id: Option<String>,
    },
    Templates {
        project_id: String,
        kind: TemplateKind,
    },
    Integration {
        provider: String,
    },
}

/// What a read returned.
enum Fetched {
    MetricSettings(Option<MetricSettingsResponse>),
    Dashboard(Option<Box<TrendsDashboard>>),
    Annotation(Vec<AnnotationTemplate>),
    Feedback(Vec<FeedbackTemplate>),
    Integration(Option<IntegrationConfig>),
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The read that holds the object `change` is about.
fn read_key(change: &ResourceChange) -> Option<ReadKey> {
    let first = change.operations.first()?;
    let key = match (&change.address, first) {
        (
            Address::MetricSettings { .. },
            Operation::PatchMetricSettings {
                project_id, run, ..
            },
        ) => ReadKey::MetricSettings {
            project_id: project_id.clone(),
            kind: run.kind,
            run_id: run.id.clone(),
        },
        (
            Address::Section { .. } | Address::Favorite { .. },
            Operation::CreateSection {
                project_id,
                log_stream_id,
                dashboard_id,
                ..
            }
            | Operation::UpdateSection {
                project_id,
                log_stream_id,
                dashboard_id,
                ..
            }
            | Operation::DeleteSection {
                project_id,
                log_stream_id,
                dashboard_id,
                ..
            }
            | Operation::Favorite {
                project_id,
                log_stream_id,
                dashboard_id,
                ..
            },
        ) => ReadKey::Dashboard {
            project_id: project_id.clone(),
            log_stream_id: log_stream_id.clone(),
            dashboard_id: Some(dashboard_id.clone()),
        },
        (
            Address::Favorite { .. },
            Operation::Unfavorite {
                project_id,
                log_stream_id,
                ..
            },
        ) => ReadKey::Dashboard {
            project_id: project_id.clone(),
            log_stream_id: log_stream_id.clone(),
            dashboard_id: None,
        },
        (
            Address::Template { kind, .. },
            Operation::CreateTemplate { project_id, .. }
            | Operation::PatchTemplate { project_id, .. }
            | Operation::DeleteTemplate { project_id, .. },
        ) => ReadKey::Templates {
            project_id: project_id.clone(),
            kind: *kind,
        },
        (Address::Integration { provider }, Operation::PutIntegration { .. }) => {
            ReadKey::Integration {
                provider: provider.clone(),
            }
        }
        _ => return None,
    };
    Some(key)
}

async fn fetch(client: &Client, key: &ReadKey) -> Result<Fetched, ApiError> {
    Ok(match key {
        ReadKey::MetricSettings {
            project_id,
            kind: RunKind::LogStream,
            run_id,
        } => Fetched::MetricSettings(
            client
                .get_log_stream_metric_settings(project_id, run_id)
                .await?,
        ),
        ReadKey::MetricSettings {
            project_id,
            kind: RunKind::Experiment,
            run_id,
        } => Fetched::MetricSettings(
            client
                .get_experiment_metric_settings(project_id, run_id)
                .await?,
        ),
        ReadKey::Dashboard {
            project_id,
            log_stream_id,
            dashboard_id,
        } => Fetched::Dashboard(
            client
                .get_dashboard(project_id, log_stream_id, dashboard_id.as_deref())
                .await?
                .map(Box::new),
        ),
        ReadKey::Templates {
            project_id,
            kind: TemplateKind::Annotation,
        } => Fetched::Annotation(client.list_annotation_templates(project_id).await?),
        ReadKey::Templates {
            project_id,
            kind: TemplateKind::Feedback,
        } => Fetched::Feedback(client.list_feedback_templates(project_id).await?),
        ReadKey::Integration { provider } => {
            Fetched::Integration(client.get_integration(provider).await?)
        }
    })
}

/// How many distinct reads are held at a time: bounds the memory of the
/// responses kept at once on large plans. Objects that share a read (a
/// dashboard's sections and favorite) still share it: the reads, not the
/// objects, are what is chunked.
const READ_CHUNK: usize = 256;

/// Reads the objects `changes` are about, each read sent once; per change,
/// the normalized object (`None` when it does not exist) or the read's error.
pub async fn read_objects(
    client: &Client,
    catalog: &Catalog,
    changes: &[&ResourceChange],
    moment: Moment,
    concurrency: usize,
) -> Vec<Result<Option<Value>, String>> {
    let key_of: Vec<Option<ReadKey>> = changes.iter().map(|c| read_key(c)).collect();
    let mut keys: Vec<&ReadKey> = key_of.iter().flatten().collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<Result<Option<Value>, String>> = vec![Ok(None); changes.len()];
    for chunk in keys.chunks(READ_CHUNK) {
        let fetched = fetch_all(client, chunk, concurrency).await;
        for ((change, key), slot) in changes.iter().zip(&key_of).zip(out.iter_mut()) {
            let Some(result) = key.as_ref().and_then(|k| fetched.get(k)) else {
                continue;
            };
            *slot = match result {
                Err(e) => Err(e.clone()),
                Ok(f) => Ok(extract(catalog, change, f, moment)),
            };
        }
    }
    out
}

/// Sends `keys`' reads, at most `concurrency` at once.
async fn fetch_all<'k>(
    client: &Client,
    keys: &[&'k ReadKey],
    concurrency: usize,
) -> BTreeMap<&'k ReadKey, Result<Fetched, String>> {
    let reads = keys.iter().map(|&key| async move {
        let fetched = fetch(client, key).await.map_err(|e| e.to_string());
        (key, fetched)
    });
    futures::stream::iter(reads)
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}

/// Reads the object one change is about (one read).
pub async fn read_object(
    client: &Client,
    catalog: &Catalog,
    change: &ResourceChange,
    moment: Moment,
) -> Result<Option<Value>, String> {
    read_objects(client, catalog, &[change], moment, 1)
        .await
        .pop()
        .unwrap_or(Ok(None))
}

/// The object `change` is about, within what its read returned.
fn extract(
    catalog: &Catalog,
    change: &ResourceChange,
    fetched: &Fetched,
    moment: Moment,
) -> Option<Value> {
    match (fetched, &change.address) {
        (Fetched::MetricSettings(settings), _) => Some(to_json(&metric_settings_from_wire(
            catalog,
            settings.as_ref(),
        ))),
        (Fetched::Dashboard(dashboard), Address::Favorite { .. }) => dashboard.as_ref().map(|d| {
            to_json(&FavoriteState {
                favorited: d.is_favorited,
            })
        }),
        (Fetched::Dashboard(dashboard), Address::Section { name, .. }) => {
            let sections = dashboard
                .as_ref()
                .map(|d| d.sections.as_slice())
                .unwrap_or_default();
            find_section(change, sections, name, moment).map(|s| {
                to_json(&NormSection::new(
                    &s.name,
                    s.description.as_deref(),
                    s.color.as_deref(),
                ))
            })
        }
        (Fetched::Annotation(templates), Address::Template { name, .. }) => {
            find_template(change, templates, name, moment)
        }
        (Fetched::Feedback(templates), Address::Template { name, .. }) => {
            find_template(change, templates, name, moment)
        }
        (Fetched::Integration(live), Address::Integration { provider }) => {
            let Some(Operation::PutIntegration { body }) = change.operations.first() else {
                return None;
            };
            live.as_ref().map(|live| {
                let fields = integration_live_fields(live, &body.public_fields());
                to_json(&NormIntegration {
                    provider: provider.clone(),
                    fields,
                })
            })
        }
        _ => None,
    }
}

/// The id an operation of `change` names, if any (updates and deletes).
fn existing_id(change: &ResourceChange) -> Option<&str> {
    change.operations.iter().find_map(|op| match op {
        Operation::UpdateSection { section_id, .. }
        | Operation::DeleteSection { section_id, .. } => Some(section_id.as_str()),
        Operation::PatchTemplate { template_id, .. }
        | Operation::DeleteTemplate { template_id, .. } => Some(template_id.as_str()),
        _ => None,
    })
}

/// Before: by id when the object existed, else by name. After: by name,
/// except a deleted object, by its old id.
fn lookup_id(change: &ResourceChange, moment: Moment) -> Option<&str> {
    match moment {
        Moment::Before => existing_id(change),
        Moment::After if change.after.is_none() => existing_id(change),
        Moment::After => None,
    }
}

fn find_section<'a>(
    change: &ResourceChange,
    sections: &'a [Section],
    name: &str,
    moment: Moment,
) -> Option<&'a Section> {
    match lookup_id(change, moment) {
        Some(id) => sections.iter().find(|s| s.id == id),
        None => sections.iter().find(|s| s.name == name),
    }
}

fn find_template<C: serde::Serialize>(
    change: &ResourceChange,
    templates: &[Template<C>],
    name: &str,
    moment: Moment,
) -> Option<Value> {
    let found = match lookup_id(change, moment) {
        Some(id) => templates.iter().find(|t| t.id == id),
        None => templates.iter().find(|t| t.name == name),
    }?;
    let mut norm = NormTemplate::from_live(found);
    if let Some(declared) = change.after.as_ref().and_then(|a| a.get("constraints")) {
        align_constraints(&mut norm.constraints, declared);
    }
    Some(to_json(&norm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::diff::fingerprint;
    use crate::plan::normalize::NormMetricSettings;
    use crate::plan::{Action, RunKind, change};

    #[test]
    fn a_run_without_metric_settings_reads_back_as_planned() {
        let catalog = Catalog::default();
        let before = metric_settings_from_wire(&catalog, None);
        let planned = change(
            Address::MetricSettings {
                project: "demo".into(),
                run_kind: RunKind::LogStream,
                run: "production".into(),
            },
            Action::Update,
            "",
            Some(&before),
            Some(&NormMetricSettings::default()),
            Vec::new(),
            &["scorers"],
        );
        let reread = extract(
            &catalog,
            &planned,
            &Fetched::MetricSettings(None),
            Moment::Before,
        );
        assert_eq!(fingerprint(reread.as_ref()), planned.live_fingerprint);
        assert_eq!(reread, planned.before);
    }
}
