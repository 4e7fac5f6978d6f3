//! A read that failed, with what was being read.

use std::sync::Arc;

use crate::client::ApiError;

/// Reading live state failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("could not load {what}: {source}")]
pub struct ReadError {
    /// What was being read, e.g. "the metric settings of log stream `x` of project `y`".
    pub what: String,
    /// The service's answer (shared: one failed read can fail several objects).
    #[source]
    pub source: Arc<ApiError>,
}

impl ReadError {
    /// A failed read of `what`.
    pub fn new(what: impl Into<String>, source: ApiError) -> Self {
        ReadError {
            what: what.into(),
            source: Arc::new(source),
        }
    }
}

/// Wraps a failed read of `what` into a [`ReadError`].
pub(crate) fn ctx(what: impl FnOnce() -> String) -> impl FnOnce(ApiError) -> ReadError {
    move |source| ReadError::new(what(), source)
}
