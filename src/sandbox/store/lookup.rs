//! Lookups of the [`State`] every resource module shares (by id, with the
//! service's 404s), and sealing credentials.

use super::{
    ApiError, ExperimentRecord, LogStreamRecord, ProjectRecord, ScorerRecord, State, UserRecord,
};
use crate::api::UserInfo;

impl State {
    /// Seals every plain credential into a fingerprint. Called on every
    /// state the sandbox loads, before anything can be written.
    pub fn seal(&mut self) {
        let salt = self.salt.clone();
        for user in &mut self.users {
            if let Some(p) = &mut user.password {
                p.seal(&salt);
            }
            for k in &mut user.api_keys {
                k.seal(&salt);
            }
        }
    }

    /// A user by id.
    pub fn user(&self, id: &str) -> Option<&UserRecord> {
        self.users.iter().find(|u| u.id == id)
    }

    /// The `created_by_user` summary of a user id, if the user exists.
    pub fn user_info(&self, id: Option<&str>) -> Option<UserInfo> {
        id.and_then(|id| self.user(id)).map(UserRecord::info)
    }

    /// A project by id.
    pub fn project(&self, id: &str) -> Option<&ProjectRecord> {
        self.projects.iter().find(|p| p.id == id)
    }

    /// The project, or 404 `Project not found`.
    pub fn require_project(&self, id: &str) -> Result<&ProjectRecord, ApiError> {
        self.project(id)
            .ok_or_else(|| ApiError::not_found("Project"))
    }

    /// A log stream of a project.
    pub fn log_stream(&self, project_id: &str, id: &str) -> Option<&LogStreamRecord> {
        self.log_streams
            .iter()
            .find(|l| l.id == id && l.project_id == project_id)
    }

    /// The log stream (after its project), or 404.
    pub fn require_log_stream(
        &self,
        project_id: &str,
        id: &str,
    ) -> Result<&LogStreamRecord, ApiError> {
        self.require_project(project_id)?;
        self.log_stream(project_id, id)
            .ok_or_else(|| ApiError::not_found("Log stream"))
    }

    /// An experiment of a project.
    pub fn experiment(&self, project_id: &str, id: &str) -> Option<&ExperimentRecord> {
        self.experiments
            .iter()
            .find(|e| e.id == id && e.project_id == project_id)
    }

    /// The experiment (after its project), or 404.
    pub fn require_experiment(
        &self,
        project_id: &str,
        id: &str,
    ) -> Result<&ExperimentRecord, ApiError> {
        self.require_project(project_id)?;
        self.experiment(project_id, id)
            .ok_or_else(|| ApiError::not_found("Experiment"))
    }

    /// A scorer of the catalog.
    pub fn scorer(&self, id: &str) -> Option<&ScorerRecord> {
        self.scorers.iter().find(|s| s.id == id)
    }

    /// The scorer, or 404 `Scorer not found`.
    pub fn require_scorer(&self, id: &str) -> Result<&ScorerRecord, ApiError> {
        self.scorer(id).ok_or_else(|| ApiError::not_found("Scorer"))
    }
}
