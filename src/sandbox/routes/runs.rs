//! Projects, log streams, experiments and their metric settings: spec
//! operations 1, 2 and 5, and the reference's project listing and reads,
//! log stream create/list/get, experiment search and get.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;

use super::{Ids, ok, read_body};
use crate::api::{MetricSettingsRequest, RunSearchRequest};
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::reply::ApiResult;
use crate::sandbox::store::projects::ProjectListRequest;
use crate::sandbox::store::settings::{RunKind, default_missing_operators};
use crate::sandbox::store::to_json;
use crate::sandbox::validation::{Checker, Query, deserialize};

/// POST `/v2/projects/paginated`.
pub async fn list_projects(
    caller: Caller,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let include = c.query_bool(&query, "include_logstreams", false);
    let (start, limit) = c.page(&query);
    // The body is optional here: none means no filters.
    let body = if bytes.is_empty() {
        Some(Value::Object(Default::default()))
    } else {
        c.body(&bytes, "api__schemas__project_v2__ProjectCollectionParams")
    };
    c.finish()?;
    let request: ProjectListRequest = deserialize(body.unwrap_or_default())?;
    let out = app.read(|s| s.list_projects(&request, &caller.user, include, start, limit))?;
    Ok(ok(out))
}

/// GET `/v2/projects/{project_id}`.
pub async fn get_project(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    Ok(ok(app.read(|s| s.get_project(&pid, &caller.user))?))
}

/// GET `/v2/projects/{project_id}/log_streams`.
pub async fn list_log_streams(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let counts = c.query_bool(&query, "include_counts", false);
    c.finish()?;
    Ok(ok(app.read(|s| s.list_log_streams(&pid, counts))?))
}

/// GET `/v2/projects/{project_id}/log_streams/paginated?include_counts=&starting_token=&limit=`
/// (`ListLogStreamResponse`, default order: created_at descending).
pub async fn page_log_streams(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let counts = c.query_bool(&query, "include_counts", false);
    let (start, limit) = c.page(&query);
    c.finish()?;
    let request = RunSearchRequest {
        starting_token: Some(start),
        limit: Some(limit),
        include_counts: Some(counts),
        ..RunSearchRequest::default()
    };
    Ok(ok(app.read(|s| s.search_log_streams(&pid, &request))?))
}

/// The body of POST `/v2/projects/{project_id}/log_streams`
/// (`LogStreamCreateRequest`).
#[derive(Deserialize)]
struct LogStreamCreate {
    name: String,
}

/// POST `/v2/projects/{project_id}/log_streams`.
pub async fn create_log_stream(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let body = c.body(&bytes, "LogStreamCreateRequest");
    c.finish()?;
    caller.require_write()?;
    let request: LogStreamCreate = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_log_stream(&pid, &request.name, &user))
        .await?))
}

/// POST `.../log_streams/search` (spec operation 2).
pub async fn search_log_streams(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let (pid, request) = run_search(&ids, body, "LogStreamSearchRequest").await?;
    Ok(ok(app.read(|s| s.search_log_streams(&pid, &request))?))
}

/// POST `.../experiments/search`.
pub async fn search_experiments(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let (pid, request) = run_search(&ids, body, "ExperimentSearchRequest").await?;
    Ok(ok(app.read(|s| s.search_experiments(&pid, &request))?))
}

/// The project id and request of a run search, the body checked against
/// the reference's `schema`.
async fn run_search(ids: &Ids, body: Body, schema: &str) -> ApiResult<(String, RunSearchRequest)> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let body = c.body(&bytes, schema);
    c.finish()?;
    Ok((pid, deserialize(body.unwrap_or_default())?))
}

/// GET a log stream.
pub async fn get_log_stream(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let lid = c.path_uuid("log_stream_id", ids.get("log_stream_id"));
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    Ok(ok(app.read(|s| s.get_log_stream(&pid, &lid))?))
}

/// GET an experiment.
pub async fn get_experiment(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let eid = c.path_uuid("experiment_id", ids.get("experiment_id"));
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    Ok(ok(app.read(|s| s.get_experiment(&pid, &eid))?))
}

async fn get_settings(kind: RunKind, ids: Ids, app: Arc<App>) -> ApiResult<Response> {
    let run_param = run_param(kind);
    let mut c = Checker::new();
    let rid = c.path_uuid(run_param, ids.get(run_param));
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    let settings = app.read(|s| s.get_metric_settings(kind, &pid, &rid))?;
    Ok(ok(to_json(&settings)?))
}

fn run_param(kind: RunKind) -> &'static str {
    match kind {
        RunKind::LogStream => "log_stream_id",
        RunKind::Experiment => "experiment_id",
    }
}

async fn patch_settings(
    kind: RunKind,
    caller: Caller,
    ids: Ids,
    app: Arc<App>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let run_param = run_param(kind);
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let rid = c.path_uuid(run_param, ids.get(run_param));
    let mut body = c.body_value(&bytes);
    if let Some(b) = &mut body {
        if kind == RunKind::Experiment {
            default_missing_operators(b);
        }
        c.body_schema("MetricSettingsRequest", b);
    }
    c.finish()?;
    caller.require_write()?;
    let request: MetricSettingsRequest = deserialize(body.unwrap_or_default())?;
    let settings = app
        .write(move |s| s.patch_metric_settings(kind, &pid, &rid, request))
        .await?;
    Ok(ok(to_json(&settings)?))
}

/// GET `.../log_streams/{id}/metric_settings`.
pub async fn get_log_stream_settings(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    get_settings(RunKind::LogStream, ids, app).await
}

/// PATCH `.../log_streams/{id}/metric_settings` (spec operation 1).
pub async fn patch_log_stream_settings(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    patch_settings(RunKind::LogStream, caller, ids, app, body).await
}

/// GET `.../experiments/{id}/metric_settings`.
pub async fn get_experiment_settings(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    get_settings(RunKind::Experiment, ids, app).await
}

/// PATCH `.../experiments/{id}/metric_settings` (spec operation 5; see
/// `store::settings::default_missing_operators` for filters sent without
/// `operator`).
pub async fn patch_experiment_settings(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    patch_settings(RunKind::Experiment, caller, ids, app, body).await
}
