//! The HTTP surface of project and log stream writes: POST `/v2/projects`,
//! PUT/DELETE a project, PUT/DELETE a log stream.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::routing::{post, put};
use serde::Deserialize;

use super::{ProjectCreate, ProjectUpdate};
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::reply::ApiResult;
use crate::sandbox::routes::{Ids, no_content, ok, read_body};
use crate::sandbox::validation::{Checker, deserialize};

/// The routes of this kind (merged into the sandbox's router).
pub fn router() -> Router<Arc<App>> {
    Router::new()
        .route("/v2/projects", post(create))
        .route("/v2/projects/{project_id}", put(update).delete(remove))
        .route(
            "/v2/projects/{project_id}/log_streams/{log_stream_id}",
            put(rename_log_stream).delete(delete_log_stream),
        )
}

/// POST `/v2/projects`.
async fn create(caller: Caller, State(app): State<Arc<App>>, body: Body) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let body = c.body(&bytes, "ProjectCreate");
    c.finish()?;
    caller.require_write()?;
    let request: ProjectCreate = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_project(request, &user))
        .await?))
}

/// PUT `/v2/projects/{project_id}`.
async fn update(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let body = c.body(&bytes, "ProjectUpdate");
    c.finish()?;
    caller.require_write()?;
    let request: ProjectUpdate = deserialize(body.unwrap_or_default())?;
    Ok(ok(app
        .write(move |s| s.update_project(&pid, request))
        .await?))
}

/// DELETE `/v2/projects/{project_id}`.
async fn remove(caller: Caller, ids: Ids, State(app): State<Arc<App>>) -> ApiResult<Response> {
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    caller.require_write()?;
    Ok(ok(app.write(move |s| s.delete_project(&pid)).await?))
}

#[derive(Deserialize)]
struct LogStreamUpdate {
    name: String,
}

/// PUT `/v2/projects/{project_id}/log_streams/{log_stream_id}`.
async fn rename_log_stream(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let lid = c.path_uuid("log_stream_id", ids.get("log_stream_id"));
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let body = c.body(&bytes, "LogStreamUpdateRequest");
    c.finish()?;
    caller.require_write()?;
    let request: LogStreamUpdate = deserialize(body.unwrap_or_default())?;
    Ok(ok(app
        .write(move |s| s.rename_log_stream(&pid, &lid, request.name))
        .await?))
}

/// DELETE `/v2/projects/{project_id}/log_streams/{log_stream_id}` (204).
async fn delete_log_stream(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let lid = c.path_uuid("log_stream_id", ids.get("log_stream_id"));
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    caller.require_write()?;
    app.write(move |s| s.delete_log_stream(&pid, &lid)).await?;
    Ok(no_content())
}
