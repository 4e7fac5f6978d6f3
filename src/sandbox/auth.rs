//! Authentication, exactly as the spec's table says, and the login endpoint.
//!
//! Every operation needs credentials, except the logins (`/login`,
//! `/v2/login`, `/v2/login/api_key`), which take none. Accepted: an API key
//! in the key header (`Service-AO-API-Key`, configurable), `Authorization:
//! Bearer <token>` (issued by the logins, kept in memory only, so a restart
//! invalidates it) and `Authorization: Basic` — except on spec operations 3
//! (create a section), 6 (scorer-version projects) and 10 (favorite), whose
//! handlers take [`CallerNoBasic`]: there Basic is not accepted (nor, with
//! [`BasicPolicy::refuse_on_trends`], on any trends operation, as some
//! deployments do beyond the spec's list). Missing or wrong
//! credentials are a 401 `{"detail":"Not authenticated"}` with
//! `WWW-Authenticate`. When several credentials are sent, any valid one
//! authenticates. A `read_only` user gets a 403 on writes
//! ([`Caller::require_write`]).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::app::App;
use super::faults::CallerSlot;
use super::fingerprint::{fingerprint, new_token};
use super::reply::{ApiError, READ_ONLY};
use super::store::{State, UserRecord};
use crate::api::UserRole;

/// The authenticated caller (any of the three schemes).
#[derive(Debug, Clone)]
pub struct Caller {
    /// The caller's record.
    pub user: UserRecord,
}

/// The authenticated caller of an operation that does not accept HTTP
/// Basic (spec operations 3, 6 and 10).
#[derive(Debug, Clone)]
pub struct CallerNoBasic(pub Caller);

impl Caller {
    /// 403 for a `read_only` caller: the operation changes something.
    pub fn require_write(&self) -> Result<(), ApiError> {
        if self.user.role == UserRole::ReadOnly {
            Err(ApiError::Forbidden(READ_ONLY.to_owned()))
        } else {
            Ok(())
        }
    }
}

impl FromRequestParts<Arc<App>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        authenticate(parts, app, true)
    }
}

impl FromRequestParts<Arc<App>> for CallerNoBasic {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, ApiError> {
        authenticate(parts, app, false).map(CallerNoBasic)
    }
}

/// Where HTTP Basic is refused beyond the spec's three operations (a
/// request extension the server sets for every request).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BasicPolicy {
    /// Refuse Basic on every trends operation (a path with `/trends`).
    pub refuse_on_trends: bool,
}

impl BasicPolicy {
    /// Whether Basic is refused on `path`.
    pub fn refuses(&self, path: &str) -> bool {
        self.refuse_on_trends && path.contains("/trends")
    }
}

fn authenticate(parts: &Parts, app: &App, basic_allowed: bool) -> Result<Caller, ApiError> {
    let basic_allowed = basic_allowed
        && !parts
            .extensions
            .get::<BasicPolicy>()
            .is_some_and(|p| p.refuses(parts.uri.path()));
    let api_key = parts
        .headers
        .get(&app.api_key_header)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let authorization = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    let (scheme, credentials) = authorization
        .and_then(|a| a.split_once(' '))
        .map_or(("", ""), |(s, c)| (s, c.trim()));
    let bearer =
        (scheme.eq_ignore_ascii_case("bearer") && !credentials.is_empty()).then_some(credentials);
    let basic = (basic_allowed && scheme.eq_ignore_ascii_case("basic"))
        .then(|| decode_basic(credentials))
        .flatten();
    let user = app.read(|state| {
        // The token store has its own lock, only ever taken after the
        // state's (never the other way round).
        let found = api_key
            .and_then(|key| user_by_api_key(state, key))
            .or_else(|| {
                bearer
                    .and_then(|token| app.token_user(&fingerprint(&state.salt, token)))
                    .and_then(|id| state.user(&id))
            })
            .or_else(|| {
                basic
                    .as_ref()
                    .and_then(|(name, pass)| user_by_password(state, name, pass))
            });
        Ok(found.cloned())
    })?;
    match user {
        Some(user) => {
            if let Some(slot) = parts.extensions.get::<CallerSlot>() {
                slot.set(&user.email);
            }
            Ok(Caller { user })
        }
        None => Err(ApiError::Unauthorized),
    }
}

fn decode_basic(credentials: &str) -> Option<(String, String)> {
    let bytes = STANDARD.decode(credentials).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (name, pass) = text.split_once(':')?;
    Some((name.to_owned(), pass.to_owned()))
}

/// The user holding API key `key`.
pub fn user_by_api_key<'s>(state: &'s State, key: &str) -> Option<&'s UserRecord> {
    let fp = fingerprint(&state.salt, key);
    state
        .users
        .iter()
        .find(|u| u.api_keys.iter().any(|k| k.matches_fingerprint(&fp, key)))
}

/// The user with login name (email, case-insensitive) `name` and password
/// `password`.
pub fn user_by_password<'s>(
    state: &'s State,
    name: &str,
    password: &str,
) -> Option<&'s UserRecord> {
    state.users.iter().find(|u| {
        u.email.eq_ignore_ascii_case(name)
            && u.password
                .as_ref()
                .is_some_and(|p| p.matches(&state.salt, password))
    })
}

/// `POST /login`: checks a username and password and issues a bearer token
/// (remembered by fingerprint, in memory only). `None` for wrong
/// credentials.
pub fn login(app: &App, username: &str, password: &str) -> Option<String> {
    let (user_id, salt) = app
        .read(|state| {
            Ok(user_by_password(state, username, password)
                .map(|u| (u.id.clone(), state.salt.clone())))
        })
        .ok()
        .flatten()?;
    let token = new_token();
    app.add_token(fingerprint(&salt, &token), user_id);
    Some(token)
}
