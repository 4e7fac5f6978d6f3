//! The scorer catalog: POST `/v2/scorers/list` (filters `name` —
//! case-insensitive unless `case_sensitive: true` —, `scorer_type`, `id`,
//! `is_global`, `model_type`; the reference's other filters are accepted and
//! ignored; sorted by name), GET a scorer, its versions (paginated) and one
//! version by number, and spec operation 6: the projects using a scorer
//! version.
//!
//! A run uses a version when one of its scorer configs names the version's
//! scorer and either pins that version or pins none while it is the scorer's
//! latest ("when omitted, the latest version is used").

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::{FilterValue, Operator, Scorer, ScorerConfig};

use super::projects::listing;
use super::search::match_str;
use super::users::permissions;
use super::{
    ApiError, ProjectRecord, ScorerRecord, State, UserRecord, VersionRecord, paginate, to_json,
};

/// The actions listed in a scorer's `permissions`.
const SCORER_ACTIONS: &[&str] = &["update", "delete"];

/// A filter of the scorer listing.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum ScorerListFilter {
    /// By name (case-insensitive by default).
    Name {
        /// Operator.
        operator: Operator,
        /// Value(s).
        value: FilterValue,
        /// Case sensitivity (default false).
        #[serde(default)]
        case_sensitive: Option<bool>,
    },
    /// By scorer type.
    ScorerType {
        /// Operator.
        operator: Operator,
        /// Value(s).
        value: FilterValue,
    },
    /// By id (operator default `eq`).
    Id {
        /// Operator.
        #[serde(default)]
        operator: Option<Operator>,
        /// Value(s).
        value: FilterValue,
    },
    /// By whether the scorer is global.
    IsGlobal {
        /// `eq` (default) or `ne`.
        #[serde(default)]
        operator: Option<Operator>,
        /// The value.
        value: bool,
    },
    /// By model type.
    ModelType {
        /// Operator.
        operator: Operator,
        /// Value(s).
        value: FilterValue,
    },
    /// A filter of the reference the sandbox does not evaluate (matches all).
    #[serde(other)]
    Other,
}

/// Body of POST `/v2/scorers/list`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ScorerListRequest {
    /// Filters, all of which must match.
    #[serde(default)]
    pub filters: Vec<ScorerListFilter>,
}

fn matches(s: &ScorerRecord, f: &ScorerListFilter) -> bool {
    match f {
        ScorerListFilter::Name {
            operator,
            value,
            case_sensitive,
        } => match_str(&s.name, operator, value, case_sensitive.unwrap_or(false)),
        ScorerListFilter::ScorerType { operator, value } => {
            match_str(s.scorer_type.as_str(), operator, value, true)
        }
        ScorerListFilter::Id { operator, value } => match_str(
            &s.id,
            operator.as_ref().unwrap_or(&Operator::Eq),
            value,
            true,
        ),
        ScorerListFilter::IsGlobal { operator, value } => match operator {
            Some(Operator::Ne) => s.is_global != *value,
            _ => s.is_global == *value,
        },
        ScorerListFilter::ModelType { operator, value } => s
            .model_type
            .as_ref()
            .is_some_and(|m| match_str(m.as_str(), operator, value, true)),
        ScorerListFilter::Other => true,
    }
}

/// A config uses `version` of `scorer` (see the module docs).
fn uses(config: &ScorerConfig, scorer: &ScorerRecord, version_id: &str, is_latest: bool) -> bool {
    config.id == scorer.id
        && match &config.scorer_version {
            Some(v) => v.id == version_id,
            None => is_latest,
        }
}

impl State {
    /// The `ScorerResponse` of a catalog scorer.
    pub fn scorer_shape(&self, s: &ScorerRecord, caller: &UserRecord) -> Scorer {
        let latest = s.latest().map(|v| v.version.clone());
        let default_version = s
            .default_version_id
            .as_ref()
            .and_then(|id| s.versions.iter().find(|v| &v.version.id == id))
            .map(|v| v.version.clone());
        Scorer {
            id: s.id.clone(),
            name: s.name.clone(),
            scorer_type: s.scorer_type.clone(),
            permissions: if s.is_global {
                Vec::new()
            } else {
                permissions(caller, SCORER_ACTIONS)
            },
            defaults: s.defaults.clone(),
            latest_version: latest,
            model_type: s.model_type.clone(),
            ground_truth: s.ground_truth,
            default_version_id: s.default_version_id.clone(),
            default_version,
            scoreable_node_types: s.scoreable_node_types.clone(),
            output_type: s.output_type.clone(),
            input_type: s.input_type.clone(),
            multimodal_capabilities: s.multimodal_capabilities.clone(),
            deprecated: s.deprecated,
            roll_up_method: s.roll_up_method.clone(),
            label: s.label.clone(),
            tags: s.tags.clone(),
            included_fields: Vec::new(),
            description: s.description.clone(),
            created_by: s.created_by.clone(),
            created_at: Some(s.created_at.clone()),
            updated_at: Some(s.updated_at.clone()),
            is_global: s.is_global,
        }
    }

    /// POST `/v2/scorers/list` (`ListScorersResponse`), sorted by name.
    pub fn list_scorers(
        &self,
        request: &ScorerListRequest,
        caller: &UserRecord,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let mut found: Vec<&ScorerRecord> = self
            .scorers
            .iter()
            .filter(|s| request.filters.iter().all(|f| matches(s, f)))
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        let (page, fields) = paginate(&found, starting_token, limit);
        let scorers = page
            .iter()
            .map(|s| to_json(&self.scorer_shape(s, caller)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Value::Object(fields.with_items("scorers", scorers)))
    }

    /// GET `/v2/scorers/{scorer_id}`.
    pub fn get_scorer(&self, id: &str, caller: &UserRecord) -> Result<Value, ApiError> {
        let s = self.require_scorer(id)?;
        to_json(&self.scorer_shape(s, caller))
    }

    /// GET `/v2/scorers/{scorer_id}/versions` (`ListScorerVersionsResponse`),
    /// newest first.
    pub fn list_scorer_versions(
        &self,
        id: &str,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let s = self.require_scorer(id)?;
        let mut versions: Vec<&VersionRecord> = s.versions.iter().collect();
        versions.sort_by_key(|v| std::cmp::Reverse(v.version.version));
        let (page, fields) = paginate(&versions, starting_token, limit);
        let versions = page.iter().map(|v| version_response(s, v)).collect();
        Ok(Value::Object(fields.with_items("versions", versions)))
    }

    /// GET `/v2/scorers/{scorer_id}/version?version=`: that version number,
    /// or the latest when none is given.
    pub fn get_scorer_version(&self, id: &str, number: Option<i64>) -> Result<Value, ApiError> {
        let s = self.require_scorer(id)?;
        let v = match number {
            Some(n) => s.versions.iter().find(|v| v.version.version == n),
            None => s.latest(),
        }
        .ok_or_else(|| ApiError::not_found("Scorer version"))?;
        Ok(version_response(s, v))
    }

    /// GET `/v2/scorers/versions/{scorer_version_id}/projects` (spec
    /// operation 6): the projects with a run using that version, by name.
    pub fn scorer_version_projects(
        &self,
        version_id: &str,
        caller: &UserRecord,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let (scorer, is_latest) = self
            .scorers
            .iter()
            .find_map(|s| {
                s.versions
                    .iter()
                    .find(|v| v.version.id == version_id)
                    .map(|v| {
                        let latest = s.latest().is_some_and(|l| l.version.id == v.version.id);
                        (s, latest)
                    })
            })
            .ok_or_else(|| ApiError::not_found("Scorer version"))?;
        let uses_it = |configs: &[ScorerConfig]| {
            configs
                .iter()
                .any(|c| uses(c, scorer, version_id, is_latest))
        };
        let using: HashSet<&str> = self
            .log_streams
            .iter()
            .filter(|l| uses_it(&l.metric_settings.scorers))
            .map(|l| l.project_id.as_str())
            .chain(
                self.experiments
                    .iter()
                    .filter(|e| uses_it(&e.metric_settings.scorers))
                    .map(|e| e.project_id.as_str()),
            )
            .collect();
        let mut projects: Vec<&ProjectRecord> = self
            .projects
            .iter()
            .filter(|p| using.contains(p.id.as_str()))
            .collect();
        projects.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        let total = projects.len();
        let (page, fields) = paginate(&projects, starting_token, limit);
        let counts = self.run_counts();
        let items = page
            .iter()
            .map(|p| to_json(&self.project_item(p, caller, false, &counts)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(listing(items, total, &fields))
    }
}

/// The `BaseScorerVersionResponse` of a version.
pub fn version_response(s: &ScorerRecord, v: &VersionRecord) -> Value {
    let by = v.created_by.clone().or_else(|| s.created_by.clone());
    let stamp = |mut obj: Value| {
        if let Some(map) = obj.as_object_mut() {
            map.insert("created_at".into(), json!(v.created_at));
            map.insert("updated_at".into(), json!(v.updated_at));
            map.insert("created_by".into(), json!(by));
        }
        obj
    };
    let ver = &v.version;
    let node_types = ver
        .scoreable_node_types
        .clone()
        .or_else(|| s.scoreable_node_types.clone())
        .unwrap_or_else(|| vec!["llm".to_owned()]);
    let generated = ver.generated_scorer.as_ref().map(|g| {
        let mut obj = stamp(serde_json::to_value(g).unwrap_or(Value::Null));
        if let Some(map) = obj.as_object_mut() {
            map.insert("scoreable_node_types".into(), json!(node_types));
            map.insert(
                "scorer_configuration".into(),
                json!({
                    "model_alias": ver.model_name.clone().unwrap_or_else(|| "gpt-4.1-mini".into()),
                    "num_judges": ver.num_judges.unwrap_or(3),
                    "output_type": ver.output_type.as_ref().map_or("boolean", |o| o.as_str()),
                    "scoreable_node_types": node_types,
                    "cot_enabled": ver.cot_enabled.unwrap_or(false),
                    "ground_truth": s.ground_truth.unwrap_or(false),
                }),
            );
        }
        obj
    });
    let registered = ver.registered_scorer.as_ref().map(|r| {
        let mut obj = stamp(serde_json::to_value(r).unwrap_or(Value::Null));
        if let Some(map) = obj.as_object_mut() {
            map.entry("score_type").or_insert(Value::Null);
            map.insert("data_type".into(), Value::Null);
            map.insert("scoreable_node_types".into(), json!(node_types));
        }
        obj
    });
    let finetuned = ver
        .finetuned_scorer
        .as_ref()
        .map(|f| stamp(serde_json::to_value(f).unwrap_or(Value::Null)));
    json!({
        "id": ver.id,
        "version": ver.version,
        "scorer_id": ver.scorer_id,
        "generated_scorer": generated,
        "registered_scorer": registered,
        "finetuned_scorer": finetuned,
        "model_name": ver.model_name,
        "num_judges": ver.num_judges,
        "scoreable_node_types": ver.scoreable_node_types,
        "cot_enabled": ver.cot_enabled,
        "output_type": ver.output_type.as_ref().map(|o| o.as_str()),
        "input_type": ver.input_type.as_ref().map(|o| o.as_str()),
        "created_at": v.created_at,
        "updated_at": v.updated_at,
        "chain_poll_template": ver.generated_scorer.as_ref().map(|g| &g.chain_poll_template),
        "allowed_model": true,
        "created_by": by,
    })
}
