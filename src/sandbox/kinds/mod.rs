//! The sandbox's kinds, one folder each (the others follow): its records and
//! store operations (`mod.rs`, functions on the one [`State`]) and its HTTP
//! handlers (`routes.rs`, registered by one line in [`router`]).
//!
//! - [`scorers`]: creating, changing and deleting custom scorers,
//!   their append-only versions (LLM, code through the asynchronous
//!   validation, preset), scope, tags and restores;
//! - [`prompt_templates`]: prompt templates of a project and global ones,
//!   with immutable versions and one selected version;
//! - [`projects`]: creating, changing and deleting projects (everything
//!   under a project goes with it), renaming and deleting log streams;
//! - [`protect_stages`]: Protect stages (created, read, rulesets replaced with a
//!   version bump, paused; never deleted);
//! - [`templates`]: annotation and feedback templates of a project.
//!
//! The collections they add to [`State`] are plain [`Records`], fields of
//! [`KindRecords`] (the one `kinds` field of [`State`], flattened: each is a
//! top-level field of the state file, as the core's collections), each a
//! table of the state database whose [`TableDef`] is in the kind's folder
//! and listed by [`KindRecords::tables`]. What the built-in demo fixture
//! holds of a kind is seeded by the kind ([`seed_demo`]), and what a
//! deleted project takes with it is each kind's line in
//! [`KindRecords::forget_project`].
//!
//! [`State`]: crate::sandbox::store::State

pub mod projects;
pub mod prompt_templates;
pub mod protect_stages;
pub mod scorers;
pub mod templates;

use std::sync::Arc;

use axum::Router;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::{LocItem, ValidationError};
use crate::sandbox::app::App;
use crate::sandbox::persist::Records;
use crate::sandbox::persist::tables::{Table, TableDef};
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::ProjectRecord;

/// The collections the kinds add to the sandbox's
/// [`State`](crate::sandbox::store::State), one field per collection.
/// Flattened into the state: its fields are serialized as the state's own,
/// so the state file and the database's tables are what they were before
/// the registry.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KindRecords {
    /// Code-scorer validation tasks (kind `scorers`; the scorers and their
    /// versions are the core's scorer catalog, `State::scorers`).
    #[serde(default)]
    pub code_validations: Records<scorers::CodeValidationRecord>,
    /// Prompt templates of projects and global ones, with their versions
    /// (kind `prompt_templates`).
    #[serde(default)]
    pub prompt_templates: Records<prompt_templates::PromptTemplateRecord>,
    /// Protect stages of all projects (kind `protect_stages`).
    #[serde(default)]
    pub stages: Records<protect_stages::StageRecord>,
}

impl KindRecords {
    /// Each collection with its table of the state database, in the order
    /// of the tables (`persist::tables` appends them to the core's).
    pub fn tables(&mut self) -> Vec<(&'static TableDef, &mut dyn Table)> {
        // No `..`: a collection added above does not compile until it is
        // listed, so none is left out of the state file.
        let KindRecords {
            code_validations,
            prompt_templates,
            stages,
        } = self;
        vec![
            (&scorers::code::CODE_VALIDATIONS, code_validations),
            (&prompt_templates::TABLE, prompt_templates),
            (&protect_stages::TABLE, stages),
        ]
    }

    /// Removes what belongs to project `id` (being deleted), one line per
    /// kind that has records of a project.
    pub fn forget_project(&mut self, id: &str) {
        self.prompt_templates
            .retain(|t| t.project_id.as_deref() != Some(id));
        self.stages.retain(|s| s.project_id != id);
    }
}

/// Seeds the built-in demo fixture's kinds for its demo `project` (`by`:
/// the creator's id), one line per kind the demo shows.
pub fn seed_demo(records: &mut KindRecords, project: &ProjectRecord, by: &str) {
    prompt_templates::demo::seed_demo(records, project, by);
}

/// The HTTP handlers of the sandbox's kinds, one line per kind (merged into
/// `crate::sandbox::routes::router`).
pub fn router() -> Router<Arc<App>> {
    Router::new()
        .merge(scorers::routes::router())
        .merge(prompt_templates::routes::router())
        .merge(projects::routes::router())
        .merge(protect_stages::routes::router())
        .merge(templates::routes::router())
}

/// A 422 with one pydantic `value_error` at `loc` (keys), as the service
/// answers a request its models accept but its rules refuse.
pub fn refuse(loc: &[&str], input: Option<Value>, message: &str) -> ApiError {
    ApiError::invalid(vec![ValidationError::value_error(
        loc.iter().map(|k| LocItem::Key((*k).to_owned())).collect(),
        input,
        message,
    )])
}

#[cfg(test)]
mod tests;
