//! Annotation and feedback templates of a project: list (spec operation 7
//! for feedback, deprecated), create, get (spec operation 8 for
//! annotation), patch (`name` and `criteria` only), delete.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::routing;
use serde_json::json;

use super::TemplateKind;
use crate::kinds::templates::{
    AnnotationConstraints, FeedbackConstraints, TemplateCreate, TemplateUpdate,
};
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::reply::ApiResult;
use crate::sandbox::routes::{Ids, ok, read_body};
use crate::sandbox::validation::{Checker, deserialize};

/// The routes of annotation and feedback templates (merged into the
/// sandbox's router).
pub fn router() -> Router<Arc<App>> {
    let p = |suffix: &str| format!("/v2/projects/{{project_id}}{suffix}");
    Router::new()
        .route(
            &p("/annotation/templates"),
            routing::get(list_annotation).post(create_annotation),
        )
        .route(
            &p("/annotation/templates/{template_id}"),
            routing::get(get_annotation)
                .patch(update_annotation)
                .delete(delete_annotation),
        )
        .route(
            &p("/feedback/templates"),
            routing::get(list_feedback).post(create_feedback),
        )
        .route(
            &p("/feedback/templates/{template_id}"),
            routing::get(get_feedback)
                .patch(update_feedback)
                .delete(delete_feedback),
        )
}

/// The reference's schemas of a template kind: (create, update).
trait Schemas {
    const CREATE: &'static str;
    const UPDATE: &'static str;
}

impl Schemas for AnnotationConstraints {
    const CREATE: &'static str = "AnnotationTemplateCreate";
    const UPDATE: &'static str = "AnnotationTemplateUpdate";
}

impl Schemas for FeedbackConstraints {
    const CREATE: &'static str = "FeedbackTemplateCreate";
    const UPDATE: &'static str = "FeedbackTemplateUpdate";
}

async fn list<C: TemplateKind>(ids: Ids, app: Arc<App>) -> ApiResult<Response> {
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    c.finish()?;
    Ok(ok(app.read(|s| s.list_templates::<C>(&pid))?))
}

async fn get<C: TemplateKind>(ids: Ids, app: Arc<App>) -> ApiResult<Response> {
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    c.finish()?;
    Ok(ok(app.read(|s| s.get_template::<C>(&pid, &tid))?))
}

async fn create<C>(caller: Caller, ids: Ids, app: Arc<App>, body: Body) -> ApiResult<Response>
where
    C: TemplateKind + Schemas + serde::de::DeserializeOwned + Send + 'static,
{
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let body = c.body(&bytes, C::CREATE);
    c.finish()?;
    caller.require_write()?;
    let request: TemplateCreate<C> = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.create_template::<C>(&pid, request, &user))
        .await?))
}

async fn update<C>(caller: Caller, ids: Ids, app: Arc<App>, body: Body) -> ApiResult<Response>
where
    C: TemplateKind + Schemas + Send + 'static,
{
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    let body = c.body(&bytes, C::UPDATE);
    c.finish()?;
    caller.require_write()?;
    let request: TemplateUpdate = deserialize(body.unwrap_or_default())?;
    Ok(ok(app
        .write(move |s| s.update_template::<C>(&pid, &tid, request))
        .await?))
}

async fn remove<C>(caller: Caller, ids: Ids, app: Arc<App>) -> ApiResult<Response>
where
    C: TemplateKind + Send + 'static,
{
    let mut c = Checker::new();
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let tid = c.path_uuid("template_id", ids.get("template_id"));
    c.finish()?;
    caller.require_write()?;
    app.write(move |s| s.delete_template::<C>(&pid, &tid))
        .await?;
    Ok(ok(json!({})))
}

/// GET `.../annotation/templates`.
pub async fn list_annotation(
    _c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    list::<AnnotationConstraints>(ids, app).await
}

/// POST `.../annotation/templates`.
pub async fn create_annotation(
    c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    create::<AnnotationConstraints>(c, ids, app, body).await
}

/// GET `.../annotation/templates/{template_id}` (spec operation 8).
pub async fn get_annotation(
    _c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    get::<AnnotationConstraints>(ids, app).await
}

/// PATCH `.../annotation/templates/{template_id}`.
pub async fn update_annotation(
    c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    update::<AnnotationConstraints>(c, ids, app, body).await
}

/// DELETE `.../annotation/templates/{template_id}`.
pub async fn delete_annotation(
    c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    remove::<AnnotationConstraints>(c, ids, app).await
}

/// GET `.../feedback/templates` (spec operation 7, deprecated).
pub async fn list_feedback(
    _c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    list::<FeedbackConstraints>(ids, app).await
}

/// POST `.../feedback/templates`.
pub async fn create_feedback(
    c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    create::<FeedbackConstraints>(c, ids, app, body).await
}

/// GET `.../feedback/templates/{template_id}`.
pub async fn get_feedback(
    _c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    get::<FeedbackConstraints>(ids, app).await
}

/// PATCH `.../feedback/templates/{template_id}`.
pub async fn update_feedback(
    c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    update::<FeedbackConstraints>(c, ids, app, body).await
}

/// DELETE `.../feedback/templates/{template_id}`.
pub async fn delete_feedback(
    c: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    remove::<FeedbackConstraints>(c, ids, app).await
}
