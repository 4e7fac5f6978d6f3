//! The sandbox's error answers, in the service's (FastAPI's) words: one
//! [`ApiError`] per HTTP error status the sandbox can give, and how each is
//! written (`{"detail": ...}` bodies, `WWW-Authenticate` on 401,
//! `Retry-After` on 429).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::api::ValidationError;

/// The `detail` of a 401.
pub const NOT_AUTHENTICATED: &str = "Not authenticated";
/// The `detail` of a 403 for a `read_only` user's write.
pub const READ_ONLY: &str = "Your role (read_only) does not allow this action";

/// An error answer of the sandbox.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// 401 `{"detail":"Not authenticated"}`: no credentials, wrong ones, or a
    /// scheme the operation does not accept.
    #[error("not authenticated")]
    Unauthorized,
    /// 401 from `/login`: no user with that name and password.
    #[error("incorrect username or password")]
    BadCredentials,
    /// 403: the caller's role does not allow the operation.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// 404 with a detail naming what is missing (`Log stream not found`).
    #[error("not found: {0}")]
    NotFound(String),
    /// 404 `{"detail":"Not Found"}`: no such path.
    #[error("no such path")]
    NoRoute,
    /// 405 `{"detail":"Method Not Allowed"}`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 409: the change conflicts with stored state (a duplicate name).
    #[error("conflict: {0}")]
    Conflict(String),
    /// 413: the request body is larger than the sandbox accepts.
    #[error("request body larger than {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// 422 with pydantic's `detail` list: every fault of the request, each
    /// an object with `type`, `loc`, `msg`, `input` and maybe `ctx`.
    #[error("{} validation error(s)", .0.len())]
    Validation(Vec<serde_json::Value>),
    /// 400: a request the sandbox cannot read at all (e.g. a bad form body).
    #[error("bad request: {0}")]
    BadRequest(String),
    /// 429 with `Retry-After` (seconds).
    #[error("too many requests (retry after {retry_after}s)")]
    TooManyRequests {
        /// Seconds the client should wait.
        retry_after: u64,
    },
    /// 500: the sandbox failed (e.g. it could not write its state file). The
    /// change was not acknowledged.
    #[error("internal error: {0}")]
    Internal(String),
    /// An injected 5xx (502, 503 or 504).
    #[error("injected server error {0}")]
    Injected(u16),
}

impl ApiError {
    /// A 404 whose detail is `"{what} not found"`.
    pub fn not_found(what: &str) -> Self {
        ApiError::NotFound(format!("{what} not found"))
    }

    /// A 422 from typed validation errors (secret inputs redacted, see
    /// [`redact_detail`]).
    pub fn invalid(errors: Vec<ValidationError>) -> Self {
        ApiError::Validation(
            errors
                .iter()
                .map(|e| serde_json::to_value(e).unwrap_or(serde_json::Value::Null))
                .map(redact_detail)
                .collect(),
        )
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) | ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::BadCredentials => StatusCode::UNAUTHORIZED,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Injected(code) => {
                StatusCode::from_u16(*code).unwrap_or(StatusCode::BAD_GATEWAY)
            }
        }
    }

    /// The JSON body of this error.
    pub fn body(&self) -> serde_json::Value {
        match self {
            ApiError::Unauthorized => json!({ "detail": NOT_AUTHENTICATED }),
            ApiError::Forbidden(d)
            | ApiError::NotFound(d)
            | ApiError::Conflict(d)
            | ApiError::BadRequest(d) => json!({ "detail": d }),
            ApiError::NoRoute => json!({ "detail": "Not Found" }),
            ApiError::BadCredentials => json!({ "detail": "Incorrect username or password" }),
            ApiError::MethodNotAllowed => json!({ "detail": "Method Not Allowed" }),
            ApiError::PayloadTooLarge { limit } => {
                json!({ "detail": format!("Request body too large (limit {limit} bytes)") })
            }
            ApiError::Validation(details) => {
                let details: Vec<serde_json::Value> =
                    details.iter().cloned().map(redact_detail).collect();
                json!({ "detail": details })
            }
            ApiError::TooManyRequests { .. } => json!({ "detail": "Too Many Requests" }),
            ApiError::Internal(d) => json!({ "detail": format!("Internal Server Error: {d}") }),
            ApiError::Injected(code) => json!({
                "detail": match code {
                    500 => "Internal Server Error",
                    503 => "Service Unavailable",
                    504 => "Gateway Timeout",
                    _ => "Bad Gateway",
                }
            }),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        let headers = response.headers_mut();
        match &self {
            ApiError::Unauthorized | ApiError::BadCredentials => {
                headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::TooManyRequests { retry_after } => {
                if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
                    headers.insert(header::RETRY_AFTER, v);
                }
            }
            _ => {}
        }
        response
    }
}

/// A deliberate departure from the service, which echoes the faulty input
/// as is: no 422 carries a secret back. A detail whose `loc` passes through
/// a secret key (`token`, `password`, `api_key`, ... by
/// `crate::api::secret::is_secret_key`) has its whole `input` replaced by
/// `"[redacted]"`, whatever its shape (a token sent as an object or a list
/// is as secret as a string); a raw body (a JSON-shaped body sent with
/// another `Content-Type`, echoed as text at `["body"]`) that names a
/// secret key anywhere is redacted whole; any other `input` has the values
/// of secret keys redacted at any depth. Applied to every 422 the sandbox
/// writes, so no path can skip it.
pub fn redact_detail(mut detail: serde_json::Value) -> serde_json::Value {
    use crate::api::secret::{is_secret_key, redact_value};
    use serde_json::Value;
    let loc: Vec<&str> = detail["loc"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let under_secret = loc.iter().any(|k| is_secret_key(k));
    let whole_body = loc == ["body"];
    if let Some(input) = detail.get_mut("input") {
        match input {
            Value::Null => {}
            _ if under_secret => *input = Value::String("[redacted]".into()),
            Value::String(text) if whole_body && names_a_secret(text) => {
                *input = Value::String("[redacted]".into());
            }
            _ => redact_value(input),
        }
    }
    detail
}

/// Whether raw text names a secret key (`{"token": ...}`, `token=...`).
fn names_a_secret(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(crate::api::secret::is_secret_key)
}

/// Shorthand for handler results.
pub type ApiResult<T> = Result<T, ApiError>;
