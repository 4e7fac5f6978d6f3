//! A code scorer's version: the service validates the file asynchronously
//! (`POST /v2/scorers/code/validate`, polled with
//! `GET /v2/scorers/code/validate/{task_id}`), and a version is created
//! only from a completed, passing validation of the same file.
//!
//! Not yet sent by this version of evalctl: the planner refuses to plan a
//! code scorer's version (a problem at the manifest's `code_file`), so
//! this is reached only from a plan saved by another version.

use crate::client::{ApiError, Client};
use crate::reconcile::apply::OperationError;

/// Creates a version of the code scorer `id` from `code`, once validated.
pub async fn create_code_version<F, FF>(
    _client: &Client,
    _id: &str,
    name: &str,
    _code: &str,
    _find: F,
) -> Result<Option<String>, OperationError>
where
    F: Fn() -> FF,
    FF: std::future::Future<Output = Result<bool, ApiError>>,
{
    Err(OperationError::Unresolved {
        what: format!(
            "a version of code scorer `{name}`: this version of evalctl cannot create code scorer versions yet"
        ),
    })
}
