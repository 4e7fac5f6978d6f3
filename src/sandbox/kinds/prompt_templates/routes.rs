//! The HTTP surface of prompt templates: a project's
//! (`/v2/projects/{project_id}/templates…`) and global ones
//! (`/v2/templates…`).

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::query::QueryBody;
use super::{CreateBody, NameBody, Scope, VersionBody};
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::reply::ApiResult;
use crate::sandbox::routes::{Ids, ok, read_body};
use crate::sandbox::validation::{Checker, Query, deserialize};

/// The routes of this kind (merged into the sandbox's router).
pub fn router() -> Router<Arc<App>> {
    let p = "/v2/projects/{project_id}/templates";
    Router::new()
        .route(p, post(create_project).get(list_project))
        .route(&format!("{p}/versions"), get(version_by_name))
        .route(
            &format!("{p}/{{template_id}}"),
            get(get_project).delete(delete_project),
        )
        .route(
            &format!("{p}/{{template_id}}/versions"),
            post(add_version_project),
        )
        .route(
            &format!("{p}/{{template_id}}/versions/{{version}}"),
            get(get_version_project).put(select_project),
        )
        .route("/v2/templates", post(create_global))
        .route("/v2/templates/query", post(query_global))
        .route(
            "/v2/templates/{template_id}",
            get(get_global).patch(rename_global).delete(delete_global),
        )
        .route(
            "/v2/templates/{template_id}/versions",
            post(add_version_global),
        )
        .route(
            "/v2/templates/{template_id}/versions/query",
            post(query_versions),
        )
        .route(
            "/v2/templates/{template_id}/versions/{version}",
            get(get_version_global).put(select_global),
        )
}

const CREATE: &str = "CreatePromptTemplateWithVersionRequestBody";

/// The scope of a request's path (checking `project_id` when there is one).
fn scope_of(c: &mut Checker, ids: &Ids, project: bool) -> Scope {
    if project {
        Scope::Project(c.path_uuid("project_id", ids.get("project_id")))
    } else {
        Scope::Global
    }
}

fn version_param(c: &mut Checker, ids: &Ids) -> i64 {
    c.path_param("version", ids.get("version"), &json!({"type": "integer"}))
        .and_then(|v| v.as_i64())
        .unwrap_or_default()
}

async fn create(
    caller: Caller,
    ids: Ids,
    app: Arc<App>,
    raw: Option<String>,
    body: Body,
    project: bool,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let scope = scope_of(&mut c, &ids, project);
    let linked = if project {
        None
    } else {
        c.query_uuid(&query, "project_id")
    };
    let body = c.body(&bytes, CREATE);
    c.finish()?;
    caller.require_write()?;
    let request: CreateBody = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_prompt_template(&scope, request, linked, &user))
        .await?))
}

/// POST `/v2/projects/{project_id}/templates`.
async fn create_project(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    create(caller, ids, app, None, body, true).await
}

/// POST `/v2/templates?project_id=`.
async fn create_global(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    create(caller, ids, app, raw, body, false).await
}

/// GET `/v2/projects/{project_id}/templates`.
async fn list_project(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    Ok(ok(
        app.read(|s| s.list_prompt_templates(&pid, &caller.user))?
    ))
}

/// GET `/v2/projects/{project_id}/templates/versions?template_name=&version=`.
async fn version_by_name(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let name = c
        .query_required(&query, "template_name", &json!({"type": "string"}))
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let version = c
        .query(
            &query,
            "version",
            &json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        )
        .and_then(|v| v.as_i64());
    c.finish()?;
    Ok(ok(app.read(|s| {
        s.prompt_version_by_name(&pid, &name, version)
    })?))
}

async fn get_one(caller: Caller, ids: Ids, app: Arc<App>, project: bool) -> ApiResult<Response> {
    let mut c = Checker::new();
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let scope = scope_of(&mut c, &ids, project);
    c.finish()?;
    Ok(ok(app.read(|s| {
        s.get_prompt_template(&scope, &tid, &caller.user)
    })?))
}

/// GET `/v2/projects/{project_id}/templates/{template_id}`.
async fn get_project(caller: Caller, ids: Ids, State(app): State<Arc<App>>) -> ApiResult<Response> {
    get_one(caller, ids, app, true).await
}

/// GET `/v2/templates/{template_id}`.
async fn get_global(caller: Caller, ids: Ids, State(app): State<Arc<App>>) -> ApiResult<Response> {
    get_one(caller, ids, app, false).await
}

async fn delete_one(caller: Caller, ids: Ids, app: Arc<App>, project: bool) -> ApiResult<Response> {
    let mut c = Checker::new();
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let scope = scope_of(&mut c, &ids, project);
    c.finish()?;
    caller.require_write()?;
    Ok(ok(app
        .write(move |s| s.delete_prompt_template(&scope, &tid))
        .await?))
}

/// DELETE `/v2/projects/{project_id}/templates/{template_id}`.
async fn delete_project(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    delete_one(caller, ids, app, true).await
}

/// DELETE `/v2/templates/{template_id}`.
async fn delete_global(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    delete_one(caller, ids, app, false).await
}

async fn add_version(
    caller: Caller,
    ids: Ids,
    app: Arc<App>,
    body: Body,
    project: bool,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let scope = scope_of(&mut c, &ids, project);
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let body = c.body(&bytes, "BasePromptTemplateVersion");
    c.finish()?;
    caller.require_write()?;
    let request: VersionBody = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.add_prompt_version(&scope, &tid, request, &user))
        .await?))
}

/// POST `/v2/projects/{project_id}/templates/{template_id}/versions`.
async fn add_version_project(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    add_version(caller, ids, app, body, true).await
}

/// POST `/v2/templates/{template_id}/versions`.
async fn add_version_global(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    add_version(caller, ids, app, body, false).await
}

async fn get_version(ids: Ids, app: Arc<App>, project: bool) -> ApiResult<Response> {
    let mut c = Checker::new();
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let n = version_param(&mut c, &ids);
    let scope = scope_of(&mut c, &ids, project);
    c.finish()?;
    Ok(ok(app.read(|s| s.get_prompt_version(&scope, &tid, n))?))
}

/// GET `/v2/projects/{project_id}/templates/{template_id}/versions/{version}`.
async fn get_version_project(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    get_version(ids, app, true).await
}

/// GET `/v2/templates/{template_id}/versions/{version}`.
async fn get_version_global(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    get_version(ids, app, false).await
}

async fn select(caller: Caller, ids: Ids, app: Arc<App>, project: bool) -> ApiResult<Response> {
    let mut c = Checker::new();
    let scope = scope_of(&mut c, &ids, project);
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let n = version_param(&mut c, &ids);
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.select_prompt_version(&scope, &tid, n, &user))
        .await?))
}

/// PUT `/v2/projects/{project_id}/templates/{template_id}/versions/{version}`.
async fn select_project(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    select(caller, ids, app, true).await
}

/// PUT `/v2/templates/{template_id}/versions/{version}`.
async fn select_global(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    select(caller, ids, app, false).await
}

#[derive(Deserialize)]
struct Rename {
    #[serde(default)]
    name: Option<NameBody>,
}

/// PATCH `/v2/templates/{template_id}`.
async fn rename_global(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let body = c.body(&bytes, "UpdatePromptTemplateRequest");
    c.finish()?;
    caller.require_write()?;
    let request: Rename = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.rename_prompt_template(&tid, request.name, &user))
        .await?))
}

/// An optional JSON body checked against `schema` (absent: `{}`).
fn optional_body(c: &mut Checker, bytes: &[u8], schema: &str) -> Option<Value> {
    if bytes.is_empty() {
        Some(json!({}))
    } else {
        c.body(bytes, schema)
    }
}

/// POST `/v2/templates/query?starting_token=&limit=`.
async fn query_global(
    caller: Caller,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (start, limit) = c.page(&query);
    let body = optional_body(&mut c, &bytes, "ListPromptTemplateParams");
    c.finish()?;
    let request: QueryBody = deserialize(body.unwrap_or_default())?;
    Ok(ok(app.read(|s| {
        s.query_prompt_templates(&request, &caller.user, start, limit)
    })?))
}

/// POST `/v2/templates/{template_id}/versions/query?starting_token=&limit=`.
async fn query_versions(
    _caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let (start, limit) = c.page(&query);
    let body = optional_body(&mut c, &bytes, "ListPromptTemplateVersionParams");
    c.finish()?;
    let request: QueryBody = deserialize(body.unwrap_or_default())?;
    Ok(ok(app.read(|s| {
        s.query_prompt_versions(&tid, &request, start, limit)
    })?))
}
