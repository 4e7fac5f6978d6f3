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
//! The collections they add to [`State`] are plain [`crate::sandbox::persist::Records`],
//! declared in `store::model`, each a table of the state database
//! (`persist::tables`).
//!
//! [`State`]: crate::sandbox::store::State

pub mod projects;
pub mod prompt_templates;
pub mod protect_stages;
pub mod scorers;
pub mod templates;

use std::sync::Arc;

use axum::Router;
use serde_json::Value;

use crate::api::{LocItem, ValidationError};
use crate::sandbox::app::App;
use crate::sandbox::reply::ApiError;

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
