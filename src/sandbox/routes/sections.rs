//! The contents of a trends dashboard: sections (spec operation 3, which does
//! not accept HTTP Basic, and the reference's update and delete) and widgets
//! (the reference's create, update and delete). Every operation takes the
//! optional `trends_dashboard_id` query parameter (the log stream's default
//! dashboard when absent).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;

use super::trends::log_stream_path;
use super::{Ids, no_content, ok, read_body};
use crate::api::{
    SectionCreateRequest, SectionUpdateRequest, WidgetCreateRequest, WidgetUpdateRequest,
};
use crate::sandbox::app::App;
use crate::sandbox::auth::{Caller, CallerNoBasic};
use crate::sandbox::reply::ApiResult;
use crate::sandbox::store::to_json;
use crate::sandbox::validation::{Checker, Query, deserialize};

/// POST `.../trends/sections` (spec operation 3; no HTTP Basic).
pub async fn create_section(
    CallerNoBasic(caller): CallerNoBasic,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    let body = c.body(&bytes, "SectionCreateRequest");
    c.finish()?;
    caller.require_write()?;
    let request: SectionCreateRequest = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    let section = app
        .write(move |s| s.create_section(&pid, &lid, did.as_deref(), request, &user))
        .await?;
    Ok(ok(to_json(&section)?))
}

/// PUT `.../trends/sections/{section_id}`.
pub async fn update_section(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let sid = c.path_uuid("section_id", ids.get("section_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    let body = c.body(&bytes, "SectionUpdateRequest");
    c.finish()?;
    caller.require_write()?;
    let request: SectionUpdateRequest = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    let section = app
        .write(move |s| s.update_section(&pid, &lid, did.as_deref(), &sid, request, &user))
        .await?;
    Ok(ok(to_json(&section)?))
}

/// DELETE `.../trends/sections/{section_id}?ungroup=` (204).
pub async fn delete_section(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let sid = c.path_uuid("section_id", ids.get("section_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let ungroup = c.query_bool(&query, "ungroup", false);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.delete_section(&pid, &lid, did.as_deref(), &sid, ungroup, &user))
        .await?;
    Ok(no_content())
}

/// POST `.../trends/widgets`.
pub async fn create_widget(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    let body = c.body(&bytes, "WidgetCreateRequest");
    c.finish()?;
    caller.require_write()?;
    let mut request: WidgetCreateRequest = deserialize(body.unwrap_or_default())?;
    request.section_id = request.section_id.map(|id| canonical_uuid(&id));
    let user = caller.user;
    let widget = app
        .write(move |s| s.create_widget(&pid, &lid, did.as_deref(), request, &user))
        .await?;
    Ok(ok(to_json(&widget)?))
}

/// PUT `.../trends/widgets/{widget_id}` (also moves a widget between
/// sections).
pub async fn update_widget(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let wid = c.path_uuid("widget_id", ids.get("widget_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    let body = c.body(&bytes, "WidgetUpdateRequest");
    c.finish()?;
    caller.require_write()?;
    let mut request: WidgetUpdateRequest = deserialize(body.unwrap_or_default())?;
    if let Some(Some(id)) = &mut request.section_id {
        *id = canonical_uuid(id);
    }
    let user = caller.user;
    let widget = app
        .write(move |s| s.update_widget(&pid, &lid, did.as_deref(), &wid, request, &user))
        .await?;
    Ok(ok(to_json(&widget)?))
}

/// DELETE `.../trends/widgets/{widget_id}` (204).
pub async fn delete_widget(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let wid = c.path_uuid("widget_id", ids.get("widget_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.delete_widget(&pid, &lid, did.as_deref(), &wid, &user))
        .await?;
    Ok(no_content())
}

/// A UUID in a body (already checked against `format: uuid4`) in its
/// canonical spelling, as pydantic parses it into a `UUID`.
fn canonical_uuid(raw: &str) -> String {
    uuid::Uuid::parse_str(raw).map_or_else(|_| raw.to_owned(), |u| u.hyphenated().to_string())
}
