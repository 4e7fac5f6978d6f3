//! The live object each change is about, as it is observed when a saved plan
//! is checked before it is applied and confirmed after: its fingerprint (did
//! it move since the plan was made?) and its comparable form (does it now
//! hold the values the change planned?).
//!
//! A plan made from manifests is confirmed by planning again against the
//! same manifests (`crate::reconcile`); a saved plan carries no manifests, so
//! it is confirmed field by field: each planned field must read back as
//! planned, which is planning again against the desired state the saved
//! plan's fields describe.

use crate::plan::address::{CustomIntegrationAddress, IntegrationAddress, MetricSettingsAddress};
use serde::Serialize;
use serde_json::Value;

use super::diff::values_by_path;
use super::fingerprint::{self, FavoriteState};
use super::integrations::{NormIntegration, shown};
use super::normalize::NormSection;
use super::trends::{NormDashboard, NormSettings, NormWidget};
use super::types::{FieldChange, Operation, ResourceChange};
use crate::state::integrations::declared_fields;
use crate::state::{
    CustomIntegrationState, DashboardState, IntegrationState, NormMetricSettings, SectionState,
    WidgetState,
};

/// The live object a change is about, as read (`None`: it does not exist).
#[derive(Debug, Clone, Copy)]
pub enum Observed<'a> {
    /// A run's metric settings (`None`: the service returned none).
    MetricSettings(Option<&'a NormMetricSettings>),
    /// A section, found by id (updates, deletes) or by name (creates).
    Section(Option<&'a SectionState>),
    /// The dashboard whose favorite state is changed.
    Favorite(Option<&'a DashboardState>),
    /// The caller's integration with a provider.
    Integration(Option<&'a IntegrationState>),
    /// A widget, found by id (updates, deletes) or by name in its section
    /// (creates), with the dashboard it is in (for its section's name).
    Widget {
        /// The dashboard read.
        dashboard: Option<&'a DashboardState>,
        /// The widget.
        widget: Option<&'a WidgetState>,
    },
    /// The dashboard whose settings are changed.
    Settings(Option<&'a DashboardState>),
    /// A dashboard other than a log stream's default one.
    Dashboard(Option<&'a DashboardState>),
    /// A named custom integration, as the listing shows it.
    CustomIntegration(Option<&'a CustomIntegrationState>),
}

/// The name of the section a widget is in (`None`: the top level).
pub fn widget_section<'a>(dashboard: &'a DashboardState, widget: &WidgetState) -> Option<&'a str> {
    widget
        .section_id
        .as_deref()
        .and_then(|id| dashboard.section(id))
        .map(|s| s.name.as_str())
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl Observed<'_> {
    /// Its fingerprint, as the planner computed it from the same object.
    pub fn fingerprint(&self) -> String {
        match *self {
            Observed::MetricSettings(s) => fingerprint::metric_settings(s),
            Observed::Section(s) => fingerprint::section(s),
            Observed::Favorite(Some(d)) => fingerprint::favorite(d),
            Observed::Favorite(None) => fingerprint::fingerprint(None),
            Observed::Integration(i) => fingerprint::integration(i),
            Observed::Widget { widget, .. } => fingerprint::widget(widget),
            Observed::Settings(d) => fingerprint::settings(d.and_then(|d| d.settings.as_ref())),
            Observed::Dashboard(d) => fingerprint::dashboard(d),
            Observed::CustomIntegration(c) => fingerprint::custom_integration(c),
        }
    }

    /// Its comparable form, the shape `change`'s field paths point into.
    pub fn comparable(&self, change: &ResourceChange) -> Option<Value> {
        match *self {
            Observed::MetricSettings(s) => Some(json(&s.cloned().unwrap_or_default())),
            Observed::Section(s) => s.map(|s| json(&NormSection::from_state(s))),
            Observed::Favorite(d) => d.map(|d| json(&FavoriteState::of(d))),
            Observed::Widget { dashboard, widget } => dashboard
                .zip(widget)
                .map(|(d, w)| json(&NormWidget::from_state(w, widget_section(d, w)))),
            Observed::Settings(d) => d
                .and_then(|d| d.settings.as_ref())
                .map(|s| json(&NormSettings::from_state(s))),
            Observed::Dashboard(d) => d.map(|d| json(&NormDashboard::from_state(d))),
            // Only that it exists can be read back: its name and provider.
            Observed::CustomIntegration(c) => {
                c.map(|c| serde_json::json!({"name": c.name, "provider": "custom"}))
            }
            Observed::Integration(i) => i.map(|live| {
                let declared = change
                    .operations
                    .iter()
                    .find_map(|op| match op {
                        Operation::PutIntegration { body } => Some(body.public_fields()),
                        _ => None,
                    })
                    .unwrap_or_default();
                // Shown as the planner shows it (no secret value); a value taken
                // from the environment cannot be compared here, where the saved
                // plan holds only its `${NAME}` text.
                let env = shown::unknown_env(&declared);
                json(&NormIntegration {
                    provider: live.provider.as_str().to_owned(),
                    fields: shown::live(&declared_fields(live, &declared), &declared, &env),
                })
            }),
        }
    }
}

/// The fields of `change` that `now` (the object's comparable form, read
/// after the apply) does not hold as planned: `before` is what the plan
/// wanted, `after` what live holds. Empty: the change is confirmed.
///
/// An integration's fields that the service does not return cannot be read
/// back, so they are not checked (of a named custom integration, only its
/// name and provider can be).
pub fn unconfirmed(change: &ResourceChange, now: Option<&Value>) -> Vec<FieldChange> {
    let integration = matches!(
        change.address,
        super::Address::Integration(IntegrationAddress { .. })
            | super::Address::CustomIntegration(CustomIntegrationAddress { .. })
    );
    let is_metric_settings = matches!(
        change.address,
        super::Address::MetricSettings(MetricSettingsAddress { .. })
    );
    let values = now.map(|v| values_by_path(v, change.address.keyed_sets()));
    let mut out = Vec::new();
    for field in &change.fields {
        let live = values.as_ref().and_then(|v| v.get(&field.path).copied());
        let after = field.after_value();
        let wanted = match (after, live, integration) {
            // A whole integration: only what the service returns.
            (Some(Value::Object(mut after)), Some(Value::Object(live)), true) => {
                after.retain(|k, _| k == "provider" || live.contains_key(k));
                Some(Value::Object(after))
            }
            (Some(_), None, true) if now.is_some() => continue,
            // An enabled scorer is shown without the fields the catalog
            // filled in: those it holds are checked.
            (Some(Value::Object(after)), Some(Value::Object(live)), false)
                if is_metric_settings && field.before.is_none() =>
            {
                if after.iter().all(|(k, v)| live.get(k) == Some(v)) {
                    continue;
                }
                Some(Value::Object(after))
            }
            (after, _, _) => after,
        };
        if wanted.as_ref() != live {
            out.push(FieldChange::of_refs(
                field.path.clone(),
                wanted.as_ref(),
                live,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::address::SectionAddress;
    use crate::plan::{Action, Address, RunKind};
    use serde_json::json;

    fn change(fields: Vec<FieldChange>) -> ResourceChange {
        ResourceChange {
            address: Address::MetricSettings(MetricSettingsAddress {
                project: "p".into(),
                run_kind: RunKind::LogStream,
                run: "r".into(),
            }),
            action: Action::Update,
            reason: String::new(),
            fields,
            live_fingerprint: String::new(),
            operations: Vec::new(),
            warnings: Vec::new(),
            created_by: None,
            attribution: None,
        }
    }

    #[test]
    fn planned_fields_that_read_back_are_confirmed_and_others_are_not() {
        let planned = change(vec![FieldChange::new(
            "scorers[bleu].num_judges",
            Some(json!(1)),
            Some(json!(3)),
        )]);
        let now = json!({"scorers": {"bleu": {"num_judges": 3}}, "segment_filters": [{"sample_rate": 1}]});
        assert!(unconfirmed(&planned, Some(&now)).is_empty());
        let now = json!({"scorers": {"bleu": {"num_judges": 2}}});
        let left = unconfirmed(&planned, Some(&now));
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].before_value(), Some(json!(3)));
        assert_eq!(left[0].after_value(), Some(json!(2)));
    }

    #[test]
    fn a_concurrent_change_to_another_field_is_not_a_failure() {
        let planned = change(vec![FieldChange::new(
            "scorers[bleu]",
            None,
            Some(json!({"scorer_type": "preset"})),
        )]);
        let now = json!({"scorers": {"bleu": {"scorer_type": "preset"}}, "segment_filters": [{"sample_rate": 0.5}]});
        assert!(unconfirmed(&planned, Some(&now)).is_empty());
    }

    #[test]
    fn a_deletion_is_confirmed_when_the_object_is_gone() {
        let mut planned = change(vec![FieldChange::new("", Some(json!({"name": "x"})), None)]);
        planned.address = Address::Section(SectionAddress {
            project: "p".into(),
            log_stream: "l".into(),
            dashboard: None,
            name: "x".into(),
        });
        assert!(unconfirmed(&planned, None).is_empty());
        assert_eq!(unconfirmed(&planned, Some(&json!({"name": "x"}))).len(), 1);
    }
}
