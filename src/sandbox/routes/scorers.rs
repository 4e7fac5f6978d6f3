//! The scorer catalog: POST `/v2/scorers/list`, GET a scorer, its versions
//! and one version, and spec operation 6 (projects using a scorer version;
//! no HTTP Basic).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde_json::Value;

use super::{Ids, ok, read_body};
use crate::sandbox::app::App;
use crate::sandbox::auth::{Caller, CallerNoBasic};
use crate::sandbox::reply::ApiResult;
use crate::sandbox::store::scorers::ScorerListRequest;
use crate::sandbox::validation::{Checker, Query, deserialize};

/// POST `/v2/scorers/list?starting_token=&limit=`.
pub async fn list_scorers(
    caller: Caller,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (start, limit) = c.page(&query);
    let body = c.body(&bytes, "ListScorersRequest");
    c.finish()?;
    let request: ScorerListRequest = deserialize(body.unwrap_or(Value::Null))?;
    Ok(ok(app.read(|s| {
        s.list_scorers(&request, &caller.user, start, limit)
    })?))
}

/// GET `/v2/scorers/{scorer_id}`.
pub async fn get_scorer(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    c.finish()?;
    Ok(ok(app.read(|s| s.get_scorer(&id, &caller.user))?))
}

/// GET `/v2/scorers/{scorer_id}/versions?starting_token=&limit=`.
pub async fn list_versions(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let _run = c.query_uuid(&query, "run_id");
    let (start, limit) = c.page(&query);
    c.finish()?;
    Ok(ok(app.read(|s| s.list_scorer_versions(&id, start, limit))?))
}

/// GET `/v2/scorers/{scorer_id}/version?version=` (latest when absent).
pub async fn get_version(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let number = c
        .query(&query, "version", &serde_json::json!({"type": "integer"}))
        .and_then(|v| v.as_i64());
    c.finish()?;
    Ok(ok(app.read(|s| s.get_scorer_version(&id, number))?))
}

/// GET `/v2/scorers/versions/{scorer_version_id}/projects` (spec operation
/// 6; no HTTP Basic).
pub async fn version_projects(
    CallerNoBasic(caller): CallerNoBasic,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_version_id", ids.get("scorer_version_id"));
    let (start, limit) = c.page(&query);
    c.finish()?;
    Ok(ok(app.read(|s| {
        s.scorer_version_projects(&id, &caller.user, start, limit)
    })?))
}
