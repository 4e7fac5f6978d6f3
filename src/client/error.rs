//! The one error type of the client, [`ApiError`], and how a response that is
//! not a success becomes one.
//!
//! Every variant names the operation (its name, method and path template) and
//! says what to check. Nothing the client sent is kept: no request body, no
//! header, no credential. From a 422 body only `loc`, `msg` and `type` are
//! kept — its `input` can echo a token of an integration body, so it is
//! dropped at parse time, never stored, never printed.
//!
//! Every text kept from an answer (a `detail`, a 422 field's location and
//! message, a body that did not decode) is quoted through
//! [`crate::scrub::server_text`]: a secret evalctl holds is masked (a server or
//! proxy that echoes the request would show the API key, the HTTP Basic value,
//! an integration's token), control characters are escaped, and it is cut to
//! [`crate::scrub::MAX_SERVER_TEXT`] characters; a 422 quotes at most
//! [`MAX_FIELDS`] fields.

use std::fmt::Write as _;
use std::time::Duration;

use super::config::ConfigError;
use super::operation::Operation;
use crate::api::{LocItem, dotted_loc};
use crate::scrub::server_text;

/// The most fields of a 422 answer kept (the others are counted).
pub const MAX_FIELDS: usize = 20;

/// One field of a 422 answer, without the offending input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Dotted location, e.g. `body.segment_filters[0].sample_rate`.
    pub loc: String,
    /// The service's message, e.g. `Input should be less than or equal to 1`.
    pub msg: String,
    /// The error type, e.g. `less_than_equal`.
    pub kind: String,
}

/// An error talking to the service.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 422: the service rejected the request's values (shown field by field).
    #[error("{operation}: the service rejected the request (422):{}", render_fields(.fields, *.omitted))]
    Validation {
        /// The operation.
        operation: &'static Operation,
        /// The faulty fields (at most `MAX_FIELDS`).
        fields: Vec<FieldError>,
        /// The fields of the answer left out past `MAX_FIELDS`.
        omitted: usize,
    },
    /// 401: the credentials were refused.
    #[error("{operation}: unauthorized (401): {hint}")]
    Unauthorized {
        /// The operation.
        operation: &'static Operation,
        /// What to check, naming the environment variables.
        hint: String,
    },
    /// 403: the caller's role lacks permission.
    #[error(
        "{operation}: forbidden (403): the credentials are valid but their role lacks permission for this operation{}; ask an admin for a role that may do it",
        detail_suffix(.detail)
    )]
    Forbidden {
        /// The operation.
        operation: &'static Operation,
        /// The service's `detail`, if any.
        detail: Option<String>,
    },
    /// 404 of a write, or of the parent of a read (a project, a log stream).
    #[error("{operation}: not found (404){}; check the ids and names in the manifests", detail_suffix(.detail))]
    NotFound {
        /// The operation.
        operation: &'static Operation,
        /// The service's `detail`, if any (e.g. `Log stream not found`).
        detail: Option<String>,
    },
    /// 404 from a listing or lookup that exists on every deployment (the
    /// project listing, the scorer catalog, the caller's own record, the
    /// login): the base URL is the suspect, not the manifests.
    #[error(
        "{operation}: not found (404) at {url}: this exists on every deployment of the service, so the base URL is the suspect (a missing, extra or misspelt path prefix?); check --base-url / EVALCTL_BASE_URL"
    )]
    WrongBaseUrl {
        /// The operation.
        operation: &'static Operation,
        /// The full URL sent, with the base URL's path prefix (no query).
        url: String,
    },
    /// 409: the request conflicts with the current state (e.g. a duplicate name).
    #[error("{operation}: conflict (409){}; re-read the current state", detail_suffix(.detail))]
    Conflict {
        /// The operation.
        operation: &'static Operation,
        /// The service's `detail`, if any.
        detail: Option<String>,
    },
    /// Another 4xx (or an unexpected 1xx/3xx) the client does not expect.
    #[error("{operation}: unexpected status {status}{}", detail_suffix(.detail))]
    Rejected {
        /// The operation.
        operation: &'static Operation,
        /// The HTTP status.
        status: u16,
        /// The service's `detail`, if any.
        detail: Option<String>,
    },
    /// 429 after every allowed retry.
    #[error(
        "{operation}: rate limited (429) after {attempts} attempt(s) over {:.1}s{}; lower --concurrency, raise --retry-budget, or retry later",
        elapsed.as_secs_f64(),
        retry_after_suffix(.retry_after)
    )]
    RateLimited {
        /// The operation.
        operation: &'static Operation,
        /// Attempts made.
        attempts: u32,
        /// Time spent, waits included.
        elapsed: Duration,
        /// The last `Retry-After` the service asked for.
        retry_after: Option<Duration>,
    },
    /// 5xx (after every allowed retry, for the retried statuses).
    #[error(
        "{operation}: server error {status} after {attempts} attempt(s) over {:.1}s{}; the service is failing, retry later",
        elapsed.as_secs_f64(),
        detail_suffix(.detail)
    )]
    Server {
        /// The operation.
        operation: &'static Operation,
        /// The HTTP status.
        status: u16,
        /// Attempts made.
        attempts: u32,
        /// Time spent, waits included.
        elapsed: Duration,
        /// The service's `detail`, if any.
        detail: Option<String>,
    },
    /// A create may or may not have been applied: the request may have reached
    /// the service and no answer says what happened. Re-read before deciding.
    #[error(
        "{operation}: outcome unknown ({cause}): the create may or may not have been applied; it was not retried to avoid a duplicate. Re-read the current state (run plan again) before retrying"
    )]
    Ambiguous {
        /// The operation.
        operation: &'static Operation,
        /// What happened (`502 Bad Gateway`, `timed out`, `connection closed`).
        cause: String,
    },
    /// No answer within the request timeout, after every allowed retry.
    #[error(
        "{operation}: timed out after {attempts} attempt(s) over {:.1}s; check the network, or raise --timeout",
        elapsed.as_secs_f64()
    )]
    Timeout {
        /// The operation.
        operation: &'static Operation,
        /// Attempts made.
        attempts: u32,
        /// Time spent, waits included.
        elapsed: Duration,
    },
    /// The connection failed (refused, reset, DNS, TLS), after every allowed retry.
    #[error(
        "{operation}: the connection to the service failed after {attempts} attempt(s) over {:.1}s ({}); check --base-url / EVALCTL_BASE_URL and the network",
        elapsed.as_secs_f64(),
        root_cause(source)
    )]
    Transport {
        /// The operation.
        operation: &'static Operation,
        /// Attempts made.
        attempts: u32,
        /// Time spent, waits included.
        elapsed: Duration,
        /// The underlying error (it holds the URL, never a header or a body).
        #[source]
        source: reqwest::Error,
    },
    /// The response body was not what the operation returns.
    #[error(
        "{operation}: unexpected response body (status {status}): {message}; is --base-url the service's API?"
    )]
    Decode {
        /// The operation.
        operation: &'static Operation,
        /// The HTTP status.
        status: u16,
        /// What did not parse (quoted values removed).
        message: String,
    },
    /// The service returned a pagination cursor it had already returned.
    #[error(
        "{operation}: the service's pagination cursor did not advance (token {token} again); stopped to avoid an endless loop"
    )]
    Pagination {
        /// The operation.
        operation: &'static Operation,
        /// The repeated token.
        token: i64,
    },
    /// A listing went on past the most pages one walk reads.
    #[error(
        "{operation}: stopped after {pages} pages, the most one listing reads; narrow the search"
    )]
    TooManyPages {
        /// The operation.
        operation: &'static Operation,
        /// The pages read.
        pages: usize,
    },
    /// A caller-supplied argument cannot form a request (e.g. an empty id).
    #[error("{operation}: invalid argument: {message}")]
    InvalidArgument {
        /// The operation.
        operation: &'static Operation,
        /// What is wrong.
        message: String,
    },
    /// The configuration is unusable (missing base URL or credentials, plain
    /// `http://` to a remote host, ...).
    #[error(transparent)]
    Config(#[from] ConfigError),
}

impl ApiError {
    /// The attempts the operation made, when the error counts them.
    pub fn attempts(&self) -> Option<u32> {
        match self {
            ApiError::RateLimited { attempts, .. }
            | ApiError::Server { attempts, .. }
            | ApiError::Timeout { attempts, .. }
            | ApiError::Transport { attempts, .. } => Some(*attempts),
            _ => None,
        }
    }

    /// The HTTP status behind the error, when there was an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Validation { .. } => Some(422),
            ApiError::Unauthorized { .. } => Some(401),
            ApiError::Forbidden { .. } => Some(403),
            ApiError::NotFound { .. } | ApiError::WrongBaseUrl { .. } => Some(404),
            ApiError::Conflict { .. } => Some(409),
            ApiError::RateLimited { .. } => Some(429),
            ApiError::Rejected { status, .. }
            | ApiError::Server { status, .. }
            | ApiError::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// The innermost cause of an error (e.g. `Connection refused (os error 111)`),
/// quoted as [`server_text`] quotes (bounded, masked, escaped). Transport errors
/// carry the URL and the OS error, never a header or a body.
pub fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &(dyn std::error::Error + 'static) = err;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    server_text(&cause.to_string())
}

fn detail_suffix(detail: &Option<String>) -> String {
    match detail {
        Some(d) => format!(": {d}"),
        None => String::new(),
    }
}

fn retry_after_suffix(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(" (the service asked to wait {:.0}s)", d.as_secs_f64()),
        None => String::new(),
    }
}

/// Renders 422 fields one per line: `  body.x[0].y: message`, then how many
/// more the answer held (`omitted`).
pub fn render_fields(fields: &[FieldError], omitted: usize) -> String {
    let mut out = String::new();
    if fields.is_empty() && omitted == 0 {
        out.push_str(" (no details given)");
    }
    for f in fields {
        let _ = write!(out, "\n  {}: {}", f.loc, f.msg);
    }
    if omitted > 0 {
        let _ = write!(out, "\n  … and {omitted} more field(s)");
    }
    out
}

/// Reads the fields of a 422 body, the first [`MAX_FIELDS`], and how many more
/// there are. Only `loc`, `msg` and `type` are deserialized: `input` and `ctx`
/// are skipped by the parser, never stored; each kept text is quoted through
/// [`server_text`]. `None` when the body is not the service's 422 shape.
pub fn parse_validation(body: &[u8]) -> Option<(Vec<FieldError>, usize)> {
    #[derive(serde::Deserialize)]
    struct Body {
        #[serde(default)]
        detail: Vec<Detail>,
    }
    #[derive(serde::Deserialize)]
    struct Detail {
        loc: Vec<LocItem>,
        msg: String,
        #[serde(rename = "type")]
        kind: String,
    }
    let parsed: Body = serde_json::from_slice(body).ok()?;
    let omitted = parsed.detail.len().saturating_sub(MAX_FIELDS);
    let fields = parsed
        .detail
        .into_iter()
        .take(MAX_FIELDS)
        .map(|d| FieldError {
            loc: server_text(&dotted_loc(&d.loc)),
            msg: server_text(&d.msg),
            kind: server_text(&d.kind),
        })
        .collect();
    Some((fields, omitted))
}

/// The `detail` of an error body when it is a string (`{"detail":"Not Found"}`),
/// quoted through [`server_text`]: held secrets masked, control characters
/// escaped, at most [`crate::scrub::MAX_SERVER_TEXT`] characters.
pub fn parse_detail(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Detail {
        detail: serde_json::Value,
    }
    let d: Detail = serde_json::from_slice(body).ok()?;
    let text = d.detail.as_str()?.trim();
    (!text.is_empty()).then(|| server_text(text))
}

/// A serde error message with every double-quoted part replaced by `"…"`: the
/// message names fields and positions, never values (which could be secrets);
/// what else it quotes (an unknown variant, in backticks) is quoted through
/// [`server_text`].
pub fn sanitize_serde_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_quotes = false;
    for c in message.chars() {
        if c == '"' {
            if in_quotes {
                out.push_str("…\"");
            } else {
                out.push('"');
            }
            in_quotes = !in_quotes;
        } else if !in_quotes {
            out.push(c);
        }
    }
    server_text(&out)
}

/// The error for a final (non-retried or retries-exhausted) response that is
/// not a success. `attempts` and `elapsed` cover the whole operation;
/// `unauthorized_hint` is called only for a 401, and the body is parsed only
/// for what the status's error keeps.
pub fn error_for_status(
    operation: &'static Operation,
    status: u16,
    body: &[u8],
    attempts: u32,
    elapsed: Duration,
    retry_after: Option<Duration>,
    unauthorized_hint: impl FnOnce() -> String,
) -> ApiError {
    let detail = || parse_detail(body);
    match status {
        401 => ApiError::Unauthorized {
            operation,
            hint: unauthorized_hint(),
        },
        403 => ApiError::Forbidden {
            operation,
            detail: detail(),
        },
        404 => ApiError::NotFound {
            operation,
            detail: detail(),
        },
        409 => ApiError::Conflict {
            operation,
            detail: detail(),
        },
        422 => match parse_validation(body) {
            Some((fields, omitted)) => ApiError::Validation {
                operation,
                fields,
                omitted,
            },
            None => ApiError::Rejected {
                operation,
                status,
                detail: detail(),
            },
        },
        429 => ApiError::RateLimited {
            operation,
            attempts,
            elapsed,
            retry_after,
        },
        500..=599 => ApiError::Server {
            operation,
            status,
            attempts,
            elapsed,
            detail: detail(),
        },
        _ => ApiError::Rejected {
            operation,
            status,
            detail: detail(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::operation::{PATCH_LOG_STREAM_METRIC_SETTINGS, PUT_INTEGRATION};

    #[test]
    fn validation_renders_field_by_field_without_input() {
        let body = br#"{"detail":[
            {"loc":["body","segment_filters",0,"sample_rate"],"msg":"Input should be less than or equal to 1","type":"less_than_equal","input":1.5,"ctx":{"le":1}},
            {"loc":["body","token"],"msg":"Field required","type":"missing","input":{"token":"sk-SECRET-123"}}
        ]}"#;
        let err = error_for_status(
            &PATCH_LOG_STREAM_METRIC_SETTINGS,
            422,
            body,
            1,
            Duration::ZERO,
            None,
            String::new,
        );
        let text = err.to_string();
        assert!(
            text.contains(
                "\n  body.segment_filters[0].sample_rate: Input should be less than or equal to 1"
            ),
            "{text}"
        );
        assert!(text.contains("\n  body.token: Field required"), "{text}");
        assert!(
            text.contains("update_log_stream_metric_settings (PATCH /v2/projects/{project_id}")
        );
        let debug = format!("{err:?}");
        assert!(
            !text.contains("sk-SECRET") && !debug.contains("sk-SECRET"),
            "{debug}"
        );
        assert!(!debug.contains("1.5"), "{debug}");
    }

    #[test]
    fn statuses_map_to_variants() {
        let op = &PUT_INTEGRATION;
        let e = |s: u16, b: &[u8]| {
            error_for_status(op, s, b, 3, Duration::from_secs(2), None, || {
                "check X".into()
            })
        };
        assert!(matches!(e(401, b""), ApiError::Unauthorized { .. }));
        assert!(e(401, b"").to_string().contains("check X"));
        assert!(matches!(
            e(403, b"{}"),
            ApiError::Forbidden { detail: None, .. }
        ));
        let nf = e(404, br#"{"detail":"Log stream not found"}"#);
        assert!(nf.to_string().contains("Log stream not found"), "{nf}");
        assert!(matches!(e(409, b""), ApiError::Conflict { .. }));
        assert!(matches!(
            e(422, b"garbage"),
            ApiError::Rejected { status: 422, .. }
        ));
        let rl = e(429, b"");
        assert!(rl.to_string().contains("3 attempt(s) over 2.0s"), "{rl}");
        assert!(matches!(e(503, b""), ApiError::Server { status: 503, .. }));
        assert!(matches!(
            e(400, b""),
            ApiError::Rejected { status: 400, .. }
        ));
        assert_eq!(e(503, b"").status(), Some(503));
    }

    #[test]
    fn serde_messages_lose_quoted_values() {
        let err = serde_json::from_str::<i64>(r#""sk-secret""#).unwrap_err();
        let msg = sanitize_serde_message(&err.to_string());
        assert!(!msg.contains("sk-secret"), "{msg}");
        assert!(msg.contains("invalid type"), "{msg}");
    }

    #[test]
    fn detail_is_bounded_and_clean() {
        use crate::scrub::MAX_SERVER_TEXT;
        let long = format!(r#"{{"detail":"{}\u0007"}}"#, "x".repeat(1000));
        let d = parse_detail(long.as_bytes()).unwrap();
        assert_eq!(d, format!("{}…", "x".repeat(MAX_SERVER_TEXT)));
        assert_eq!(parse_detail(br#"{"detail":[1]}"#), None);
        assert_eq!(
            parse_detail(br#"{"detail":"a\u001b[2Jb\u0007\nc"}"#).unwrap(),
            "a\\u{1b}[2Jb\\u{7}\\u{a}c"
        );
    }

    #[test]
    fn server_texts_are_scrubbed_of_held_secrets() {
        crate::scrub::register("err-held-secret-41");
        let body = br#"{"detail":"echo Service-AO-API-Key: err-held-secret-41"}"#;
        let d = parse_detail(body).unwrap();
        assert_eq!(d, "echo Service-AO-API-Key: ********");
        let body = br#"{"detail":[{"loc":["body","err-held-secret-41"],"msg":"bad err-held-secret-41\u0007","type":"x"}]}"#;
        let (fields, omitted) = parse_validation(body).unwrap();
        assert_eq!(omitted, 0);
        assert_eq!(fields[0].loc, "body.********");
        assert_eq!(fields[0].msg, "bad ********\\u{7}");
        let msg = sanitize_serde_message("unknown variant `err-held-secret-41`, expected `a`");
        assert_eq!(msg, "unknown variant `********`, expected `a`");
    }

    #[test]
    fn a_422_quotes_a_bounded_number_of_fields() {
        let detail: Vec<_> = (0..500)
            .map(|i| serde_json::json!({"loc": ["body", i], "msg": "m".repeat(5000), "type": "t"}))
            .collect();
        let body = serde_json::to_vec(&serde_json::json!({ "detail": detail })).unwrap();
        let err = error_for_status(
            &PUT_INTEGRATION,
            422,
            &body,
            1,
            Duration::ZERO,
            None,
            String::new,
        );
        let text = err.to_string();
        assert!(text.contains("… and 480 more field(s)"), "{text}");
        assert!(text.len() < MAX_FIELDS * 400, "{}", text.len());
    }
}
