//! Custom scorers, as the service keeps them: POST `/v2/scorers` (a scorer
//! with no version yet), PATCH (metadata and the pinned
//! `default_version_id`; never a version's definition), DELETE (refused
//! while metric settings use the scorer), the scope (`PUT …/scope`: global,
//! or exactly a list of projects), the tags of the catalog, the projects a
//! scorer is shared with, and the versions.
//!
//! Versions are append-only and immutable: each create (`…/version/llm`,
//! `…/version/code`, `…/version/preset`) or restore (`…/versions/{n}/restore`,
//! a new version copying version `n`) appends version `max + 1`; the highest
//! is `latest_version`; `default_version_id` pins one and is kept when later
//! versions are added. A version's kind must match the scorer's
//! `scorer_type` (422 otherwise).
//!
//! Names are unique in the organization: a create or rename to a name in
//! use is a 409 (as the sandbox answers every duplicate name). Writes run
//! under the state's one lock, so of two concurrent creates of one name
//! exactly one succeeds. Preset (global, service-made) scorers are
//! read-only: PATCH, DELETE and scope changes of them are a 403.
//!
//! A scorer is in use while a log stream's or experiment's metric settings
//! name it. DELETE of such a scorer is refused with a 422 (the only error
//! the reference documents for the operation) whose one `value_error` at
//! `["path","scorer_id"]` names every user in `msg` and lists them in
//! `ctx.used_by` (`{project, log_stream}` or `{project, experiment}` by
//! name).
//!
//! Code versions need a completed, passing validation of the same file: see
//! [`code`].

pub mod code;
pub mod multipart;
pub mod routes;
pub mod versions;

pub use code::CodeValidationRecord;
pub use versions::NewVersion;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::api::{
    InputType, ModelType, MultimodalCapability, OutputType, RollUpMethod, ScorerDefaults,
    ScorerType,
};
use crate::sandbox::fingerprint::new_id;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::projects::listing;
use crate::sandbox::store::{
    ProjectRecord, ScorerRecord, State, UserRecord, now, paginate, to_json,
};

use super::refuse;

/// The body of POST `/v2/scorers` (`CreateScorerRequest`), as stored.
#[derive(Debug, Clone, Deserialize)]
pub struct CreateScorer {
    /// Name (unique).
    pub name: String,
    /// An id chosen by the caller.
    #[serde(default)]
    pub id: Option<String>,
    /// Display label.
    #[serde(default)]
    pub label: Option<String>,
    /// Description (default empty).
    #[serde(default)]
    pub description: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Configuration defaults.
    #[serde(default)]
    pub defaults: Option<ScorerDefaults>,
    /// Kind.
    pub scorer_type: ScorerType,
    /// Deprecated.
    #[serde(default)]
    pub deprecated: Option<bool>,
    /// Model tier.
    #[serde(default)]
    pub model_type: Option<ModelType>,
    /// Ground truth used.
    #[serde(default)]
    pub ground_truth: Option<bool>,
    /// Pinned version (none exists yet: must be null).
    #[serde(default)]
    pub default_version_id: Option<String>,
    /// Node types.
    #[serde(default)]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Output type.
    #[serde(default)]
    pub output_type: Option<OutputType>,
    /// Input type.
    #[serde(default)]
    pub input_type: Option<InputType>,
    /// Multimodal capabilities.
    #[serde(default)]
    pub multimodal_capabilities: Option<Vec<MultimodalCapability>>,
    /// Roll-up display.
    #[serde(default)]
    pub roll_up_method: Option<RollUpMethod>,
    /// Global (default: when no project is named).
    #[serde(default)]
    pub is_global: Option<bool>,
    /// The projects of a scoped scorer.
    #[serde(default)]
    pub project_ids: Vec<String>,
}

/// 404 for an unknown scorer.
fn not_found() -> ApiError {
    ApiError::not_found("Scorer")
}

fn canonical(id: &str) -> String {
    id.to_ascii_lowercase()
}

fn name_taken(name: &str) -> ApiError {
    ApiError::Conflict(format!("A scorer named {name:?} already exists"))
}

/// 403 for a change of a preset (global, service-made) scorer.
fn read_only_preset(s: &ScorerRecord) -> Result<(), ApiError> {
    if s.scorer_type == ScorerType::Preset && s.created_by.is_none() {
        return Err(ApiError::Forbidden(format!(
            "Preset scorer {:?} cannot be changed",
            s.name
        )));
    }
    Ok(())
}

/// Where a scorer is used: `(project, "log_stream" | "experiment", run)` by name.
type Use = (String, &'static str, String);

impl State {
    fn scorer_index(&self, id: &str) -> Result<usize, ApiError> {
        self.scorers
            .iter()
            .position(|s| s.id == id)
            .ok_or_else(not_found)
    }

    /// The projects named by a scope, in order, or a 404.
    fn scope_projects(&self, ids: &[String]) -> Result<Vec<String>, ApiError> {
        let mut out: Vec<String> = Vec::new();
        for id in ids {
            let id = canonical(id);
            self.require_project(&id)?;
            if !out.contains(&id) {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// POST `/v2/scorers`: a scorer with no version (see the module docs).
    pub fn create_custom_scorer(
        &mut self,
        request: CreateScorer,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        if self.scorers.iter().any(|s| s.name == request.name) {
            return Err(name_taken(&request.name));
        }
        let id = request.id.as_deref().map_or_else(new_id, canonical);
        if self.scorer(&id).is_some() {
            return Err(ApiError::Conflict(format!(
                "A scorer with id {id} already exists"
            )));
        }
        if let Some(v) = &request.default_version_id {
            return Err(refuse(
                &["body", "default_version_id"],
                Some(json!(v)),
                "a new scorer has no version to pin yet",
            ));
        }
        let project_ids = self.scope_projects(&request.project_ids)?;
        let is_global = request.is_global.unwrap_or(project_ids.is_empty());
        if is_global && !project_ids.is_empty() {
            return Err(refuse(
                &["body", "project_ids"],
                Some(json!(project_ids)),
                "a global scorer takes no project_ids",
            ));
        }
        let ts = now();
        let record = ScorerRecord {
            id,
            name: request.name,
            scorer_type: request.scorer_type,
            description: Some(request.description.unwrap_or_default()),
            label: request.label,
            tags: request.tags,
            model_type: request.model_type,
            output_type: request.output_type,
            input_type: request.input_type,
            roll_up_method: request.roll_up_method,
            multimodal_capabilities: request.multimodal_capabilities,
            scoreable_node_types: request.scoreable_node_types,
            defaults: request.defaults,
            is_global,
            deprecated: request.deprecated,
            ground_truth: request.ground_truth,
            created_by: Some(caller.id.clone()),
            created_at: ts.clone(),
            updated_at: ts,
            versions: Vec::new(),
            default_version_id: None,
            project_ids: if is_global { Vec::new() } else { project_ids },
        };
        let out = to_json(&self.scorer_shape(&record, caller))?;
        self.scorers.push(record);
        Ok(out)
    }

    /// PATCH `/v2/scorers/{scorer_id}`: the fields present in `changes`
    /// (`UpdateScorerRequest`, validated); a `null` clears. A name in use is
    /// a 409; `default_version_id` must be a version of this scorer.
    pub fn update_custom_scorer(
        &mut self,
        id: &str,
        changes: Map<String, Value>,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.scorer_index(id)?;
        read_only_preset(&self.scorers[i])?;
        let field = |k: &str| changes.get(k).cloned();
        if let Some(Value::String(name)) = field("name")
            && self.scorers.iter().any(|s| s.name == name && s.id != id)
        {
            return Err(name_taken(&name));
        }
        if let Some(Value::String(v)) = field("default_version_id")
            && !self.scorers[i]
                .versions
                .iter()
                .any(|r| r.version.id == canonical(&v))
        {
            return Err(refuse(
                &["body", "default_version_id"],
                Some(json!(v)),
                "not a version of this scorer",
            ));
        }
        let s = &mut self.scorers[i];
        for (key, value) in changes {
            let v = (!value.is_null()).then_some(value);
            match key.as_str() {
                "name" => {
                    if let Some(n) = de::<String>(v)? {
                        s.name = n;
                    }
                }
                "description" => s.description = de(v)?,
                "tags" => s.tags = de(v)?.unwrap_or_default(),
                "defaults" => s.defaults = de(v)?,
                "model_type" => s.model_type = de(v)?,
                "ground_truth" => s.ground_truth = de(v)?,
                "default_version_id" => {
                    s.default_version_id = de::<String>(v)?.map(|id| canonical(&id));
                }
                "scoreable_node_types" => s.scoreable_node_types = de(v)?,
                "output_type" => s.output_type = de(v)?,
                "input_type" => s.input_type = de(v)?,
                "multimodal_capabilities" => s.multimodal_capabilities = de(v)?,
                "roll_up_method" => s.roll_up_method = de(v)?,
                // Accepted by the reference, not kept by the sandbox.
                _ => {}
            }
        }
        s.updated_at = now();
        let record = self.scorers[i].clone();
        to_json(&self.scorer_shape(&record, caller))
    }

    /// The runs whose metric settings name scorer `id`, by name, sorted.
    pub fn scorer_users(&self, id: &str) -> Vec<Use> {
        let project_name = |pid: &str| {
            self.project(pid)
                .map_or_else(|| pid.to_owned(), |p| p.name.clone())
        };
        let mut out: Vec<Use> = self
            .log_streams
            .iter()
            .filter(|l| l.metric_settings.scorers.iter().any(|c| c.id == id))
            .map(|l| (project_name(&l.project_id), "log_stream", l.name.clone()))
            .chain(
                self.experiments
                    .iter()
                    .filter(|e| e.metric_settings.scorers.iter().any(|c| c.id == id))
                    .map(|e| (project_name(&e.project_id), "experiment", e.name.clone())),
            )
            .collect();
        out.sort();
        out
    }

    /// DELETE `/v2/scorers/{scorer_id}`: refused while in use (see the module docs).
    pub fn delete_custom_scorer(&mut self, id: &str) -> Result<Value, ApiError> {
        let i = self.scorer_index(id)?;
        read_only_preset(&self.scorers[i])?;
        let users = self.scorer_users(id);
        if !users.is_empty() {
            let named: Vec<String> = users
                .iter()
                .map(|(p, kind, run)| format!("{kind} {run:?} of project {p:?}"))
                .collect();
            let used_by: Vec<Value> = users
                .iter()
                .map(|(p, kind, run)| json!({"project": p, *kind: run}))
                .collect();
            let name = &self.scorers[i].name;
            let message = format!(
                "Scorer {name:?} is used by the metric settings of {}",
                named.join(", ")
            );
            let detail = json!({
                "type": "value_error",
                "loc": ["path", "scorer_id"],
                "msg": format!("Value error, {message}"),
                "input": id,
                "ctx": {"error": message, "used_by": used_by},
            });
            return Err(ApiError::Validation(vec![detail]));
        }
        let removed = self.scorers.remove(i);
        Ok(json!({"message": format!("Scorer {} deleted", removed.name)}))
    }

    /// PUT `…/scope`: global (admins only, no projects) or exactly the
    /// given projects.
    pub fn set_scorer_scope(
        &mut self,
        id: &str,
        is_global: bool,
        project_ids: &[String],
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.scorer_index(id)?;
        read_only_preset(&self.scorers[i])?;
        if is_global && !project_ids.is_empty() {
            return Err(refuse(
                &["body", "project_ids"],
                Some(json!(project_ids)),
                "project_ids must be empty when is_global is true",
            ));
        }
        if is_global && caller.role != crate::api::UserRole::Admin {
            return Err(ApiError::Forbidden(
                "Only organization admins can make a scorer global".into(),
            ));
        }
        let projects = self.scope_projects(project_ids)?;
        let s = &mut self.scorers[i];
        s.is_global = is_global;
        s.project_ids = projects;
        s.updated_at = now();
        let record = self.scorers[i].clone();
        to_json(&self.scorer_shape(&record, caller))
    }

    /// GET `/v2/scorers/tags`: every tag of the catalog, sorted, once.
    pub fn scorer_tags(&self) -> Value {
        let mut tags: Vec<&str> = self
            .scorers
            .iter()
            .flat_map(|s| s.tags.iter().map(String::as_str))
            .collect();
        tags.sort_unstable();
        tags.dedup();
        json!(tags)
    }

    /// GET `/v2/scorers/{scorer_id}/projects`: the projects a scoped scorer
    /// is shared with (none for a global one, which every project sees), by
    /// name, paginated like the project listing.
    pub fn scorer_projects(
        &self,
        id: &str,
        caller: &UserRecord,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let s = self.require_scorer(id)?;
        let mut projects: Vec<&ProjectRecord> = self
            .projects
            .iter()
            .filter(|p| s.project_ids.contains(&p.id))
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

/// A validated field of a PATCH body, typed.
fn de<T: serde::de::DeserializeOwned>(v: Option<Value>) -> Result<Option<T>, ApiError> {
    v.map(|v| {
        serde_json::from_value(v)
            .map_err(|e| refuse(&["body"], None, &format!("not an UpdateScorerRequest: {e}")))
    })
    .transpose()
}
