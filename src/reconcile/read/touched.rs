//! Reading the objects a plan's changes are about, by the ids their
//! operations carry, through the same readers as a plan: what `apply --plan`
//! checks before applying a saved plan (did anything move?) and confirms
//! after it (does every planned field read back?). Each read is sent once
//! and shared by the changes it covers (a dashboard's sections, widgets,
//! settings and favorite), at most 256 distinct reads held at a time. A
//! dashboard an operation names by name (one the apply creates) is found by
//! name; a named custom integration in the integration listing.

use crate::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, WidgetAddress,
};
use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::Value;

use super::error::ReadError;
use super::{integrations, metric_settings, trends};
use crate::client::{ApiError, Client};
use crate::plan::confirm::{Observed, widget_section};
use crate::plan::{
    Address, DashboardRef, Operation, ResourceChange, RunKind, SectionRef, WidgetRef,
};
use crate::state::{
    Catalog, CustomIntegrationState, DashboardState, IntegrationState, NormMetricSettings,
    TrendsParts,
};

/// How many distinct reads are held at a time.
const READ_CHUNK: usize = 256;

/// What a change's object looks like now.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Its fingerprint, comparable with the change's `live_fingerprint`.
    pub fingerprint: String,
    /// Its comparable form (`None`: it does not exist).
    pub comparable: Option<Value>,
}

/// The read that holds the object a change is about.
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
    NamedDashboard {
        project_id: String,
        log_stream_id: String,
        name: String,
    },
    CustomIntegrations,
    Integration {
        provider: String,
    },
    /// A read of a kind that reads and observes its own changes
    /// (`kinds::OwnRead`).
    Own(crate::kinds::OwnRead),
}

/// What a read returned.
enum Fetched {
    MetricSettings(Option<NormMetricSettings>),
    Dashboard(Option<DashboardState>),
    Integration(Option<IntegrationState>),
    CustomIntegrations(Vec<CustomIntegrationState>),
    Own(crate::kinds::OwnFetched),
}

/// The read of a dashboard an operation names.
fn dashboard_key(project_id: &str, log_stream_id: &str, dashboard: &DashboardRef) -> ReadKey {
    match dashboard {
        DashboardRef::Id(id) => ReadKey::Dashboard {
            project_id: project_id.to_owned(),
            log_stream_id: log_stream_id.to_owned(),
            dashboard_id: Some(id.clone()),
        },
        DashboardRef::Named { named } => ReadKey::NamedDashboard {
            project_id: project_id.to_owned(),
            log_stream_id: log_stream_id.to_owned(),
            name: named.clone(),
        },
    }
}

/// The dashboard the dashboard-content operation `op` is about.
fn content_key(op: &Operation) -> Option<ReadKey> {
    match op {
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
        | Operation::CreateWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        }
        | Operation::UpdateWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        }
        | Operation::DeleteWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        }
        | Operation::UpdateDashboard {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        } => Some(dashboard_key(project_id, log_stream_id, dashboard_id)),
        Operation::Favorite {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        } => Some(ReadKey::Dashboard {
            project_id: project_id.clone(),
            log_stream_id: log_stream_id.clone(),
            dashboard_id: Some(dashboard_id.clone()),
        }),
        Operation::Unfavorite {
            project_id,
            log_stream_id,
            ..
        } => Some(ReadKey::Dashboard {
            project_id: project_id.clone(),
            log_stream_id: log_stream_id.clone(),
            dashboard_id: None,
        }),
        _ => None,
    }
}

/// The read that holds a dashboard change's object: by its id before the
/// plan is applied (unless it is created) and after a deletion; otherwise by
/// its (new) name, since a replacement gets a new id.
fn dashboard_read(change: &ResourceChange, moment: Moment, name: &str) -> Option<ReadKey> {
    let (project_id, log_stream_id) = change.operations.iter().find_map(|op| match op {
        Operation::DuplicateDashboard {
            project_id,
            log_stream_id,
            ..
        }
        | Operation::DeleteDashboard {
            project_id,
            log_stream_id,
            ..
        }
        | Operation::UpdateDashboard {
            project_id,
            log_stream_id,
            ..
        } => Some((project_id, log_stream_id)),
        _ => None,
    })?;
    let by_id = match (lookup_id(change, moment), moment) {
        (Some(id), _) => Some(id),
        (None, Moment::Before) => change.operations.iter().find_map(|op| match op {
            Operation::UpdateDashboard {
                dashboard_id: DashboardRef::Id(id),
                ..
            } => Some(id.as_str()),
            _ => None,
        }),
        (None, Moment::After) => None,
    };
    Some(match by_id {
        Some(id) => ReadKey::Dashboard {
            project_id: project_id.clone(),
            log_stream_id: log_stream_id.clone(),
            dashboard_id: Some(id.to_owned()),
        },
        None => ReadKey::NamedDashboard {
            project_id: project_id.clone(),
            log_stream_id: log_stream_id.clone(),
            name: name.to_owned(),
        },
    })
}

fn read_key(change: &ResourceChange, moment: Moment) -> Option<ReadKey> {
    if crate::reconcile::pending::mentions(change) {
        return None;
    }
    if let Some(own) = crate::kinds::own_read_of(change) {
        return Some(ReadKey::Own(own));
    }
    let first = change.operations.first()?;
    Some(match (&change.address, first) {
        (
            Address::MetricSettings(MetricSettingsAddress { .. }),
            Operation::PatchMetricSettings {
                project_id, run, ..
            },
        ) => ReadKey::MetricSettings {
            project_id: project_id.clone(),
            kind: run.kind,
            run_id: run.id.clone(),
        },
        (
            Address::Section(SectionAddress { .. })
            | Address::Favorite(FavoriteAddress { .. })
            | Address::Widget(WidgetAddress { .. })
            | Address::Settings(SettingsAddress { .. }),
            op,
        ) => content_key(op)?,
        (Address::Dashboard(DashboardAddress { name, .. }), _) => {
            dashboard_read(change, moment, name)?
        }
        (
            Address::Integration(IntegrationAddress { provider }),
            Operation::PutIntegration { .. },
        ) => ReadKey::Integration {
            provider: provider.clone(),
        },
        (Address::CustomIntegration(CustomIntegrationAddress { .. }), _) => {
            ReadKey::CustomIntegrations
        }
        _ => return None,
    })
}

async fn fetch(client: &Client, catalog: &Catalog, key: &ReadKey) -> Result<Fetched, ApiError> {
    Ok(match key {
        ReadKey::Own(key) => Fetched::Own(crate::kinds::own_fetch(client, key).await?),
        ReadKey::MetricSettings {
            project_id,
            kind,
            run_id,
        } => Fetched::MetricSettings(
            metric_settings::read_metric_settings(client, catalog, project_id, *kind, run_id)
                .await?,
        ),
        ReadKey::Dashboard {
            project_id,
            log_stream_id,
            dashboard_id,
        } => Fetched::Dashboard(
            trends::read_dashboard(
                client,
                project_id,
                log_stream_id,
                dashboard_id.as_deref(),
                TrendsParts::ALL,
            )
            .await?,
        ),
        ReadKey::NamedDashboard {
            project_id,
            log_stream_id,
            name,
        } => {
            // The first of that name, the one a plan pairs.
            let ids = trends::find_dashboard_ids(client, project_id, log_stream_id, name).await?;
            match ids.first() {
                None => Fetched::Dashboard(None),
                Some(id) => Fetched::Dashboard(
                    trends::read_dashboard(
                        client,
                        project_id,
                        log_stream_id,
                        Some(id),
                        TrendsParts::ALL,
                    )
                    .await?,
                ),
            }
        }
        ReadKey::CustomIntegrations => {
            Fetched::CustomIntegrations(integrations::list_custom_integrations(client).await?)
        }
        ReadKey::Integration { provider } => {
            Fetched::Integration(client.get_integration(provider).await?)
        }
    })
}

/// When the object is looked for: before the plan is applied (updates and
/// deletes find it by id, creates by name) or after (by name, but a deleted
/// object by its old id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Checking a saved plan before applying it.
    Before,
    /// Confirming after applying.
    After,
}

/// The id an operation of `change` names, if any (updates and deletes).
fn existing_id(change: &ResourceChange) -> Option<&str> {
    change.operations.iter().find_map(|op| match op {
        Operation::UpdateSection {
            section_id: SectionRef::Id(id),
            ..
        }
        | Operation::DeleteSection {
            section_id: SectionRef::Id(id),
            ..
        }
        | Operation::UpdateWidget {
            widget: WidgetRef::Id(id),
            ..
        }
        | Operation::DeleteWidget {
            widget: WidgetRef::Id(id),
            ..
        }
        | Operation::DeleteDashboard {
            dashboard_id: DashboardRef::Id(id),
            ..
        } => Some(id.as_str()),
        _ => None,
    })
}

fn lookup_id(change: &ResourceChange, moment: Moment) -> Option<&str> {
    lookup(change, moment, existing_id(change))
}

/// The id to find `change`'s object by at `moment`, of `existing` (the id
/// its update or delete names): before the plan is applied, and after it
/// for a deletion; `None`: by name (a create, a replacement's new object).
pub(crate) fn lookup<'a>(
    change: &ResourceChange,
    moment: Moment,
    existing: Option<&'a str>,
) -> Option<&'a str> {
    let deleted = change
        .fields
        .iter()
        .any(|f| f.path.is_empty() && f.after.is_none());
    match moment {
        Moment::Before => existing,
        Moment::After if deleted => existing,
        Moment::After => None,
    }
}

fn find<'a, T>(
    items: &'a [T],
    change: &ResourceChange,
    moment: Moment,
    id_of: impl Fn(&T) -> &str,
    name_of: impl Fn(&T) -> &str,
    name: &str,
) -> Option<&'a T> {
    match lookup_id(change, moment) {
        Some(id) => items.iter().find(|t| id_of(t) == id),
        None => items.iter().find(|t| name_of(t) == name),
    }
}

/// The object `change` is about, within what its read returned.
fn observe<'a>(change: &ResourceChange, fetched: &'a Fetched, moment: Moment) -> Observed<'a> {
    match (fetched, &change.address) {
        (Fetched::MetricSettings(s), _) => Observed::MetricSettings(s.as_ref()),
        (Fetched::Dashboard(d), Address::Favorite(FavoriteAddress { .. })) => {
            Observed::Favorite(d.as_ref())
        }
        (Fetched::Dashboard(d), Address::Section(SectionAddress { name, .. })) => {
            let sections = d
                .as_ref()
                .map(|d| d.sections.as_slice())
                .unwrap_or_default();
            Observed::Section(find(sections, change, moment, |s| &s.id, |s| &s.name, name))
        }
        (Fetched::Dashboard(d), Address::Widget(WidgetAddress { section, name, .. })) => {
            let dashboard = d.as_ref();
            let widgets = dashboard.map(DashboardState::widgets).unwrap_or_default();
            let widget = match (lookup_id(change, moment), dashboard) {
                (Some(id), _) => widgets.iter().find(|w| w.id == id),
                (None, Some(d)) => widgets
                    .iter()
                    .find(|w| &w.name == name && widget_section(d, w) == section.as_deref()),
                (None, None) => None,
            };
            Observed::Widget { dashboard, widget }
        }
        (Fetched::Dashboard(d), Address::Settings(SettingsAddress { .. })) => {
            Observed::Settings(d.as_ref())
        }
        (Fetched::Dashboard(d), Address::Dashboard(DashboardAddress { .. })) => {
            Observed::Dashboard(d.as_ref())
        }
        (Fetched::Integration(i), _) => Observed::Integration(i.as_ref()),
        (
            Fetched::CustomIntegrations(all),
            Address::CustomIntegration(CustomIntegrationAddress { name }),
        ) => Observed::CustomIntegration(all.iter().find(|c| &c.name == name)),
        _ => Observed::Section(None),
    }
}

/// Reads the objects `changes` are about, each read sent once; per change,
/// what it looks like now, or the read's error.
pub async fn read_touched(
    client: &Client,
    catalog: &Catalog,
    changes: &[&ResourceChange],
    moment: Moment,
) -> Vec<Result<Observation, ReadError>> {
    // After the apply, the projects and log streams it created are read
    // back by name, so what was planned inside them is read by id.
    let resolved = match moment {
        Moment::After => crate::reconcile::pending::resolve_all(client, changes).await,
        Moment::Before => Vec::new(),
    };
    let key_of: Vec<Option<ReadKey>> = changes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let c = resolved.get(i).and_then(Option::as_ref).unwrap_or(c);
            read_key(c, moment)
        })
        .collect();
    let mut keys: Vec<&ReadKey> = key_of.iter().flatten().collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<Option<Result<Observation, ReadError>>> =
        (0..changes.len()).map(|_| None).collect();
    for chunk in keys.chunks(READ_CHUNK) {
        let reads = chunk.iter().map(|&key| async move {
            let fetched = fetch(client, catalog, key)
                .await
                .map_err(|e| ReadError::new(format!("{key:?}"), e));
            (key, fetched)
        });
        let fetched: BTreeMap<&ReadKey, Result<Fetched, ReadError>> = futures::stream::iter(reads)
            .buffer_unordered(READ_CHUNK)
            .collect()
            .await;
        for ((change, key), slot) in changes.iter().zip(&key_of).zip(out.iter_mut()) {
            let Some(result) = key.as_ref().and_then(|k| fetched.get(k)) else {
                continue;
            };
            *slot = Some(match result {
                Err(e) => Err(ReadError {
                    what: change.address.to_string(),
                    source: e.source.clone(),
                }),
                Ok(Fetched::Own(found)) => {
                    let (fingerprint, comparable) =
                        crate::kinds::own_observe(change, found, moment);
                    Ok(Observation {
                        fingerprint,
                        comparable,
                    })
                }
                Ok(f) => {
                    let observed = observe(change, f, moment);
                    Ok(Observation {
                        fingerprint: observed.fingerprint(),
                        comparable: observed.comparable(change),
                    })
                }
            });
        }
    }
    out.into_iter()
        .zip(changes)
        .map(|(slot, change)| {
            slot.unwrap_or_else(|| {
                Ok(Observation {
                    fingerprint: change.live_fingerprint.clone(),
                    comparable: None,
                })
            })
        })
        .collect()
}
