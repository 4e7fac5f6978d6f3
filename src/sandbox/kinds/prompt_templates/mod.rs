//! Prompt templates, of a project (`/v2/projects/{project_id}/templates…`)
//! or global (`/v2/templates…`), with their versions.
//!
//! A create makes the template and its version 1, selected. A new version
//! (`POST …/versions`) is `max_version + 1`, whatever `version` the body
//! names, and becomes the selected one (so a template that follows its
//! latest needs nothing more); versions are immutable and never deleted.
//! `PUT …/versions/{n}` selects version `n`. Settings are stored as the
//! service returns them: every field of the reference's
//! `PromptRunSettings`, its defaults filled in. A version's
//! `content_changed`, `settings_changed` and `model_changed` compare it
//! with the previous version (all false for version 1).
//!
//! Names are unique among a project's templates, and among global ones: a
//! create or rename to a name in use is a 409, unless the name is sent as
//! `{"value": …, "append_suffix_if_duplicate": true}`, which takes the
//! first free `name (n)`. Writes run under the state's one lock, so of two
//! concurrent creates of one name exactly one succeeds.
//!
//! `POST /v2/templates/query` lists the global templates (filters `name`,
//! `creator`, `used_in_project`, `not_in_project` — a global template is
//! used in the project named by the `project_id` of its create —; sorts
//! `name`, `created_at`, `updated_at`; default `created_at` descending).

pub mod demo;
pub mod query;
pub mod routes;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::sandbox::fingerprint::new_id;
use crate::sandbox::persist::tables::TableDef;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::users::permissions;
use crate::sandbox::store::{State, UserRecord, now, to_json};
use crate::sandbox::validation::component;

/// A prompt template with its versions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptTemplateRecord {
    /// Id (uuid4).
    pub id: String,
    /// The project, or `None` for a global template.
    #[serde(default)]
    pub project_id: Option<String>,
    /// Name.
    pub name: String,
    /// Creator.
    pub created_by: String,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// The selected version's number.
    pub selected_version: i64,
    /// Projects a global template was created for (`?project_id=`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked_project_ids: Vec<String>,
    /// Versions, oldest first.
    pub versions: Vec<PromptVersionRecord>,
}

/// A version of a prompt template (immutable).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PromptVersionRecord {
    /// Id (uuid4).
    pub id: String,
    /// Number, from 1.
    pub version: i64,
    /// A string, or a list of messages.
    pub template: Value,
    /// Raw (no templating).
    #[serde(default)]
    pub raw: bool,
    /// Settings (every `PromptRunSettings` field).
    pub settings: Value,
    /// Output type.
    #[serde(default)]
    pub output_type: Option<String>,
    /// Creator.
    pub created_by: String,
    /// Creation time.
    pub created_at: String,
    /// Changed from the previous version: the model.
    #[serde(default)]
    pub model_changed: bool,
    /// Changed from the previous version: the settings.
    #[serde(default)]
    pub settings_changed: bool,
    /// Changed from the previous version: the template.
    #[serde(default)]
    pub content_changed: bool,
}

/// Which templates an operation addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A project's.
    Project(String),
    /// The global ones.
    Global,
}

impl Scope {
    fn project(&self) -> Option<&str> {
        match self {
            Scope::Project(p) => Some(p),
            Scope::Global => None,
        }
    }
}

/// A version's content (`BasePromptTemplateVersion`, and the version part
/// of `CreatePromptTemplateWithVersionRequestBody`).
#[derive(Debug, Clone, Deserialize)]
pub struct VersionBody {
    /// A string or messages.
    pub template: Value,
    /// Raw.
    #[serde(default)]
    pub raw: bool,
    /// Settings as sent.
    #[serde(default)]
    pub settings: Option<Map<String, Value>>,
    /// Output type.
    #[serde(default)]
    pub output_type: Option<String>,
}

/// A name as sent: a string or a `Name` object.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum NameBody {
    /// A plain name.
    Plain(String),
    /// `{value, append_suffix_if_duplicate}`.
    Object {
        /// The name.
        value: String,
        /// Take the first free `value (n)` when the name is used.
        #[serde(default)]
        append_suffix_if_duplicate: bool,
    },
}

/// The body of a create.
#[derive(Debug, Clone, Deserialize)]
pub struct CreateBody {
    /// Name.
    pub name: NameBody,
    /// The first version.
    #[serde(flatten)]
    pub version: VersionBody,
}

/// Settings as the service stores them: the sent fields, and every other
/// field of `PromptRunSettings` at its default (`null` for a nullable
/// field without one, `[]` for a list).
pub fn full_settings(sent: Option<Map<String, Value>>) -> Value {
    let mut out = sent.unwrap_or_default();
    if let Some(props) = component("PromptRunSettings")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    {
        for (k, p) in props {
            if out.contains_key(k) {
                continue;
            }
            let v = if let Some(d) = p.get("default") {
                d.clone()
            } else if p.get("type").and_then(Value::as_str) == Some("array") {
                json!([])
            } else {
                Value::Null
            };
            out.insert(k.clone(), v);
        }
    }
    Value::Object(out)
}

fn taken(name: &str) -> ApiError {
    ApiError::Conflict(format!("A prompt template named {name} already exists"))
}

fn not_found() -> ApiError {
    ApiError::not_found("Prompt template")
}

/// The state database's table of prompt templates
/// ([`crate::sandbox::kinds::KindRecords::prompt_templates`]).
pub const TABLE: TableDef = TableDef {
    name: "prompt_templates",
    columns: &[
        ("id", "$.id"),
        ("project_id", "$.project_id"),
        ("name", "$.name"),
    ],
    sealed: &[],
};

impl State {
    fn prompt_index(&self, scope: &Scope, id: &str) -> Result<usize, ApiError> {
        if let Scope::Project(p) = scope {
            self.require_project(p)?;
        }
        self.kinds
            .prompt_templates
            .iter()
            .position(|t| t.id == id && t.project_id.as_deref() == scope.project())
            .ok_or_else(not_found)
    }

    fn prompt_name_used(&self, scope: &Scope, name: &str, except: &str) -> bool {
        self.kinds
            .prompt_templates
            .iter()
            .any(|t| t.project_id.as_deref() == scope.project() && t.name == name && t.id != except)
    }

    /// The name a create or rename takes, or a 409.
    fn free_prompt_name(
        &self,
        scope: &Scope,
        name: NameBody,
        except: &str,
    ) -> Result<String, ApiError> {
        let (value, append) = match name {
            NameBody::Plain(v) => (v, false),
            NameBody::Object {
                value,
                append_suffix_if_duplicate,
            } => (value, append_suffix_if_duplicate),
        };
        if !self.prompt_name_used(scope, &value, except) {
            return Ok(value);
        }
        if !append {
            return Err(taken(&value));
        }
        (1..)
            .map(|n| format!("{value} ({n})"))
            .find(|n| !self.prompt_name_used(scope, n, except))
            .ok_or_else(|| taken(&value))
    }

    fn prompt_version_json(&self, v: &PromptVersionRecord) -> Value {
        json!({
            "template": v.template,
            "raw": v.raw,
            "version": v.version,
            "settings": v.settings,
            "output_type": v.output_type,
            "id": v.id,
            "model_changed": v.model_changed,
            "lines_added": 0,
            "lines_edited": 0,
            "lines_removed": 0,
            "settings_changed": v.settings_changed,
            "content_changed": v.content_changed,
            "created_at": v.created_at,
            "updated_at": v.created_at,
            "created_by_user": self.user_info(Some(&v.created_by)),
        })
    }

    fn prompt_json(
        &self,
        t: &PromptTemplateRecord,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let selected = t
            .versions
            .iter()
            .find(|v| v.version == t.selected_version)
            .ok_or_else(|| ApiError::Internal("selected version missing".into()))?;
        let text = match &selected.template {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let max = t.versions.iter().map(|v| v.version).max().unwrap_or(0);
        Ok(json!({
            "id": t.id,
            "permissions": to_json(&permissions(caller, &["update", "delete"]))?,
            "name": t.name,
            "template": text,
            "selected_version": self.prompt_version_json(selected),
            "selected_version_id": selected.id,
            "all_versions": t.versions.iter().map(|v| self.prompt_version_json(v)).collect::<Vec<_>>(),
            "all_available_versions": t.versions.iter().map(|v| v.version).collect::<Vec<_>>(),
            "total_versions": t.versions.len(),
            "max_version": max,
            "created_at": t.created_at,
            "updated_at": t.updated_at,
            "created_by_user": self.user_info(Some(&t.created_by)),
        }))
    }

    /// Creates a template with its version 1, selected.
    pub fn create_prompt_template(
        &mut self,
        scope: &Scope,
        request: CreateBody,
        linked_project: Option<String>,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        if let Scope::Project(p) = scope {
            self.require_project(p)?;
        }
        if let Some(p) = &linked_project {
            self.require_project(p)?;
        }
        let name = self.free_prompt_name(scope, request.name, "")?;
        let ts = now();
        let version = new_version(1, request.version, None, caller, &ts);
        let record = PromptTemplateRecord {
            id: new_id(),
            project_id: scope.project().map(str::to_owned),
            name,
            created_by: caller.id.clone(),
            created_at: ts.clone(),
            updated_at: ts,
            selected_version: 1,
            linked_project_ids: linked_project.into_iter().collect(),
            versions: vec![version],
        };
        let out = self.prompt_json(&record, caller)?;
        self.kinds.prompt_templates.push(record);
        Ok(out)
    }

    /// GET `/v2/projects/{project_id}/templates`: the project's templates,
    /// oldest first.
    pub fn list_prompt_templates(
        &self,
        project_id: &str,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        let items = self
            .kinds
            .prompt_templates
            .iter()
            .filter(|t| t.project_id.as_deref() == Some(project_id))
            .map(|t| self.prompt_json(t, caller))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Value::Array(items))
    }

    /// GET a template.
    pub fn get_prompt_template(
        &self,
        scope: &Scope,
        id: &str,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.prompt_index(scope, id)?;
        self.prompt_json(&self.kinds.prompt_templates[i], caller)
    }

    /// GET `…/templates/versions?template_name=&version=`: that version of
    /// the project's template of that name (the selected one by default).
    pub fn prompt_version_by_name(
        &self,
        project_id: &str,
        name: &str,
        version: Option<i64>,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        let t = self
            .kinds
            .prompt_templates
            .iter()
            .find(|t| t.project_id.as_deref() == Some(project_id) && t.name == name)
            .ok_or_else(not_found)?;
        let n = version.unwrap_or(t.selected_version);
        let v = t
            .versions
            .iter()
            .find(|v| v.version == n)
            .ok_or_else(|| ApiError::not_found("Prompt template version"))?;
        Ok(self.prompt_version_json(v))
    }

    /// DELETE a template with its versions.
    pub fn delete_prompt_template(&mut self, scope: &Scope, id: &str) -> Result<Value, ApiError> {
        let i = self.prompt_index(scope, id)?;
        let removed = self.kinds.prompt_templates.remove(i);
        Ok(json!({"message": format!("Deleted prompt template {}", removed.name)}))
    }

    /// POST `…/{template_id}/versions`: version `max + 1`, selected.
    pub fn add_prompt_version(
        &mut self,
        scope: &Scope,
        id: &str,
        body: VersionBody,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.prompt_index(scope, id)?;
        let t = &self.kinds.prompt_templates[i];
        let previous = t.versions.iter().max_by_key(|v| v.version).cloned();
        let next = previous.as_ref().map_or(1, |v| v.version + 1);
        let ts = now();
        let version = new_version(next, body, previous.as_ref(), caller, &ts);
        let out = self.prompt_version_json(&version);
        let t = &mut self.kinds.prompt_templates[i];
        t.versions.push(version);
        t.selected_version = next;
        t.updated_at = ts;
        Ok(out)
    }

    /// GET `…/{template_id}/versions/{n}`.
    pub fn get_prompt_version(&self, scope: &Scope, id: &str, n: i64) -> Result<Value, ApiError> {
        let i = self.prompt_index(scope, id)?;
        let v = self.kinds.prompt_templates[i]
            .versions
            .iter()
            .find(|v| v.version == n)
            .ok_or_else(|| ApiError::not_found("Prompt template version"))?;
        Ok(self.prompt_version_json(v))
    }

    /// PUT `…/{template_id}/versions/{n}`: selects version `n`.
    pub fn select_prompt_version(
        &mut self,
        scope: &Scope,
        id: &str,
        n: i64,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.prompt_index(scope, id)?;
        if !self.kinds.prompt_templates[i]
            .versions
            .iter()
            .any(|v| v.version == n)
        {
            return Err(ApiError::not_found("Prompt template version"));
        }
        let t = &mut self.kinds.prompt_templates[i];
        t.selected_version = n;
        t.updated_at = now();
        let record = self.kinds.prompt_templates[i].clone();
        self.prompt_json(&record, caller)
    }

    /// PATCH `/v2/templates/{template_id}`: renames (a `null` name changes
    /// nothing).
    pub fn rename_prompt_template(
        &mut self,
        id: &str,
        name: Option<NameBody>,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.prompt_index(&Scope::Global, id)?;
        if let Some(name) = name {
            let name = self.free_prompt_name(&Scope::Global, name, id)?;
            let t = &mut self.kinds.prompt_templates[i];
            t.name = name;
            t.updated_at = now();
        }
        let record = self.kinds.prompt_templates[i].clone();
        self.prompt_json(&record, caller)
    }
}

fn new_version(
    number: i64,
    body: VersionBody,
    previous: Option<&PromptVersionRecord>,
    caller: &UserRecord,
    ts: &str,
) -> PromptVersionRecord {
    let settings = full_settings(body.settings);
    let (content_changed, settings_changed, model_changed) = match previous {
        Some(p) => (
            p.template != body.template || p.raw != body.raw || p.output_type != body.output_type,
            p.settings != settings,
            p.settings.get("model_alias") != settings.get("model_alias"),
        ),
        None => (false, false, false),
    };
    PromptVersionRecord {
        id: new_id(),
        version: number,
        template: body.template,
        raw: body.raw,
        settings,
        output_type: body.output_type,
        created_by: caller.id.clone(),
        created_at: ts.to_owned(),
        model_changed,
        settings_changed,
        content_changed,
    }
}
