//! The HTTP surface of Protect stages: create and get (by id or name) on
//! `…/stages`, replace the rulesets (POST) and pause (PUT) on
//! `…/stages/{stage_id}`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{StageCreate, StageKey};
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::kinds::refuse;
use crate::sandbox::reply::ApiResult;
use crate::sandbox::routes::{Ids, ok, read_body};
use crate::sandbox::validation::{Checker, Query, deserialize};

/// The routes of this kind (merged into the sandbox's router).
pub fn router() -> Router<Arc<App>> {
    Router::new()
        .route("/v2/projects/{project_id}/stages", post(create).get(get))
        .route(
            "/v2/projects/{project_id}/stages/{stage_id}",
            post(replace).put(pause),
        )
}

/// POST `/v2/projects/{project_id}/stages`.
async fn create(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let body = c.body(&bytes, "StageWithRulesets");
    c.finish()?;
    caller.require_write()?;
    let request: StageCreate = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_stage(&pid, request, &user))
        .await?))
}

/// GET `/v2/projects/{project_id}/stages?stage_id=|stage_name=` (one of
/// them; the id wins when both are given).
async fn get(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let name = c
        .query(
            &query,
            "stage_name",
            &json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        )
        .and_then(|v| v.as_str().map(str::to_owned));
    let id = c.query_uuid(&query, "stage_id");
    c.finish()?;
    let key = match (id, name) {
        (Some(id), _) => StageKey::Id(id),
        (None, Some(name)) => StageKey::Name(name),
        (None, None) => {
            return Err(refuse(
                &["query", "stage_id"],
                None,
                "one of stage_id and stage_name is required",
            ));
        }
    };
    Ok(ok(app.read(|s| s.get_stage(&pid, &key))?))
}

#[derive(Deserialize)]
struct Rulesets {
    #[serde(default)]
    prioritized_rulesets: Vec<Value>,
}

/// POST `/v2/projects/{project_id}/stages/{stage_id}`: replace the rulesets.
async fn replace(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let sid = c.path_uuid("stage_id", ids.get("stage_id"));
    let body = c.body(&bytes, "RulesetsMixin");
    c.finish()?;
    caller.require_write()?;
    let request: Rulesets = deserialize(body.unwrap_or_default())?;
    Ok(ok(app
        .write(move |s| s.replace_stage_rulesets(&pid, &sid, request.prioritized_rulesets))
        .await?))
}

/// PUT `/v2/projects/{project_id}/stages/{stage_id}?pause=`.
async fn pause(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let sid = c.path_uuid("stage_id", ids.get("stage_id"));
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let pause = c.query_bool(&query, "pause", false);
    c.finish()?;
    caller.require_write()?;
    Ok(ok(app
        .write(move |s| s.pause_stage(&pid, &sid, pause))
        .await?))
}
