//! Trends dashboards: spec operations 3 (create a section) and 10
//! (favorite), which do not accept HTTP Basic, and the reference's reads,
//! section update/delete and unfavorite.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Ids, no_content, ok, read_body};
use crate::api::{SectionCreateRequest, SectionUpdateRequest, Visibility};
use crate::sandbox::app::App;
use crate::sandbox::auth::{Caller, CallerNoBasic};
use crate::sandbox::reply::ApiResult;
use crate::sandbox::store::to_json;
use crate::sandbox::validation::{Checker, Query, deserialize};

fn visibility(c: &mut Checker, query: &Query) -> Visibility {
    let schema =
        json!({"$ref": "#/components/schemas/TrendsDashboardVisibility", "default": "user"});
    match c.query(query, "visibility", &schema) {
        Some(Value::String(v)) => Visibility::from(v.as_str()),
        _ => Visibility::User,
    }
}

/// The `project_id` then `log_stream_id` path segments (faults in that
/// order), canonicalized.
fn log_stream_path(c: &mut Checker, ids: &Ids) -> (String, String) {
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let lid = c.path_uuid("log_stream_id", ids.get("log_stream_id"));
    (pid, lid)
}

/// GET `.../trends?trends_dashboard_id=` (default dashboard when absent).
pub async fn get_dashboard(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    c.finish()?;
    Ok(ok(app.read(|s| {
        s.get_dashboard(&pid, &lid, did.as_deref(), &caller.user)
    })?))
}

/// GET `.../trends/dashboards`.
pub async fn list_dashboards(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    c.finish()?;
    Ok(ok(
        app.read(|s| s.list_dashboards(&pid, &lid, &caller.user))?
    ))
}

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

/// POST `.../dashboards/{id}/favorite?visibility=` (spec operation 10; no
/// HTTP Basic; 204).
pub async fn favorite(
    CallerNoBasic(caller): CallerNoBasic,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let did = c.path_uuid("trends_dashboard_id", ids.get("trends_dashboard_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let vis = visibility(&mut c, &query);
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.favorite(&pid, &lid, &did, &vis, &user))
        .await?;
    Ok(no_content())
}

/// DELETE `.../dashboards/favorite?visibility=` (204).
pub async fn unfavorite(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let vis = visibility(&mut c, &query);
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.unfavorite(&pid, &lid, &vis, &user))
        .await?;
    Ok(no_content())
}
