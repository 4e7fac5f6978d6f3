//! The fingerprint of the live object a change is about, as it was read: a
//! saved plan records it, and `apply --plan` reads the object again and
//! refuses to apply when the fingerprint moved. Both sides build it with
//! these functions from the same state types, so they cannot disagree.

use serde::Serialize;
use serde_json::Value;

use super::trends::{NormDashboard, NormSettings};
use crate::state::{
    CustomIntegrationState, DashboardState, IntegrationState, NormMetricSettings, SectionState,
    SettingsState, WidgetState,
};

/// The comparable favorite state of a dashboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FavoriteState {
    /// Whether the dashboard is favorited.
    pub favorited: bool,
}

impl FavoriteState {
    /// The favorite state of a live dashboard.
    pub fn of(dashboard: &DashboardState) -> Self {
        FavoriteState {
            favorited: dashboard.is_favorited,
        }
    }
}

pub use crate::api::fingerprint::fingerprint;

/// The fingerprint of any live object as read (`None`: absent), for a kind
/// whose fingerprint is its reduced state as is.
pub fn of<T: Serialize>(value: Option<&T>) -> String {
    let json = value.map(|v| serde_json::to_value(v).unwrap_or(Value::Null));
    fingerprint(json.as_ref())
}

/// A run's metric settings (a run the service returned none for reads as the defaults).
pub fn metric_settings(settings: Option<&NormMetricSettings>) -> String {
    of(Some(settings.cloned().unwrap_or_default()).as_ref())
}

/// A section (`None`: there is none of that id or name).
pub fn section(section: Option<&SectionState>) -> String {
    of(section)
}

/// A widget (`None`: there is none of that id or name).
pub fn widget(widget: Option<&WidgetState>) -> String {
    of(widget)
}

/// A dashboard's settings, as compared.
pub fn settings(settings: Option<&SettingsState>) -> String {
    of(settings.map(NormSettings::from_state).as_ref())
}

/// A dashboard's identity: name, visibility, description (`None`: there is
/// none of that id or name).
pub fn dashboard(dashboard: Option<&DashboardState>) -> String {
    of(dashboard.map(NormDashboard::from_state).as_ref())
}

/// A named custom integration: whether the listing shows it.
pub fn custom_integration(integration: Option<&CustomIntegrationState>) -> String {
    of(integration)
}

/// The favorite state of a dashboard.
pub fn favorite(dashboard: &DashboardState) -> String {
    of(Some(&FavoriteState::of(dashboard)))
}

/// An integration (`None`: the caller has none with that provider).
pub fn integration(integration: Option<&IntegrationState>) -> String {
    of(integration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_are_stable_and_distinguish() {
        let a = json!({"a": 1});
        assert_eq!(fingerprint(Some(&a)), fingerprint(Some(&json!({"a": 1}))));
        assert_ne!(fingerprint(Some(&a)), fingerprint(Some(&json!({"a": 2}))));
        assert_eq!(fingerprint(None), "absent");
        assert_eq!(
            metric_settings(None),
            metric_settings(Some(&NormMetricSettings::default()))
        );
    }
}
