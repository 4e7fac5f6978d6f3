//! A code scorer's version: the service validates the file asynchronously
//! (`POST /v2/scorers/code/validate` starts a task, polled with
//! `GET /v2/scorers/code/validate/{task_id}`), and a version is created
//! (`POST /v2/scorers/{id}/version/code`, multipart: the file and the
//! task's result) only from a completed, passing validation of the same
//! file. A failing validation is reported with the service's message and
//! nothing is created; a task not completed within [`POLL_BUDGET`] is a
//! failure too (nothing created; the next apply validates again). A new
//! code scorer's file is validated before the scorer is created, so a
//! failing one leaves neither a scorer nor a version.
//!
//! The version's create is settled like every create ([`super::ops`]): a
//! read before it (a newer latest version already holding this file is not
//! made again) and after a lost answer.

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::ops::settled;
use crate::client::operation::{Operation, Retry};
use crate::client::transport::Call;
use crate::client::{ApiError, Client};
use crate::reconcile::apply::OperationError;

/// Start a validation of a code scorer's file.
pub static VALIDATE_CODE: Operation = Operation {
    name: "validate_code_scorer",
    method: Method::POST,
    path: "/v2/scorers/code/validate",
    basic_ok: true,
    // Starting a validation changes nothing: a second one is harmless.
    retry: Retry::Read,
    log_body: false,
};

/// Poll a validation task.
pub static VALIDATION_RESULT: Operation = Operation {
    name: "get_code_scorer_validation",
    method: Method::GET,
    path: "/v2/scorers/code/validate/{task_id}",
    basic_ok: true,
    retry: Retry::Idempotent,
    log_body: true,
};

/// Create a code scorer's version from a passing validation.
pub static CREATE_CODE_VERSION: Operation = Operation {
    name: "create_code_scorer_version",
    method: Method::POST,
    path: "/v2/scorers/{scorer_id}/version/code",
    basic_ok: true,
    retry: Retry::Create,
    log_body: false,
};

/// How long a validation may take before apply gives up on it.
pub const POLL_BUDGET: Duration = Duration::from_secs(120);
/// The first wait between polls (doubled up to [`MAX_POLL_WAIT`]).
const FIRST_POLL_WAIT: Duration = Duration::from_millis(100);
const MAX_POLL_WAIT: Duration = Duration::from_secs(5);

/// What a finished validation said.
#[derive(Debug, Clone, PartialEq)]
pub enum Validation {
    /// It passed: the task's answer, sent back with the file.
    Valid(Value),
    /// It failed, with the service's message.
    Invalid(String),
}

const FILE_NAME: &str = "scorer.py";

impl Client {
    /// Starts a validation of `code`; the task's id.
    pub async fn start_code_validation(&self, code: &str) -> Result<String, ApiError> {
        let answer: Value = self
            .fetch(Call::new(&VALIDATE_CODE, &[]).multipart(&[("file", Some(FILE_NAME), code)]))
            .await?;
        Ok(answer
            .get("task_id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned())
    }

    /// One poll of a validation task: `None` while it is not completed.
    pub async fn poll_code_validation(
        &self,
        task_id: &str,
    ) -> Result<Option<Validation>, ApiError> {
        let task: Value = self
            .fetch(Call::new(&VALIDATION_RESULT, &[task_id]))
            .await?;
        match task.get("status").and_then(Value::as_str) {
            Some("completed") => {}
            Some("failed") => {
                return Ok(Some(Validation::Invalid(
                    task.get("result")
                        .and_then(Value::as_str)
                        .unwrap_or("the validation task failed")
                        .to_owned(),
                )));
            }
            _ => return Ok(None),
        }
        let inner = task
            .pointer("/result/result")
            .cloned()
            .unwrap_or(Value::Null);
        Ok(Some(
            match inner.get("result_type").and_then(Value::as_str) {
                Some("valid") => {
                    Validation::Valid(task.get("result").cloned().unwrap_or(Value::Null))
                }
                _ => Validation::Invalid(
                    inner
                        .get("error_message")
                        .and_then(Value::as_str)
                        .unwrap_or("the service says the file is not valid")
                        .to_owned(),
                ),
            },
        ))
    }

    /// Creates a code version from `code` and its passing validation.
    pub async fn create_code_scorer_version(
        &self,
        scorer_id: &str,
        code: &str,
        validation: &Value,
    ) -> Result<Value, ApiError> {
        let result = validation.to_string();
        self.fetch(Call::new(&CREATE_CODE_VERSION, &[scorer_id]).multipart(&[
            ("file", Some(FILE_NAME), code),
            ("validation_result", None, &result),
        ]))
        .await
    }
}

/// Validates `code` and waits for the result, within [`POLL_BUDGET`].
pub async fn validate(
    client: &Client,
    name: &str,
    code: &str,
) -> Result<Validation, OperationError> {
    let task = client.start_code_validation(code).await?;
    let started = tokio::time::Instant::now();
    let mut wait = FIRST_POLL_WAIT;
    let mut polls = 0u32;
    loop {
        polls += 1;
        if let Some(done) = client.poll_code_validation(&task).await? {
            tracing::info!(scorer = name, polls, "the code validation completed");
            return Ok(done);
        }
        let elapsed = started.elapsed();
        if elapsed + wait > POLL_BUDGET {
            return Err(OperationError::Unresolved {
                what: format!(
                    "a completed validation of code scorer `{name}`'s file: the service's task {task} was still pending after {}s ({polls} polls); no version was created",
                    elapsed.as_secs()
                ),
            });
        }
        tracing::info!(
            scorer = name,
            polls,
            elapsed_ms = elapsed.as_millis() as u64,
            "the code validation is pending"
        );
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_POLL_WAIT);
    }
}

/// The passing validation of `code`: a failing one is
/// [`OperationError::CodeNotValidated`], with the service's message.
pub async fn validated(client: &Client, name: &str, code: &str) -> Result<Value, OperationError> {
    match validate(client, name, code).await? {
        Validation::Valid(result) => Ok(result),
        Validation::Invalid(message) => Err(OperationError::CodeNotValidated {
            scorer: name.to_owned(),
            message: format!("the service's validation failed: {message}"),
        }),
    }
}

/// Creates a version of the code scorer `id` from `code`, once validated
/// (`passed`: the validation already made, by the scorer's create); `find`
/// reads whether a newer version already holds it.
pub async fn create_code_version<F, FF>(
    client: &Client,
    (id, name): (&str, &str),
    code: &str,
    passed: Option<Value>,
    find: F,
) -> Result<Option<String>, OperationError>
where
    F: Fn() -> FF,
    FF: std::future::Future<Output = Result<bool, ApiError>>,
{
    if find().await.unwrap_or(false) {
        return Ok(Some(
            "the code scorer version exists already (created since the plan was read, by another run); not created again"
                .to_owned(),
        ));
    }
    let result = match passed {
        Some(result) => result,
        None => validated(client, name, code).await?,
    };
    settled(
        "code scorer version",
        find,
        || format!("custom scorer `{name}`"),
        || async {
            client
                .create_code_scorer_version(id, code, &result)
                .await
                .map(|_| ())
        },
    )
    .await
}
