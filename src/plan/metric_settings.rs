//! Planning metric settings of a log stream or experiment: the declared
//! `scorers` (a set keyed by scorer) and `segment_filters` (ordered) are
//! authoritative; an absent list is left alone.

use super::address::Address;
use super::forecast::{self, RunInput};
use super::normalize::{segment_filters_from_spec, segment_filters_to_wire};
use super::resolve::resolve_scorer;
use super::types::{Action, FieldChange, Operation, RunRef};
use super::{Draft, Planner, fingerprint};
use crate::api::{Compact, MetricSettingsRequest};
use crate::manifest::locate::FieldPath;
use crate::manifest::set::Origin;
use crate::manifest::types::{MetricSettingsSpec, ScorerSpec, TrafficSpec};
use crate::plan::address::MetricSettingsAddress;
use crate::state::metric_settings::ScorerSet;
use crate::state::{NormMetricSettings, ProjectState, RunState};

/// Plans one run's metric settings (`address` names them).
/// `origin` and `field` say where the spec is (`log_streams[0].metric_settings`).
pub(crate) fn plan_metric_settings(
    planner: &mut Planner<'_>,
    (origin, field): (&Origin, &FieldPath),
    live_project: &ProjectState,
    address: Address,
    (run, declared): (&RunState, Option<&TrafficSpec>),
    spec: &MetricSettingsSpec,
) {
    let Address::MetricSettings(MetricSettingsAddress {
        project,
        run_kind,
        run: run_key,
    }) = &address
    else {
        return;
    };
    let run_kind = *run_kind;
    let catalog = planner.catalog;
    let before = run.metric_settings.clone().unwrap_or_default();
    let mut after = before.clone();
    let mut body = MetricSettingsRequest::default();
    // Per scorer, the fields the catalog filled that the manifest did not write.
    let mut filled: Vec<(String, Vec<&'static str>)> = Vec::new();

    if let Some(scorers) = &spec.scorers {
        let mut wanted = ScorerSet::default();
        let mut configs = Vec::new();
        let mut failed = false;
        for (i, scorer) in scorers.iter().enumerate() {
            let scorer_field = field.clone().key("scorers").index(i);
            match resolve_scorer(catalog, scorer) {
                Ok(resolved) => {
                    filled.push((resolved.key.clone(), catalog_filled(scorer)));
                    if wanted.insert(resolved.key.clone(), resolved.norm).is_some() {
                        planner.problem_at(
                            origin,
                            scorer_field,
                            format!(
                                "scorer `{}` is listed twice in {} `{run_key}`",
                                resolved.key,
                                run_kind.as_str()
                            ),
                        );
                        failed = true;
                    }
                    configs.push(resolved.config);
                }
                Err(error) => {
                    planner.problem_at(
                        origin,
                        scorer_field.key(error.field()),
                        format!("{} `{run_key}`: {error}", run_kind.as_str()),
                    );
                    failed = true;
                }
            }
        }
        if failed {
            return;
        }
        if wanted != before.scorers {
            after.scorers = wanted;
            body.scorers = Some(configs);
        }
    }
    if let Some(filters) = &spec.segment_filters {
        let wanted = segment_filters_from_spec(filters);
        if wanted != before.segment_filters {
            body.segment_filters = Some(segment_filters_to_wire(&wanted));
            after.segment_filters = wanted;
        }
    }
    if after == before {
        return;
    }
    let input = RunInput {
        project,
        run_kind,
        run: run_key,
        counted: run.traffic,
        declared,
    };
    let run_forecast = forecast::run_forecast(&input, catalog, &before, &after);
    planner.forecast.push(run_forecast);
    let reason = describe(&before, &after);
    let operation = Operation::PatchMetricSettings {
        project_id: live_project.id.clone(),
        run: RunRef {
            kind: run_kind,
            id: run.id.clone(),
        },
        body: Compact::new(&body),
    };
    let draft = Draft {
        address,
        action: Action::Update,
        reason,
        live_fingerprint: fingerprint::metric_settings(run.metric_settings.as_deref()),
        operations: vec![operation],
    };
    let mut change = draft.change(Some(&before), Some(&after));
    shown_as_written(&mut change.fields, &filled);
    planner.changes.push(change);
}

/// The fields of a scorer that the catalog fills when `spec` does not write
/// them (`scorer_type` always).
fn catalog_filled(spec: &ScorerSpec) -> Vec<&'static str> {
    let mut out = vec!["scorer_type"];
    let unwritten = [
        ("output_type", spec.output_type.is_none()),
        ("input_type", spec.input_type.is_none()),
        ("model_type", spec.model_type.is_none()),
        ("roll_up_method", spec.roll_up_method.is_none()),
    ];
    out.extend(unwritten.iter().filter(|(_, u)| *u).map(|(name, _)| *name));
    out
}

/// An enabled scorer is shown as the manifest wrote it: the fields the
/// catalog filled in (`output_type`, `input_type`, `model_type`,
/// `roll_up_method`, `scorer_type`) are left out of its difference, in every
/// format. They are still sent and compared (a later plan that finds them
/// changed out of band shows them); the confirmation checks the fields a
/// difference holds ([`super::confirm::unconfirmed`]).
fn shown_as_written(fields: &mut [FieldChange], filled: &[(String, Vec<&'static str>)]) {
    for field in fields.iter_mut().filter(|f| f.before.is_none()) {
        let Some((_, unwritten)) = filled
            .iter()
            .find(|(key, _)| field.path == format!("scorers[{key}]"))
        else {
            continue;
        };
        if let Some(serde_json::Value::Object(mut after)) = field.after_value() {
            after.retain(|k, _| !unwritten.contains(&k.as_str()));
            *field = FieldChange::of_refs(
                field.path.clone(),
                None,
                Some(&serde_json::Value::Object(after)),
            );
        }
    }
}

fn describe(before: &NormMetricSettings, after: &NormMetricSettings) -> String {
    let mut parts = Vec::new();
    let added: Vec<&str> = after
        .scorers
        .keys()
        .filter(|k| !before.scorers.contains_key(k))
        .map(String::as_str)
        .collect();
    let removed: Vec<&str> = before
        .scorers
        .keys()
        .filter(|k| !after.scorers.contains_key(k))
        .map(String::as_str)
        .collect();
    let changed: Vec<&str> = after
        .scorers
        .iter()
        .filter(|(k, v)| before.scorers.get(k).is_some_and(|b| b != *v))
        .map(|(k, _)| k.as_str())
        .collect();
    if !added.is_empty() {
        parts.push(format!("enable {}", added.join(", ")));
    }
    if !removed.is_empty() {
        parts.push(format!("disable {}", removed.join(", ")));
    }
    if !changed.is_empty() {
        parts.push(format!("reconfigure {}", changed.join(", ")));
    }
    if before.segment_filters != after.segment_filters {
        parts.push("change `segment_filters`".to_owned());
    }
    parts.join("; ")
}
