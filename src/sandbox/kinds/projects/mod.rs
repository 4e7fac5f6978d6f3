//! Writing projects and log streams: POST `/v2/projects`, PUT and DELETE a
//! project, PUT (rename) and DELETE a log stream. Creating a log stream and
//! every read were there before (`store::projects`).
//!
//! Names are unique (projects in the organization, log streams in their
//! project): a create or rename to a name in use is a 409. A project's
//! labels are the reference's `ProjectLabels` (`sample`): another is a 422.
//! Deleting a project deletes everything under it: its log streams and
//! experiments (with their metric settings), their dashboards and
//! favorites, its annotation and feedback templates, prompt templates and
//! Protect stages; custom scorers scoped to it lose it from their scope.
//! Deleting a log stream deletes its dashboards and favorites.

pub mod routes;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::ProjectType;
use crate::sandbox::fingerprint::new_id;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::{ProjectRecord, State, UserRecord, now};

use super::refuse;

/// The labels a project may have (`ProjectLabels`).
const LABELS: &[&str] = &["sample"];

/// The body of POST `/v2/projects` (`ProjectCreate`).
#[derive(Debug, Clone, Deserialize)]
pub struct ProjectCreate {
    /// Name.
    pub name: String,
    /// Creator (default: the caller).
    #[serde(default)]
    pub created_by: Option<String>,
    /// Type (default `gen_ai`).
    #[serde(default, rename = "type")]
    pub project_type: Option<ProjectType>,
}

/// The body of PUT `/v2/projects/{project_id}` (`ProjectUpdate`): what is
/// not `null` changes.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProjectUpdate {
    /// New name.
    #[serde(default)]
    pub name: Option<String>,
    /// New labels.
    #[serde(default)]
    pub labels: Option<Vec<String>>,
    /// New description.
    #[serde(default)]
    pub description: Option<String>,
}

fn project_taken(name: &str) -> ApiError {
    ApiError::Conflict(format!("A project named {name} already exists"))
}

fn project_shape(p: &ProjectRecord, with_labels: bool) -> Value {
    let mut out = json!({
        "id": p.id,
        "name": p.name,
        "created_by": p.created_by,
        "type": p.project_type.as_str(),
        "created_at": p.created_at,
        "updated_at": p.updated_at,
    });
    if with_labels && let Some(obj) = out.as_object_mut() {
        obj.insert("labels".into(), json!(p.labels));
        obj.insert("description".into(), json!(p.description));
    }
    out
}

impl State {
    fn project_index(&self, id: &str) -> Result<usize, ApiError> {
        self.projects
            .iter()
            .position(|p| p.id == id)
            .ok_or_else(|| ApiError::not_found("Project"))
    }

    /// POST `/v2/projects` (`ProjectCreateResponse`).
    pub fn create_project(
        &mut self,
        request: ProjectCreate,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        if self.projects.iter().any(|p| p.name == request.name) {
            return Err(project_taken(&request.name));
        }
        let created_by = match request.created_by {
            Some(id) => {
                let id = id.to_ascii_lowercase();
                self.user(&id).ok_or_else(|| ApiError::not_found("User"))?;
                id
            }
            None => caller.id.clone(),
        };
        let ts = now();
        let record = ProjectRecord {
            id: new_id(),
            name: request.name,
            created_by,
            created_at: ts.clone(),
            updated_at: ts,
            description: None,
            labels: Vec::new(),
            project_type: request.project_type.unwrap_or(ProjectType::GenAi),
            bookmarked_by: Vec::new(),
        };
        let out = project_shape(&record, false);
        self.projects.push(record);
        Ok(out)
    }

    /// PUT `/v2/projects/{project_id}` (`ProjectUpdateResponse`).
    pub fn update_project(&mut self, id: &str, request: ProjectUpdate) -> Result<Value, ApiError> {
        let i = self.project_index(id)?;
        if let Some(name) = &request.name
            && self.projects.iter().any(|p| &p.name == name && p.id != id)
        {
            return Err(project_taken(name));
        }
        if let Some(labels) = &request.labels {
            for (k, l) in labels.iter().enumerate() {
                if !LABELS.contains(&l.as_str()) {
                    return Err(ApiError::Validation(vec![json!({
                        "type": "enum",
                        "loc": ["body", "labels", k],
                        "msg": "Input should be 'sample'",
                        "input": l,
                        "ctx": {"expected": "'sample'"},
                    })]));
                }
            }
        }
        let p = &mut self.projects[i];
        if let Some(name) = request.name {
            p.name = name;
        }
        if let Some(labels) = request.labels {
            p.labels = labels;
        }
        if let Some(description) = request.description {
            p.description = Some(description);
        }
        p.updated_at = now();
        Ok(project_shape(&self.projects[i], true))
    }

    /// DELETE `/v2/projects/{project_id}`: the project and everything under
    /// it (see the module docs).
    pub fn delete_project(&mut self, id: &str) -> Result<Value, ApiError> {
        let i = self.project_index(id)?;
        let streams: Vec<String> = self
            .log_streams
            .iter()
            .filter(|l| l.project_id == id)
            .map(|l| l.id.clone())
            .collect();
        for ls in &streams {
            self.drop_log_stream_children(ls);
        }
        self.log_streams.retain(|l| l.project_id != id);
        self.experiments.retain(|e| e.project_id != id);
        self.dashboards.retain(|d| d.project_id != id);
        self.annotation_templates.retain(|t| t.project_id != id);
        self.feedback_templates.retain(|t| t.project_id != id);
        self.kinds.forget_project(id);
        let scoped: Vec<usize> = self
            .scorers
            .iter()
            .enumerate()
            .filter(|(_, s)| s.project_ids.iter().any(|p| p == id))
            .map(|(k, _)| k)
            .collect();
        for k in scoped {
            self.scorers[k].project_ids.retain(|p| p != id);
        }
        let removed = self.projects.remove(i);
        Ok(json!({"message": format!("Successfully deleted project {}", removed.name)}))
    }

    fn drop_log_stream_children(&mut self, log_stream_id: &str) {
        self.dashboards.retain(|d| d.log_stream_id != log_stream_id);
        self.favorites.retain(|f| f.log_stream_id != log_stream_id);
    }

    /// PUT `…/log_streams/{log_stream_id}` (rename; `LogStreamResponse`).
    pub fn rename_log_stream(
        &mut self,
        project_id: &str,
        id: &str,
        name: String,
    ) -> Result<Value, ApiError> {
        self.require_log_stream(project_id, id)?;
        if self
            .log_streams
            .iter()
            .any(|l| l.project_id == project_id && l.name == name && l.id != id)
        {
            return Err(ApiError::Conflict(format!(
                "A log stream named {name} already exists in this project"
            )));
        }
        if name.trim().is_empty() {
            return Err(refuse(
                &["body", "name"],
                Some(json!(name)),
                "a name is required",
            ));
        }
        let i = self
            .log_streams
            .iter()
            .position(|l| l.id == id)
            .ok_or_else(|| ApiError::not_found("Log stream"))?;
        let l = &mut self.log_streams[i];
        l.name = name;
        l.updated_at = now();
        let record = self.log_streams[i].clone();
        Ok(self.log_stream_json(&record, false))
    }

    /// DELETE `…/log_streams/{log_stream_id}`, with its dashboards and
    /// favorites.
    pub fn delete_log_stream(&mut self, project_id: &str, id: &str) -> Result<(), ApiError> {
        self.require_log_stream(project_id, id)?;
        self.drop_log_stream_children(id);
        self.log_streams.retain(|l| l.id != id);
        Ok(())
    }
}
