//! Sending one operation: authentication (with one re-login on an expired
//! login token), the shared throttle, retries with backoff, logging, counters,
//! and turning the final answer into a value or an [`ApiError`].
//!
//! Retries: a 429 is waited out (its `Retry-After`, else backoff) and sent
//! again for any operation, until the time budget (`--retry-budget`) is
//! spent. Reads are retried on connection errors, timeouts and 5xx within the
//! same budget; idempotent writes on connection errors, timeouts, 500 and 502–504,
//! at most `--max-retries` times; a create only when it provably was not
//! processed (refused connection, 429), else it is [`ApiError::Ambiguous`].
//! Until the service has answered once, every failure but a 429 counts
//! toward `--max-retries`, so a wrong base URL fails in seconds.
//!
//! Bodies: read within the client's byte budget ([`super::budget`]): a
//! success body up to 64 MiB (a page up to what its listing may still
//! hold), an error body's first 64 KiB only, at most
//! 96 MiB of bodies held at once across every request in flight; a body is
//! given back to the budget once decoded, and before any wait to retry.
//!
//! Logging: one INFO line per attempt (`-v`: method, path as sent with the
//! base URL's prefix, status or failure, attempt, milliseconds); at DEBUG
//! (`-vv`) each retry with its cause and wait, and each change of the
//! adaptive limit; at TRACE (`-vvv`) the bodies, redacted
//! ([`super::redact`]). Never a header, a query string or a credential; the
//! integration body and the login form are never logged.

use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue, RETRY_AFTER};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::auth::{self, CredentialHeader, Scheme};
use super::config::Credentials;
use super::error::{self, ApiError};
use super::operation::{LOGIN, Operation, Retry};
use super::redact::loggable_body;
use super::retry::{self, Class};
use super::throttle::Adjusted;
use super::{Client, budget, paginate};
use crate::api::{Secret, Token};

/// A request body.
pub(crate) enum Body {
    /// No body.
    Empty,
    /// JSON bytes.
    Json(Vec<u8>),
    /// The login form (holds the password: never logged).
    LoginForm(Vec<(&'static str, Secret)>),
    /// A `multipart/form-data` body, built whole (its boundary in the
    /// content type); never logged.
    Multipart {
        /// The `Content-Type` header's value.
        content_type: String,
        /// The body.
        bytes: Vec<u8>,
    },
}

/// One operation to send.
pub(crate) struct Call<'a> {
    pub op: &'static Operation,
    pub params: &'a [&'a str],
    pub query: Vec<(&'static str, String)>,
    pub body: Body,
}

impl<'a> Call<'a> {
    /// A call without query or body.
    pub fn new(op: &'static Operation, params: &'a [&'a str]) -> Self {
        Call {
            op,
            params,
            query: Vec::new(),
            body: Body::Empty,
        }
    }

    /// Adds a query pair.
    pub fn query(mut self, key: &'static str, value: impl ToString) -> Self {
        self.query.push((key, value.to_string()));
        self
    }

    /// Adds a query pair when `value` is set.
    pub fn query_opt(self, key: &'static str, value: Option<&str>) -> Self {
        match value {
            Some(v) => self.query(key, v),
            None => self,
        }
    }

    /// Sets a `multipart/form-data` body of text fields: `(name, file name
    /// (a file part), value)`.
    pub fn multipart(mut self, fields: &[(&str, Option<&str>, &str)]) -> Self {
        // A boundary no value holds.
        let mut boundary = String::from("evalctl-boundary");
        while fields.iter().any(|(_, _, v)| v.contains(&boundary)) {
            boundary.push('x');
        }
        let mut bytes = Vec::new();
        for (name, file, value) in fields {
            bytes.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
            match file {
                Some(file) => bytes.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\nContent-Type: text/x-python\r\n\r\n"
                    )
                    .as_bytes(),
                ),
                None => bytes.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                ),
            }
            bytes.extend_from_slice(value.as_bytes());
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        self.body = Body::Multipart {
            content_type: format!("multipart/form-data; boundary={boundary}"),
            bytes,
        };
        self
    }

    /// Sets a JSON body.
    pub fn json(mut self, body: &impl Serialize) -> Result<Self, ApiError> {
        let bytes = serde_json::to_vec(body).map_err(|e| ApiError::InvalidArgument {
            operation: self.op,
            message: format!(
                "the request body cannot be serialized: {}",
                error::sanitize_serde_message(&e.to_string())
            ),
        })?;
        self.body = Body::Json(bytes);
        Ok(self)
    }
}

/// The final answer of an operation.
pub(crate) struct Raw {
    pub status: u16,
    pub body: Vec<u8>,
    /// The body's bytes in the client's budget, given back when the answer
    /// (decoded) is dropped.
    _reserved: budget::Held,
    pub attempts: u32,
    pub elapsed: Duration,
    pub retry_after: Option<Duration>,
    /// The URL it was sent to, without the query (for messages).
    pub url: String,
}

/// A body read within the budget, with its reservation.
struct Answer(Vec<u8>, budget::Held);

/// The credential header one attempt carries, if any (the login carries none).
type Auth<'a> = Option<(&'a HeaderName, &'a HeaderValue)>;

impl Client {
    /// Sends `call` and returns its final answer (any status), after retries
    /// and at most one re-login. Errors are the failures without an answer.
    pub(crate) async fn execute(&self, call: &Call<'_>) -> Result<Raw, ApiError> {
        let inner = &*self.inner;
        let op = call.op;
        let scheme = auth::scheme_for(&inner.config.credentials, op);
        match (&inner.credential, scheme) {
            (CredentialHeader::ApiKey(value), _) => {
                self.send(call, Some((&inner.api_key_header, value))).await
            }
            (CredentialHeader::Bearer(value), _) => {
                self.send(call, Some((&AUTHORIZATION, value))).await
            }
            (CredentialHeader::Password { basic }, Scheme::Basic)
                if !inner.basic_refusals.refused(op) =>
            {
                let raw = self.send(call, Some((&AUTHORIZATION, basic))).await?;
                if raw.status != 401 {
                    return Ok(raw);
                }
                // Its body goes back to the budget before the next request.
                let (attempts, elapsed) = (raw.attempts, raw.elapsed);
                drop(raw);
                // The deployment refuses Basic here, though the spec lists
                // the operation as accepting it: the login's token instead,
                // for this request and the rest of the run.
                if inner.basic_refusals.remember(op) {
                    tracing::debug!(
                        op = op.name,
                        "HTTP Basic refused (401): this operation uses a bearer token from /login from now on"
                    );
                }
                let mut again = self.send_with_login(call).await?;
                again.attempts += attempts;
                again.elapsed += elapsed;
                Ok(again)
            }
            (CredentialHeader::Password { .. }, _) => self.send_with_login(call).await,
        }
    }

    /// Sends `call` with the login's bearer token: logs in first when there
    /// is none, and once more (then retries once) when it is refused.
    async fn send_with_login(&self, call: &Call<'_>) -> Result<Raw, ApiError> {
        let inner = &*self.inner;
        let op = call.op;
        let token = inner.tokens.get_or_login(|| self.login()).await?;
        let raw = self
            .send(call, Some((&AUTHORIZATION, &token.header)))
            .await?;
        if raw.status != 401 {
            return Ok(raw);
        }
        let (attempts, elapsed) = (raw.attempts, raw.elapsed);
        drop(raw);
        let (fresh, logged_in) = inner.tokens.refresh(&token, || self.login()).await?;
        if logged_in {
            inner.stats.record(op, |c| c.relogins += 1);
        }
        tracing::debug!(
            op = op.name,
            "bearer token refused (401): logged in again, retrying once"
        );
        let mut again = self
            .send(call, Some((&AUTHORIZATION, &fresh.header)))
            .await?;
        again.attempts += attempts;
        again.elapsed += elapsed;
        Ok(again)
    }

    /// The OAuth2 password flow: a new bearer token, as its header value.
    async fn login(&self) -> Result<HeaderValue, ApiError> {
        let Credentials::Password { username, password } = &self.inner.config.credentials else {
            return Err(ApiError::InvalidArgument {
                operation: &LOGIN,
                message: "login needs EVALCTL_USERNAME and EVALCTL_PASSWORD".to_owned(),
            });
        };
        let call = Call {
            op: &LOGIN,
            params: &[],
            query: Vec::new(),
            body: Body::LoginForm(vec![
                ("username", Secret::new(username.clone())),
                ("password", password.clone()),
                ("grant_type", Secret::new("password")),
            ]),
        };
        let raw = self.send(&call, None).await?;
        if matches!(raw.status, 400 | 401 | 403) {
            self.inner.stats.record(&LOGIN, |c| c.failures += 1);
            return Err(ApiError::Unauthorized {
                operation: &LOGIN,
                hint: auth::login_refused_hint(),
            });
        }
        let status = raw.status;
        let token: Token = self.decode(&LOGIN, raw)?;
        crate::scrub::register(token.access_token.expose());
        auth::bearer_header(token.access_token.expose()).ok_or_else(|| {
            self.failed(
                &LOGIN,
                ApiError::Decode {
                    operation: &LOGIN,
                    status,
                    message: "the access token holds characters an HTTP header cannot carry"
                        .to_owned(),
                },
            )
        })
    }

    /// Sends one operation with retries; returns the final answer.
    async fn send(&self, call: &Call<'_>, auth: Auth<'_>) -> Result<Raw, ApiError> {
        let inner = &*self.inner;
        let op = call.op;
        let policy = &inner.config.retry;
        let max_attempts = retry::max_attempts(policy);
        let url = op.url(&inner.base_url, call.params, &call.query)?;
        // Within a paginated listing, what its pages may still hold.
        let page_allowance = paginate::page_allowance();
        let start = Instant::now();
        let mut attempt: u32 = 0;
        // Failures other than 429, which `--max-retries` bounds for writes.
        let mut failures: u32 = 0;
        // A request waiting out a 429's Retry-After keeps its slot.
        let mut held = None;
        loop {
            attempt += 1;
            let permit = match held.take() {
                Some(permit) => permit,
                None => inner.throttle.acquire().await,
            };
            let t0 = Instant::now();
            let mut request = inner.http.request(op.method.clone(), url.clone());
            if let Some((name, value)) = auth {
                request = request.header(name, value.clone());
            }
            request = match &call.body {
                Body::Empty => request,
                Body::Json(bytes) => request
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(bytes.clone()),
                Body::LoginForm(pairs) => request.form(pairs),
                Body::Multipart {
                    content_type,
                    bytes,
                } => request
                    .header(reqwest::header::CONTENT_TYPE, content_type.as_str())
                    .body(bytes.clone()),
            };
            if tracing::enabled!(tracing::Level::TRACE) {
                let body = match (&call.body, op.log_body) {
                    (Body::Json(bytes), true) => loggable_body(bytes),
                    (Body::Empty, _) => String::new(),
                    _ => "[not logged]".to_owned(),
                };
                tracing::trace!(op = op.name, method = %op.method, path = url.path(), attempt, body, "sending");
            }
            let result = match request.send().await {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| retry::parse_retry_after(v, std::time::SystemTime::now()));
                    let success = resp.status().is_success();
                    let declared = resp.content_length();
                    let allowed = page_allowance.unwrap_or(budget::MAX_RESPONSE_BYTES);
                    budget::read(&inner.budget, resp, success, declared, allowed)
                        .await
                        .map(|read| (status, read, retry_after))
                }
                Err(e) => Err(e),
            };
            let took = t0.elapsed();
            if result.is_ok() {
                inner.answered.store(true, Ordering::Relaxed);
            }
            inner.stats.record(op, |c| {
                c.requests += 1;
                if attempt > 1 {
                    c.retries += 1;
                }
            });
            let result = match result {
                Ok((status, budget::Read::Body(body, reserved), retry_after)) => {
                    Ok((status, Answer(body, reserved), retry_after))
                }
                Ok((status, budget::Read::TooLarge, _))
                    if page_allowance.is_some_and(|a| a < budget::MAX_RESPONSE_BYTES) =>
                {
                    return Err(paginate::listing_too_large(op, status));
                }
                Ok((status, budget::Read::TooLarge, _)) => {
                    return Err(ApiError::Decode {
                        operation: op,
                        status,
                        message: format!(
                            "the response body is larger than {} MiB",
                            budget::MAX_RESPONSE_BYTES >> 20
                        ),
                    });
                }
                Err(e) => Err(e),
            };
            if let Ok((status, Answer(body, _), _)) = &result
                && (200..300).contains(status)
            {
                paginate::charge_page(op, *status, body.len())?;
            }
            let class = match &result {
                Ok((status, Answer(body, _), retry_after)) => {
                    tracing::info!(
                        method = %op.method, path = %url.path(), status, attempt,
                        ms = took.as_millis() as u64, "request"
                    );
                    if op.log_body {
                        tracing::trace!(
                            op = op.name,
                            status,
                            body = loggable_body(body),
                            "response"
                        );
                    }
                    if *status == 429 {
                        inner.stats.record(op, |c| c.rate_limited += 1);
                    }
                    retry::classify_status(*status, *retry_after, op.is_read())
                }
                Err(e) => {
                    let class = retry::classify_transport(e);
                    let cause = match &class {
                        Class::Transient { cause, .. } => cause.as_str(),
                        Class::Final => "request could not be built",
                    };
                    tracing::info!(
                        method = %op.method, path = %url.path(), error = cause, attempt,
                        ms = took.as_millis() as u64, "request failed"
                    );
                    class
                }
            };
            let elapsed = || start.elapsed();
            match (class, result) {
                (Class::Final, Ok((status, Answer(body, reserved), retry_after))) => {
                    if op.retry == Retry::Create && status >= 500 {
                        return Err(ApiError::Ambiguous {
                            operation: op,
                            cause: format!("status {status}"),
                        });
                    }
                    if status < 500 {
                        // An answer (even a 404) is a latency sample.
                        let adjusted = inner.throttle.answered(op.name, took);
                        log_adjusted(op, adjusted);
                    }
                    drop(permit);
                    return Ok(Raw {
                        status,
                        body,
                        _reserved: reserved,
                        attempts: attempt,
                        elapsed: elapsed(),
                        retry_after,
                        url: without_query(&url),
                    });
                }
                (Class::Final, Err(source)) => {
                    return Err(ApiError::Transport {
                        operation: op,
                        attempts: attempt,
                        elapsed: elapsed(),
                        source,
                    });
                }
                (
                    Class::Transient {
                        unprocessed,
                        cause,
                        retry_after,
                    },
                    result,
                ) => {
                    if op.retry == Retry::Create && !unprocessed {
                        return Err(ApiError::Ambiguous {
                            operation: op,
                            cause,
                        });
                    }
                    let is_429 = matches!(&result, Ok((429, _, _)));
                    let wait = {
                        let mut rng = inner.rng.lock().unwrap_or_else(|p| p.into_inner());
                        retry::next_wait(policy, attempt - 1, retry_after, &mut rng)
                    };
                    if is_429 {
                        log_adjusted(op, inner.throttle.throttled(&permit));
                    } else {
                        failures += 1;
                    }
                    // A 429 was not processed: every request waits it out
                    // within the budget. A read is retried within the budget
                    // too, unless the service never answered this run (a
                    // wrong URL fails fast). A write's other failures count.
                    let counted =
                        !is_429 && (!op.is_read() || !inner.answered.load(Ordering::Relaxed));
                    let out_of_budget = (counted && failures >= max_attempts)
                        || elapsed() + wait > policy.max_elapsed;
                    if out_of_budget {
                        return match result {
                            Ok((status, Answer(body, reserved), retry_after)) => Ok(Raw {
                                status,
                                body,
                                _reserved: reserved,
                                attempts: attempt,
                                elapsed: elapsed(),
                                retry_after,
                                url: without_query(&url),
                            }),
                            Err(source) if source.is_timeout() && !source.is_connect() => {
                                Err(ApiError::Timeout {
                                    operation: op,
                                    attempts: attempt,
                                    elapsed: elapsed(),
                                })
                            }
                            Err(source) => Err(ApiError::Transport {
                                operation: op,
                                attempts: attempt,
                                elapsed: elapsed(),
                                source,
                            }),
                        };
                    }
                    tracing::debug!(
                        op = op.name,
                        attempt,
                        cause,
                        wait_ms = wait.as_millis() as u64,
                        "retrying"
                    );
                    // The answer's body goes back to the budget before the wait.
                    drop(result);
                    if is_429 {
                        // The slot stays taken while waiting: 429s cannot
                        // cycle through the queue.
                        held = Some(permit);
                    } else {
                        drop(permit);
                    }
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    /// Counts a failed operation and passes the error on.
    pub(crate) fn failed(&self, op: &'static Operation, err: ApiError) -> ApiError {
        self.inner.stats.record(op, |c| c.failures += 1);
        err
    }

    /// The error for a final answer that is not a success.
    pub(crate) fn status_error(&self, op: &'static Operation, raw: &Raw) -> ApiError {
        if raw.status == 404 && op.always_exists() {
            let err = ApiError::WrongBaseUrl {
                operation: op,
                url: raw.url.clone(),
            };
            return self.failed(op, err);
        }
        // Only a 401 needs the hint; the login's own refusals never get here,
        // but would be worded as one.
        let hint = || {
            if std::ptr::eq(op, &LOGIN) {
                auth::login_refused_hint()
            } else {
                let config = &self.inner.config;
                let scheme = match auth::scheme_for(&config.credentials, op) {
                    Scheme::Basic if self.inner.basic_refusals.refused(op) => Scheme::LoginBearer,
                    scheme => scheme,
                };
                auth::unauthorized_hint(scheme, &config.api_key_header)
            }
        };
        let err = error::error_for_status(
            op,
            raw.status,
            &raw.body,
            raw.attempts,
            raw.elapsed,
            raw.retry_after,
            hint,
        );
        self.failed(op, err)
    }

    /// Decodes a success, or turns the answer into its error.
    pub(crate) fn decode<T: DeserializeOwned>(
        &self,
        op: &'static Operation,
        raw: Raw,
    ) -> Result<T, ApiError> {
        let raw = self.success(op, raw)?;
        serde_json::from_slice(&raw.body).map_err(|e| {
            self.failed(
                op,
                ApiError::Decode {
                    operation: op,
                    status: raw.status,
                    message: error::sanitize_serde_message(&e.to_string()),
                },
            )
        })
    }

    /// The answer when it is a success (2xx), else its error (counted).
    fn success(&self, op: &'static Operation, raw: Raw) -> Result<Raw, ApiError> {
        if (200..300).contains(&raw.status) {
            Ok(raw)
        } else {
            Err(self.status_error(op, &raw))
        }
    }

    /// Sends `call`; a failure without an answer is counted.
    async fn run(&self, call: &Call<'_>) -> Result<Raw, ApiError> {
        self.execute(call)
            .await
            .map_err(|e| self.failed(call.op, e))
    }

    /// Sends and decodes a success.
    pub(crate) async fn fetch<T: DeserializeOwned>(&self, call: Call<'_>) -> Result<T, ApiError> {
        let raw = self.run(&call).await?;
        self.decode(call.op, raw)
    }

    /// Sends and decodes a success; a 404 is `None`.
    pub(crate) async fn fetch_opt<T: DeserializeOwned>(
        &self,
        call: Call<'_>,
    ) -> Result<Option<T>, ApiError> {
        let raw = self.run(&call).await?;
        if raw.status == 404 {
            return Ok(None);
        }
        self.decode(call.op, raw).map(Some)
    }

    /// Sends and expects a success with no body of interest (e.g. 204).
    pub(crate) async fn fetch_empty(&self, call: Call<'_>) -> Result<(), ApiError> {
        let raw = self.run(&call).await?;
        self.success(call.op, raw).map(drop)
    }

    /// Sends a DELETE: a 404 is "already gone", not an error.
    pub(crate) async fn fetch_delete(&self, call: Call<'_>) -> Result<super::Deleted, ApiError> {
        let raw = self.run(&call).await?;
        if raw.status == 404 {
            return Ok(super::Deleted::AlreadyGone);
        }
        self.success(call.op, raw).map(|_| super::Deleted::Deleted)
    }
}

/// `url` without its query: scheme, host, port and the whole path (the base
/// URL holds no user info: `config` refuses it).
fn without_query(url: &reqwest::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// Logs a change of the adaptive limit (at DEBUG: `-vv`).
fn log_adjusted(op: &Operation, adjusted: Adjusted) {
    match adjusted {
        Adjusted::Kept(_) => {}
        Adjusted::Raised(limit) => {
            tracing::trace!(op = op.name, limit, "in-flight limit raised");
        }
        Adjusted::LoweredOn429(limit) => {
            tracing::debug!(op = op.name, limit, "429: in-flight limit lowered");
        }
        Adjusted::LoweredOnLatency(limit, tenths) => tracing::debug!(
            op = op.name,
            limit,
            latency_over_baseline = f64::from(tenths) / 10.0,
            "latency rose: in-flight limit lowered"
        ),
    }
}
