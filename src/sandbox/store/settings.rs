//! Metric settings of log streams and experiments (spec operations 1 and 5,
//! and the reference's GET on the same paths).
//!
//! A PATCH replaces `scorers` and/or `segment_filters` when given and keeps
//! the other when it is null or absent; it answers the stored settings.
//! Each scorer must exist in the catalog, with the `scorer_type` the catalog
//! gives it, and a pinned `scorer_version` must be a version of that scorer:
//! otherwise the sandbox answers **422** with the location of the faulty
//! field (`["body","scorers",0,"id"]`, type `value_error`). A 422 (rather than
//! a 404) because the URL names an existing run; it is the body that refers
//! to something missing, and 422 says where.
//!
//! What is stored is the request with the server defaults filled in:
//! [`SERVER_DEFAULTS`] lists them and [`fill_scorer_defaults`] /
//! [`fill_segment_filter_defaults`] apply them. The reconciler mirrors this
//! table to avoid perpetual diffs, so it stays small and explicit.

use serde_json::{Value, json};

use crate::api::{
    LocItem, MetricSettingsRequest, MetricSettingsResponse, ScorerConfig, ScorerFilter,
    SegmentFilter, ValidationError,
};

use super::{ApiError, ScorerRecord, State};

/// Every default the sandbox fills into stored metric settings: (field,
/// rule). Applied by [`fill_scorer_defaults`] and
/// [`fill_segment_filter_defaults`].
pub const SERVER_DEFAULTS: &[(&str, &str)] = &[
    (
        "scorers[].name",
        "always the catalog scorer's name (derived from `id`; a sent name is replaced)",
    ),
    (
        "scorers[].output_type",
        "the catalog scorer's output_type when absent or null",
    ),
    (
        "scorers[].input_type",
        "the catalog scorer's input_type when absent or null",
    ),
    (
        "scorers[].model_type",
        "the catalog scorer's model_type when absent or null",
    ),
    (
        "scorers[].roll_up_method",
        "the catalog scorer's roll_up_method when absent or null",
    ),
    (
        "scorers[].scorer_version",
        "when given: replaced by the catalog's version object of that id; when absent: stays absent (the latest version is used)",
    ),
    (
        "scorers[].filters[] and segment_filters[].filter (node_name)",
        "case_sensitive true when absent",
    ),
    ("segment_filters[].llm_scorers", "false when absent"),
    ("segment_filters[].multimodal_scorers", "false when absent"),
    (
        "segment_filters",
        "null until a PATCH sets it; scorers: [] until a PATCH sets it",
    ),
    (
        "experiment PATCH only: filters without `operator`",
        "`eq` for a string value, `one_of` for a list (see default_missing_operators)",
    ),
];

/// Fills the server defaults of one scorer config from its catalog scorer
/// (see [`SERVER_DEFAULTS`]). `scorer_version`, when set, must already be the
/// canonical catalog object.
pub fn fill_scorer_defaults(config: &mut ScorerConfig, catalog: &ScorerRecord) {
    config.name = Some(catalog.name.clone());
    if config.output_type.is_none() {
        config.output_type.clone_from(&catalog.output_type);
    }
    if config.input_type.is_none() {
        config.input_type.clone_from(&catalog.input_type);
    }
    if config.model_type.is_none() {
        config.model_type.clone_from(&catalog.model_type);
    }
    if config.roll_up_method.is_none() {
        config.roll_up_method.clone_from(&catalog.roll_up_method);
    }
    if let Some(filters) = &mut config.filters {
        filters.iter_mut().for_each(fill_filter_defaults);
    }
}

/// Fills the server defaults of one segment filter (see [`SERVER_DEFAULTS`]).
pub fn fill_segment_filter_defaults(filter: &mut SegmentFilter) {
    filter.llm_scorers.get_or_insert(false);
    filter.multimodal_scorers.get_or_insert(false);
    if let Some(f) = &mut filter.filter {
        fill_filter_defaults(f);
    }
}

fn fill_filter_defaults(filter: &mut ScorerFilter) {
    if let ScorerFilter::NodeName(f) = filter {
        f.case_sensitive.get_or_insert(true);
    }
}

/// The sandbox's reading of spec operation 5's sample, which sends
/// `node_name` filters without `operator` and shows one in its response: on
/// the **experiment** PATCH only, a filter (in `scorers[].filters[]` or
/// `segment_filters[].filter`) that has no `operator` gets `eq` when its
/// `value` is a string and `one_of` when it is a list, before validation.
/// Anything else is left for validation to report. The log stream PATCH
/// requires `operator`, as the schema says.
pub fn default_missing_operators(body: &mut Value) {
    fn fix(filter: &mut Value) {
        let Some(obj) = filter.as_object_mut() else {
            return;
        };
        if obj.contains_key("operator") {
            return;
        }
        let op = match obj.get("value") {
            Some(Value::String(_)) => "eq",
            Some(Value::Array(_)) => "one_of",
            _ => return,
        };
        obj.insert("operator".into(), json!(op));
    }
    if let Some(scorers) = body.get_mut("scorers").and_then(Value::as_array_mut) {
        for scorer in scorers {
            if let Some(filters) = scorer.get_mut("filters").and_then(Value::as_array_mut) {
                filters.iter_mut().for_each(fix);
            }
        }
    }
    if let Some(segs) = body
        .get_mut("segment_filters")
        .and_then(Value::as_array_mut)
    {
        for seg in segs {
            if let Some(f) = seg.get_mut("filter") {
                fix(f);
            }
        }
    }
}

/// Which kind of run a metric settings operation addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// A log stream (operation 1).
    LogStream,
    /// An experiment (operation 5).
    Experiment,
}

fn key(k: &str) -> LocItem {
    LocItem::Key(k.to_owned())
}

impl State {
    /// The metric settings of a run (after its project), or 404.
    fn run_settings(
        &self,
        kind: RunKind,
        project_id: &str,
        run_id: &str,
    ) -> Result<&MetricSettingsResponse, ApiError> {
        Ok(match kind {
            RunKind::LogStream => &self.require_log_stream(project_id, run_id)?.metric_settings,
            RunKind::Experiment => &self.require_experiment(project_id, run_id)?.metric_settings,
        })
    }

    /// [`State::run_settings`], to change them.
    fn settings_mut(
        &mut self,
        kind: RunKind,
        project_id: &str,
        run_id: &str,
    ) -> Result<&mut MetricSettingsResponse, ApiError> {
        self.require_project(project_id)?;
        // By position, so the state file records this run only.
        match kind {
            RunKind::LogStream => {
                let i = self
                    .log_streams
                    .iter()
                    .position(|l| l.id == run_id && l.project_id == project_id)
                    .ok_or_else(|| ApiError::not_found("Log stream"))?;
                Ok(&mut self.log_streams[i].metric_settings)
            }
            RunKind::Experiment => {
                let i = self
                    .experiments
                    .iter()
                    .position(|e| e.id == run_id && e.project_id == project_id)
                    .ok_or_else(|| ApiError::not_found("Experiment"))?;
                Ok(&mut self.experiments[i].metric_settings)
            }
        }
    }

    /// GET metric settings of a log stream or experiment.
    pub fn get_metric_settings(
        &self,
        kind: RunKind,
        project_id: &str,
        run_id: &str,
    ) -> Result<MetricSettingsResponse, ApiError> {
        self.run_settings(kind, project_id, run_id).cloned()
    }

    /// PATCH metric settings (see the module docs).
    pub fn patch_metric_settings(
        &mut self,
        kind: RunKind,
        project_id: &str,
        run_id: &str,
        request: MetricSettingsRequest,
    ) -> Result<MetricSettingsResponse, ApiError> {
        // 404s first: the path names the run.
        self.run_settings(kind, project_id, run_id)?;
        let scorers = match request.scorers {
            Some(configs) => Some(self.resolve_scorers(configs)?),
            None => None,
        };
        let segment_filters = request.segment_filters.map(|mut filters| {
            filters.iter_mut().for_each(fill_segment_filter_defaults);
            filters
        });
        let settings = self.settings_mut(kind, project_id, run_id)?;
        if let Some(scorers) = scorers {
            settings.scorers = scorers;
        }
        if let Some(filters) = segment_filters {
            settings.segment_filters = Some(filters);
        }
        Ok(settings.clone())
    }

    /// Checks every scorer config against the catalog (all faults reported
    /// together) and fills the server defaults.
    fn resolve_scorers(&self, configs: Vec<ScorerConfig>) -> Result<Vec<ScorerConfig>, ApiError> {
        let mut errors = Vec::new();
        let mut resolved = Vec::with_capacity(configs.len());
        for (i, mut config) in configs.into_iter().enumerate() {
            let at = |field: &[&str]| {
                let mut loc = vec![key("body"), key("scorers"), LocItem::Index(i as i64)];
                loc.extend(field.iter().map(|f| key(f)));
                loc
            };
            let Some(catalog) = self.scorer(&config.id) else {
                errors.push(ValidationError::value_error(
                    at(&["id"]),
                    Some(json!(config.id)),
                    &format!("no scorer with id {} exists", config.id),
                ));
                continue;
            };
            if config.scorer_type != catalog.scorer_type {
                errors.push(ValidationError::value_error(
                    at(&["scorer_type"]),
                    Some(json!(config.scorer_type.as_str())),
                    &format!(
                        "scorer {} has scorer_type {}, not {}",
                        catalog.name, catalog.scorer_type, config.scorer_type
                    ),
                ));
            }
            if let Some(pinned) = &config.scorer_version {
                match catalog.versions.iter().find(|v| v.version.id == pinned.id) {
                    Some(v) if pinned.scorer_id == catalog.id => {
                        config.scorer_version = Some(Box::new(v.version.clone()));
                    }
                    Some(_) => errors.push(ValidationError::value_error(
                        at(&["scorer_version", "scorer_id"]),
                        Some(json!(pinned.scorer_id)),
                        &format!("scorer_version.scorer_id must be {}", catalog.id),
                    )),
                    None => errors.push(ValidationError::value_error(
                        at(&["scorer_version", "id"]),
                        Some(json!(pinned.id)),
                        &format!(
                            "scorer {} has no version with id {}",
                            catalog.name, pinned.id
                        ),
                    )),
                }
            }
            fill_scorer_defaults(&mut config, catalog);
            resolved.push(config);
        }
        if errors.is_empty() {
            Ok(resolved)
        } else {
            Err(ApiError::invalid(errors))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_operators_default_by_value_shape() {
        let mut body = json!({
            "scorers": [{"id": "x", "scorer_type": "preset", "filters": [
                {"name": "node_name", "value": "llm", "case_sensitive": true},
                {"name": "node_name", "value": ["a", "b"]},
                {"name": "node_name", "operator": "ne", "value": "c"},
                {"name": "node_name", "value": 3}
            ]}],
            "segment_filters": [{"sample_rate": 0.5, "filter": {"name": "metadata", "key": "k", "value": "v"}}]
        });
        default_missing_operators(&mut body);
        let f = &body["scorers"][0]["filters"];
        assert_eq!(f[0]["operator"], "eq");
        assert_eq!(f[1]["operator"], "one_of");
        assert_eq!(f[2]["operator"], "ne");
        assert!(f[3].get("operator").is_none());
        assert_eq!(body["segment_filters"][0]["filter"]["operator"], "eq");
    }
}
