//! The HTTP surface of custom scorers: create, PATCH, DELETE, versions
//! (LLM, code, preset; the code of a version), the code validation task,
//! scope, tags, restore and the projects of a scorer. Each handler
//! authenticates, validates path, query and body against the reference in
//! one 422, checks the role of writes, then calls the store.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::code::ValidateForm;
use super::multipart;
use super::{CreateScorer, NewVersion};
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::reply::ApiResult;
use crate::sandbox::routes::{Ids, ok, read_body};
use crate::sandbox::validation::{Checker, Query, deserialize};

/// The routes of this kind (merged into the sandbox's router).
pub fn router() -> Router<Arc<App>> {
    Router::new()
        .route("/v2/scorers", post(create))
        .route("/v2/scorers/tags", get(tags))
        .route("/v2/scorers/code/validate", post(validate))
        .route("/v2/scorers/code/validate/{task_id}", get(poll))
        .route(
            "/v2/scorers/{scorer_id}",
            axum::routing::patch(update).delete(remove),
        )
        .route("/v2/scorers/{scorer_id}/version/llm", post(llm_version))
        .route(
            "/v2/scorers/{scorer_id}/version/code",
            post(code_version).get(version_code),
        )
        .route(
            "/v2/scorers/{scorer_id}/version/preset",
            post(preset_version),
        )
        .route("/v2/scorers/{scorer_id}/scope", put(scope))
        .route(
            "/v2/scorers/{scorer_id}/versions/{version_number}/restore",
            post(restore),
        )
        .route("/v2/scorers/{scorer_id}/projects", get(projects))
}

/// POST `/v2/scorers`.
async fn create(caller: Caller, State(app): State<Arc<App>>, body: Body) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let body = c.body(&bytes, "CreateScorerRequest");
    c.finish()?;
    caller.require_write()?;
    let request: CreateScorer = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_custom_scorer(request, &user))
        .await?))
}

/// PATCH `/v2/scorers/{scorer_id}`.
async fn update(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let body = c.body(&bytes, "UpdateScorerRequest");
    c.finish()?;
    caller.require_write()?;
    let changes: Map<String, Value> = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.update_custom_scorer(&id, changes, &user))
        .await?))
}

/// DELETE `/v2/scorers/{scorer_id}`.
async fn remove(caller: Caller, ids: Ids, State(app): State<Arc<App>>) -> ApiResult<Response> {
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    c.finish()?;
    caller.require_write()?;
    Ok(ok(app.write(move |s| s.delete_custom_scorer(&id)).await?))
}

async fn new_version(
    caller: Caller,
    ids: Ids,
    app: Arc<App>,
    body: Body,
    schema: &'static str,
    preset: bool,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let body = c.body(&bytes, schema);
    c.finish()?;
    caller.require_write()?;
    let request: NewVersion = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| {
            if preset {
                s.create_preset_version(&id, request, &user)
            } else {
                s.create_llm_version(&id, request, &user)
            }
        })
        .await?))
}

/// POST `/v2/scorers/{scorer_id}/version/llm`.
async fn llm_version(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    new_version(
        caller,
        ids,
        app,
        body,
        "CreateLLMScorerVersionRequest",
        false,
    )
    .await
}

/// POST `/v2/scorers/{scorer_id}/version/preset`.
async fn preset_version(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    new_version(caller, ids, app, body, "CreateScorerVersionRequest", true).await
}

/// The parts of a multipart body, checked against the reference's
/// `Body_…` schema `schema` (faults added to `c`).
async fn form(
    c: &mut Checker,
    headers: &HeaderMap,
    body: Body,
    schema: &str,
) -> ApiResult<Vec<multipart::Part>> {
    let bytes = read_body(body).await?;
    let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let parts = multipart::parse(content_type, &bytes)?;
    c.body_schema(schema, &multipart::as_object(&parts));
    Ok(parts)
}

/// POST `/v2/scorers/{scorer_id}/version/code` (multipart: `file`,
/// `validation_result`).
async fn code_version(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let parts = form(
        &mut c,
        &headers,
        body,
        "Body_create_code_scorer_version_scorers__scorer_id__version_code_post",
    )
    .await?;
    c.finish()?;
    caller.require_write()?;
    let file = multipart::field(&parts, "file").unwrap_or_default();
    let Ok(file) = String::from_utf8(file.to_vec()) else {
        return Err(super::super::refuse(
            &["body", "file"],
            None,
            "the scorer file is not UTF-8 text",
        ));
    };
    let result =
        String::from_utf8_lossy(multipart::field(&parts, "validation_result").unwrap_or_default())
            .into_owned();
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_code_version(&id, file, &result, &user))
        .await?))
}

/// GET `/v2/scorers/{scorer_id}/version/code?version=`.
async fn version_code(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let number = c
        .query(
            &query,
            "version",
            &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        )
        .and_then(|v| v.as_i64());
    c.finish()?;
    Ok(ok(app.read(|s| s.scorer_version_code(&id, number))?))
}

/// POST `/v2/scorers/code/validate` (multipart: `file`, optional
/// `test_input`, `test_output`, `required_scorers`, `scoreable_node_types`).
async fn validate(
    caller: Caller,
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let parts = form(
        &mut c,
        &headers,
        body,
        "Body_validate_code_scorer_scorers_code_validate_post",
    )
    .await?;
    c.finish()?;
    caller.require_write()?;
    let file = multipart::field(&parts, "file")
        .unwrap_or_default()
        .to_vec();
    let text = |name: &str| {
        multipart::field(&parts, name).map(|v| String::from_utf8_lossy(v).into_owned())
    };
    let form = ValidateForm {
        test_input: text("test_input"),
        test_output: text("test_output"),
        scoreable_node_types: multipart::values(&parts, "scoreable_node_types"),
    };
    let user = caller.user;
    Ok(ok(app
        .write(move |s| Ok(s.start_code_validation(&file, &form, &user)))
        .await?))
}

/// GET `/v2/scorers/code/validate/{task_id}`.
async fn poll(_caller: Caller, ids: Ids, State(app): State<Arc<App>>) -> ApiResult<Response> {
    let mut c = Checker::new();
    let id = c.path_uuid("task_id", ids.get("task_id"));
    c.finish()?;
    Ok(ok(app.write(move |s| s.poll_code_validation(&id)).await?))
}

#[derive(Deserialize)]
struct Scope {
    is_global: bool,
    #[serde(default)]
    project_ids: Vec<String>,
}

/// PUT `/v2/scorers/{scorer_id}/scope`.
async fn scope(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let body = c.body(&bytes, "UpdateScorerScopeRequest");
    c.finish()?;
    caller.require_write()?;
    let request: Scope = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.set_scorer_scope(&id, request.is_global, &request.project_ids, &user))
        .await?))
}

/// GET `/v2/scorers/tags`.
async fn tags(_caller: Caller, State(app): State<Arc<App>>) -> ApiResult<Response> {
    Ok(ok(app.read(|s| Ok(s.scorer_tags()))?))
}

/// POST `/v2/scorers/{scorer_id}/versions/{version_number}/restore`.
async fn restore(caller: Caller, ids: Ids, State(app): State<Arc<App>>) -> ApiResult<Response> {
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let number = c
        .path_param(
            "version_number",
            ids.get("version_number"),
            &json!({"type": "integer"}),
        )
        .and_then(|v| v.as_i64())
        .unwrap_or_default();
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.restore_scorer_version(&id, number, &user))
        .await?))
}

/// GET `/v2/scorers/{scorer_id}/projects?starting_token=&limit=`.
async fn projects(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let id = c.path_uuid("scorer_id", ids.get("scorer_id"));
    let (start, limit) = c.page(&query);
    c.finish()?;
    Ok(ok(app.read(|s| {
        s.scorer_projects(&id, &caller.user, start, limit)
    })?))
}
