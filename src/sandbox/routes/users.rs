//! Users and login: GET `/v2/users/{user_id}` (spec operation 9), GET
//! `/v2/current_user`, `POST /login` / `POST /v2/login` (OAuth2 password
//! flow: form `username`, `password`, optional `grant_type=password`) and
//! `POST /v2/login/api_key` (JSON `{"api_key"}`). The logins take no
//! credentials and answer `{"access_token", "token_type": "bearer"}`; the
//! token lives in memory only, like every bearer token of the sandbox.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Ids, ok, read_body};
use crate::sandbox::app::App;
use crate::sandbox::auth::{Caller, login as issue_token, user_by_api_key};
use crate::sandbox::fingerprint::{fingerprint, new_token};
use crate::sandbox::reply::{ApiError, ApiResult};
use crate::sandbox::store::to_json;
use crate::sandbox::validation::{Checker, Query};

/// GET `/v2/users/{user_id}`.
pub async fn get_user(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let id = c.path_uuid("user_id", ids.get("user_id"));
    c.finish()?;
    let user = app.read(|s| s.get_user(&id, &caller.user))?;
    Ok(ok(to_json(&user)?))
}

/// GET `/v2/current_user`.
pub async fn current_user(caller: Caller, State(app): State<Arc<App>>) -> ApiResult<Response> {
    let user = app.read(|s| Ok(s.current_user(&caller.user)))?;
    Ok(ok(to_json(&user)?))
}

/// POST `/login` and `/v2/login` (form body). Missing fields are a 422 at
/// `["body", field]`; a `grant_type` other than `password` a 422; wrong
/// credentials a 401.
pub async fn login(State(app): State<Arc<App>>, body: Body) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let text = String::from_utf8_lossy(&bytes);
    let form = Query::parse(Some(&text));
    let mut c = Checker::new();
    let mut fields = serde_json::Map::new();
    for key in [
        "grant_type",
        "username",
        "password",
        "scope",
        "client_id",
        "client_secret",
    ] {
        if let Some(v) = form.get(key) {
            fields.insert(key.to_owned(), Value::String(v.to_owned()));
        }
    }
    c.body_schema("Body_login_email_login_post", &Value::Object(fields));
    c.finish()?;
    let (username, password) = (
        form.get("username").unwrap_or_default(),
        form.get("password").unwrap_or_default(),
    );
    let token = issue_token(&app, username, password).ok_or(ApiError::BadCredentials)?;
    Ok(ok(json!({ "access_token": token, "token_type": "bearer" })))
}

/// POST `/v2/login/api_key`: a bearer token for the holder of the key. A
/// missing key is a 422 at `["body", "api_key"]` (never echoing a value); a
/// wrong one a 401.
pub async fn login_api_key(State(app): State<Arc<App>>, body: Body) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let body = c.body(&bytes, "ApiKeyLoginRequest");
    c.finish()?;
    let key = body
        .as_ref()
        .and_then(|b| b["api_key"].as_str())
        .unwrap_or_default()
        .to_owned();
    let (user_id, salt) = app
        .read(|s| Ok(user_by_api_key(s, &key).map(|u| (u.id.clone(), s.salt.clone()))))?
        .ok_or(ApiError::Unauthorized)?;
    let token = new_token();
    app.add_token(fingerprint(&salt, &token), user_id);
    Ok(ok(json!({ "access_token": token, "token_type": "bearer" })))
}
